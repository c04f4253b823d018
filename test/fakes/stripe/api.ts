// The /v1 routes the platform calls, each with the parameters it accepts (anything else is refused, as Stripe does).
import type { FakeEvent } from './events.ts';
import { cancelNow, newCustomer, type Flows } from './flows.ts';
import {
  newId,
  now,
  type FakeAccount,
  type FakeCheckoutSession,
  type FakeInvoiceItem,
  type FakePortalSession,
  type FakePrice,
  type FakeProduct,
  type Interval,
  type Kind,
  type Scope,
  type SessionPlan,
  type Store,
} from './state.ts';
import { invalid, noAccess, noSuch, type Reader, type Shape } from './wire.ts';

export interface ApiContext {
  scope: Scope;
  params: Reader;
  store: Store;
  flows: Flows;
  /** The fake's own origin, for the browser URLs it hands out. */
  base: string;
  request: FakeEvent['request'];
  /** Events the call caused, delivered after its response (Stripe sends them asynchronously). */
  emit(event: FakeEvent | undefined): void;
}

interface Route {
  method: 'GET' | 'POST' | 'DELETE';
  pattern: RegExp;
  params: { [key: string]: Shape };
  handle(ctx: ApiContext, id: string): object;
}

const METADATA = { metadata: true } as const;

/** GET /v1/<collection>/:id for the objects the platform may read back. */
const retrieve = (collection: string, kind: Kind, resource = kind): Route => ({
  method: 'GET',
  pattern: new RegExp(`^/v1/${collection}/([^/]+)$`),
  params: {},
  handle: ({ store, scope }, id) => store.get(scope, id, kind) ?? throwing(noSuch(resource, id)),
});

