// The request headers of the data API: Range, Prefer, Accept and the schema profiles, read as PostgREST reads them.
import { AppError } from '../core/errors.ts';

/** The one schema the data API serves (an app's tables live in its database's public schema). */
const EXPOSED_SCHEMA = 'public';

/**
 * The schema a request names: Accept-Profile on reads, Content-Profile on writes (PostgREST reads only the header of
 * its method). Naming another schema than the exposed one is 406 PGRST106, as PostgREST answers it, rather than being
 * served from public as if the header were absent (a client asking for another schema would read the wrong tables).
 */
export function checkProfile(method: string, headers: Readonly<Record<string, string | string[] | undefined>>): void {
  const header = method === 'GET' || method === 'HEAD' ? 'accept-profile' : 'content-profile';
  const given = headers[header];
  const schema = Array.isArray(given) ? given.join(', ') : given;
  if (schema === undefined || schema === EXPOSED_SCHEMA) return;
  const err = new AppError(
    406,
    'SCHEMA_NOT_EXPOSED',
    `Invalid schema: ${schema.slice(0, 200)}`,
    `Only the ${EXPOSED_SCHEMA} schema is exposed: send ${header === 'accept-profile' ? 'Accept-Profile' : 'Content-Profile'}: ${EXPOSED_SCHEMA}, or no such header.`,
  );
  err.postgrest = { code: 'PGRST106', details: null, hint: `Only the following schemas are exposed: ${EXPOSED_SCHEMA}` };
  throw err;
}

/**
 * `Range: 0-9` or `items=0-9` (inclusive), or `10-` (open-ended), to limit/offset. A header of another form is
 * ignored, as PostgREST ignores it; a range that ends before it starts is 416 PGRST103.
 */
export function parseRange(header: string | undefined): { offset: number; limit?: number } | undefined {
  if (!header) return undefined;
  const m = /^(?:items=)?(\d{1,15})-(\d{0,15})$/.exec(header.trim());
  if (!m) return undefined;
  const from = Number(m[1]);
  if (m[2] === '') return { offset: from };
  const to = Number(m[2]);
  if (to < from) {
    const err = new AppError(416, 'INVALID_RANGE', `Range '${header}' ends before it starts.`, 'Send Range: items=<first>-<last> with last >= first.');
    err.postgrest = {
      code: 'PGRST103',
      message: 'Requested range not satisfiable',
      details: 'The lower boundary must be lower than or equal to the upper boundary in the Range header.',
      hint: null,
    };
    throw err;
  }
  return { offset: from, limit: to - from + 1 };
}

/**
 * The preferences of a Prefer header (RFC 7240), each as the client gave it (undefined when absent): the service
 * applies the defaults, and Preference-Applied names only what was given and honored.
 */
export interface Prefer {
  return?: 'minimal' | 'representation' | 'headers-only';
  count?: 'exact' | 'planned' | 'estimated';
  resolution?: 'merge-duplicates' | 'ignore-duplicates';
  missing?: 'default' | 'null';
  /** Honored on PATCH and DELETE with handling=strict only, as PostgREST does. */
  maxAffected?: number;
  tx?: 'commit' | 'rollback';
  handling?: 'strict' | 'lenient';
  timezone?: string;
  /** The given preferences that are none of the above (PostgREST's invalid preferences): an error with handling=strict. */
  invalid?: string[];
}

const NONE: Prefer = Object.freeze({});

/** PostgREST's accepted `name=value` tokens, each to the field and value it sets. */
const TOKENS: Readonly<Record<string, [keyof Prefer, string]>> = {
  'return=minimal': ['return', 'minimal'],
  'return=representation': ['return', 'representation'],
  'return=headers-only': ['return', 'headers-only'],
  'count=exact': ['count', 'exact'],
  'count=planned': ['count', 'planned'],
  'count=estimated': ['count', 'estimated'],
  'resolution=merge-duplicates': ['resolution', 'merge-duplicates'],
  'resolution=ignore-duplicates': ['resolution', 'ignore-duplicates'],
  'missing=default': ['missing', 'default'],
  'missing=null': ['missing', 'null'],
  'tx=commit': ['tx', 'commit'],
  'tx=rollback': ['tx', 'rollback'],
  'handling=strict': ['handling', 'strict'],
  'handling=lenient': ['handling', 'lenient'],
};

/**
 * Prefer, as PostgREST parses it: comma-separated tokens (several Prefer headers arrive joined by commas), matched
 * exactly; the first of each preference wins; `timezone=` and `max-affected=` take a value (an unreadable
 * max-affected is ignored, not invalid); any other token is invalid, ignored unless handling=strict (see
 * checkStrict).
 */
export function parsePrefer(header: string | undefined): Prefer {
  if (!header) return NONE;
  const prefer: Prefer = {};
  const set = prefer as Record<string, unknown>;
  for (const raw of header.split(',')) {
    const token = raw.trim();
    if (token === '') continue;
    const known = TOKENS[token];
    if (known) {
      if (set[known[0]] === undefined) set[known[0]] = known[1];
    } else if (token.startsWith('timezone=')) {
      prefer.timezone ??= token.slice(9);
    } else if (token.startsWith('max-affected=')) {
      const n = token.slice(13);
      if (prefer.maxAffected === undefined && /^\d{1,15}$/.test(n)) prefer.maxAffected = Number(n);
    } else {
      (prefer.invalid ??= []).push(token);
    }
  }
  return prefer;
}

