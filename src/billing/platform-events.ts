// The platform's own Stripe events (POST /webhooks/stripe): they move an account between plans and states.
//   checkout.session.completed (subscription)      -> plan from its metadata (pro), customer and subscription kept
//   customer.subscription.created | .updated       -> active/trialing/past_due: the subscribed plan; canceled, unpaid,
//                                                     incomplete_expired: back to free
//   customer.subscription.deleted                  -> free; a grace or suspension for its unpaid invoice ends
//   invoice.paid | invoice.payment_succeeded       -> grace or suspended -> active
//   invoice.payment_failed                         -> grace (7 days, e-mail), then suspended by the enforcer
// The account is found by the Stripe customer, else by the account id the checkout carried (metadata, client ref).
import { sql, type Kysely } from 'kysely';
import type { PaymentEvent } from './payments-port.ts';
import { isPlanId, type PlanId } from './plans.ts';
import { enterGrace, paymentSucceeded } from './status.ts';
import { isUuid } from '../core/uuid.ts';
import type { ControlDatabase } from '../db/types.ts';

/** Stripe subscription statuses that keep the plan paid for (past_due: Stripe is still retrying the payment). */
const PAYING = new Set(['active', 'trialing', 'past_due']);

/** What applying an event did: the account whose plan or status changed (its limits are then looked at again). */
export interface PlatformEventEffect {
  accountId: string | undefined;
}

type Obj = Record<string, unknown>;

export async function applyPlatformEvent(tx: Kysely<ControlDatabase>, event: PaymentEvent, now: Date): Promise<PlatformEventEffect> {
  const o = event.object;
  switch (event.type) {
    case 'checkout.session.completed':
      return checkoutCompleted(tx, o);
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
      return subscriptionChanged(tx, o, String(o.status ?? ''));
    case 'customer.subscription.deleted':
      return subscriptionChanged(tx, o, 'canceled');
    case 'invoice.paid':
    case 'invoice.payment_succeeded': {
      const accountId = await accountOf(tx, o);
      if (accountId) await paymentSucceeded(tx, accountId, now);
      return { accountId };
    }
    case 'invoice.payment_failed': {
      const accountId = await accountOf(tx, o);
      if (accountId) await enterGrace(tx, accountId, { id: String(o.id), email: str(o.customer_email) }, now);
      return { accountId };
    }
    default:
      return { accountId: undefined };
  }
}

async function checkoutCompleted(tx: Kysely<ControlDatabase>, session: Obj): Promise<PlatformEventEffect> {
  if (session.mode !== 'subscription') return { accountId: undefined };
  const accountId = await accountOf(tx, session);
  if (!accountId) return { accountId };
  const plan = planOf(session);
  const email = str((session.customer_details as Obj | undefined)?.email) ?? str(session.customer_email);
  await sql`
    update accounts set plan = ${plan}, stripe_customer_id = coalesce(stripe_customer_id, ${str(session.customer) ?? null}),
      stripe_subscription_id = ${str(session.subscription) ?? null}, subscription_status = 'active',
      billing_email = coalesce(${email ?? null}, billing_email)
    where id = ${accountId}
  `.execute(tx);
  return { accountId };
}

async function subscriptionChanged(tx: Kysely<ControlDatabase>, sub: Obj, status: string): Promise<PlatformEventEffect> {
  const accountId = await accountOf(tx, sub);
  if (!accountId) return { accountId };
  const paying = PAYING.has(status);
  const item = ((sub.items as Obj | undefined)?.data as Obj[] | undefined)?.[0];
  const periodEnd = Number(item?.current_period_end ?? sub.current_period_end) || undefined;
  await sql`
    update accounts set
      plan = ${paying ? planOf(sub) : 'free'},
      subscription_status = ${status},
      stripe_subscription_id = ${paying ? (str(sub.id) ?? null) : null},
      current_period_end = ${periodEnd ? new Date(periodEnd * 1000) : null},
      status = case when ${!paying} and status in ('grace', 'suspended') then 'active' else status end,
      grace_ends_at = case when ${!paying} then null else grace_ends_at end
    where id = ${accountId}
  `.execute(tx);
  return { accountId };
}

/** The plan the subscription was bought for (the checkout put it in the metadata); pro when it does not say. */
function planOf(o: Obj): PlanId {
  const named = str((o.metadata as Obj | undefined)?.plan_id);
  return named && isPlanId(named) && named !== 'free' ? named : 'pro';
}

async function accountOf(tx: Kysely<ControlDatabase>, o: Obj): Promise<string | undefined> {
  const customer = str(o.customer);
  if (customer) {
    const { rows } = await sql<{ id: string }>`select id from accounts where stripe_customer_id = ${customer}`.execute(tx);
    if (rows[0]) return rows[0].id;
  }
  const named = str((o.metadata as Obj | undefined)?.account_id) ?? str(o.client_reference_id);
  if (!named || !isUuid(named)) return undefined;
  const { rows } = await sql<{ id: string }>`select id from accounts where id = ${named}`.execute(tx);
  return rows[0]?.id;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);
