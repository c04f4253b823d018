// The data API (data_select, data_insert, data_update, data_delete) over its PostgREST wire: the query string is the
// API's own dialect (col=op.value, order, limit, offset), totals come back in Content-Range, and errors are PostgREST's
// { code, message, details, hint }, not the platform's envelope, so these routes have their own fetch. A session runs
// as the service role: every row, no row-level security.
import { ApiError, seg, type Method } from '../api.ts';

export type Row = Record<string, unknown>;
export const OPERATORS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'like', 'ilike', 'is', 'in'] as const;
export type Operator = (typeof OPERATORS)[number];
export interface Filter {
  column: string;
  op: Operator;
  value: string;
}
export interface Order {
  column: string;
  dir: 'asc' | 'desc';
}
export interface PageRequest {
  limit: number;
  offset: number;
  /** Sort keys in order (order=a.desc,b.asc). */
  order?: readonly Order[];
  filters: readonly Filter[];
  /** exact counts every matching row; estimated counts up to 1,000 and past that takes the planner's estimate. */
  count: 'exact' | 'estimated';
}
export interface Page {
  rows: Row[];
  /** Null when the API counted nothing. */
  total: number | null;
}

/** A filter as the data API reads it: `in` takes a parenthesized list, which the person may leave out. */
export function filterValue(f: Filter): string {
  return f.op === 'in' && !f.value.startsWith('(') ? `${f.op}.(${f.value})` : `${f.op}.${f.value}`;
}

/** The query string of a page (or of a filter alone): the dialect the person can read back and reuse. */
export function pageQuery(req: Partial<PageRequest> & { filters: readonly Filter[] }): URLSearchParams {
  const q = new URLSearchParams();
  for (const f of req.filters) q.append(f.column, filterValue(f));
  if (req.order?.length) q.set('order', req.order.map((o) => `${o.column}.${o.dir}`).join(','));
  if (req.limit !== undefined) q.set('limit', String(req.limit));
  if (req.offset !== undefined) q.set('offset', String(req.offset));
  return q;
}

/** The row a primary key names: pk=eq.value for each key column. */
export const keyFilters = (row: Row, key: readonly string[]): Filter[] => key.map((column) => ({ column, op: 'eq', value: String(row[column]) }));

/** Content-Range's total ("0-49/10000", "*\/0"); null for "*" (not counted) or no header. */
function totalOf(range: string | null): number | null {
  const total = range?.split('/')[1];
  return total === undefined || total === '*' ? null : Number(total);
}

async function send(method: Method, path: string, prefer: string, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = { prefer };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, { method, credentials: 'same-origin', headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (res.ok) return res;
  const err = (await res.json().catch(() => null)) as { code?: string; message?: string; details?: string | null; hint?: string | null } | null;
  const message = [err?.message ?? `The request failed (${res.status}).`, err?.details, err?.hint].filter(Boolean).join(' ');
  throw new ApiError(res.status, err?.code ?? `HTTP_${res.status}`, message);
}

const tablePath = (appId: string, table: string, q?: URLSearchParams) => `/v1/${seg(appId)}/${seg(table)}${q?.size ? `?${q}` : ''}`;
/** Writes by key touch one row or fail, changing nothing (PGRST124): a key that matched more would be a bug. */
const ONE_ROW = 'handling=strict, max-affected=1';

export const data = {
  async page(appId: string, table: string, req: PageRequest): Promise<Page> {
    const res = await send('GET', tablePath(appId, table, pageQuery(req)), `count=${req.count}`);
    return { rows: (await res.json()) as Row[], total: totalOf(res.headers.get('content-range')) };
  },
  async insert(appId: string, table: string, row: Row): Promise<Row> {
    const res = await send('POST', tablePath(appId, table), 'return=representation', row);
    return ((await res.json()) as Row[])[0]!;
  },
  async update(appId: string, table: string, key: Filter[], changes: Row): Promise<Row> {
    const res = await send('PATCH', tablePath(appId, table, pageQuery({ filters: key })), `return=representation, ${ONE_ROW}`, changes);
    return ((await res.json()) as Row[])[0]!;
  },
  remove: (appId: string, table: string, key: Filter[]) => send('DELETE', tablePath(appId, table, pageQuery({ filters: key })), ONE_ROW),
};
