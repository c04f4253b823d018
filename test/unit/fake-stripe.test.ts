import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeStripe, startFakeStripe } from '../fakes/stripe.ts';

// The fake exists to be driven by the official SDK (as the platform's adapter does), and its webhooks to be verified
// by the SDK's own constructEvent, so every check goes through them unless the raw wire itself is the point.

const KEY = 'sk_test_platform';
const PLATFORM_SECRET = 'whsec_platform_test';
const CONNECT_SECRET = 'whsec_connect_test';

interface Receiver {
  url: string;
  /** Verified events, in arrival order. */
  events: Stripe.Event[];
  /** Deliveries whose signature did not verify. */
  rejected: string[];
  /** What the receiver answers to verified events. */
  status: number;
  close(): Promise<void>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A webhook endpoint as the platform's: verifies the raw body with the SDK, then answers `status`. */
async function receiver(secret: string): Promise<Receiver> {
  const r: Receiver = { url: '', events: [], rejected: [], status: 200, close: async () => {} };
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    try {
      r.events.push(Stripe.webhooks.constructEvent(Buffer.concat(chunks), req.headers['stripe-signature'] ?? '', secret));
    } catch (err) {
      r.rejected.push((err as Error).message);
      res.writeHead(400).end('bad signature');
      return;
    }
    res.writeHead(r.status, { 'content-type': 'application/json' }).end(JSON.stringify({ received: true }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  r.close = () => new Promise((resolve) => server.close(() => resolve()));
  cleanups.push(r.close);
  return r;
}

async function start(opts?: Parameters<typeof startFakeStripe>[0]) {
  const fake = await startFakeStripe(opts);
  cleanups.push(() => fake.close());
  const platform = await receiver(PLATFORM_SECRET);
  const connect = await receiver(CONNECT_SECRET);
  fake.setWebhooks({ platform: { url: platform.url, secret: PLATFORM_SECRET }, connect: { url: connect.url, secret: CONNECT_SECRET } });
  return { fake, platform, connect, stripe: client(fake, KEY) };
}

function client(fake: FakeStripe, key: string): Stripe {
  return new Stripe(key, { host: '127.0.0.1', port: fake.port, protocol: 'http', maxNetworkRetries: 0, telemetry: false });
}

/** Plays the customer's browser: the fake's page answers a redirect (or an error) without following it. */
async function visit(url: string): Promise<{ status: number; location: string | null; text: string }> {
  const res = await fetch(url, { redirect: 'manual' });
  return { status: res.status, location: res.headers.get('location'), text: await res.text() };
}

async function monthlyPrice(stripe: Stripe, stripeAccount?: string, unit_amount = 2000) {
  const product = await stripe.products.create({ name: 'Pro', metadata: { plan: 'pro' } }, { stripeAccount });
  const price = await stripe.prices.create({ product: product.id, unit_amount, currency: 'usd', recurring: { interval: 'month' } }, { stripeAccount });
  return { product, price };
}

async function onboardedAccount(stripe: Stripe): Promise<string> {
  const account = await stripe.accounts.create({ controller: { stripe_dashboard: { type: 'express' }, fees: { payer: 'application' }, losses: { payments: 'application' } } });
  const link = await stripe.accountLinks.create({ account: account.id, type: 'account_onboarding', refresh_url: 'https://app.test/refresh', return_url: 'https://app.test/return' });
  expect((await visit(link.url)).status).toBe(303);
  return account.id;
}

const caught = (p: Promise<unknown>) => p.then(() => expect.fail('expected the call to fail'), (err: unknown) => err as Stripe.errors.StripeError);

describe('fake Stripe: the platform subscription', () => {
  it('creates a customer (idempotently) and a subscription checkout; paying it sends the three signed events in order and redirects', async () => {
    const { fake, platform, connect, stripe } = await start();
    const { price } = await monthlyPrice(stripe);

    const customer = await stripe.customers.create({ name: 'Acme', metadata: { account_id: 'acc_1' } }, { idempotencyKey: 'customer-acc_1' });
    expect(customer).toMatchObject({ object: 'customer', name: 'Acme', email: null, metadata: { account_id: 'acc_1' } });
    expect(customer.id).toMatch(/^cus_[A-Za-z0-9]{24}$/);
    const again = await stripe.customers.create({ name: 'Acme', metadata: { account_id: 'acc_1' } }, { idempotencyKey: 'customer-acc_1' });
    expect(again.id).toBe(customer.id);
    expect(again.lastResponse.headers['idempotent-replayed']).toBe('true');
    const reused = await caught(stripe.customers.create({ name: 'Other' }, { idempotencyKey: 'customer-acc_1' }));
    expect(reused).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);

    const metadata = { account_id: 'acc_1', plan_id: 'pro' };
    const session = await stripe.checkout.sessions.create({
      mode: 'subscription',
      customer: customer.id,
      client_reference_id: 'acc_1',
      line_items: [{ price: price.id, quantity: 1 }],
      success_url: 'https://app.test/billing/success?session={CHECKOUT_SESSION_ID}',
      cancel_url: 'https://app.test/billing/cancel',
      metadata,
      subscription_data: { metadata },
    });
    expect(session.id).toMatch(/^cs_test_/);
    expect(session).toMatchObject({
      object: 'checkout.session',
      url: `${fake.url}/checkout/${session.id}`,
      status: 'open',
      mode: 'subscription',
      customer: customer.id,
      client_reference_id: 'acc_1',
      metadata,
      payment_status: 'unpaid',
      subscription: null,
      payment_intent: null,
      amount_total: 2000,
      currency: 'usd',
    });
    expect((await stripe.checkout.sessions.retrieve(session.id)).status).toBe('open');
    expect(fake.requests.find((r) => r.path === '/v1/checkout/sessions')).toMatchObject({
      method: 'POST',
      stripeAccount: null,
      body: { mode: 'subscription', line_items: [{ price: price.id, quantity: '1' }], subscription_data: { metadata } },
    });

    const paid = await visit(session.url!);
    expect(paid).toMatchObject({ status: 303, location: `https://app.test/billing/success?session=${session.id}` });

    expect(platform.events.map((e) => e.type)).toEqual(['checkout.session.completed', 'customer.subscription.created', 'invoice.payment_succeeded']);
    expect(platform.rejected).toEqual([]);
    expect(connect.events).toEqual([]);
    const [completed, created, succeeded] = platform.events.map((e) => e.data.object) as [Stripe.Checkout.Session, Stripe.Subscription, Stripe.Invoice];
    expect(platform.events[0]).toMatchObject({ object: 'event', api_version: Stripe.API_VERSION, livemode: false, pending_webhooks: 1 });
    expect(platform.events[0]!.id).toMatch(/^evt_/);
    expect(platform.events[0]).not.toHaveProperty('account');
    expect(completed).toMatchObject({ id: session.id, status: 'complete', payment_status: 'paid', customer: customer.id, client_reference_id: 'acc_1', metadata });
    expect(completed.subscription).toMatch(/^sub_/);

    const item = created.items.data[0]!;
    expect(created).toMatchObject({ id: completed.subscription, status: 'active', customer: customer.id, cancel_at_period_end: false, canceled_at: null, metadata });
    expect(item).toMatchObject({ price: { id: price.id, recurring: { interval: 'month', interval_count: 1 } }, quantity: 1 });
    const periodStart = new Date(item.current_period_start * 1000);
    const periodEnd = new Date(item.current_period_end * 1000);
    expect(periodEnd.getUTCMonth()).toBe((periodStart.getUTCMonth() + 1) % 12); // a calendar month, from the price's interval
    expect(Math.abs(item.current_period_start - Date.now() / 1000)).toBeLessThan(10);

    expect(succeeded.id).toMatch(/^in_/);
    expect(succeeded).toMatchObject({ status: 'paid', customer: customer.id, amount_paid: 2000, parent: { subscription_details: { subscription: created.id } } });
    expect((succeeded as unknown as { subscription: string }).subscription).toBe(created.id);
    expect(succeeded.lines.data[0]).toMatchObject({ amount: 2000, period: { start: item.current_period_start, end: item.current_period_end } });
    expect(created.latest_invoice).toBe(succeeded.id);

    // The API sees the same state the events described.
    const sub = await stripe.subscriptions.retrieve(created.id);
    expect(sub).toMatchObject({ status: 'active', latest_invoice: succeeded.id, items: { object: 'list', data: [{ id: item.id }] } });
    expect(await stripe.checkout.sessions.retrieve(session.id)).toMatchObject({ status: 'complete', subscription: created.id, url: null });
    expect(fake.events.map((d) => d.status)).toEqual([200, 200, 200]);

    expect((await visit(session.url!)).status).toBe(410); // paying twice is not possible
    expect(platform.events).toHaveLength(3);
  });

  it('a checkout without a customer creates one; the billing portal session redirects back', async () => {
    const { platform, stripe } = await start();
    const { price } = await monthlyPrice(stripe);
    const session = await stripe.checkout.sessions.create({
      mode: 'subscription',
      customer_email: 'owner@acme.test',
      client_reference_id: 'acc_2',
      line_items: [{ price: price.id, quantity: 2 }],
      success_url: 'https://app.test/ok',
    });
    await visit(session.url!);
    const completed = platform.events[0]!.data.object as Stripe.Checkout.Session;
    expect(completed.customer).toMatch(/^cus_/);
    expect(completed.amount_total).toBe(4000);
    const invoice = platform.events[2]!.data.object as Stripe.Invoice;
    expect(invoice).toMatchObject({ customer: completed.customer, customer_email: 'owner@acme.test', amount_paid: 4000 });

    const portal = await stripe.billingPortal.sessions.create({ customer: completed.customer as string, return_url: 'https://app.test/billing' });
    expect(portal.id).toMatch(/^bps_/);
    expect(portal).toMatchObject({ object: 'billing_portal.session', customer: completed.customer, return_url: 'https://app.test/billing' });
    expect(await visit(portal.url)).toMatchObject({ status: 303, location: 'https://app.test/billing' });
  });

  it('GET /checkout answers 502 when the receiver refuses an event, and the refusal is in fake.events', async () => {
    const { fake, platform, stripe } = await start();
    const { price } = await monthlyPrice(stripe);
    const session = await stripe.checkout.sessions.create({ mode: 'subscription', line_items: [{ price: price.id, quantity: 1 }], success_url: 'https://app.test/ok' });
    platform.status = 500;
    const res = await visit(session.url!);
    expect(res.status).toBe(502);
    expect(res.text).toContain('checkout.session.completed');
    expect(res.text).toContain('answered 500');
    expect(fake.events.map((d) => [d.event.type, d.status])).toEqual([
      ['checkout.session.completed', 500],
      ['customer.subscription.created', 500],
      ['invoice.payment_succeeded', 500],
    ]);

    // Stripe redelivers the same event: same id, a fresh signature the receiver verifies.
    platform.status = 200;
    const first = fake.events[0]!.event;
    const again = await fake.resend(first.id);
    expect(again).toMatchObject({ status: 200, target: 'platform' });
    expect(platform.events.at(-1)).toMatchObject({ id: first.id, type: 'checkout.session.completed' });

    await platform.close();
    const gone = await visit((await stripe.checkout.sessions.create({ mode: 'subscription', line_items: [{ price: price.id, quantity: 1 }] })).url!);
    expect(gone.status).toBe(502);
    expect(gone.text).toContain('could not be reached');
  });

  it('a body signed with another secret is rejected by constructEvent (sendRaw)', async () => {
    const { fake, platform } = await start();
    const payload = JSON.stringify({ id: 'evt_forged', object: 'event', type: 'invoice.payment_succeeded', data: { object: {} } });
    const forged = Stripe.webhooks.generateTestHeaderString({ payload, secret: 'whsec_wrong' });
    expect(await fake.sendRaw('platform', payload, { 'stripe-signature': forged })).toMatchObject({ status: 400 });
    expect(platform.rejected[0]).toMatch(/signature/i);
  });
});

describe('fake Stripe: Connect', () => {
  it('onboards an account, sells a product on it with an application fee, and sends the account-carrying events to the connect target', async () => {
    const { fake, platform, connect, stripe } = await start();
    const account = await stripe.accounts.create({ controller: { stripe_dashboard: { type: 'express' } }, email: 'shop@maker.test', metadata: { app_id: 'app_1' } });
    expect(account.id).toMatch(/^acct_/);
    expect(account).toMatchObject({
      object: 'account',
      charges_enabled: false,
      payouts_enabled: false,
      details_submitted: false,
      requirements: { currently_due: ['external_account', 'tos_acceptance.date'], past_due: [], eventually_due: [], disabled_reason: 'requirements.past_due' },
      metadata: { app_id: 'app_1' },
    });

    // Products exist before onboarding, but nobody can pay until it is done.
    const product = await stripe.products.create({ name: 'Ebook', description: 'A book' }, { stripeAccount: account.id });
    const price = await stripe.prices.create({ product: product.id, unit_amount: 1500, currency: 'usd', metadata: { sku: 'ebook' } }, { stripeAccount: account.id });
    expect(price).toMatchObject({ object: 'price', type: 'one_time', recurring: null, unit_amount: 1500, product: product.id });
    expect(await stripe.products.update(product.id, { default_price: price.id }, { stripeAccount: account.id })).toMatchObject({ default_price: price.id });
    const early = await caught(
      stripe.checkout.sessions.create({ mode: 'payment', line_items: [{ price: price.id, quantity: 1 }], success_url: 'https://shop.test/ok' }, { stripeAccount: account.id }),
    );
    expect(early).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);

    const link = await stripe.accountLinks.create({ account: account.id, type: 'account_onboarding', refresh_url: 'https://app.test/refresh', return_url: 'https://app.test/return' });
    expect(link.object).toBe('account_link');
    expect(link.url.startsWith(`${fake.url}/onboarding/${account.id}?`)).toBe(true);
    expect(link.expires_at).toBeGreaterThan(Date.now() / 1000);
    expect(await visit(link.url)).toMatchObject({ status: 303, location: 'https://app.test/return' });
    expect(await stripe.accounts.retrieve(account.id)).toMatchObject({ charges_enabled: true, payouts_enabled: true, details_submitted: true, requirements: { currently_due: [], disabled_reason: null } });
    expect(connect.events.map((e) => [e.type, e.account])).toEqual([['account.updated', account.id]]);

    const session = await stripe.checkout.sessions.create(
      {
        mode: 'payment',
        client_reference_id: 'user_9',
        line_items: [{ price: price.id, quantity: 2 }],
        success_url: 'https://shop.test/ok',
        metadata: { app_id: 'app_1' },
        payment_intent_data: { application_fee_amount: 300, metadata: { order: 'ord_1' } },
      },
      { stripeAccount: account.id },
    );
    expect(session).toMatchObject({ mode: 'payment', amount_total: 3000, payment_intent: null });
    expect(fake.requests.at(-1)).toMatchObject({ stripeAccount: account.id, body: { payment_intent_data: { application_fee_amount: '300', metadata: { order: 'ord_1' } } } });
    expect(await visit(session.url!)).toMatchObject({ status: 303, location: 'https://shop.test/ok' });

    expect(platform.events).toEqual([]);
    const completed = connect.events.at(-1)!;
    expect(completed).toMatchObject({ type: 'checkout.session.completed', account: account.id, data: { object: { id: session.id, payment_status: 'paid' } } });
    const piId = (completed.data.object as Stripe.Checkout.Session).payment_intent as string;
    expect(piId).toMatch(/^pi_/);
    const pi = await stripe.paymentIntents.retrieve(piId, {}, { stripeAccount: account.id });
    expect(pi).toMatchObject({ status: 'succeeded', amount: 3000, application_fee_amount: 300, metadata: { app_id: 'app_1', order: 'ord_1' } });
    expect(pi.latest_charge).toMatch(/^ch_/);

    const partial = await fake.refundCharge(piId, 1000);
    expect(partial).toMatchObject({ status: 200, event: { type: 'charge.refunded', account: account.id } });
    expect(partial.event.data.object).toMatchObject({ id: pi.latest_charge, payment_intent: piId, amount: 3000, amount_refunded: 1000, refunded: false, metadata: { order: 'ord_1' } });
    const rest = await fake.refundCharge(piId);
    expect(rest.event.data.object).toMatchObject({ amount_refunded: 3000, refunded: true });
    expect(rest.event.data.previous_attributes).toEqual({ amount_refunded: 1000, refunded: false });
    expect(connect.events.map((e) => e.type).slice(-2)).toEqual(['charge.refunded', 'charge.refunded']);
  });

  it('a declined card sends payment_intent.payment_failed; paying afterwards succeeds that same PaymentIntent', async () => {
    const { fake, connect, stripe } = await start();
    const acct = await onboardedAccount(stripe);
    const product = await stripe.products.create({ name: 'Mug' }, { stripeAccount: acct });
    const price = await stripe.prices.create({ product: product.id, unit_amount: 900, currency: 'eur' }, { stripeAccount: acct });
    const session = await stripe.checkout.sessions.create(
      { mode: 'payment', line_items: [{ price: price.id, quantity: 1 }], metadata: { app_id: 'app_2' }, payment_intent_data: { metadata: { order: 'ord_2' } } },
      { stripeAccount: acct },
    );
    const failure = await fake.failPaymentIntent(session.id);
    expect(failure).toMatchObject({ status: 200, followUps: [], event: { type: 'payment_intent.payment_failed', account: acct } });
    const failedPi = failure.event.data.object as unknown as Stripe.PaymentIntent;
    expect(failedPi).toMatchObject({ status: 'requires_payment_method', amount: 900, currency: 'eur', metadata: { app_id: 'app_2', order: 'ord_2' }, last_payment_error: { code: 'card_declined' } });

    expect((await visit(session.url!)).status).toBe(200); // no success_url: Stripe's own confirmation page
    const completed = connect.events.at(-1)!.data.object as Stripe.Checkout.Session;
    expect(completed.payment_intent).toBe(failedPi.id);
    expect(await stripe.paymentIntents.retrieve(failedPi.id, {}, { stripeAccount: acct })).toMatchObject({ status: 'succeeded', last_payment_error: null });
    await expect(fake.failPaymentIntent(session.id)).rejects.toThrow(/not an open payment-mode session/);
  });

  it("keeps every account's objects to itself", async () => {
    const { stripe } = await start();
    const a = await onboardedAccount(stripe);
    const b = await onboardedAccount(stripe);
    const product = await stripe.products.create({ name: 'A only' }, { stripeAccount: a });

    for (const stripeAccount of [b, undefined]) {
      const err = await caught(stripe.products.retrieve(product.id, {}, { stripeAccount }));
      expect(err).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
      expect(err).toMatchObject({ statusCode: 404, code: 'resource_missing', param: 'id' });
    }
    const borrowed = await caught(stripe.prices.create({ product: product.id, unit_amount: 100, currency: 'usd' }, { stripeAccount: b }));
    expect(borrowed).toMatchObject({ statusCode: 400, code: 'resource_missing', param: 'product' });

    const unknown = await caught(stripe.products.create({ name: 'x' }, { stripeAccount: 'acct_doesnotexist' }));
    expect(unknown).toBeInstanceOf(Stripe.errors.StripePermissionError);
    expect(unknown.statusCode).toBe(403);
    const otherAccount = await caught(stripe.accounts.retrieve(a, {}, { stripeAccount: b }));
    expect(otherAccount).toBeInstanceOf(Stripe.errors.StripePermissionError);
    expect((await stripe.products.retrieve(product.id, {}, { stripeAccount: a })).name).toBe('A only');
  });

  it('a subscription on a connected account carries its application fee and its events go to connect', async () => {
    const { platform, connect, stripe } = await start();
    const acct = await onboardedAccount(stripe);
    const { price } = await monthlyPrice(stripe, acct, 500);
    const session = await stripe.checkout.sessions.create(
      { mode: 'subscription', line_items: [{ price: price.id, quantity: 1 }], subscription_data: { application_fee_percent: 10, metadata: { app_id: 'app_3' } } },
      { stripeAccount: acct },
    );
    await visit(session.url!);
    expect(platform.events).toEqual([]);
    expect(connect.events.map((e) => [e.type, e.account]).slice(-3)).toEqual([
      ['checkout.session.completed', acct],
      ['customer.subscription.created', acct],
      ['invoice.payment_succeeded', acct],
    ]);
    expect(connect.events.at(-2)!.data.object).toMatchObject({ application_fee_percent: 10, metadata: { app_id: 'app_3' } });

    // Application fees are a Connect thing: the platform's own checkout cannot set one.
    const { price: own } = await monthlyPrice(stripe);
    const err = await caught(stripe.checkout.sessions.create({ mode: 'subscription', line_items: [{ price: own.id, quantity: 1 }], subscription_data: { application_fee_percent: 10 } }));
    expect(err).toMatchObject({ statusCode: 400, param: 'subscription_data[application_fee_percent]' });
  });
});

describe('fake Stripe: subscription lifecycle', () => {
  async function subscribed() {
    const ctx = await start();
    const { price } = await monthlyPrice(ctx.stripe);
    const session = await ctx.stripe.checkout.sessions.create({ mode: 'subscription', line_items: [{ price: price.id, quantity: 1 }], success_url: 'https://app.test/ok' });
    await visit(session.url!);
    const sub = ctx.platform.events[1]!.data.object as Stripe.Subscription;
    return { ...ctx, sub };
  }

  it('failInvoice then payInvoice: invoice events, each followed by customer.subscription.updated', async () => {
    const { fake, platform, stripe, sub } = await subscribed();
    const firstEnd = sub.items.data[0]!.current_period_end;

    const failure = await fake.failInvoice(sub.id);
    expect(failure).toMatchObject({ status: 200, event: { type: 'invoice.payment_failed' } });
    const open = failure.event.data.object as unknown as Stripe.Invoice;
    expect(open).toMatchObject({ status: 'open', amount_paid: 0, amount_due: 2000, attempt_count: 1, billing_reason: 'subscription_cycle', parent: { subscription_details: { subscription: sub.id } } });
    expect(open.lines.data[0]!.period.start).toBe(firstEnd); // the renewal bills the next period
    expect(failure.followUps.map((d) => [d.event.type, d.status])).toEqual([['customer.subscription.updated', 200]]);
    const pastDue = failure.followUps[0]!.event;
    expect(pastDue.data.object).toMatchObject({ status: 'past_due', latest_invoice: open.id });
    expect(pastDue.data.previous_attributes).toMatchObject({ status: 'active' });
    expect((await stripe.subscriptions.retrieve(sub.id)).status).toBe('past_due');

    const payment = await fake.payInvoice(sub.id);
    expect(payment.event).toMatchObject({ type: 'invoice.payment_succeeded', data: { object: { id: open.id, status: 'paid', amount_paid: 2000 } } });
    expect(payment.followUps[0]!.event.data).toMatchObject({ object: { status: 'active' }, previous_attributes: { status: 'past_due' } });
    expect(platform.events.map((e) => e.type).slice(3)).toEqual([
      'invoice.payment_failed',
      'customer.subscription.updated',
      'invoice.payment_succeeded',
      'customer.subscription.updated',
    ]);
  });

  it('API updates and cancellation send their events after the response; deleteSubscription and updateSubscription send theirs', async () => {
    const { fake, platform, stripe, sub } = await subscribed();
    const updated = await stripe.subscriptions.update(sub.id, { cancel_at_period_end: true, metadata: { reason: 'too expensive' } });
    expect(updated).toMatchObject({ cancel_at_period_end: true, cancel_at: sub.items.data[0]!.current_period_end, metadata: { reason: 'too expensive' } });
    await fake.idle();
    expect(platform.events.at(-1)).toMatchObject({
      type: 'customer.subscription.updated',
      request: { id: updated.lastResponse.requestId },
      data: { object: { cancel_at_period_end: true }, previous_attributes: { cancel_at_period_end: false } },
    });

    const patched = await fake.updateSubscription(sub.id, { cancel_at_period_end: false, cancel_at: null });
    expect(patched.event.data.previous_attributes).toMatchObject({ cancel_at_period_end: true });

    const deleted = await fake.deleteSubscription(sub.id);
    expect(deleted).toMatchObject({ status: 200, event: { type: 'customer.subscription.deleted', data: { object: { id: sub.id, status: 'canceled' } } } });
    expect((await stripe.subscriptions.retrieve(sub.id)).canceled_at).toEqual(expect.any(Number));
    await expect(fake.failInvoice(sub.id)).rejects.toThrow(/canceled/);

    const err = await caught(stripe.subscriptions.update(sub.id, { cancel_at_period_end: true }));
    expect(err).toMatchObject({ statusCode: 400, param: 'cancel_at_period_end' });
  });

  it('DELETE /v1/subscriptions/:id cancels and sends customer.subscription.deleted', async () => {
    const { fake, platform, stripe, sub } = await subscribed();
    const canceled = await stripe.subscriptions.cancel(sub.id);
    expect(canceled).toMatchObject({ status: 'canceled', ended_at: expect.any(Number) });
    await fake.idle();
    expect(platform.events.at(-1)).toMatchObject({ type: 'customer.subscription.deleted', data: { object: { id: sub.id, status: 'canceled' } } });
  });
});

describe('fake Stripe: errors', () => {
  it('401 without a key or with a wrong one: StripeAuthenticationError', async () => {
    const { fake } = await start({ secretKey: KEY });
    const wrong = await caught(client(fake, 'sk_test_wrong').customers.create({ name: 'x' }));
    expect(wrong).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    expect(wrong).toMatchObject({ statusCode: 401, type: 'StripeAuthenticationError' });
    expect(wrong.message).toMatch(/^Invalid API Key provided/);

    const res = await fetch(`${fake.url}/v1/customers`, { method: 'POST' });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: { type: 'invalid_request_error', message: expect.stringMatching(/You did not provide an API key/) } });
  });

