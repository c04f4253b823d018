// The fake's objects, shaped like Stripe's (API 2026-10-28, the installed SDK's version) in the fields the platform
// reads plus the usual bookkeeping ones, and the store that keeps them apart per account.
import { randomInt } from 'node:crypto';
import type { Metadata } from './wire.ts';

/** Whose object it is: null for the platform account, else the connected account's id (the Stripe-Account header). */
export type Scope = string | null;

export type Interval = 'day' | 'week' | 'month' | 'year';

interface Base {
  id: string;
  created: number;
  livemode: false;
}

export interface FakeCustomer extends Base {
  object: 'customer';
  name: string | null;
  email: string | null;
  description: string | null;
  metadata: Metadata;
  balance: number;
  currency: string | null;
  delinquent: boolean;
}

export interface FakeRequirements {
  currently_due: string[];
  past_due: string[];
  eventually_due: string[];
  pending_verification: string[];
  errors: unknown[];
  current_deadline: number | null;
  disabled_reason: string | null;
}

export interface FakeAccount extends Base {
  object: 'account';
  type: 'express' | 'standard' | 'custom';
  controller: Record<string, unknown>;
  email: string | null;
  country: string;
  default_currency: string;
  business_type: string | null;
  business_profile: Record<string, unknown> | null;
  charges_enabled: boolean;
  payouts_enabled: boolean;
  details_submitted: boolean;
  capabilities: Record<string, 'active' | 'inactive' | 'pending'>;
  requirements: FakeRequirements;
  metadata: Metadata;
}

export interface FakeProduct extends Base {
  object: 'product';
  active: boolean;
  name: string;
  description: string | null;
  default_price: string | null;
  images: string[];
  metadata: Metadata;
  updated: number;
}

export interface FakePrice extends Base {
  object: 'price';
  active: boolean;
  billing_scheme: 'per_unit';
  currency: string;
  product: string;
  unit_amount: number;
  unit_amount_decimal: string;
  type: 'one_time' | 'recurring';
  recurring: { interval: Interval; interval_count: number } | null;
  lookup_key: string | null;
  nickname: string | null;
  metadata: Metadata;
}

export interface FakeCheckoutSession extends Base {
  object: 'checkout.session';
  url: string | null;
  status: 'open' | 'complete' | 'expired';
  mode: 'payment' | 'subscription';
  customer: string | null;
  customer_email: string | null;
  customer_details: { email: string | null; name: string | null } | null;
  client_reference_id: string | null;
  metadata: Metadata;
  payment_status: 'unpaid' | 'paid';
  subscription: string | null;
  payment_intent: string | null;
  amount_subtotal: number;
  amount_total: number;
  currency: string;
  success_url: string | null;
  cancel_url: string | null;
  expires_at: number;
}

/** What a session's completion needs from its creation parameters (Stripe keeps them, but not on the object). */
export interface SessionPlan {
  lineItems: { price: string; quantity: number }[];
  subscription: { metadata: Metadata; applicationFeePercent: number | null };
  paymentIntent: { metadata: Metadata; applicationFeeAmount: number | null };
}

/** A pending invoice item (the platform's overage lines), swept into the customer's next invoice. */
export interface FakeInvoiceItem extends Base {
  object: 'invoiceitem';
  customer: string;
  amount: number;
  currency: string;
  description: string | null;
  period: { start: number; end: number };
  metadata: Metadata;
  invoice: string | null;
  date: number;
}

export interface FakePortalSession extends Base {
  object: 'billing_portal.session';
  url: string;
  customer: string;
  return_url: string | null;
}

export interface FakeSubscriptionItem {
  id: string;
  object: 'subscription_item';
  created: number;
  subscription: string;
  price: FakePrice;
  quantity: number;
  current_period_start: number;
  current_period_end: number;
  metadata: Metadata;
}

export interface FakeSubscription extends Base {
  object: 'subscription';
  status: 'incomplete' | 'trialing' | 'active' | 'past_due' | 'canceled' | 'unpaid' | 'paused';
  customer: string;
  currency: string;
  cancel_at_period_end: boolean;
  cancel_at: number | null;
  canceled_at: number | null;
  ended_at: number | null;
  start_date: number;
  billing_cycle_anchor: number;
  collection_method: 'charge_automatically';
  metadata: Metadata;
  items: { object: 'list'; data: FakeSubscriptionItem[]; has_more: false; url: string };
  latest_invoice: string | null;
  application_fee_percent: number | null;
}

export interface FakeInvoiceLine {
  id: string;
  object: 'line_item';
  amount: number;
  currency: string;
  description: string;
  invoice: string;
  livemode: false;
  metadata: Metadata;
  parent: {
    type: 'subscription_item_details';
    invoice_item_details: null;
    subscription_item_details: { subscription: string; subscription_item: string; invoice_item: null; proration: false };
  };
  period: { start: number; end: number };
  pricing: { type: 'price_details'; price_details: { price: string; product: string }; unit_amount_decimal: string };
  quantity: number;
  subscription: string;
}

