// Readers of Stripe objects as plain JSON (webhook payloads, and subscriptions read back from the API): only the
// fields monetization acts on, tolerant of expanded references and of API versions that moved a field.
import type { SubscriptionStatus } from './types.ts';

type Obj = Record<string, unknown>;

const asObject = (value: unknown): Obj => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Obj) : {});
const asText = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);
const asList = (value: unknown): Obj[] => (Array.isArray(asObject(value).data) ? (asObject(value).data as unknown[]).map(asObject) : []);
const asDate = (seconds: unknown): Date | null => (typeof seconds === 'number' && Number.isFinite(seconds) ? new Date(seconds * 1000) : null);

/** The id of an expandable field: Stripe sends either the id or the expanded object. */
export const refId = (value: unknown): string | undefined => asText(value) ?? asText(asObject(value).id);

export function metadataOf(object: Obj): Record<string, string | undefined> {
  const metadata = asObject(object.metadata);
  return Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, asText(v)]));
}

/** Stripe's subscription statuses as ours; `incomplete` (first payment not yet confirmed) is still pending. */
const SUBSCRIPTION_STATUS: Record<string, SubscriptionStatus> = {
  incomplete: 'pending',
  active: 'active',
  trialing: 'active',
  past_due: 'past_due',
  unpaid: 'past_due',
  paused: 'past_due',
  canceled: 'canceled',
  incomplete_expired: 'canceled',
};

export interface SubscriptionFacts {
  id: string | undefined;
  status: SubscriptionStatus | undefined;
  currentPeriodEnd: Date | null;
  cancelAtPeriodEnd: boolean | undefined;
  customerId: string | undefined;
  metadata: Record<string, string | undefined>;
}

/** A Subscription object; since API 2025-03 the period lives on its items, before that at the top level. */
export function subscriptionFacts(object: Obj): SubscriptionFacts {
  const item = asList(object.items)[0] ?? {};
  return {
    id: asText(object.id),
    status: SUBSCRIPTION_STATUS[asText(object.status) ?? ''],
    currentPeriodEnd: asDate(item.current_period_end) ?? asDate(object.current_period_end),
    cancelAtPeriodEnd: typeof object.cancel_at_period_end === 'boolean' ? object.cancel_at_period_end : undefined,
    customerId: refId(object.customer),
    metadata: metadataOf(object),
  };
}

export interface InvoiceFacts {
  subscriptionId: string | undefined;
  /** The subscription's metadata as the invoice carries it. */
  metadata: Record<string, string | undefined>;
  /** The end of the latest period the invoice bills. */
  periodEnd: Date | null;
}

/** An Invoice: its subscription under parent.subscription_details (API 2025-03+) or at the top level (before). */
export function invoiceFacts(object: Obj): InvoiceFacts {
  const details = asObject(asObject(object.parent).subscription_details);
  const legacy = asObject(object.subscription_details);
  const ends = asList(object.lines)
    .map((line) => asDate(asObject(line.period).end))
    .filter((d): d is Date => d !== null);
  return {
    subscriptionId: refId(details.subscription) ?? refId(object.subscription),
    metadata: { ...metadataOf(legacy), ...metadataOf(details) },
    periodEnd: ends.length > 0 ? new Date(Math.max(...ends.map((d) => d.getTime()))) : null,
  };
}

export interface CheckoutFacts {
  id: string | undefined;
  mode: string | undefined;
  /** paid (or nothing to pay): the money is in; unpaid: an asynchronous method still settling. */
  paid: boolean;
  subscription: unknown;
  customerId: string | undefined;
  paymentIntentId: string | undefined;
  metadata: Record<string, string | undefined>;
}

export function checkoutFacts(object: Obj): CheckoutFacts {
  const status = asText(object.payment_status);
  return {
    id: asText(object.id),
    mode: asText(object.mode),
    paid: status === 'paid' || status === 'no_payment_required',
    subscription: object.subscription,
    customerId: refId(object.customer),
    paymentIntentId: refId(object.payment_intent),
    metadata: metadataOf(object),
  };
}

/** A Charge is refunded in full when Stripe says so or the refunded amount reaches the charged one. */
export function chargeFacts(object: Obj): { paymentIntentId: string | undefined; fullyRefunded: boolean; metadata: Record<string, string | undefined> } {
  const amount = typeof object.amount === 'number' ? object.amount : undefined;
  const refunded = typeof object.amount_refunded === 'number' ? object.amount_refunded : 0;
  return {
    paymentIntentId: refId(object.payment_intent),
    fullyRefunded: object.refunded === true || (amount !== undefined && amount > 0 && refunded >= amount),
    metadata: metadataOf(object),
  };
}

/** Whether a value is an expanded object rather than an id (a Checkout Session's `subscription`). */
export const expanded = (value: unknown): Obj | undefined => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Obj) : undefined);

/** Stripe subscriptions never come back from canceled: a late or replayed event must not revive the row. */
export function nextSubscriptionStatus(current: SubscriptionStatus, reported: SubscriptionStatus | undefined): SubscriptionStatus {
  if (current === 'canceled') return current;
  return reported ?? current;
}
