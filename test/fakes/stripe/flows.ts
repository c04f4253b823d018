// What happens outside the API: the customer paying on Checkout, the merchant finishing onboarding, and the billing
// lifecycle that tests drive (renewals failing or succeeding, cancellations, refunds). Each changes the fake's state
// the way Stripe would and sends the matching signed events, in a fixed order.
import { type Delivery, type FakeEvent, type Webhooks } from './events.ts';
import {
  addInterval,
  newId,
  now,
  type FakeCharge,
  type FakeCheckoutSession,
  type FakeCustomer,
  type FakeInvoice,
  type FakeObject,
  type FakePaymentIntent,
  type FakePrice,
  type FakeSubscription,
  type Kind,
  type ObjectOf,
  type Scope,
  type Store,
} from './state.ts';

/** A lifecycle method's result: the delivery of its main event, and of the ones that followed from it. */
export type Sent = Delivery & { followUps: Delivery[] };

/** Fields a test may set on a subscription with `updateSubscription` (metadata replaces, it does not merge). */
export type SubscriptionPatch = Partial<Omit<FakeSubscription, 'id' | 'object' | 'created' | 'livemode' | 'items'>>;

export class Flows {
  readonly #store: Store;
  readonly #webhooks: Webhooks;

  constructor(store: Store, webhooks: Webhooks) {
    this.#store = store;
    this.#webhooks = webhooks;
  }

  /**
   * The customer pays a Checkout Session. Subscription mode: a customer if the session had none, an active subscription
   * for one interval of the prices, its first invoice (paid); then checkout.session.completed,
   * customer.subscription.created, invoice.payment_succeeded. Payment mode: a succeeded PaymentIntent (the one a
   * failed attempt left, if any) and its charge; then checkout.session.completed.
   */
  async completeCheckout(sessionId: string): Promise<{ session: FakeCheckoutSession; deliveries: Delivery[] }> {
    const { scope, object: session } = this.#found(sessionId, 'checkout.session');
    if (session.status !== 'open') throw new Error(`the Checkout Session ${sessionId} is ${session.status}, no longer open`);
    const plan = this.#store.plan(sessionId);
    const at = now();
    const email = session.customer_email ?? (session.customer ? this.#store.get(scope, session.customer, 'customer')?.email : null) ?? `buyer.${sessionId.slice(-6).toLowerCase()}@example.com`;
    const events: FakeEvent[] = [];

    if (session.mode === 'subscription') {
      const customer = session.customer ? this.#store.get(scope, session.customer, 'customer')! : this.#store.put(scope, newCustomer(email));
      const prices = plan.lineItems.map((li) => this.#store.get(scope, li.price, 'price')!);
      const recurring = prices[0]!.recurring!;
      const end = addInterval(at, recurring.interval, recurring.interval_count);
      const subId = newId('sub');
      const sub = this.#store.put<FakeSubscription>(scope, {
        id: subId,
        object: 'subscription',
        created: at,
        livemode: false,
        status: 'active',
        customer: customer.id,
        currency: session.currency,
        cancel_at_period_end: false,
        cancel_at: null,
        canceled_at: null,
        ended_at: null,
        start_date: at,
        billing_cycle_anchor: at,
        collection_method: 'charge_automatically',
        metadata: { ...plan.subscription.metadata },
        items: {
          object: 'list',
          data: plan.lineItems.map((li, i) => ({
            id: newId('si'),
            object: 'subscription_item',
            created: at,
            subscription: subId,
            price: structuredClone(prices[i]!),
            quantity: li.quantity,
            current_period_start: at,
            current_period_end: end,
            metadata: {},
          })),
          has_more: false,
          url: `/v1/subscription_items?subscription=${subId}`,
        },
        latest_invoice: null,
        application_fee_percent: plan.subscription.applicationFeePercent,
      });
      const invoice = this.#invoice(scope, sub, 'subscription_create', { start: at, end: at });
      this.#pay(invoice);
      sub.latest_invoice = invoice.id;
      Object.assign(session, { customer: customer.id, subscription: sub.id });
      this.#close(session, email);
      events.push(
        this.#webhooks.event(scope, 'checkout.session.completed', session),
        this.#webhooks.event(scope, 'customer.subscription.created', sub),
        this.#webhooks.event(scope, 'invoice.payment_succeeded', invoice),
      );
    } else {
      const pi = session.payment_intent ? this.#store.get(scope, session.payment_intent, 'payment_intent')! : this.#paymentIntent(scope, session);
      const charge = this.#store.put<FakeCharge>(scope, {
        id: newId('ch'),
        object: 'charge',
        created: at,
        livemode: false,
        amount: pi.amount,
        amount_captured: pi.amount,
        amount_refunded: 0,
        captured: true,
        currency: pi.currency,
        customer: pi.customer,
        paid: true,
        refunded: false,
        status: 'succeeded',
        payment_intent: pi.id,
        application_fee_amount: pi.application_fee_amount,
        billing_details: { email, name: null },
        metadata: { ...pi.metadata },
      });
      Object.assign(pi, { status: 'succeeded', amount_received: pi.amount, latest_charge: charge.id, last_payment_error: null });
      session.payment_intent = pi.id;
      this.#close(session, email);
      events.push(this.#webhooks.event(scope, 'checkout.session.completed', session));
    }
    return { session, deliveries: await this.#sendAll(events) };
  }