/** Prefer: handling=strict with preferences the server does not know: 400 PGRST122, as PostgREST. */
export function checkStrict(prefer: Prefer): void {
  if (prefer.handling !== 'strict' || !prefer.invalid) return;
  const err = new AppError(
    400,
    'INVALID_PREFERENCES',
    'Invalid preferences given with handling=strict',
    `Drop or fix these preferences: ${prefer.invalid.join(', ')}. Known: return, count, resolution, missing, max-affected, tx, handling, timezone.`,
  );
  err.postgrest = { code: 'PGRST122', details: `Invalid preferences: ${prefer.invalid.join(', ')}`, hint: null };
  throw err;
}

export type Operation = 'read' | 'insert' | 'update' | 'delete';

/**
 * The Preference-Applied header: the given preferences this request honored, in PostgREST's order (resolution,
 * missing, return, count, tx, handling, timezone, max-affected). As in PostgREST, resolution only on inserts,
 * missing on inserts and updates, return on writes, max-affected on updates and deletes with handling=strict.
 */
export function preferenceApplied(prefer: Prefer, op: Operation): string | undefined {
  if (prefer === NONE) return undefined;
  const applied: string[] = [];
  if (op === 'insert' && prefer.resolution) applied.push(`resolution=${prefer.resolution}`);
  if ((op === 'insert' || op === 'update') && prefer.missing) applied.push(`missing=${prefer.missing}`);
  if (op !== 'read' && prefer.return) applied.push(`return=${prefer.return}`);
  if (prefer.count) applied.push(`count=${prefer.count}`);
  if (prefer.tx) applied.push(`tx=${prefer.tx}`);
  if (prefer.handling) applied.push(`handling=${prefer.handling}`);
  if (prefer.timezone !== undefined) applied.push(`timezone=${prefer.timezone}`);
  if ((op === 'update' || op === 'delete') && maxAffected(prefer) !== undefined) applied.push(`max-affected=${prefer.maxAffected}`);
  return applied.length ? applied.join(', ') : undefined;
}

/** The max-affected limit in force: only with handling=strict (PostgREST ignores it with lenient handling). */
export function maxAffected(prefer: Prefer): number | undefined {
  return prefer.handling === 'strict' ? prefer.maxAffected : undefined;
}

/** How a response is rendered, from the Accept header. */
export interface Media {
  /** JSON (an array, or one object when `single`) or CSV. */
  format: 'json' | 'csv';
  /** application/vnd.pgrst.object+json: exactly one row, as an object. */
  single: boolean;
  /** `;nulls=stripped`: fields whose value is null are left out (json_strip_nulls). */
  stripNulls: boolean;
  /** The Content-Type sent, when not plain application/json. */
  contentType?: string;
}

export const JSON_MEDIA: Media = Object.freeze({ format: 'json', single: false, stripNulls: false });
const CSV_MEDIA: Media = Object.freeze({ format: 'csv', single: false, stripNulls: false, contentType: 'text/csv; charset=utf-8' });
const OBJECT_MEDIA: Media = Object.freeze({ format: 'json', single: true, stripNulls: false, contentType: 'application/vnd.pgrst.object+json; charset=utf-8' });
const OBJECT_STRIPPED: Media = Object.freeze({
  format: 'json',
  single: true,
  stripNulls: true,
  contentType: 'application/vnd.pgrst.object+json;nulls=stripped; charset=utf-8',
});
const ARRAY_STRIPPED: Media = Object.freeze({
  format: 'json',
  single: false,
  stripNulls: true,
  contentType: 'application/vnd.pgrst.array+json;nulls=stripped; charset=utf-8',
});

/**
 * Content negotiation as PostgREST does it for a table: the Accept list ordered by quality, then by specificity
 * (parameters count up, wildcards down), ties in the given order; the first media type the data API produces wins:
 * application/json (and the vnd.pgrst array, object and nulls=stripped variants), text/csv, or any. None: 406 PGRST107.
 */
export function negotiate(accept: string | undefined): Media {
  if (!accept || accept === 'application/json' || accept === '*/*') return JSON_MEDIA;
  const ranked = accept
    .split(',')
    .map((part, i) => {
      const s = part.replace(/ /g, '');
      const at = s.indexOf(';q=');
      const type = at < 0 ? s : s.slice(0, at);
      const q = at < 0 ? 1 : Number.parseFloat(s.slice(at + 3).split(';')[0]!);
      const specificity = (type.match(/;/g)?.length ?? 0) - (type.match(/\*/g)?.length ?? 0);
      return { type, q: Number.isNaN(q) ? 1 : q, specificity, i };
    })
    // q=0 means "not acceptable" (RFC 9110).
    .filter((r) => r.type !== '' && r.q > 0)
    .sort((a, b) => b.q - a.q || b.specificity - a.specificity || a.i - b.i);
  for (const { type } of ranked) {
    const media = mediaOf(type);
    if (media) return media;
  }
  const err = new AppError(
    406,
    'NOT_ACCEPTABLE',
    `None of these media types are available: ${ranked.map((r) => r.type).join(', ')}`,
    'Accept application/json, application/vnd.pgrst.object+json, application/vnd.pgrst.array+json (either with ;nulls=stripped) or text/csv.',
  );
  err.postgrest = { code: 'PGRST107', details: null, hint: null };
  throw err;
}

function mediaOf(type: string): Media | undefined {
  const [essence, ...params] = type.toLowerCase().split(';');
  const stripped = params.some((p) => p === 'nulls=stripped');
  switch (essence) {
    case 'application/json':
    case '*/*':
      return JSON_MEDIA;
    case 'text/csv':
      return CSV_MEDIA;
    case 'application/vnd.pgrst.object+json':
    case 'application/vnd.pgrst.object':
      return stripped ? OBJECT_STRIPPED : OBJECT_MEDIA;
    case 'application/vnd.pgrst.array+json':
    case 'application/vnd.pgrst.array':
      return stripped ? ARRAY_STRIPPED : JSON_MEDIA;
    default:
      return undefined;
  }
}