export const routes: Route[] = [
  {
    method: 'POST',
    pattern: /^\/v1\/customers$/,
    params: { name: true, email: true, description: true, ...METADATA },
    handle: ({ store, scope, params: p }) =>
      store.put(scope, newCustomer(p.email('email') ?? null, { name: p.str('name') ?? null, description: p.str('description') ?? null, metadata: p.metadata() })),
  },
  retrieve('customers', 'customer'),

  {
    method: 'POST',
    pattern: /^\/v1\/accounts$/,
    // capabilities: what onboarding grants (the fake grants card_payments and transfers to every onboarded account).
    params: { type: true, controller: true, email: true, country: true, business_type: true, business_profile: true, capabilities: true, default_currency: true, ...METADATA },
    handle: createAccount,
  },
  {
    method: 'GET',
    pattern: /^\/v1\/accounts\/([^/]+)$/,
    params: {},
    handle: ({ store, scope }, id) => {
      // Through its own Stripe-Account header an account may read itself; any other account is out of reach (403).
      if (scope !== null && scope !== id) throw noAccess(id);
      return store.get(null, id, 'account') ?? throwing(noAccess(id));
    },
  },
  {
    method: 'POST',
    pattern: /^\/v1\/account_links$/,
    params: { account: true, refresh_url: true, return_url: true, type: true },
    handle: ({ store, scope, params: p, base }) => {
      platformOnly(scope);
      const account = p.str('account', true);
      const refresh = p.url('refresh_url', true)!;
      const back = p.url('return_url', true)!;
      p.oneOf('type', ['account_onboarding', 'account_update'], true);
      if (!store.get(null, account, 'account')) throw noSuch('account', account, 'account');
      const created = now();
      const query = new URLSearchParams({ return_url: back, refresh_url: refresh });
      return { object: 'account_link', created, expires_at: created + 300, url: `${base}/onboarding/${account}?${query}` };
    },
  },

  {
    method: 'POST',
    pattern: /^\/v1\/products$/,
    params: { name: true, description: true, active: true, ...METADATA },
    handle: ({ store, scope, params: p }) => {
      const at = now();
      return store.put<FakeProduct>(scope, {
        id: newId('prod'),
        object: 'product',
        created: at,
        updated: at,
        livemode: false,
        active: p.bool('active') ?? true,
        name: nonEmpty(p, 'name'),
        description: p.nullableStr('description') ?? null,
        default_price: null,
        images: [],
        metadata: p.metadata(),
      });
    },
  },
  {
    method: 'POST',
    pattern: /^\/v1\/products\/([^/]+)$/,
    params: { name: true, description: true, active: true, default_price: true, ...METADATA },
    handle: ({ store, scope, params: p }, id) => {
      const product = store.get(scope, id, 'product') ?? throwing(noSuch('product', id));
      const defaultPrice = p.nullableStr('default_price');
      if (defaultPrice) {
        const price = store.get(scope, defaultPrice, 'price') ?? throwing(noSuch('price', defaultPrice, 'default_price'));
        if (price.product !== id) throw invalid(`The price ${defaultPrice} does not belong to the product ${id}.`, 'default_price');
        if (!price.active) throw invalid('The default price must be active.', 'default_price');
      }
      return Object.assign(product, {
        name: p.has('name') ? nonEmpty(p, 'name') : product.name,
        description: p.has('description') ? p.nullableStr('description')! : product.description,
        active: p.bool('active') ?? product.active,
        default_price: defaultPrice === undefined ? product.default_price : defaultPrice,
        metadata: p.metadata(product.metadata),
        updated: now(),
      });
    },
  },
  retrieve('products', 'product'),

  {
    method: 'POST',
    pattern: /^\/v1\/prices$/,
    params: { product: true, unit_amount: true, currency: true, recurring: { interval: true, interval_count: true }, nickname: true, lookup_key: true, active: true, ...METADATA },
    handle: ({ store, scope, params: p }) => {
      const product = p.str('product', true);
      if (!store.get(scope, product, 'product')) throw noSuch('product', product, 'product');
      const unitAmount = p.int('unit_amount', { required: true, min: 0 });
      const currency = p.str('currency', true).toLowerCase();
      if (!/^[a-z]{3}$/.test(currency)) throw invalid(`Invalid currency: ${currency}`, 'currency');
      const r = p.nested('recurring');
      const recurring = p.has('recurring')
        ? { interval: r.oneOf<Interval>('interval', ['day', 'week', 'month', 'year'], true), interval_count: r.int('interval_count', { min: 1 }) ?? 1 }
        : null;
      return store.put<FakePrice>(scope, {
        id: newId('price'),
        object: 'price',
        created: now(),
        livemode: false,
        active: p.bool('active') ?? true,
        billing_scheme: 'per_unit',
        currency,
        product,
        unit_amount: unitAmount,
        unit_amount_decimal: String(unitAmount),
        type: recurring ? 'recurring' : 'one_time',
        recurring,
        lookup_key: p.str('lookup_key') ?? null,
        nickname: p.str('nickname') ?? null,
        metadata: p.metadata(),
      });
    },
  },
  {
    method: 'POST',
    pattern: /^\/v1\/prices\/([^/]+)$/,
    params: { active: true, nickname: true, lookup_key: true, ...METADATA },
    handle: ({ store, scope, params: p }, id) => {
      const price = store.get(scope, id, 'price') ?? throwing(noSuch('price', id));
      return Object.assign(price, {
        active: p.bool('active') ?? price.active,
        nickname: p.has('nickname') ? p.nullableStr('nickname')! : price.nickname,
        lookup_key: p.has('lookup_key') ? p.nullableStr('lookup_key')! : price.lookup_key,
        metadata: p.metadata(price.metadata),
      });
    },
  },
  retrieve('prices', 'price'),

  {
    method: 'POST',
    pattern: /^\/v1\/checkout\/sessions$/,
    params: {
      mode: true,
      customer: true,
      customer_email: true,
      client_reference_id: true,
      line_items: [{ price: true, quantity: true }],
      success_url: true,
      cancel_url: true,
      subscription_data: { application_fee_percent: true, ...METADATA },
      payment_intent_data: { application_fee_amount: true, ...METADATA },
      ...METADATA,
    },
    handle: createCheckoutSession,
  },
  retrieve('checkout/sessions', 'checkout.session'),

  {
    method: 'POST',
    pattern: /^\/v1\/billing_portal\/sessions$/,
    params: { customer: true, return_url: true },
    handle: ({ store, scope, params: p, base }) => {
      const customer = p.str('customer', true);
      if (!store.get(scope, customer, 'customer')) throw noSuch('customer', customer, 'customer');
      const id = newId('bps');
      return store.put<FakePortalSession>(scope, {
        id,
        object: 'billing_portal.session',
        created: now(),
        livemode: false,
        url: `${base}/portal/${id}`,
        customer,
        return_url: p.url('return_url') ?? null,
      });
    },
  },

  {
    method: 'POST',
    pattern: /^\/v1\/invoiceitems$/,
    params: { customer: true, amount: true, currency: true, description: true, period: true, ...METADATA },
    handle: ({ store, scope, params: p }) => {
      platformOnly(scope);
      const customer = p.str('customer', true);
      if (!store.get(scope, customer, 'customer')) throw noSuch('customer', customer, 'customer');
      const period = p.nested('period');
      const created = now();
      return store.put<FakeInvoiceItem>(scope, {
        id: newId('ii'),
        object: 'invoiceitem',
        created,
        livemode: false,
        customer,
        amount: p.int('amount', { required: true }),
        currency: p.oneOf('currency', ['usd'], true)!,
        description: p.str('description') ?? null,
        period: { start: period.int('start') ?? created, end: period.int('end') ?? created },
        metadata: p.metadata(),
        invoice: null,
        date: created,
      });
    },
  },
  retrieve('invoiceitems', 'invoiceitem'),

  retrieve('subscriptions', 'subscription'),
  {
    method: 'POST',
    pattern: /^\/v1\/subscriptions\/([^/]+)$/,
    params: { cancel_at_period_end: true, ...METADATA },
    handle: ({ store, scope, params: p, flows, request, emit }, id) => {
      const sub = store.get(scope, id, 'subscription') ?? throwing(noSuch('subscription', id));
      const before = structuredClone(sub);
      const cancelAtPeriodEnd = p.bool('cancel_at_period_end');
      if (sub.status === 'canceled' && cancelAtPeriodEnd !== undefined) {
        throw invalid('A canceled subscription can only update its cancellation_details and metadata.', 'cancel_at_period_end');
      }
      if (cancelAtPeriodEnd !== undefined) {
        sub.cancel_at_period_end = cancelAtPeriodEnd;
        // API 2026 reports the scheduled end as cancel_at too.
        sub.cancel_at = cancelAtPeriodEnd ? sub.items.data[0]!.current_period_end : null;
      }
      sub.metadata = p.metadata(sub.metadata);
      emit(flows.subscriptionChanged(scope, before, sub, request));
      return sub;
    },
  },
  {
    method: 'DELETE',
    pattern: /^\/v1\/subscriptions\/([^/]+)$/,
    params: {},
    handle: ({ store, scope, flows, request, emit }, id) => {
      const sub = store.get(scope, id, 'subscription') ?? throwing(noSuch('subscription', id));
      if (sub.status === 'canceled') throw invalid(`The subscription ${id} is already canceled.`, 'id');
      cancelNow(sub);
      emit(flows.subscriptionDeleted(scope, sub, request));
      return sub;
    },
  },

  retrieve('invoices', 'invoice'),
  retrieve('payment_intents', 'payment_intent'),
  retrieve('charges', 'charge'),
];