  /** The merchant finishes onboarding: payments and payouts enabled, nothing due; then account.updated. */
  async completeOnboarding(accountId: string): Promise<Delivery[]> {
    const account = this.#store.get(null, accountId, 'account');
    if (!account) throw new Error(`no connected account ${accountId}`);
    const before = structuredClone(account);
    Object.assign(account, {
      charges_enabled: true,
      payouts_enabled: true,
      details_submitted: true,
      capabilities: { card_payments: 'active', transfers: 'active' },
      requirements: { currently_due: [], past_due: [], eventually_due: [], pending_verification: [], errors: [], current_deadline: null, disabled_reason: null },
    });
    const previous = diff(before, account);
    if (!previous) return [];
    // Connect endpoints receive the connected account's own account.updated, with `account` set to it.
    return this.#sendAll([this.#webhooks.event(accountId, 'account.updated', account, { previous })]);
  }

  /**
   * A renewal fails (or, when the latest invoice is already open, its retry does): invoice.payment_failed, then
   * customer.subscription.updated with status past_due (only when something changed).
   */
  async failInvoice(subscriptionId: string): Promise<Sent> {
    const { scope, object: sub } = this.#live(subscriptionId);
    const before = structuredClone(sub);
    const open = this.#openInvoice(scope, sub);
    const invoice = open ?? this.#invoice(scope, sub, 'subscription_cycle', this.#renew(sub));
    Object.assign(invoice, { attempted: true, attempt_count: invoice.attempt_count + 1 });
    sub.latest_invoice = invoice.id;
    sub.status = 'past_due';
    return this.#sendChain(scope, this.#webhooks.event(scope, 'invoice.payment_failed', invoice), before, sub);
  }

  /** The open invoice gets paid (or, when none is open, the next renewal is): invoice.payment_succeeded, then customer.subscription.updated (status active, new period) when something changed. */
  async payInvoice(subscriptionId: string): Promise<Sent> {
    const { scope, object: sub } = this.#live(subscriptionId);
    const before = structuredClone(sub);
    const invoice = this.#openInvoice(scope, sub) ?? this.#invoice(scope, sub, 'subscription_cycle', this.#renew(sub));
    this.#pay(invoice);
    sub.latest_invoice = invoice.id;
    sub.status = 'active';
    return this.#sendChain(scope, this.#webhooks.event(scope, 'invoice.payment_succeeded', invoice), before, sub);
  }

  async updateSubscription(subscriptionId: string, patch: SubscriptionPatch): Promise<Sent> {
    const { scope, object: sub } = this.#found(subscriptionId, 'subscription');
    const before = structuredClone(sub);
    Object.assign(sub, structuredClone(patch));
    return this.#sendOne(this.#webhooks.event(scope, 'customer.subscription.updated', sub, { previous: diff(before, sub) ?? {} }));
  }

  async deleteSubscription(subscriptionId: string): Promise<Sent> {
    const { scope, object: sub } = this.#live(subscriptionId);
    return this.#sendOne(this.#webhooks.event(scope, 'customer.subscription.deleted', cancelNow(sub)));
  }

  /** A failed card on a payment-mode session that is still open: its PaymentIntent (created now if needed) needs a new payment method; payment_intent.payment_failed. */
  async failPaymentIntent(sessionId: string): Promise<Sent> {
    const { scope, object: session } = this.#found(sessionId, 'checkout.session');
    if (session.mode !== 'payment' || session.status !== 'open') throw new Error(`the Checkout Session ${sessionId} is not an open payment-mode session`);
    const pi = session.payment_intent ? this.#store.get(scope, session.payment_intent, 'payment_intent')! : this.#paymentIntent(scope, session);
    pi.last_payment_error = { type: 'card_error', code: 'card_declined', decline_code: 'generic_decline', message: 'Your card was declined.' };
    session.payment_intent = pi.id;
    return this.#sendOne(this.#webhooks.event(scope, 'payment_intent.payment_failed', pi));
  }

