// Account status transitions (the spec's "Account status" table):
//   active --(free plan over an allowance)--> soft_locked --(usage back within, or a paid plan)--> active ("restored")
//   active|soft_locked --(pro payment failed)--> grace (7 days; e-mail) --(invoice paid)--> active
//   grace --(7 days pass, still unpaid)--> suspended (e-mail) --(invoice paid)--> active
// Every transition is one conditional UPDATE from the state it leaves, so concurrent enforcers and webhooks cannot
// apply one twice; `now` is a parameter so that tests move the clock.
import { sql, type Kysely } from 'kysely';
import { isPlanId, PLANS } from './plans.ts';
import { describeOver, overLimits, usageByAccount } from './usage.ts';
import { queueNotification } from './notify.ts';
import type { ControlDatabase } from '../db/types.ts';

export const ACCOUNT_STATUSES = ['active', 'soft_locked', 'grace', 'suspended'] as const;
export type AccountStatus = (typeof ACCOUNT_STATUSES)[number];

/** The spec's grace after a failed pro payment. */
export const GRACE_DAYS = 7;
const DAY_MS = 86_400_000;

export interface StatusChange {
  accountId: string;
  from: AccountStatus;
  to: AccountStatus;
  reason: string;
}

/**
 * Soft-locks free accounts over an allowance and restores soft-locked ones that are back within theirs (or moved to
 * a plan that does not lock); `accountIds` limits the pass to those accounts (after a plan change, in tests).
 */
export async function enforceLimits(db: Kysely<ControlDatabase>, now: Date, accountIds?: readonly string[]): Promise<StatusChange[]> {
  const usage = await usageByAccount(db, now, accountIds);
  const scope = accountIds ? sql`id = any(${[...accountIds]}::uuid[])` : sql`(plan = 'free' or status = 'soft_locked')`;
  const { rows } = await sql<{ id: string; plan: string; status: AccountStatus }>`
    select id, plan, status from accounts where ${scope} and status in ('active', 'soft_locked')
  `.execute(db);
  const changes: StatusChange[] = [];
  for (const account of rows) {
    const plan = isPlanId(account.plan) ? account.plan : 'free';
    const over = PLANS[plan].lockWhenOver ? overLimits(plan, usage.get(account.id) ?? zero()) : [];
    if (over.length && account.status === 'active') {
      const reason = `over the ${plan} plan's allowance: ${describeOver(over)}`;
      if (await move(db, account.id, 'active', 'soft_locked', reason, now)) changes.push({ accountId: account.id, from: 'active', to: 'soft_locked', reason });
    } else if (!over.length && account.status === 'soft_locked') {
      const reason = PLANS[plan].lockWhenOver ? 'restored: usage is back within the plan' : `restored: the ${plan} plan`;
      if (await move(db, account.id, 'soft_locked', 'active', reason, now)) changes.push({ accountId: account.id, from: 'soft_locked', to: 'active', reason });
    }
  }
  return changes;
}

const zero = () => ({ monthly_active_users: 0, database_bytes: 0, bandwidth_bytes: 0, storage_bytes: 0, lambda_invocations: 0 });

async function move(db: Kysely<ControlDatabase>, accountId: string, from: AccountStatus, to: AccountStatus, reason: string, now: Date): Promise<boolean> {
  const { rows } = await sql`
    update accounts set status = ${to}, status_reason = ${reason}, status_changed_at = ${now}
    where id = ${accountId} and status = ${from} returning id
  `.execute(db);
  return rows.length === 1;
}

/** A pro payment failed: 7 days of grace (once per failing streak) and an e-mail per failed invoice. */
export async function enterGrace(tx: Kysely<ControlDatabase>, accountId: string, invoice: { id: string; email: string | undefined }, now: Date): Promise<void> {
  const graceEnds = new Date(now.getTime() + GRACE_DAYS * DAY_MS);
  await sql`
    update accounts set status = 'grace', grace_ends_at = ${graceEnds}, status_changed_at = ${now},
      status_reason = ${`payment failed (invoice ${invoice.id}); suspended after ${graceEnds.toISOString()} unless paid`},
      billing_email = coalesce(${invoice.email ?? null}, billing_email)
    where id = ${accountId} and status in ('active', 'soft_locked')
  `.execute(tx);
  const { rows } = await sql<{ grace_ends_at: Date | null; billing_email: string | null }>`
    select grace_ends_at, billing_email from accounts where id = ${accountId}
  `.execute(tx);
  const ends = rows[0]?.grace_ends_at ?? graceEnds;
  await queueNotification(tx, {
    accountId,
    kind: 'payment_failed',
    dedupeKey: invoice.id,
    to: rows[0]?.billing_email ?? undefined,
    subject: 'Payment failed: your apps keep running for 7 days',
    body:
      `The payment of invoice ${invoice.id} for your pro plan failed.\n\n` +
      `Your apps keep working during a grace period that ends ${ends.toISOString()}; the account is suspended then if the invoice is still unpaid.\n` +
      'Update the payment method in the billing portal (POST /dashboard/billing/portal).\n',
  });
}

/** An invoice was paid: grace and suspension end. */
export async function paymentSucceeded(tx: Kysely<ControlDatabase>, accountId: string, now: Date): Promise<void> {
  await sql`
    update accounts set status = 'active', grace_ends_at = null, status_changed_at = ${now}, status_reason = 'restored: invoice paid'
    where id = ${accountId} and status in ('grace', 'suspended')
  `.execute(tx);
}

/** Accounts whose grace ran out unpaid are suspended, each with an e-mail. */
export async function suspendExpiredGrace(db: Kysely<ControlDatabase>, now: Date): Promise<StatusChange[]> {
  return db.transaction().execute(async (tx) => {
    const { rows } = await sql<{ id: string; billing_email: string | null }>`
      update accounts set status = 'suspended', status_changed_at = ${now},
        status_reason = 'suspended: the grace period after a failed payment ended unpaid'
      where status = 'grace' and grace_ends_at <= ${now}
      returning id, billing_email
    `.execute(tx);
    for (const row of rows) {
      await queueNotification(tx, {
        accountId: row.id,
        kind: 'suspended',
        dedupeKey: now.toISOString().slice(0, 10),
        to: row.billing_email ?? undefined,
        subject: 'Your account is suspended',
        body: 'The grace period after a failed payment ended and the invoice is still unpaid, so your apps are suspended.\nPay it in the billing portal (POST /dashboard/billing/portal); they come back at once.\n',
      });
    }
    return rows.map((r) => ({ accountId: r.id, from: 'grace' as const, to: 'suspended' as const, reason: 'grace ended unpaid' }));
  });
}
