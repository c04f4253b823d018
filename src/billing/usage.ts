// What an account has used, summed over its apps, against what its plan allows.
import { sql, type Kysely } from 'kysely';
import { NANOS_PER_USD } from '../core/money.ts';
import { LEVEL_METERS, LIMITED_METERS, PLANS, type LimitedMeter, type Meter, type PlanId } from './plans.ts';
import type { ControlDatabase } from '../db/types.ts';

/** The billing period of the monthly meters: the current UTC calendar month (pro subscriptions renew in step with it). */
export function billingPeriod(now: Date): { start: Date; end: Date } {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { start, end };
}

export type MeterUsage = Record<LimitedMeter, number>;

const zeroUsage = (): MeterUsage => Object.fromEntries(LIMITED_METERS.map((m) => [m, 0])) as MeterUsage;

/**
 * Usage of each limited meter by every account in `accountIds` (undefined: every account with a free plan or a soft
 * lock, the ones enforcement looks at), in one query, for the billing period `now` falls in: levels as they stood at
 * its end (all-time sums up to it), the others summed over it.
 */
export async function usageByAccount(db: Kysely<ControlDatabase>, now: Date, accountIds?: readonly string[]): Promise<Map<string, MeterUsage>> {
  const { start, end } = billingPeriod(now);
  const scope = accountIds
    ? sql`ac.id = any(${[...accountIds]}::uuid[])`
    : sql`(ac.plan = 'free' or ac.status = 'soft_locked')`;
  const { rows } = await sql<{ account_id: string; meter: LimitedMeter; quantity: string }>`
    select ac.id as account_id, u.meter, sum(u.quantity)::text as quantity
    from accounts ac
    join apps a on a.account_id = ac.id and a.status = 'ready'
    join usage_daily u on u.app_id = a.id
    where ${scope}
      and u.meter = any(${[...LIMITED_METERS]}::text[])
      and (u.meter = any(${[...LEVEL_METERS]}::text[]) or u.day >= ${isoDay(start)}::date)
      and u.day < ${isoDay(end)}::date
    group by ac.id, u.meter
  `.execute(db);
  const byAccount = new Map<string, MeterUsage>((accountIds ?? []).map((id) => [id, zeroUsage()]));
  for (const row of rows) {
    let usage = byAccount.get(row.account_id);
    if (!usage) byAccount.set(row.account_id, (usage = zeroUsage()));
    usage[row.meter] = Number(row.quantity);
  }
  return byAccount;
}

/**
 * One app's share of its account's usage, counted as the account's is: levels all-time, the other limited meters over
 * the billing period `now` falls in, AI credits (nano-dollars charged, overage included) since `creditsSince`.
 */
export async function usageOfApp(db: Kysely<ControlDatabase>, appId: string, now: Date, creditsSince: Date): Promise<MeterUsage & { ai_credits: number }> {
  const { start, end } = billingPeriod(now);
  const { rows } = await sql<{ meter: LimitedMeter | 'ai_credits'; quantity: string }>`
    select u.meter, sum(u.quantity)::text as quantity from usage_daily u
    where u.app_id = ${appId} and u.day < ${isoDay(end)}::date
      and (u.meter = any(${[...LEVEL_METERS]}::text[])
        or (u.meter = any(${[...LIMITED_METERS]}::text[]) and u.day >= ${isoDay(start)}::date)
        or (u.meter = 'ai_credits' and u.day >= ${isoDay(creditsSince)}::date))
    group by u.meter
  `.execute(db);
  const usage = { ...zeroUsage(), ai_credits: 0 };
  for (const row of rows) usage[row.meter] = Number(row.quantity);
  return usage;
}

/** Where the AI credits of `plan` are counted from: the account's start (free, a lifetime allowance) or the period's. */
export const aiCreditsSince = (plan: PlanId, now: Date): Date => (PLANS[plan].aiCredits?.per === 'lifetime' ? new Date(0) : billingPeriod(now).start);

/** AI credits spent, in nano-dollars, overage included: over the account's lifetime (free) or this period (pro). */
export async function aiCreditsSpent(db: Kysely<ControlDatabase>, accountId: string, plan: PlanId, now: Date): Promise<number> {
  const since = aiCreditsSince(plan, now);
  const { rows } = await sql<{ spent: string | null }>`
    select sum(overage_nanos - amount_nanos)::text as spent from credit_ledger
    where account_id = ${accountId} and kind = 'charge' and created_at >= ${since}
  `.execute(db);
  return Number(rows[0]?.spent ?? 0);
}

export interface OverLimit {
  meter: LimitedMeter;
  used: number;
  limit: number;
}

/** The meters whose usage is beyond the plan's allowance. */
export function overLimits(plan: PlanId, usage: MeterUsage): OverLimit[] {
  const over: OverLimit[] = [];
  for (const meter of LIMITED_METERS) {
    const limit = PLANS[plan].limits[meter];
    if (limit !== undefined && usage[meter] > limit) over.push({ meter, used: usage[meter], limit });
  }
  return over;
}

/** What usage beyond the allowance costs on plans that charge for it, per meter, in nano-dollars. */
export function overageNanos(plan: PlanId, usage: MeterUsage): Partial<Record<LimitedMeter, number>> {
  const out: Partial<Record<LimitedMeter, number>> = {};
  for (const [meter, price] of Object.entries(PLANS[plan].overage) as [LimitedMeter, { nanos: number; per: number }][]) {
    const beyond = usage[meter] - (PLANS[plan].limits[meter] ?? Infinity);
    if (beyond > 0) out[meter] = Math.round((beyond / price.per) * price.nanos);
  }
  return out;
}

/** "bandwidth_bytes 5.3 GB of 5 GB": how a limit reads in messages. */
export function describeOver(over: readonly OverLimit[]): string {
  return over.map((o) => `${o.meter} ${formatQuantity(o.meter, o.used)} of ${formatQuantity(o.meter, o.limit)}`).join(', ');
}

function formatQuantity(meter: Meter, n: number): string {
  if (meter.endsWith('_bytes')) {
    const gb = n / 1024 ** 3;
    return gb >= 1 ? `${round(gb)} GB` : `${round(n / 1024 ** 2)} MB`;
  }
  if (meter === 'ai_credits') return `$${round(n / NANOS_PER_USD)}`;
  return String(n);
}

const round = (n: number) => Math.round(n * 100) / 100;

export function isoDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}