  /** Refunds `amount` (default: all that is left) of the PaymentIntent's charge: charge.refunded. */
  async refundCharge(paymentIntentId: string, amount?: number): Promise<Sent> {
    const { scope, object: pi } = this.#found(paymentIntentId, 'payment_intent');
    if (pi.status !== 'succeeded' || !pi.latest_charge) throw new Error(`the PaymentIntent ${paymentIntentId} has not succeeded: nothing to refund`);
    const charge = this.#store.get(scope, pi.latest_charge, 'charge')!;
    const left = charge.amount - charge.amount_refunded;
    const refund = amount ?? left;
    if (!Number.isInteger(refund) || refund < 1 || refund > left) throw new Error(`cannot refund ${refund} of charge ${charge.id}: ${left} is left to refund`);
    const before = structuredClone(charge);
    charge.amount_refunded += refund;
    charge.refunded = charge.amount_refunded === charge.amount;
    return this.#sendOne(this.#webhooks.event(scope, 'charge.refunded', charge, { previous: diff(before, charge) ?? {} }));
  }

  /** Sends an already-sent event again (same id and content, fresh signature), as Stripe's retries and "Resend" do. */
  async resend(eventId: string): Promise<Delivery> {
    const original = this.#webhooks.log.find((d) => d.event.id === eventId);
    if (!original) throw new Error(`no event ${eventId} was sent`);
    return this.#webhooks.send(original.event);
  }

  /** Emits customer.subscription.updated for an API change, when anything changed. */
  subscriptionChanged(scope: Scope, before: FakeSubscription, sub: FakeSubscription, request: FakeEvent['request']): FakeEvent | undefined {
    const previous = diff(before, sub);
    return previous ? this.#webhooks.event(scope, 'customer.subscription.updated', sub, { previous, request }) : undefined;
  }

  /** The customer.subscription.deleted of an API cancellation. */
  subscriptionDeleted(scope: Scope, sub: FakeSubscription, request: FakeEvent['request']): FakeEvent {
    return this.#webhooks.event(scope, 'customer.subscription.deleted', sub, { request });
  }

