// The request headers of the data API: Range and Prefer.
import { AppError } from '../core/errors.ts';

/** `Range: items=0-9` or `0-9` (inclusive) to limit/offset. */
export function parseRange(header: string | undefined): { offset: number; limit?: number } | undefined {
  if (!header) return undefined;
  const m = /^(?:items=)?(\d+)-(\d*)$/.exec(header.trim());
  if (!m) throw new AppError(416, 'INVALID_RANGE', `Cannot read Range '${header}'.`, 'Send Range: items=<first>-<last>, e.g. 0-9.');
  const from = Number(m[1]);
  if (m[2] === '') return { offset: from };
  const to = Number(m[2]);
  if (to < from) throw new AppError(416, 'INVALID_RANGE', `Range '${header}' ends before it starts.`, 'Send Range: items=<first>-<last> with last >= first.');
  return { offset: from, limit: to - from + 1 };
}

export interface Prefer {
  return: 'minimal' | 'representation' | 'headers-only';
  count?: 'exact';
  resolution?: 'merge-duplicates' | 'ignore-duplicates';
  missing?: 'default';
}

/** Prefer: return=representation, count=exact, resolution=merge-duplicates, missing=default (others ignored, as PostgREST does). */
export function parsePrefer(header: string | undefined, defaultReturn: Prefer['return']): Prefer {
  const prefer: Prefer = { return: defaultReturn };
  for (const part of (header ?? '').split(',')) {
    const [k, v] = part.trim().split('=').map((s) => s?.trim());
    if (k === 'return' && (v === 'minimal' || v === 'representation' || v === 'headers-only')) prefer.return = v;
    else if (k === 'count' && v === 'exact') prefer.count = 'exact';
    else if (k === 'resolution' && (v === 'merge-duplicates' || v === 'ignore-duplicates')) prefer.resolution = v;
    else if (k === 'missing' && v === 'default') prefer.missing = 'default';
  }
  return prefer;
}

