// Contacts and companies arriving in bulk (an import, saved lead-search results, an enriched employer): each person
// once per workspace, matched by e-mail or LinkedIn URL, each company once, matched by domain or name. A match is
// completed (empty columns filled) rather than duplicated or overwritten.
import type { DataClient } from './ctx.ts';
import { eq, inList, rows } from './http.ts';
import { fillPatch, normalizeUrl } from './people.ts';

export interface CompanyInput {
  name: string;
  domain?: string | null;
  linkedin_url?: string | null;
  industry?: string | null;
}

export interface ContactInput {
  full_name: string;
  email?: string | null;
  phone?: string | null;
  title?: string | null;
  linkedin_url?: string | null;
  location?: string | null;
  company?: CompanyInput | null;
  enrichment?: Record<string, unknown> | null;
  enriched_at?: string | null;
}

interface Row {
  id: string;
  [column: string]: unknown;
}

/** In-lists go in the query string: this many values per call keeps it short. */
const CHUNK = 100;
const chunks = <T>(items: T[]): T[][] => Array.from({ length: Math.ceil(items.length / CHUNK) }, (_, i) => items.slice(i * CHUNK, (i + 1) * CHUNK));
/** A text in the case it was typed and lower-cased: stored values keep their case, matching ignores it. */
const variants = (values: string[]): string[] => [...new Set(values.flatMap((v) => [v, v.toLowerCase()]))];

/** Rows of a workspace table whose columns equal any of the values (an or of in-lists), in chunks. */
async function matching(db: DataClient, table: string, workspaceId: string, columns: string, by: Record<string, string[]>): Promise<Row[]> {
  const found = new Map<string, Row>();
  for (const [column, values] of Object.entries(by)) {
    for (const part of chunks(variants(values))) {
      const query = `workspace_id=${eq(workspaceId)}&${column}=${inList(part)}`;
      for (const row of rows(await db.from(table).select<Row>(columns, { query }), table)) found.set(row.id, row);
    }
  }
  return [...found.values()];
}

const lower = (v: unknown): string | null => (typeof v === 'string' && v ? v.toLowerCase() : null);
const companyKey = (c: CompanyInput): string => (c.domain ? `d:${c.domain.toLowerCase()}` : `n:${c.name.trim().toLowerCase()}`);

/** Company ids by companyKey, made where the workspace has no company of that domain or name; and how many were made. */
export async function companyIds(db: DataClient, workspaceId: string, userId: string | null, companies: CompanyInput[]): Promise<{ ids: Map<string, string>; created: number }> {
  const wanted = new Map(companies.filter((c) => c.name?.trim()).map((c) => [companyKey(c), c]));
  const ids = new Map<string, string>();
  if (!wanted.size) return { ids, created: 0 };
  const list = [...wanted.values()];
  const existing = await matching(db, 'companies', workspaceId, 'id,name,domain', {
    domain: list.flatMap((c) => (c.domain ? [c.domain] : [])),
    name: list.map((c) => c.name.trim()),
  });
  for (const [key, c] of wanted) {
    const hit = existing.find((r) => (c.domain && lower(r.domain) === c.domain.toLowerCase()) || lower(r.name) === c.name.trim().toLowerCase());
    if (hit) ids.set(key, hit.id);
  }
  const missing = [...wanted].filter(([key]) => !ids.has(key));
  if (missing.length) {
    const made = rows(
      await db.from('companies').insert<Row>(
        missing.map(([, c]) => ({ workspace_id: workspaceId, user_id: userId, name: c.name.trim(), domain: c.domain?.toLowerCase() ?? null, linkedin_url: c.linkedin_url ?? null, industry: c.industry ?? null })),
      ),
      'companies',
    );
    // A multi-row insert returns its rows in the order given.
    made.forEach((row, i) => ids.set(missing[i]![0], row.id));
  }
  return { ids, created: missing.length };
}

/** One company id for a name (and domain), found or made. */
export async function companyIdFor(db: DataClient, workspaceId: string, userId: string | null, company: CompanyInput): Promise<string | null> {
  return (await companyIds(db, workspaceId, userId, [company])).ids.get(companyKey(company)) ?? null;
}

export interface Saved {
  id: string;
  created: boolean;
}

