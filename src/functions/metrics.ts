// A function's invocations over time (functions_metrics): an hourly rollup upserted with each batch of log rows
// (function_logs keeps only the newest entries, so it cannot answer for a month), read back as hour or day buckets,
// the empty ones included so that a chart's bars line up with time.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { ControlDatabase } from '../db/types.ts';

export const BUCKETS = ['hour', 'day'] as const;
export type Bucket = (typeof BUCKETS)[number];
const BUCKET_MS: Record<Bucket, number> = { hour: 3_600_000, day: 86_400_000 };
/** At most this many buckets in one answer: 31 days of hours, 366 days. */
export const MAX_BUCKETS: Record<Bucket, number> = { hour: 744, day: 366 };

/** One log row as the rollup counts it (at_ms: its created_at in epoch milliseconds). */
export interface Counted {
  function_id: string;
  at_ms: number;
  duration_ms: number;
  level: string;
}

interface HourTotals {
  id: string;
  hour: string;
  n: number;
  e: number;
  d: number;
  m: number;
}

/** The batch's invocations summed per function and UTC hour, in key order (concurrent upserts lock rows alike). */
export function hourlyTotals(rows: Counted[]): HourTotals[] {
  // By hour, then by the row's function id string (the same object on every row of a function, its hash computed
  // once), rather than by a key string made and hashed per row. A batch spans one hour or two.
  const byHour = new Map<number, Map<string, HourTotals>>();
  for (const r of rows) {
    const start = Math.floor(r.at_ms / BUCKET_MS.hour) * BUCKET_MS.hour;
    let functions = byHour.get(start);
    if (!functions) byHour.set(start, (functions = new Map()));
    let t = functions.get(r.function_id);
    if (!t) functions.set(r.function_id, (t = { id: r.function_id, hour: new Date(start).toISOString(), n: 0, e: 0, d: 0, m: 0 }));
    t.n++;
    if (r.level === 'error') t.e++;
    t.d += r.duration_ms;
    t.m = Math.max(t.m, r.duration_ms);
  }
  const totals = [...byHour.values()].flatMap((functions) => [...functions.values()]);
  // Function ids are uuids of one length: ordering by id, then hour, is the order of `${id}|${hour}`.
  return totals.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : a.hour < b.hour ? -1 : a.hour > b.hour ? 1 : 0));
}

/** Adds the totals to the rollup; rows of functions deleted meanwhile are dropped, as their log rows are. */
export async function upsertHourly(tx: Transaction<ControlDatabase>, totals: HourTotals[]): Promise<void> {
  if (totals.length === 0) return;
  await sql`
    insert into function_metrics_hourly as h (function_id, hour, invocations, errors, total_duration_ms, max_duration_ms)
    select c.id, c.hour, c.n, c.e, c.d, c.m
    from jsonb_to_recordset(${JSON.stringify(totals)}::jsonb) as c(id uuid, hour timestamptz, n int, e int, d bigint, m int)
    where exists (select 1 from functions f where f.id = c.id)
    on conflict (function_id, hour) do update set
      invocations = h.invocations + excluded.invocations, errors = h.errors + excluded.errors,
      total_duration_ms = h.total_duration_ms + excluded.total_duration_ms, max_duration_ms = greatest(h.max_duration_ms, excluded.max_duration_ms)`.execute(tx);
}

export interface MetricsBucket {
  start: string;
  invocations: number;
  errors: number;
  avg_duration_ms: number;
  max_duration_ms: number;
}

/** The first bucket's start at or before `at` (UTC hours and days). */
export const bucketFloor = (at: Date, bucket: Bucket): Date => new Date(Math.floor(at.getTime() / BUCKET_MS[bucket]) * BUCKET_MS[bucket]);

/** Buckets from `start`'s bucket up to `end` (exclusive), every one present. */
export async function readBuckets(db: Kysely<ControlDatabase>, functionId: string, bucket: Bucket, start: Date, end: Date): Promise<MetricsBucket[]> {
  const first = bucketFloor(start, bucket);
  const rows = await db
    .selectFrom('function_metrics_hourly')
    .select(['hour', 'invocations', 'errors', 'total_duration_ms', 'max_duration_ms'])
    .where('function_id', '=', functionId)
    .where('hour', '>=', first)
    .where('hour', '<', end)
    .execute();
  const sums = new Map<number, { n: number; e: number; d: number; m: number }>();
  for (const r of rows) {
    const at = bucketFloor(r.hour, bucket).getTime();
    const s = sums.get(at) ?? { n: 0, e: 0, d: 0, m: 0 };
    s.n += r.invocations;
    s.e += r.errors;
    s.d += Number(r.total_duration_ms);
    s.m = Math.max(s.m, r.max_duration_ms);
    sums.set(at, s);
  }
  const out: MetricsBucket[] = [];
  for (let at = first.getTime(); at < end.getTime(); at += BUCKET_MS[bucket]) {
    const s = sums.get(at) ?? { n: 0, e: 0, d: 0, m: 0 };
    out.push({ start: new Date(at).toISOString(), invocations: s.n, errors: s.e, avg_duration_ms: s.n ? Math.round((s.d / s.n) * 100) / 100 : 0, max_duration_ms: s.m });
  }
  return out;
}

/** How many buckets the window spans. */
export const bucketCount = (bucket: Bucket, start: Date, end: Date): number => Math.ceil((end.getTime() - bucketFloor(start, bucket).getTime()) / BUCKET_MS[bucket]);