export interface FakeInvoice extends Base {
  object: 'invoice';
  customer: string;
  customer_email: string | null;
  currency: string;
  status: 'draft' | 'open' | 'paid' | 'void' | 'uncollectible';
  billing_reason: 'subscription_create' | 'subscription_cycle';
  collection_method: 'charge_automatically';
  amount_due: number;
  amount_paid: number;
  amount_remaining: number;
  subtotal: number;
  total: number;
  attempted: boolean;
  attempt_count: number;
  /** Gone from the API since 2025-03-31 (see parent.subscription_details); kept because older readers look here. */
  subscription: string;
  parent: {
    type: 'subscription_details';
    quote_details: null;
    subscription_details: { subscription: string; metadata: Metadata };
  };
  lines: { object: 'list'; data: FakeInvoiceLine[]; has_more: false; total_count: number; url: string };
  /** As Stripe sets them: the period *before* the invoice (equal to `created` on a subscription's first one), not the paid-for period, which is on the lines. */
  period_start: number;
  period_end: number;
  status_transitions: { finalized_at: number | null; paid_at: number | null };
  metadata: Metadata;
}

export interface FakeCardError {
  type: 'card_error';
  code: string;
  decline_code: string;
  message: string;
}

export interface FakePaymentIntent extends Base {
  object: 'payment_intent';
  amount: number;
  amount_received: number;
  currency: string;
  customer: string | null;
  status: 'requires_payment_method' | 'succeeded';
  latest_charge: string | null;
  last_payment_error: FakeCardError | null;
  application_fee_amount: number | null;
  payment_method_types: string[];
  description: string | null;
  metadata: Metadata;
}

export interface FakeCharge extends Base {
  object: 'charge';
  amount: number;
  amount_captured: number;
  amount_refunded: number;
  captured: boolean;
  currency: string;
  customer: string | null;
  paid: boolean;
  refunded: boolean;
  status: 'succeeded';
  payment_intent: string;
  application_fee_amount: number | null;
  billing_details: { email: string | null; name: string | null };
  metadata: Metadata;
}

export type FakeObject =
  | FakeCustomer
  | FakeAccount
  | FakeProduct
  | FakePrice
  | FakeCheckoutSession
  | FakePortalSession
  | FakeInvoiceItem
  | FakeSubscription
  | FakeInvoice
  | FakePaymentIntent
  | FakeCharge;

export type Kind = FakeObject['object'];
export type ObjectOf<K extends Kind> = Extract<FakeObject, { object: K }>;

const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `prefix_` and 24 random alphanumerics, like Stripe's ids. */
export function newId(prefix: string): string {
  let out = `${prefix}_`;
  for (let i = 0; i < 24; i++) out += ID_ALPHABET[randomInt(ID_ALPHABET.length)];
  return out;
}

export const now = (): number => Math.floor(Date.now() / 1000);

/**
 * Every object with the account it belongs to. API reads go through `get` with the request's scope, so an object of
 * another account is as unknown as a missing one; the test-control side (`find`) looks across accounts.
 */
export class Store {
  readonly #objects = new Map<string, { scope: Scope; object: FakeObject }>();
  readonly #plans = new Map<string, SessionPlan>();

  put<T extends FakeObject>(scope: Scope, object: T): T {
    this.#objects.set(object.id, { scope, object });
    return object;
  }

  get<K extends Kind>(scope: Scope, id: string, kind: K): ObjectOf<K> | undefined {
    const entry = this.#objects.get(id);
    return entry && entry.scope === scope && entry.object.object === kind ? (entry.object as ObjectOf<K>) : undefined;
  }

  find<K extends Kind>(id: string, kind: K): { scope: Scope; object: ObjectOf<K> } | undefined {
    const entry = this.#objects.get(id);
    return entry && entry.object.object === kind ? { scope: entry.scope, object: entry.object as ObjectOf<K> } : undefined;
  }

  any(id: string): FakeObject | undefined {
    return this.#objects.get(id)?.object;
  }

  setPlan(sessionId: string, plan: SessionPlan): void {
    this.#plans.set(sessionId, plan);
  }

  plan(sessionId: string): SessionPlan {
    const plan = this.#plans.get(sessionId);
    if (!plan) throw new Error(`fake stripe: no plan for session ${sessionId}`);
    return plan;
  }
}

/** Stripe's calendar arithmetic: a month later is the same day of the month, clamped to the month's last day. */
export function addInterval(start: number, interval: Interval, count: number): number {
  const d = new Date(start * 1000);
  if (interval === 'day' || interval === 'week') return start + count * (interval === 'day' ? 1 : 7) * 86_400;
  const months = interval === 'month' ? count : count * 12;
  const target = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + months, 1, d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()));
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(d.getUTCDate(), lastDay));
  return Math.floor(target.getTime() / 1000);
}
