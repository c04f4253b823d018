import { sql, type Kysely } from 'kysely';
import type { ControlDatabase } from '../db/types.ts';

/** Meter names recorded in usage_daily. Later areas add theirs (lambda_invocations, ai_tokens, ...). */
export type MeterName = 'storage_bytes' | (string & {});

/** Any kysely handle: the control database or a transaction on it (the meter joins the caller's transaction). */
type Db = Kysely<ControlDatabase>;

/**
 * Adds `delta` (may be negative) to today's (UTC) aggregate of `meter` for the app. One upsert; concurrent
 * writers add up correctly because the increment happens in the row update.
 */
export async function recordUsage(db: Db, appId: string, meter: MeterName, delta: number): Promise<void> {
  if (!Number.isSafeInteger(delta)) throw new Error(`usage delta must be a safe integer, got ${delta}`);
  if (delta === 0) return;
  await sql`
    insert into usage_daily (app_id, meter, day, quantity)
    values (${appId}, ${meter}, (now() at time zone 'utc')::date, ${delta})
    on conflict (app_id, meter, day) do update set quantity = usage_daily.quantity + excluded.quantity
  `.execute(db);
}

/** The sum of every recorded delta of the meter: for a gauge meter such as storage_bytes, the current level. */
export async function meterBalance(db: Db, appId: string, meter: MeterName): Promise<number> {
  const { rows } = await sql<{ total: string | null }>`
    select sum(quantity)::text as total from usage_daily where app_id = ${appId} and meter = ${meter}
  `.execute(db);
  return Number(rows[0]?.total ?? 0);
}

/** Daily rows of a meter, oldest first (for billing and tests). */
export async function usageDays(db: Db, appId: string, meter: MeterName): Promise<{ day: string; quantity: number }[]> {
  const { rows } = await sql<{ day: string; quantity: string }>`
    select to_char(day, 'YYYY-MM-DD') as day, quantity::text as quantity
    from usage_daily where app_id = ${appId} and meter = ${meter} order by day
  `.execute(db);
  return rows.map((r) => ({ day: r.day, quantity: Number(r.quantity) }));
}
