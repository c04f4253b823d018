/*
 * Connect events (POST /webhooks/payments/connect) and what they do to apps' orders and subscriptions.
 *
 * Every event is applied in one transaction with the record of its id (payment_events, endpoint `connect`): a
 * redelivered event answers `{ received: true, handled: false }` and changes nothing. An event acts only on rows of
 * apps whose owner's connected account is the event's `account` (and, when its metadata names an app, that app):
 * an event from any other account, or about rows it does not know, is `handled: false`, as is any other type.
 * `handled: true` means the event concerned one of those rows, even when their state stays (a partial refund).
 * Every change of a subscription row also enqueues the user's entitlement sync, in the same transaction.
 *
 * Orders: pending (checkout created) -> paid / failed / refunded.
 *   checkout.session.completed (mode payment)  payment_status paid or no_payment_required: pending or failed -> paid
 *                                               (unpaid, an asynchronous method still settling: stays pending)
 *   payment_intent.payment_failed               pending -> failed; paid and refunded stay (a customer may retry in the
 *                                               same checkout, whose completion then makes a failed order paid)
 *   charge.refunded                             refunded in full: -> refunded (final); a partial refund keeps paid
 *
 * Subscriptions: pending (checkout created) -> active <-> past_due -> canceled (final: a Stripe subscription never
 * comes back, so a late or replayed event cannot revive it). Stripe's statuses map as: active, trialing -> active;
 * past_due, unpaid, paused -> past_due; canceled, incomplete_expired -> canceled; incomplete -> pending. The period
 * end is the subscription's items.data[0].current_period_end (API 2025-03 and later), else its top-level
 * current_period_end.
 *   checkout.session.completed (subscription)  pending -> active (or what the subscription, read back from Stripe,
 *                                               says), with its Stripe ids, period end and cancel_at_period_end
 *   customer.subscription.updated               the status mapped as above, period end, cancel_at_period_end
 *   customer.subscription.deleted               -> canceled
 *   invoice.payment_succeeded                   pending or past_due -> active; the period end moves to the end of
 *                                               the period the invoice bills
 *   invoice.payment_failed                      active -> past_due (a pending checkout's failed attempt stays pending)
 */
import { sql, type Kysely } from 'kysely';
import type { PaymentEvent } from '../billing/payments-port.ts';
import { claimPaymentEvent, type PaymentEventOutcome } from '../billing/events.ts';
import { updateOrder, updateSubscription, type OrderRow, type SubscriptionRow } from './checkout.ts';
import type { ConnectAccounts } from './connect.ts';
import {
  chargeFacts,
  checkoutFacts,
  expanded,
  invoiceFacts,
  metadataOf,
  nextSubscriptionStatus,
  refId,
  subscriptionFacts,
  type CheckoutFacts,
  type SubscriptionFacts,
} from './stripe-objects.ts';
import type { MonetizationDeps } from './types.ts';
import type { ControlDatabase } from '../db/types.ts';

/** An event with the account it came from: only that account's apps' rows may be touched. */
interface ConnectEvent extends PaymentEvent {
  account: string;
}

export class ConnectEvents {
  readonly #d: MonetizationDeps;
  readonly #accounts: ConnectAccounts;

  constructor(deps: MonetizationDeps, accounts: ConnectAccounts) {
    this.#d = deps;
    this.#accounts = accounts;
  }