  it('404 for unknown ids, 400 with param for missing and unknown parameters: StripeInvalidRequestError', async () => {
    const { fake, stripe } = await start();
    const missing = await caught(stripe.subscriptions.retrieve('sub_nope'));
    expect(missing).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(missing).toMatchObject({ statusCode: 404, code: 'resource_missing', param: 'id', message: "No such subscription: 'sub_nope'" });
    const raw = await fetch(`${fake.url}/v1/checkout/sessions/cs_test_nope`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(await raw.json()).toEqual({ error: { type: 'invalid_request_error', code: 'resource_missing', message: "No such checkout.session: 'cs_test_nope'", param: 'id' } });

    const noName = await caught(stripe.products.create({} as Stripe.ProductCreateParams));
    expect(noName).toMatchObject({ statusCode: 400, param: 'name', message: 'Missing required param: name.' });
    const noPrice = await caught(stripe.checkout.sessions.create({ mode: 'payment', line_items: [{ price: 'price_x' }] }));
    expect(noPrice).toMatchObject({ statusCode: 400, param: 'line_items[0][price]', code: 'resource_missing' });
    const unknownParam = await caught(stripe.customers.create({ name: 'x', phone: '+1 555' }));
    expect(unknownParam).toMatchObject({ statusCode: 400, param: 'phone' });
    const mixed = await caught(stripe.checkout.sessions.create({ mode: 'payment', customer: 'cus_x', customer_email: 'a@b.test', line_items: [] }));
    expect(mixed).toMatchObject({ statusCode: 400, param: 'customer_email' });
  });

  it('failNext answers the next API request with the given status, once', async () => {
    const { fake, stripe } = await start();
    fake.failNext(500);
    const err = await caught(stripe.customers.create({ name: 'x' }));
    expect(err).toBeInstanceOf(Stripe.errors.StripeAPIError);
    expect(err.statusCode).toBe(500);
    fake.failNext(429);
    expect(await caught(stripe.customers.create({ name: 'x' }))).toBeInstanceOf(Stripe.errors.StripeRateLimitError);
    fake.failNext(402);
    expect(await caught(stripe.customers.create({ name: 'x' }))).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect((await stripe.customers.create({ name: 'x' })).id).toMatch(/^cus_/);
    expect(fake.requests.map((r) => r.status)).toEqual([500, 429, 402, 200]);

    // With retries allowed, the SDK's retry (same idempotency key) goes through.
    const retrying = new Stripe(KEY, { host: '127.0.0.1', port: fake.port, protocol: 'http', maxNetworkRetries: 1, telemetry: false });
    fake.failNext(503, undefined, { retry: true });
    expect((await retrying.customers.create({ name: 'y' })).name).toBe('y');
    const [first, second] = fake.requests.slice(-2);
    expect(second!.idempotencyKey).toBe(first!.idempotencyKey);
  });
});