function createAccount({ store, scope, params: p }: ApiContext): FakeAccount {
  platformOnly(scope);
  const type = p.oneOf('type', ['express', 'standard', 'custom'] as const);
  if (type && p.has('controller')) throw invalid('You cannot specify both `type` and `controller`; use one of them.', 'controller');
  const dashboard = p.nested('controller').nested('stripe_dashboard').oneOf('type', ['express', 'full', 'none'] as const);
  const resolved = type ?? (dashboard === 'express' ? 'express' : dashboard === 'none' ? 'custom' : 'standard');
  const given = p.params.controller;
  const controller = {
    type: 'application',
    is_controller: true,
    ...(typeof given === 'object' ? structuredClone(given) : {}),
    stripe_dashboard: { type: resolved === 'express' ? 'express' : resolved === 'standard' ? 'full' : 'none' },
  };
  const due = ['external_account', 'tos_acceptance.date'];
  return store.put<FakeAccount>(null, {
    id: newId('acct'),
    object: 'account',
    created: now(),
    livemode: false,
    type: resolved,
    controller,
    email: p.email('email') ?? null,
    country: p.str('country') ?? 'US',
    default_currency: p.str('default_currency')?.toLowerCase() ?? 'usd',
    business_type: p.str('business_type') ?? null,
    business_profile: p.has('business_profile') ? structuredClone(p.nested('business_profile').params) : null,
    charges_enabled: false,
    payouts_enabled: false,
    details_submitted: false,
    capabilities: {},
    requirements: { currently_due: due, past_due: [], eventually_due: [], pending_verification: [], errors: [], current_deadline: null, disabled_reason: 'requirements.past_due' },
    metadata: p.metadata(),
  });
}