  async handle(event: PaymentEvent): Promise<PaymentEventOutcome> {
    if (!isConnectEvent(event)) {
      this.#d.log.warn({ event_id: event.id, event_type: event.type }, 'connect event without an account ignored');
      return { received: true, handled: false };
    }
    // Read from Stripe before the transaction, which then holds no connection while Stripe answers.
    const subscription = await this.#completedSubscription(event);
    return this.#d.db.transaction().execute(async (tx) => {
      if (!(await claimPaymentEvent(tx, 'connect', event))) return { received: true, handled: false };
      return { received: true, handled: await apply(tx, event, subscription) };
    });
  }

  /**
   * A completed subscription checkout names its subscription but not its period: the subscription is read back
   * (when the session does not carry it expanded), so the row turns active with its period end. Only for a pending
   * row of this account's apps: Stripe is not asked about sessions that are not ours or were already applied.
   */
  async #completedSubscription(event: ConnectEvent): Promise<SubscriptionFacts | undefined> {
    if (event.type !== 'checkout.session.completed') return undefined;
    const session = checkoutFacts(event.object);
    if (session.mode !== 'subscription') return undefined;
    const inline = expanded(session.subscription);
    if (inline) return subscriptionFacts(inline);
    const id = refId(session.subscription);
    if (!id || !this.#d.stripe) return undefined;
    const row = await lockOwned<SubscriptionRow>(this.#d.db, 'app_subscriptions', event, session.metadata, { stripe_checkout_session_id: session.id });
    if (row?.status !== 'pending') return undefined;
    return subscriptionFacts(await this.#accounts.stripe().retrieveSubscription(event.account, id));
  }
}

function isConnectEvent(event: PaymentEvent): event is ConnectEvent {
  return typeof event.account === 'string' && event.account !== '';
}

/** Applies one event; true when it concerned a row of this account's apps. */
async function apply(tx: Kysely<ControlDatabase>, event: ConnectEvent, completedSubscription: SubscriptionFacts | undefined): Promise<boolean> {
  switch (event.type) {
    case 'checkout.session.completed': {
      const session = checkoutFacts(event.object);
      if (session.mode === 'subscription') return subscriptionCheckoutCompleted(tx, event, session, completedSubscription);
      if (session.mode === 'payment') return orderCheckoutCompleted(tx, event, session);
      return false;
    }
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted':
      return subscriptionChanged(tx, event, subscriptionFacts(event.object), event.type === 'customer.subscription.deleted');
    case 'invoice.payment_succeeded':
    case 'invoice.payment_failed':
      return invoiceSettled(tx, event, event.type === 'invoice.payment_succeeded');
    case 'payment_intent.payment_failed':
      return paymentFailed(tx, event);
    case 'charge.refunded':
      return chargeRefunded(tx, event);
    default:
      return false;
  }
}

async function subscriptionCheckoutCompleted(tx: Kysely<ControlDatabase>, event: ConnectEvent, session: CheckoutFacts, stripe: SubscriptionFacts | undefined): Promise<boolean> {
  const row = await lockOwned<SubscriptionRow>(tx, 'app_subscriptions', event, session.metadata, { stripe_checkout_session_id: session.id });
  if (!row) return false;
  await updateSubscription(tx, row, {
    status: nextSubscriptionStatus(row.status, stripe?.status ?? 'active'),
    stripe_subscription_id: stripe?.id ?? refId(session.subscription) ?? row.stripe_subscription_id,
    stripe_customer_id: session.customerId ?? stripe?.customerId ?? row.stripe_customer_id,
    current_period_end: stripe?.currentPeriodEnd ?? row.current_period_end,
    cancel_at_period_end: stripe?.cancelAtPeriodEnd ?? row.cancel_at_period_end,
  });
  return true;
}

async function subscriptionChanged(tx: Kysely<ControlDatabase>, event: ConnectEvent, stripe: SubscriptionFacts, deleted: boolean): Promise<boolean> {
  // Found by its Stripe id, or (an update that overtook the checkout's completion) by our id in its metadata.
  const row = await lockOwned<SubscriptionRow>(tx, 'app_subscriptions', event, stripe.metadata, {
    stripe_subscription_id: stripe.id,
    id: stripe.metadata.subscription_id,
  });
  if (!row) return false;
  await updateSubscription(tx, row, {
    status: nextSubscriptionStatus(row.status, deleted ? 'canceled' : stripe.status),
    stripe_subscription_id: stripe.id ?? row.stripe_subscription_id,
    stripe_customer_id: stripe.customerId ?? row.stripe_customer_id,
    current_period_end: stripe.currentPeriodEnd ?? row.current_period_end,
    cancel_at_period_end: stripe.cancelAtPeriodEnd ?? row.cancel_at_period_end,
  });
  return true;
}

async function invoiceSettled(tx: Kysely<ControlDatabase>, event: ConnectEvent, paid: boolean): Promise<boolean> {
  const invoice = invoiceFacts(event.object);
  if (!invoice.subscriptionId && !invoice.metadata.subscription_id) return false;
  const row = await lockOwned<SubscriptionRow>(tx, 'app_subscriptions', event, invoice.metadata, {
    stripe_subscription_id: invoice.subscriptionId,
    id: invoice.metadata.subscription_id,
  });
  if (!row) return false;
  const status = paid ? (row.status === 'canceled' ? row.status : 'active') : row.status === 'active' ? 'past_due' : row.status;
  await updateSubscription(tx, row, {
    status,
    stripe_subscription_id: row.stripe_subscription_id ?? invoice.subscriptionId ?? null,
    current_period_end: paid && invoice.periodEnd ? invoice.periodEnd : row.current_period_end,
  });
  return true;
}

async function orderCheckoutCompleted(tx: Kysely<ControlDatabase>, event: ConnectEvent, session: CheckoutFacts): Promise<boolean> {
  const row = await lockOwned<OrderRow>(tx, 'app_orders', event, session.metadata, { stripe_checkout_session_id: session.id });
  if (!row) return false;
  const settles = session.paid && (row.status === 'pending' || row.status === 'failed');
  await updateOrder(tx, row, { status: settles ? 'paid' : row.status, stripe_payment_intent_id: session.paymentIntentId ?? row.stripe_payment_intent_id });
  return true;
}

async function paymentFailed(tx: Kysely<ControlDatabase>, event: ConnectEvent): Promise<boolean> {
  const intentId = refId(event.object.id);
  const metadata = metadataOf(event.object);
  // The intent may fail before the checkout completes, while the order does not know its id yet.
  const row = await lockOwned<OrderRow>(tx, 'app_orders', event, metadata, { stripe_payment_intent_id: intentId, id: metadata.order_id });
  if (!row) return false;
  await updateOrder(tx, row, { status: row.status === 'pending' ? 'failed' : row.status, stripe_payment_intent_id: row.stripe_payment_intent_id ?? intentId ?? null });
  return true;
}

async function chargeRefunded(tx: Kysely<ControlDatabase>, event: ConnectEvent): Promise<boolean> {
  const charge = chargeFacts(event.object);
  const row = await lockOwned<OrderRow>(tx, 'app_orders', event, charge.metadata, { stripe_payment_intent_id: charge.paymentIntentId, id: charge.metadata.order_id });
  if (!row) return false;
  if (charge.fullyRefunded) await updateOrder(tx, row, { status: 'refunded' });
  return true;
}

/**
 * The row matching any of `match` (columns to values; unknown values are skipped), locked for the caller's
 * transaction (if any), and only among rows of apps whose owner's connected account sent the event (and of the app
 * the metadata names, if any).
 */
async function lockOwned<Row>(
  tx: Kysely<ControlDatabase>,
  table: 'app_subscriptions' | 'app_orders',
  event: ConnectEvent,
  metadata: Record<string, string | undefined>,
  match: Record<string, string | undefined>,
): Promise<Row | undefined> {
  const conditions = Object.entries(match)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([column, value]) => sql`r.${sql.ref(column)} = ${value}`);
  if (conditions.length === 0) return undefined;
  const { rows } = await sql<Row>`
    select r.* from ${sql.table(table)} r
      join apps a on a.id = r.app_id
      join connected_accounts c on c.account_id = a.account_id
    where c.stripe_account_id = ${event.account}
      and (${sql.join(conditions, sql` or `)})
      ${metadata.app_id ? sql`and r.app_id = ${metadata.app_id}` : sql``}
    order by r.created_at
    limit 1
    for update of r
  `.execute(tx);
  return rows[0];
}