/** The identity of a contact input: its e-mail, else its LinkedIn URL (lower-cased); none for a name alone. */
const identities = (c: ContactInput): string[] => [c.email ? `e:${c.email.toLowerCase()}` : null, c.linkedin_url ? `l:${c.linkedin_url.toLowerCase()}` : null].filter((k): k is string => k !== null);

/**
 * Saves contacts into the workspace: a person already there (same e-mail or LinkedIn URL, also twice in one batch) is
 * completed instead of duplicated. Companies are found or made when `companies` is set. One answer per input, in order.
 */
export async function saveContacts(
  db: DataClient,
  workspaceId: string,
  userId: string | null,
  inputs: ContactInput[],
  opts: { source: 'manual' | 'lead_search' | 'import'; companies: boolean },
): Promise<{ saved: Saved[]; companiesCreated: number }> {
  const people = inputs.map((c) => ({ ...c, email: c.email?.trim() || null, linkedin_url: c.linkedin_url ? normalizeUrl(c.linkedin_url) : null }));
  const existing = await matching(db, 'contacts', workspaceId, '*', {
    email: people.flatMap((c) => (c.email ? [c.email] : [])),
    linkedin_url: people.flatMap((c) => (c.linkedin_url ? [c.linkedin_url] : [])),
  });
  const byIdentity = new Map<string, Row>();
  for (const row of existing) for (const key of identities(row as unknown as ContactInput)) byIdentity.set(key, row);

  const { ids: companies, created: companiesCreated } = opts.companies
    ? await companyIds(db, workspaceId, userId, people.flatMap((c) => (c.company ? [c.company] : [])))
    : { ids: new Map<string, string>(), created: 0 };
  const columnsOf = (c: (typeof people)[number]) => ({
    full_name: c.full_name.trim(),
    email: c.email,
    phone: c.phone ?? null,
    title: c.title ?? null,
    linkedin_url: c.linkedin_url,
    location: c.location ?? null,
    company_id: c.company ? (companies.get(companyKey(c.company)) ?? null) : null,
    ...(c.enrichment ? { enrichment: c.enrichment, enriched_at: c.enriched_at ?? new Date().toISOString() } : {}),
  });

  // Which input becomes which row: an existing match, an earlier input of the batch, or a new row.
  const plan: Array<{ match: Row } | { first: number } | { create: number }> = [];
  const firstOf = new Map<string, number>();
  const creates: number[] = [];
  people.forEach((c, i) => {
    const keys = identities(c);
    const match = keys.map((k) => byIdentity.get(k)).find((r) => r !== undefined);
    if (match) return void plan.push({ match });
    const earlier = keys.map((k) => firstOf.get(k)).find((n) => n !== undefined);
    if (earlier !== undefined) {
      // A repeat within the batch completes the first mention before anything is written.
      const first = people[earlier]! as Record<string, unknown>;
      for (const [key, value] of Object.entries(c)) if ((first[key] ?? '') === '' && value !== null && value !== undefined) first[key] = value;
      return void plan.push({ first: earlier });
    }
    for (const k of keys) firstOf.set(k, i);
    plan.push({ create: creates.length });
    creates.push(i);
  });

  const made = creates.length
    ? rows(await db.from('contacts').insert<Row>(creates.map((i) => ({ workspace_id: workspaceId, user_id: userId, source: opts.source, ...columnsOf(people[i]!) }))), 'contacts')
    : [];
  const saved: Saved[] = [];
  for (const [i, step] of plan.entries()) {
    if ('create' in step) saved.push({ id: made[step.create]!.id, created: true });
    else if ('first' in step) saved.push({ id: saved[step.first]!.id, created: false });
    else {
      const patch = fillPatch(step.match, columnsOf(people[i]!), null);
      if (Object.keys(patch).length) {
        const [updated] = rows(await db.from('contacts').update<Row>({ ...patch, updated_at: new Date().toISOString() }, `id=${eq(step.match.id)}`), 'contacts');
        // Later inputs matching the same row see what this one filled.
        Object.assign(step.match, updated ?? patch);
      }
      saved.push({ id: step.match.id, created: false });
    }
  }
  return { saved, companiesCreated };
}