  #found<K extends Kind>(id: string, kind: K): { scope: Scope; object: ObjectOf<K> } {
    const found = this.#store.find(id, kind);
    if (!found) throw new Error(`the fake has no ${kind} ${id}`);
    return found;
  }

  #live(subscriptionId: string): { scope: Scope; object: FakeSubscription } {
    const found = this.#found(subscriptionId, 'subscription');
    if (found.object.status === 'canceled') throw new Error(`the subscription ${subscriptionId} is canceled`);
    return found;
  }

  #openInvoice(scope: Scope, sub: FakeSubscription): FakeInvoice | undefined {
    const latest = sub.latest_invoice ? this.#store.get(scope, sub.latest_invoice, 'invoice') : undefined;
    return latest?.status === 'open' ? latest : undefined;
  }

  /** Moves every item to its next period; returns the period that ended, which Stripe puts on the renewal invoice. */
  #renew(sub: FakeSubscription): { start: number; end: number } {
    const first = sub.items.data[0]!;
    const ended = { start: first.current_period_start, end: first.current_period_end };
    for (const item of sub.items.data) {
      const { interval, interval_count } = item.price.recurring!;
      item.current_period_start = item.current_period_end;
      item.current_period_end = addInterval(item.current_period_start, interval, interval_count);
    }
    return ended;
  }

  #invoice(scope: Scope, sub: FakeSubscription, reason: FakeInvoice['billing_reason'], period: { start: number; end: number }): FakeInvoice {
    const id = newId('in');
    const customer = this.#store.get(scope, sub.customer, 'customer');
    const lines = sub.items.data.map((item) => {
      const amount = item.price.unit_amount * item.quantity;
      const product = this.#store.get(scope, item.price.product, 'product');
      return {
        id: newId('il'),
        object: 'line_item' as const,
        amount,
        currency: item.price.currency,
        description: `${item.quantity} × ${product?.name ?? item.price.product} (at ${money(item.price)} / ${item.price.recurring!.interval})`,
        invoice: id,
        livemode: false as const,
        metadata: { ...sub.metadata },
        parent: {
          type: 'subscription_item_details' as const,
          invoice_item_details: null,
          subscription_item_details: { subscription: sub.id, subscription_item: item.id, invoice_item: null, proration: false as const },
        },
        period: { start: item.current_period_start, end: item.current_period_end },
        pricing: { type: 'price_details' as const, price_details: { price: item.price.id, product: item.price.product }, unit_amount_decimal: item.price.unit_amount_decimal },
        quantity: item.quantity,
        subscription: sub.id,
      };
    });
    const total = lines.reduce((n, l) => n + l.amount, 0);
    return this.#store.put<FakeInvoice>(scope, {
      id,
      object: 'invoice',
      created: now(),
      livemode: false,
      customer: sub.customer,
      customer_email: customer?.email ?? null,
      currency: sub.currency,
      status: 'open',
      billing_reason: reason,
      collection_method: 'charge_automatically',
      amount_due: total,
      amount_paid: 0,
      amount_remaining: total,
      subtotal: total,
      total,
      attempted: false,
      attempt_count: 0,
      subscription: sub.id,
      parent: { type: 'subscription_details', quote_details: null, subscription_details: { subscription: sub.id, metadata: { ...sub.metadata } } },
      lines: { object: 'list', data: lines, has_more: false, total_count: lines.length, url: `/v1/invoices/${id}/lines` },
      period_start: period.start,
      period_end: period.end,
      status_transitions: { finalized_at: now(), paid_at: null },
      metadata: {},
    });
  }

  #pay(invoice: FakeInvoice): void {
    Object.assign(invoice, {
      status: 'paid',
      amount_paid: invoice.amount_due,
      amount_remaining: 0,
      attempted: true,
      attempt_count: invoice.attempt_count + 1,
      status_transitions: { ...invoice.status_transitions, paid_at: now() },
    });
  }

  /** The session's PaymentIntent: payment_intent_data's metadata over the session's own, its application fee. */
  #paymentIntent(scope: Scope, session: FakeCheckoutSession): FakePaymentIntent {
    const plan = this.#store.plan(session.id);
    return this.#store.put<FakePaymentIntent>(scope, {
      id: newId('pi'),
      object: 'payment_intent',
      created: now(),
      livemode: false,
      amount: session.amount_total,
      amount_received: 0,
      currency: session.currency,
      customer: session.customer,
      status: 'requires_payment_method',
      latest_charge: null,
      last_payment_error: null,
      application_fee_amount: plan.paymentIntent.applicationFeeAmount,
      payment_method_types: ['card'],
      description: null,
      metadata: { ...session.metadata, ...plan.paymentIntent.metadata },
    });
  }

  #close(session: FakeCheckoutSession, email: string): void {
    Object.assign(session, { status: 'complete', payment_status: 'paid', url: null, customer_details: { email, name: null } });
  }

  async #sendAll(events: FakeEvent[]): Promise<Delivery[]> {
    return Promise.all(events.map((e) => this.#webhooks.send(e)));
  }

  async #sendOne(event: FakeEvent): Promise<Sent> {
    return { ...(await this.#webhooks.send(event)), followUps: [] };
  }

  /** The main event, then customer.subscription.updated when the subscription changed. */
  async #sendChain(scope: Scope, main: FakeEvent, before: FakeSubscription, sub: FakeSubscription): Promise<Sent> {
    const previous = diff(before, sub);
    const follow = previous ? [this.#webhooks.event(scope, 'customer.subscription.updated', sub, { previous })] : [];
    const [first, ...rest] = await this.#sendAll([main, ...follow]);
    return { ...first!, followUps: rest };
  }
}

export function newCustomer(email: string | null, fields: Partial<Pick<FakeCustomer, 'name' | 'description' | 'metadata'>> = {}): FakeCustomer {
  return {
    id: newId('cus'),
    object: 'customer',
    created: now(),
    livemode: false,
    name: fields.name ?? null,
    email,
    description: fields.description ?? null,
    metadata: fields.metadata ?? {},
    balance: 0,
    currency: null,
    delinquent: false,
  };
}

/** Ends the subscription now, as DELETE /v1/subscriptions/:id does. */
export function cancelNow(sub: FakeSubscription): FakeSubscription {
  const at = now();
  return Object.assign(sub, { status: 'canceled', canceled_at: at, ended_at: at, cancel_at_period_end: false });
}

/** Stripe's previous_attributes: the former values of the top-level fields that changed; undefined if none did. */
export function diff<T extends FakeObject>(before: T, after: T): Record<string, unknown> | undefined {
  const previous: Record<string, unknown> = {};
  for (const key of Object.keys(after) as (keyof T & string)[]) {
    if (JSON.stringify(before[key]) !== JSON.stringify(after[key])) previous[key] = before[key];
  }
  return Object.keys(previous).length > 0 ? previous : undefined;
}

function money(price: FakePrice): string {
  const major = (price.unit_amount / 100).toFixed(2);
  return price.currency === 'usd' ? `$${major}` : `${major} ${price.currency.toUpperCase()}`;
}
