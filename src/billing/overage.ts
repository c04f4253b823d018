// Pro overage, charged: once a billing period has closed, each pro account's usage beyond its allowance becomes
// pending Stripe invoice items, which Stripe adds to the subscription's next invoice.
import { sql, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import type { Logger } from 'pino';
import type { PlatformPayments } from './payments-port.ts';
import { PLANS, type LimitedMeter } from './plans.ts';
import { NANOS_PER_USD } from '../core/money.ts';
import { billingPeriod, isoDay, overageNanos, usageByAccount, type MeterUsage } from './usage.ts';
import type { ControlDatabase } from '../db/types.ts';

const NANOS_PER_CENT = 10_000_000;

/** What a line is for: a limited meter, or AI credit spent beyond the balance (its quantity in nano-dollars). */
export type OverageMeter = LimitedMeter | 'ai_credits';

/** What one invoiced line says: the meter's words and unit. */
const DESCRIBE: Readonly<Partial<Record<OverageMeter, (units: number) => string>>> = {
  ai_credits: (nanos) => `$${(nanos / NANOS_PER_USD).toFixed(2)} of AI credits beyond the pro allowance`,
  monthly_active_users: (n) => `${n.toLocaleString('en-US')} monthly active users beyond the pro allowance`,
  database_bytes: (n) => `${gb(n)} GB of database beyond the pro allowance`,
  bandwidth_bytes: (n) => `${gb(n)} GB of bandwidth beyond the pro allowance`,
  storage_bytes: (n) => `${gb(n)} GB of file storage beyond the pro allowance`,
};

const gb = (bytes: number) => (bytes / 1024 ** 3).toFixed(2);

export interface OverageCharge {
  accountId: string;
  period: string;
  meter: OverageMeter;
  quantity: number;
  amountCents: number;
  invoiceItemId: string | null;
}

/**
 * Records the previous period's overage of every account on pro all through it, with a Stripe customer (one row per meter, amounts
 * rounded to the cent, lines under a cent dropped), then creates the Stripe invoice item of every row that has none
 * yet. Safe to run again and after a crash: rows are written once, and an item's idempotency key is its row's key;
 * a line Stripe refuses keeps its error (`last_error`, `attempts`) and is tried again next run.
 * Without Stripe the rows are still recorded; they are invoiced once a key is configured.
 */
export async function invoiceOverage(db: Kysely<ControlDatabase>, stripe: PlatformPayments | undefined, now: Date, log: Logger): Promise<OverageCharge[]> {
  const closed = billingPeriod(new Date(billingPeriod(now).start.getTime() - 1));
  await recordOverage(db, closed.start);
  for (const charge of stripe ? await pending(db) : []) {
    try {
      await invoiceLine(db, stripe!, charge, now);
      log.info({ account_id: charge.accountId, period: charge.period, meter: charge.meter, amount_cents: charge.amountCents }, 'overage invoiced');
    } catch (err) {
      // One customer Stripe refuses (deleted, say) must not hold up every other account's lines.
      const message = err instanceof Error ? err.message.slice(0, 500) : String(err);
      await sql`update billing_overage_charges set attempts = attempts + 1, last_error = ${message}
        where account_id = ${charge.accountId} and period = ${charge.period} and meter = ${charge.meter}`.execute(db);
      log.warn({ account_id: charge.accountId, period: charge.period, meter: charge.meter, err }, 'overage line not invoiced; retried next run');
    }
  }
  return (await sql<ChargeRow>`${SELECT_CHARGES} where c.period = ${isoDay(closed.start)}`.execute(db)).rows.map(chargeView);
}

/** One line's pending Stripe invoice item, and the row marked with it. */
async function invoiceLine(db: Kysely<ControlDatabase>, stripe: PlatformPayments, charge: OverageCharge & { customerId: string }, now: Date): Promise<void> {
  const id = await stripe.addInvoiceItem({
    customerId: charge.customerId,
    amountCents: charge.amountCents,
    description: `${DESCRIBE[charge.meter]?.(charge.quantity) ?? charge.meter}, ${charge.period.slice(0, 7)}`,
    period: billingPeriod(new Date(`${charge.period}T00:00:00Z`)),
    metadata: { account_id: charge.accountId, period: charge.period, meter: charge.meter },
    // The customer is part of the key: a changed customer is a new request, not a conflicting replay of the old one.
    idempotencyKey: `overage-${charge.accountId}-${charge.period}-${charge.meter}-${charge.customerId}`,
  });
  await sql`update billing_overage_charges set stripe_invoice_item_id = ${id}, invoiced_at = ${now}, last_error = null
    where account_id = ${charge.accountId} and period = ${charge.period} and meter = ${charge.meter}`.execute(db);
}

/**
 * The closed period's overage rows, written once (a later run changes nothing): the meters of every account pro all
 * through it, and the AI credit overage its charges recorded (owed whatever the plan was the rest of the period).
 */
async function recordOverage(db: Kysely<ControlDatabase>, periodStart: Date): Promise<void> {
  const { rows } = await sql<{ id: string }>`select id from accounts
    where plan = 'pro' and stripe_customer_id is not null and plan_since <= ${periodStart}`.execute(db);
  const usage = rows.length ? await usageByAccount(db, periodStart, rows.map((r) => r.id)) : new Map<string, MeterUsage>();
  const values = await aiOverage(db, periodStart);
  for (const [accountId, used] of usage) {
    for (const [meter, nanos] of Object.entries(overageNanos('pro', used)) as [LimitedMeter, number][]) {
      const cents = Math.round(nanos / NANOS_PER_CENT);
      if (cents > 0) values.push({ accountId, meter, quantity: used[meter] - PLANS.pro.limits[meter]!, cents });
    }
  }
  if (!values.length) return;
  await sql`
    insert into billing_overage_charges (account_id, period, meter, quantity, amount_cents)
    select * from unnest(${values.map((v) => v.accountId)}::uuid[], ${Array(values.length).fill(isoDay(periodStart))}::date[],
      ${values.map((v) => v.meter)}::text[], ${values.map((v) => v.quantity)}::bigint[], ${values.map((v) => v.cents)}::bigint[])
    on conflict (account_id, period, meter) do nothing
  `.execute(db);
}

interface OverageLine {
  accountId: string;
  meter: OverageMeter;
  quantity: number;
  cents: number;
}

/** The closed period's AI credit overage of each account with a Stripe customer, as lines (under a cent dropped). */
async function aiOverage(db: Kysely<ControlDatabase>, periodStart: Date): Promise<OverageLine[]> {
  return (await aiOverageCredit(db, periodStart, sql`a.stripe_customer_id is not null`))
    .map(({ accountId, nanos }) => ({ accountId, meter: 'ai_credits' as const, quantity: nanos, cents: Math.round(aiOverageCost(nanos) / NANOS_PER_CENT) }))
    .filter((line) => line.cents > 0);
}

/**
 * What one account's AI credit overage so far in the period starting at `periodStart` costs, in nano-dollars (0 when
 * none): the amount the period's close will invoice, shown before it (billing_get's overageUsd).
 */
export async function aiOverageNanos(db: Kysely<ControlDatabase>, accountId: string, periodStart: Date): Promise<number> {
  const [line] = await aiOverageCredit(db, periodStart, sql`l.account_id = ${accountId}`);
  return line ? aiOverageCost(line.nanos) : 0;
}

/** AI credit spent beyond the balance in the period starting at `periodStart` (nano-dollars of credit), per account. */
async function aiOverageCredit(db: Kysely<ControlDatabase>, periodStart: Date, accounts: RawBuilder<unknown>): Promise<Array<{ accountId: string; nanos: number }>> {
  const { rows } = await sql<{ account_id: string; nanos: string }>`
    select l.account_id, sum(l.overage_nanos)::text as nanos from credit_ledger l join accounts a on a.id = l.account_id
    where ${accounts} and l.kind = 'charge' and l.overage_nanos > 0
      and l.created_at >= ${periodStart} and l.created_at < ${billingPeriod(periodStart).end}
    group by l.account_id
  `.execute(db);
  return rows.map((r) => ({ accountId: r.account_id, nanos: Number(r.nanos) }));
}

/** Overage is recorded on charges whatever the plan was; it is priced as the pro plan prices it. */
function aiOverageCost(creditNanos: number): number {
  const price = PLANS.pro.aiCredits!.overage!;
  return (creditNanos / price.per) * price.nanos;
}

/** A charge with its account's Stripe customer; `period` is selected as text (the day the period starts). */
type ChargeRow = Pick<Selectable<ControlDatabase['billing_overage_charges']>, 'account_id' | 'meter' | 'quantity' | 'amount_cents' | 'stripe_invoice_item_id'> &
  Pick<Selectable<ControlDatabase['accounts']>, 'stripe_customer_id'> & { period: string };

const SELECT_CHARGES = sql`select c.account_id, c.period::text, c.meter, c.quantity::text, c.amount_cents::text, c.stripe_invoice_item_id, a.stripe_customer_id
  from billing_overage_charges c join accounts a on a.id = c.account_id`;

function chargeView(r: ChargeRow): OverageCharge {
  return {
    accountId: r.account_id,
    period: r.period,
    // recordOverage writes only limited meters and ai_credits.
    meter: r.meter as OverageMeter,
    quantity: Number(r.quantity),
    amountCents: Number(r.amount_cents),
    invoiceItemId: r.stripe_invoice_item_id,
  };
}

/** Rows of any period still without their invoice item (a run that failed, or ran before Stripe was configured). */
async function pending(db: Kysely<ControlDatabase>): Promise<Array<OverageCharge & { customerId: string }>> {
  const { rows } = await sql<ChargeRow>`${SELECT_CHARGES} where c.stripe_invoice_item_id is null and a.stripe_customer_id is not null order by c.attempts, c.created_at`.execute(db);
  return rows.map((r) => ({ ...chargeView(r), customerId: r.stripe_customer_id! }));
}