function createCheckoutSession({ store, scope, params: p, base }: ApiContext): FakeCheckoutSession {
  if (scope !== null && !store.get(null, scope, 'account')!.charges_enabled) {
    // The fake's stand-in for Stripe refusing payments on an account that has not finished onboarding.
    throw invalid(`The connected account ${scope} cannot accept payments yet: its onboarding is not complete (charges_enabled is false).`);
  }
  const mode = p.oneOf('mode', ['payment', 'subscription'] as const, true);
  const customer = p.str('customer');
  const customerEmail = p.email('customer_email');
  if (customer !== undefined && customerEmail !== undefined) throw invalid('You may only specify one of these parameters: customer, customer_email.', 'customer_email');
  if (customer !== undefined && !store.get(scope, customer, 'customer')) throw noSuch('customer', customer, 'customer');
  const clientReference = p.str('client_reference_id');
  if (clientReference !== undefined && clientReference.length > 200) throw invalid('client_reference_id can be at most 200 characters.', 'client_reference_id');

  const items = p.list('line_items');
  if (items.length === 0) throw invalid('Missing required param: line_items.', 'line_items');
  const lineItems = items.map((li) => {
    const id = li.str('price', true);
    const price = store.get(scope, id, 'price') ?? throwing(noSuch('price', id, li.name('price')));
    if (!price.active) throw invalid('The price specified is inactive. This field only accepts active prices.', li.name('price'));
    if (mode === 'payment' && price.recurring) {
      throw invalid('You specified `payment` mode but passed a recurring price. Either switch to `subscription` mode or use only one-time prices.', li.name('price'));
    }
    if (mode === 'subscription' && !price.recurring) {
      // Stripe would add one-time prices to the first invoice; the fake bills recurring prices only.
      throw invalid('This fake Stripe supports only recurring prices in `subscription` mode.', li.name('price'));
    }
    return { price, quantity: li.int('quantity', { required: true, min: 1 }) };
  });
  const [first] = lineItems;
  for (const [i, { price }] of lineItems.entries()) {
    if (price.currency !== first!.price.currency) throw invalid('All prices must be in the same currency.', `line_items[${i}][price]`);
    const a = price.recurring;
    const b = first!.price.recurring;
    if (a && b && (a.interval !== b.interval || a.interval_count !== b.interval_count)) {
      throw invalid('Checkout does not support multiple prices with different billing intervals.', `line_items[${i}][price]`);
    }
  }
  const total = lineItems.reduce((n, { price, quantity }) => n + price.unit_amount * quantity, 0);

  const subscriptionData = p.nested('subscription_data');
  const paymentData = p.nested('payment_intent_data');
  if (mode === 'payment' && p.has('subscription_data')) throw invalid('You can not pass `subscription_data` in `payment` mode.', 'subscription_data');
  if (mode === 'subscription' && p.has('payment_intent_data')) throw invalid('You can not pass `payment_intent_data` in `subscription` mode.', 'payment_intent_data');
  const feePercent = subscriptionData.decimal('application_fee_percent', { min: 0, max: 100 }) ?? null;
  const feeAmount = paymentData.int('application_fee_amount', { min: 0 }) ?? null;
  if (scope === null && (feePercent !== null || feeAmount !== null)) {
    const param = feePercent !== null ? subscriptionData.name('application_fee_percent') : paymentData.name('application_fee_amount');
    throw invalid('An application fee can only be set on a request made on behalf of a connected account (the Stripe-Account header).', param);
  }
  if (feeAmount !== null && feeAmount > total) throw invalid(`The application fee (${feeAmount}) cannot exceed the amount of the payment (${total}).`, paymentData.name('application_fee_amount'));

  const plan: SessionPlan = {
    lineItems: lineItems.map(({ price, quantity }) => ({ price: price.id, quantity })),
    subscription: { metadata: subscriptionData.metadata(), applicationFeePercent: feePercent },
    paymentIntent: { metadata: paymentData.metadata(), applicationFeeAmount: feeAmount },
  };
  const id = newId('cs_test');
  const created = now();
  store.setPlan(id, plan);
  return store.put<FakeCheckoutSession>(scope, {
    id,
    object: 'checkout.session',
    created,
    livemode: false,
    url: `${base}/checkout/${id}`,
    status: 'open',
    mode,
    customer: customer ?? null,
    customer_email: customerEmail ?? null,
    customer_details: null,
    client_reference_id: clientReference ?? null,
    metadata: p.metadata(),
    payment_status: 'unpaid',
    subscription: null,
    payment_intent: null,
    amount_subtotal: total,
    amount_total: total,
    currency: first!.price.currency,
    success_url: p.url('success_url') ?? null,
    cancel_url: p.url('cancel_url') ?? null,
    expires_at: created + 24 * 3600,
  });
}

/** Connected accounts and their links are the platform's business, not a connected account's. */
function platformOnly(scope: Scope): void {
  if (scope !== null) throw invalid('Only Stripe Connect platforms can work with other accounts; this request carried a Stripe-Account header.');
}

function nonEmpty(p: Reader, key: string): string {
  const value = p.str(key, true);
  if (value.trim() === '') throw invalid(`You must provide a non-empty value for ${p.name(key)}.`, p.name(key));
  return value;
}

function throwing(err: Error): never {
  throw err;
}
