// Monetization end to end: the platform's own Stripe Connect adapter (the official SDK) against the fake Stripe on
// loopback, whose signed Connect webhooks reach the platform's POST /webhooks/payments/connect.
import { randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeStripe, type FakeStripe, type FakeSubscription } from '../fakes/stripe.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { waitFor } from './frontend-helpers.ts';
import { callTool, connectMcp, resultJson } from '../e2e/e2e-helpers.ts';

const CONNECT_SECRET = 'whsec_monetization_test_secret';
const FEE_PERCENT = 10;
const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
const UUID = expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
const SUCCESS = 'https://shop.example/paid';
const CANCEL = 'https://shop.example/cancel';
const RECEIVED = { received: true, handled: true };
const IGNORED = { received: true, handled: false };

interface App {
  app_id: string;
}

let fake: FakeStripe;
let p: TestPlatform;
let app: App;
let sibling: App;
let alice: string;
let bob: string;

beforeAll(async () => {
  fake = await startFakeStripe();
  p = await startTestPlatform({
    SVC_STRIPE_SECRET_KEY: 'sk_test_monetization',
    SVC_STRIPE_API_URL: fake.url,
    PAYMENTS_CONNECT_WEBHOOK_SECRET: CONNECT_SECRET,
    SVC_PLATFORM_FEE_PERCENT: String(FEE_PERCENT),
    SVC_AUTH_RATE_LIMIT_PER_MINUTE: '1000',
  });
  fake.setWebhooks({ connect: { url: `${p.url}/webhooks/payments/connect`, secret: CONNECT_SECRET } });
  app = (await p.api('POST', '/init', { body: { name: 'Shop' } })).body;
  sibling = (await p.api('POST', '/init', { body: { name: 'Shop two' } })).body;
  alice = await signup('alice@example.com');
  bob = await signup('bob@example.com');
});
afterAll(async () => {
  await p?.close();
  await fake?.close();
});

async function signup(email: string): Promise<string> {
  const r = await p.api('POST', `/v1/${app.app_id}/auth/signup`, { key: null, body: { email, password: 'correct horse battery' } });
  expect(r.status).toBe(201);
  return r.body.access_token;
}

const billing = (path: string, target: App = app) => `/v1/${target.app_id}/billing${path}`;
const asOwner = (method: string, path: string, body?: unknown) => p.api(method, billing(path), { body });
const asUser = (token: string, method: string, path: string, body?: unknown) => p.api(method, billing(path), { key: token, body });

/** A browser at one of the fake's hosted pages: 303 once Stripe's side is done and every webhook was accepted. */
async function visit(url: string): Promise<{ status: number; location: string | null }> {
  const res = await fetch(url, { redirect: 'manual' });
  await res.text();
  await fake.idle();
  return { status: res.status, location: res.headers.get('location') };
}

/** What the platform answered to each delivery from index `from` on: [event type, status, body]. */
function answers(from: number): Array<[string, number | null, unknown]> {
  return fake.events.slice(from).map((d) => [d.event.type, d.status, d.body ? JSON.parse(d.body) : null]);
}

const row = async (table: 'app_subscriptions' | 'app_orders', id: string) => (await p.sql(`select * from ${table} where id = $1`, [id]))[0];
const lastRequest = (path: string) => fake.requests.filter((r) => r.path === path).at(-1)!;
const isoOf = (seconds: number) => new Date(seconds * 1000).toISOString();

/** The end user's entitlement in the app database (written by the billing_entitlement_sync job), or null. */
async function entitlement(userId: string): Promise<{ plan_id: string; status: string } | null> {
  const pool = p.services.databases.pool(app.app_id);
  const [exists] = (await pool.query(`select to_regclass('svc_billing.entitlements') is not null as ok`)).rows;
  if (!exists.ok) return null;
  return (await pool.query('select plan_id, status from svc_billing.entitlements where user_id = $1', [userId])).rows[0] ?? null;
}

describe('monetization', () => {
  let accountId: string;
  let planId: string;
  let productId: string;

  describe('connect onboarding', () => {
    it('reports not_started before onboarding, and refuses a catalog with 409 pointing to billing_connect_onboard', async () => {
      const status = await asOwner('GET', '/connect/status');
      expect(status.status).toBe(200);
      expect(status.body).toEqual({ accountId: null, status: 'not_started', chargesEnabled: false, payoutsEnabled: false, detailsSubmitted: false, requirementsDue: [] });

      const plan = await asOwner('POST', '/plans', { name: 'Pro', priceCents: 1500 });
      expect(plan.status).toBe(409);
      expect(plan.body).toEqual({
        error: {
          code: 'CONNECT_ACCOUNT_MISSING',
          message: "The app's owner has no connected Stripe account yet.",
          remediation: 'The owner calls billing_connect_onboard (POST /v1/{app_id}/billing/connect/onboard) and completes the returned onboardingUrl.',
          documentation_url: p.docsUrl('billing'),
        },
      });
    });

    it('creates the owner account once: every app of the owner and every call share it, each call a fresh link', async () => {
      const first = await asOwner('POST', '/connect/onboard', { returnUrl: 'https://owner.example/back' });
      expect(first.status).toBe(200);
      expect(first.body).toEqual({ accountId: expect.stringMatching(/^acct_/), onboardingUrl: expect.stringContaining(`${fake.url}/onboarding/`) });
      accountId = first.body.accountId;
      expect(new URL(first.body.onboardingUrl).searchParams.get('return_url')).toBe('https://owner.example/back');

      const again = await asOwner('POST', '/connect/onboard');
      const fromSibling = await p.api('POST', billing('/connect/onboard', sibling));
      expect([again.status, fromSibling.status]).toEqual([200, 200]);
      expect([again.body.accountId, fromSibling.body.accountId]).toEqual([accountId, accountId]);
      // Without a returnUrl Stripe sends the owner back to the platform.
      expect(new URL(again.body.onboardingUrl).searchParams.get('return_url')).toBe(p.services.config.baseUrl);
      expect(fake.requests.filter((r) => r.method === 'POST' && r.path === '/v1/accounts')).toHaveLength(1);
      expect(fake.requests.filter((r) => r.path === '/v1/account_links')).toHaveLength(3);
      expect(await p.sql('select count(*)::int as n from connected_accounts')).toEqual([{ n: 1 }]);
    });

    it('reports pending with what is due until onboarding is done', async () => {
      const status = await asOwner('GET', '/connect/status');
      expect(status.body).toEqual({
        accountId,
        status: 'pending',
        chargesEnabled: false,
        payoutsEnabled: false,
        detailsSubmitted: false,
        requirementsDue: ['external_account', 'tos_acceptance.date'],
      });
    });

    it('is for the owner only', async () => {
      const r = await asUser(alice, 'GET', '/connect/status');
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe('FORBIDDEN');
      expect((await p.api('POST', billing('/connect/onboard'), { key: null })).status).toBe(401);
    });
  });

  describe('catalog', () => {
    it('creates a plan as a Stripe Product with a recurring default Price on the connected account', async () => {
      const r = await asOwner('POST', '/plans', { name: 'Pro', priceCents: 1500, features: ['export', 'priority'] });
      expect(r.status).toBe(201);
      expect(r.body).toEqual({
        id: expect.stringMatching(/^pln_[a-z0-9]{20}$/),
        name: 'Pro',
        priceCents: 1500,
        currency: 'usd',
        interval: 'month',
        features: ['export', 'priority'],
        active: true,
        createdAt: ISO,
        updatedAt: ISO,
      });
      planId = r.body.id;
      const [stored] = await p.sql('select stripe_product_id, stripe_price_id from app_plans where id = $1', [planId]);
      const product = fake.get<any>(stored.stripe_product_id)!;
      expect(product).toMatchObject({ name: 'Pro', default_price: stored.stripe_price_id, metadata: { app_id: app.app_id, plan_id: planId } });
      expect(fake.get<any>(stored.stripe_price_id)).toMatchObject({ unit_amount: 1500, currency: 'usd', recurring: { interval: 'month' }, active: true });
      expect(lastRequest('/v1/products').stripeAccount).toBe(accountId);
    });

    it('creates a product with description and metadata', async () => {
      const r = await asOwner('POST', '/products', { name: 'Sticker pack', priceCents: 250, description: 'Ten stickers', metadata: { sku: 'stk-10' } });
      expect(r.status).toBe(201);
      expect(r.body).toEqual({
        id: expect.stringMatching(/^prd_[a-z0-9]{20}$/),
        name: 'Sticker pack',
        description: 'Ten stickers',
        priceCents: 250,
        currency: 'usd',
        metadata: { sku: 'stk-10' },
        active: true,
        createdAt: ISO,
        updatedAt: ISO,
      });
      productId = r.body.id;
    });

    it('refuses invalid fields with 400 VALIDATION_FAILED naming the field', async () => {
      const cases: Array<[string, string, unknown, string, string]> = [
        ['POST', '/plans', { name: 'Bad', priceCents: 12.5 }, 'priceCents', "Invalid 'priceCents'"],
        ['POST', '/plans', { name: 'Bad', priceCents: 100, interval: 'fortnight' }, 'interval', "Invalid 'interval'"],
        ['POST', '/plans', { name: ' ', priceCents: 100 }, 'name', "Invalid 'name'"],
        ['POST', '/products', { name: 'Bad', priceCents: 100, metadata: { sku: 5 } }, 'metadata.sku', "Invalid 'metadata.sku'"],
        ['PUT', '/plans/pln_x', { priceCents: -1 }, 'priceCents', "Invalid 'priceCents'"],
        ['POST', '/plans', { name: 'Bad', priceCents: 100, price: 100 }, '', 'Unrecognized key: "price"'],
      ];
      for (const [method, path, body, field, message] of cases) {
        const r = await asOwner(method, path, body);
        expect(r.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(400);
        expect(r.body.error.code).toBe('VALIDATION_FAILED');
        expect(r.body.error.message).toContain(message);
        expect(r.body.error.details[0].path).toBe(field);
      }
    });

    it('a price change makes a new default Price and archives the old one; other fields change alone', async () => {
      const [before] = await p.sql('select stripe_product_id, stripe_price_id from app_plans where id = $1', [planId]);
      const r = await asOwner('PUT', `/plans/${planId}`, { priceCents: 2000, interval: 'year' });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ id: planId, name: 'Pro', priceCents: 2000, interval: 'year', features: ['export', 'priority'], active: true });
      const [after] = await p.sql('select stripe_product_id, stripe_price_id from app_plans where id = $1', [planId]);
      expect(after.stripe_product_id).toBe(before.stripe_product_id);
      expect(after.stripe_price_id).not.toBe(before.stripe_price_id);
      expect(fake.get<any>(before.stripe_price_id).active).toBe(false);
      expect(fake.get<any>(after.stripe_price_id)).toMatchObject({ unit_amount: 2000, recurring: { interval: 'year' }, active: true });
      expect(fake.get<any>(after.stripe_product_id).default_price).toBe(after.stripe_price_id);

      const renamed = await asOwner('PUT', `/plans/${planId}`, { name: 'Pro+', features: ['export'] });
      expect(renamed.body).toMatchObject({ name: 'Pro+', priceCents: 2000, features: ['export'] });
      expect(fake.get<any>(after.stripe_product_id).name).toBe('Pro+');
      const [unchanged] = await p.sql('select stripe_price_id from app_plans where id = $1', [planId]);
      expect(unchanged.stripe_price_id).toBe(after.stripe_price_id);

      const product = await asOwner('PUT', `/products/${productId}`, { description: null, metadata: {} });
      expect(product.body).toMatchObject({ id: productId, description: null, metadata: {}, priceCents: 250 });
    });

    it('a Stripe failure is 502 PAYMENT_PROVIDER_UNAVAILABLE and creates nothing', async () => {
      const before = await p.sql('select count(*)::int as n from app_plans');
      fake.failNext(500);
      const r = await asOwner('POST', '/plans', { name: 'Flaky', priceCents: 100 });
      expect(r.status).toBe(502);
      expect(r.body.error).toMatchObject({ code: 'PAYMENT_PROVIDER_UNAVAILABLE', message: expect.stringContaining('Injected failure') });
      expect(await p.sql('select count(*)::int as n from app_plans')).toEqual(before);
    });

    it('PUT of an unknown item is 404', async () => {
      const r = await asOwner('PUT', '/plans/pln_missing', { name: 'x' });
      expect(r.status).toBe(404);
      expect(r.body.error).toEqual({
        code: 'RESOURCE_NOT_FOUND',
        message: "Plan 'pln_missing' not found.",
        remediation: "List the app's plans with billing_plans_list.",
        documentation_url: p.docsUrl('billing'),
      });
    });

    it('lists the catalog publicly (no credential), items on sale only', async () => {
      const off = await asOwner('POST', '/plans', { name: 'Legacy', priceCents: 900, interval: 'week' });
      expect((await asOwner('PUT', `/plans/${off.body.id}`, { active: false })).body.active).toBe(false);

      const plans = await p.api('GET', billing('/plans'), { key: null });
      expect(plans.status).toBe(200);
      expect(plans.body).toEqual({
        plans: [{ id: planId, name: 'Pro+', priceCents: 2000, currency: 'usd', interval: 'year', features: ['export'], active: true, createdAt: ISO, updatedAt: ISO }],
      });
      const products = await p.api('GET', billing('/products'), { key: null });
      expect(products.body.products.map((x: { id: string }) => x.id)).toEqual([productId]);
      // Another app of the same owner has its own (empty) catalog.
      expect((await p.api('GET', billing('/plans', sibling), { key: null })).body).toEqual({ plans: [] });
      expect((await asUser(alice, 'GET', '/plans')).body.plans).toHaveLength(1);
    });
  });

  describe('end users before the account can take charges', () => {
    it('subscribe and purchase answer 409 pointing to billing_connect_status and the onboarding URL', async () => {
      const expected = {
        error: {
          code: 'CONNECT_CHARGES_DISABLED',
          message: "The app's connected Stripe account cannot take payments yet.",
          remediation:
            "The app's owner completes Stripe onboarding (billing_connect_onboard (POST /v1/{app_id}/billing/connect/onboard) returns a fresh " +
            'onboardingUrl); billing_connect_status (GET /v1/{app_id}/billing/connect/status) shows chargesEnabled and what is still due.',
          documentation_url: p.docsUrl('billing'),
        },
      };
      const sub = await asUser(alice, 'POST', '/subscribe', { planId, successUrl: SUCCESS, cancelUrl: CANCEL });
      const buy = await asUser(alice, 'POST', '/purchase', { productId, successUrl: SUCCESS, cancelUrl: CANCEL });
      expect([sub.status, sub.body]).toEqual([409, expected]);
      expect([buy.status, buy.body]).toEqual([409, expected]);
      expect(await p.sql('select count(*)::int as n from app_subscriptions')).toEqual([{ n: 0 }]);
    });

    it('the onboarding page enables charges and payouts; the status shows it', async () => {
      const onboard = await asOwner('POST', '/connect/onboard', { returnUrl: 'https://owner.example/done' });
      const from = fake.events.length;
      expect(await visit(onboard.body.onboardingUrl)).toEqual({ status: 303, location: 'https://owner.example/done' });
      // account.updated is not one of the handled events.
      expect(answers(from)).toEqual([['account.updated', 200, IGNORED]]);
      const status = await asOwner('GET', '/connect/status');
      expect(status.body).toEqual({ accountId, status: 'enabled', chargesEnabled: true, payoutsEnabled: true, detailsSubmitted: true, requirementsDue: [] });
    });
  });

  describe('subscriptions', () => {
    let subscriptionId: string;
    let stripeSubscriptionId: string;

    it('needs an end user: a key without user_token is 400 naming user_token; bad URLs are 400', async () => {
      const noUser = await asOwner('POST', '/subscribe', { planId, successUrl: SUCCESS, cancelUrl: CANCEL });
      expect(noUser.status).toBe(400);
      expect(noUser.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'user_token', message: 'required with a platform or service key' }] });
      const badUrl = await asUser(alice, 'POST', '/subscribe', { planId, successUrl: 'ftp://shop.example/paid', cancelUrl: CANCEL });
      expect(badUrl.status).toBe(400);
      expect(badUrl.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'successUrl' }] });
      const unknown = await asUser(alice, 'POST', '/subscribe', { planId: 'pln_nope', successUrl: SUCCESS, cancelUrl: CANCEL });
      expect([unknown.status, unknown.body.error.code]).toEqual([404, 'RESOURCE_NOT_FOUND']);
      expect((await asUser(alice, 'GET', '/subscription')).body).toEqual({ subscription: null });
    });

    it('subscribe returns a Checkout URL on the connected account with the platform fee; the row is pending', async () => {
      const r = await asUser(alice, 'POST', '/subscribe', { planId, successUrl: SUCCESS, cancelUrl: CANCEL });
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ url: expect.stringMatching(new RegExp(`^${fake.url}/checkout/cs_test_`)) });
      const request = lastRequest('/v1/checkout/sessions');
      expect(request.stripeAccount).toBe(accountId);
      const current = await asUser(alice, 'GET', '/subscription');
      subscriptionId = current.body.subscription.id;
      const userId = (await p.sql(`select user_id from app_subscriptions where id = $1`, [subscriptionId]))[0].user_id;
      const metadata = { app_id: app.app_id, user_id: userId, plan_id: planId, subscription_id: subscriptionId };
      expect(request.body).toMatchObject({ mode: 'subscription', success_url: SUCCESS, cancel_url: CANCEL, metadata, subscription_data: { application_fee_percent: String(FEE_PERCENT), metadata } });
      expect(current.body).toEqual({
        subscription: { id: expect.stringMatching(/^sbn_/), planId, status: 'pending', currentPeriodEnd: null, cancelAtPeriodEnd: false, createdAt: ISO, updatedAt: ISO },
      });

      const from = fake.events.length;
      expect(await visit(r.body.url)).toEqual({ status: 303, location: SUCCESS });
      expect(answers(from)).toEqual([
        ['checkout.session.completed', 200, RECEIVED],
        ['customer.subscription.created', 200, IGNORED],
        ['invoice.payment_succeeded', 200, RECEIVED],
      ]);
      stripeSubscriptionId = (await row('app_subscriptions', subscriptionId)).stripe_subscription_id;
      const stripeSub = fake.get<FakeSubscription>(stripeSubscriptionId)!;
      const active = await asUser(alice, 'GET', '/subscription');
      expect(active.body.subscription).toMatchObject({ id: subscriptionId, status: 'active', currentPeriodEnd: isoOf(stripeSub.items.data[0]!.current_period_end), cancelAtPeriodEnd: false });
      // The change enqueued the user's entitlement sync, whose job gives the app database the plan.
      expect(await waitFor(async () => (await entitlement(userId)) ?? undefined)).toEqual({ plan_id: planId, status: 'active' });
    });

    it('a second subscription in the same app is refused with 409', async () => {
      const r = await asUser(alice, 'POST', '/subscribe', { planId, successUrl: SUCCESS, cancelUrl: CANCEL });
      expect(r.status).toBe(409);
      expect(r.body.error).toEqual({
        code: 'ALREADY_SUBSCRIBED',
        message: `This user already has a subscription in this app (${subscriptionId}).`,
        remediation: 'Read it with billing_subscription_get; billing_cancel ends it at the end of its period.',
        documentation_url: p.docsUrl('billing'),
      });
    });

    it('a key acts for the end user with user_token, over REST and MCP alike', async () => {
      const r = await asOwner('GET', `/subscription?user_token=${alice}`);
      expect(r.status).toBe(200);
      expect(r.body.subscription.id).toBe(subscriptionId);
      const mcp = await connectMcp(p.url, p.platformKey);
      try {
        const result = await callTool(mcp.client, 'billing_subscription_get', { app_id: app.app_id, user_token: alice });
        expect(result.isError).toBeFalsy();
        expect(resultJson(result)).toEqual(r.body);
        // A key naming no end user lists the whole app's orders (none yet).
        const orders = await callTool(mcp.client, 'billing_orders_list', { app_id: app.app_id });
        expect(orders.isError).toBeFalsy();
        expect(resultJson(orders)).toEqual({ orders: [], next_before: null });
      } finally {
        await mcp.close();
      }
    });

    it('cancel sets cancel_at_period_end on Stripe and in the row; repeating it changes nothing', async () => {
      const from = fake.events.length;
      const r = await asUser(alice, 'POST', '/cancel');
      await fake.idle();
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ id: subscriptionId, status: 'active', cancelAtPeriodEnd: true, currentPeriodEnd: ISO });
      expect(fake.get<FakeSubscription>(stripeSubscriptionId)!.cancel_at_period_end).toBe(true);
      expect(answers(from)).toEqual([['customer.subscription.updated', 200, RECEIVED]]);
      const requests = fake.requests.length;
      const again = await asUser(alice, 'POST', '/cancel');
      expect([again.status, again.body.cancelAtPeriodEnd]).toEqual([200, true]);
      expect(fake.requests.length).toBe(requests);
    });

    it('cancel without a subscription is 404; while only a checkout is pending it is 409', async () => {
      const none = await asUser(bob, 'POST', '/cancel');
      expect(none.status).toBe(404);
      expect(none.body.error).toEqual({
        code: 'RESOURCE_NOT_FOUND',
        message: 'Active subscription not found.',
        remediation: 'billing_subscribe starts one; billing_subscription_get shows the current one.',
        documentation_url: p.docsUrl('billing'),
      });
      expect((await asUser(bob, 'POST', '/subscribe', { planId, successUrl: SUCCESS, cancelUrl: CANCEL })).status).toBe(200);
      const pending = await asUser(bob, 'POST', '/cancel');
      expect(pending.status).toBe(409);
      expect(pending.body.error.code).toBe('SUBSCRIPTION_PENDING');
    });

    it('invoice.payment_failed -> past_due, invoice.payment_succeeded -> active with the new period', async () => {
      let from = fake.events.length;
      await fake.failInvoice(stripeSubscriptionId);
      await fake.idle();
      expect(answers(from)).toEqual([
        ['invoice.payment_failed', 200, RECEIVED],
        ['customer.subscription.updated', 200, RECEIVED],
      ]);
      expect((await asUser(alice, 'GET', '/subscription')).body.subscription.status).toBe('past_due');

      from = fake.events.length;
      await fake.payInvoice(stripeSubscriptionId);
      await fake.idle();
      expect(answers(from).map(([type, status, body]) => [type, status, body])).toEqual([
        ['invoice.payment_succeeded', 200, RECEIVED],
        ['customer.subscription.updated', 200, RECEIVED],
      ]);
      const stripeSub = fake.get<FakeSubscription>(stripeSubscriptionId)!;
      expect((await asUser(alice, 'GET', '/subscription')).body.subscription).toMatchObject({
        status: 'active',
        currentPeriodEnd: isoOf(stripeSub.items.data[0]!.current_period_end),
      });
    });

    it('customer.subscription.updated maps Stripe statuses (unpaid -> past_due, trialing -> active)', async () => {
      await fake.updateSubscription(stripeSubscriptionId, { status: 'unpaid' });
      expect((await asUser(alice, 'GET', '/subscription')).body.subscription.status).toBe('past_due');
      await fake.updateSubscription(stripeSubscriptionId, { status: 'trialing', cancel_at_period_end: false });
      expect((await asUser(alice, 'GET', '/subscription')).body.subscription).toMatchObject({ status: 'active', cancelAtPeriodEnd: false });
    });

    it('customer.subscription.deleted -> canceled; a redelivered older event changes nothing', async () => {
      const failed = fake.events.find((d) => d.event.type === 'invoice.payment_failed' && d.event.account === accountId)!;
      const deleted = await fake.deleteSubscription(stripeSubscriptionId);
      expect([deleted.event.type, deleted.status, JSON.parse(deleted.body!)]).toEqual(['customer.subscription.deleted', 200, RECEIVED]);
      const canceled = await row('app_subscriptions', subscriptionId);
      expect(canceled.status).toBe('canceled');

      const replay = await fake.resend(failed.event.id);
      expect([replay.status, JSON.parse(replay.body!)]).toEqual([200, IGNORED]);
      const replayedDeleted = await fake.resend(deleted.event.id);
      expect([replayedDeleted.status, JSON.parse(replayedDeleted.body!)]).toEqual([200, IGNORED]);
      expect(await row('app_subscriptions', subscriptionId)).toEqual(canceled);
      expect((await asUser(alice, 'GET', '/subscription')).body.subscription).toMatchObject({ id: subscriptionId, status: 'canceled' });
    });

    it("a key naming no user lists every end user's subscriptions, newest first, by userId and status, a page at a time", async () => {
      expect((await asUser(bob, 'POST', '/subscribe', { planId, successUrl: SUCCESS, cancelUrl: CANCEL })).status).toBe(200);
      const rows = await p.sql(`select id, user_id, status from app_subscriptions where app_id = $1 order by created_at desc, id desc`, [app.app_id]);
      const all = await asOwner('GET', '/subscriptions');
      expect(all.status).toBe(200);
      expect(all.body.subscriptions.map((s: { id: string; userId: string; status: string }) => [s.id, s.userId, s.status])).toEqual(rows.map((r) => [r.id, r.user_id, r.status]));
      expect(all.body.next_before).toBeNull();
      const alices = all.body.subscriptions.find((s: { id: string }) => s.id === subscriptionId);
      expect(alices).toEqual({ ...(await asUser(alice, 'GET', '/subscription')).body.subscription, userId: UUID });
      const newest = all.body.subscriptions[0];

      const bobs = all.body.subscriptions.filter((s: { userId: string }) => s.userId === newest.userId);
      expect((await asOwner('GET', `/subscriptions?userId=${newest.userId}`)).body).toEqual({ subscriptions: bobs, next_before: null });
      expect((await asOwner('GET', '/subscriptions?status=canceled')).body).toEqual({ subscriptions: [alices], next_before: null });
      const first = await asOwner('GET', '/subscriptions?limit=1');
      expect(first.body).toEqual({ subscriptions: [newest], next_before: expect.stringMatching(/~sbn_[a-z0-9]{20}$/) });
      const rest = await asOwner('GET', `/subscriptions?limit=200&before=${encodeURIComponent(first.body.next_before)}`);
      expect(rest.body).toEqual({ subscriptions: all.body.subscriptions.slice(1), next_before: null });
      // An end user lists their own, and may not name another.
      expect((await asUser(alice, 'GET', '/subscriptions')).body).toEqual({ subscriptions: [alices], next_before: null });
      const named = await asUser(alice, 'GET', `/subscriptions?userId=${newest.userId}`);
      expect([named.status, named.body.error.code, named.body.error.details[0].path]).toEqual([400, 'VALIDATION_FAILED', 'userId']);
      expect((await p.api('GET', billing('/subscriptions', sibling))).body).toEqual({ subscriptions: [], next_before: null });
    });

  });

  describe('orders', () => {
    let orderId: string;
    let intentId: string;

    it('purchase returns a Checkout URL and a pending order; the fee is taken from the total', async () => {
      const bad = await asUser(alice, 'POST', '/purchase', { productId, quantity: 101, successUrl: SUCCESS, cancelUrl: CANCEL });
      expect([bad.status, bad.body.error.code, bad.body.error.details[0].path]).toEqual([400, 'VALIDATION_FAILED', 'quantity']);

      const r = await asUser(alice, 'POST', '/purchase', { productId, quantity: 3, successUrl: SUCCESS, cancelUrl: CANCEL });
      expect(r.status).toBe(201);
      expect(r.body).toEqual({ url: expect.stringContaining(`${fake.url}/checkout/`), orderId: expect.stringMatching(/^ord_[a-z0-9]{20}$/) });
      orderId = r.body.orderId;
      const request = lastRequest('/v1/checkout/sessions');
      expect(request.stripeAccount).toBe(accountId);
      expect(request.body).toMatchObject({
        mode: 'payment',
        line_items: [{ quantity: '3' }],
        payment_intent_data: { application_fee_amount: String(Math.round((750 * FEE_PERCENT) / 100)), metadata: { order_id: orderId, app_id: app.app_id } },
      });
      const order = await asUser(alice, 'GET', `/orders/${orderId}`);
      expect(order.body).toEqual({ id: orderId, userId: UUID, productId, quantity: 3, amountCents: 750, currency: 'usd', status: 'pending', createdAt: ISO, updatedAt: ISO });

      const from = fake.events.length;
      expect(await visit(r.body.url)).toEqual({ status: 303, location: SUCCESS });
      expect(answers(from)).toEqual([['checkout.session.completed', 200, RECEIVED]]);
      expect((await asUser(alice, 'GET', `/orders/${orderId}`)).body.status).toBe('paid');
      intentId = (await row('app_orders', orderId)).stripe_payment_intent_id;
      expect(intentId).toMatch(/^pi_/);
    });

    it('each end user sees only their own orders; another user\'s order is 404', async () => {
      const bobs = await asUser(bob, 'POST', '/purchase', { productId, successUrl: SUCCESS, cancelUrl: CANCEL });
      expect(bobs.status).toBe(201);
      const mine = await asUser(alice, 'GET', '/orders');
      expect(mine.body.orders.map((o: { id: string }) => o.id)).toEqual([orderId]);
      const his = await asUser(bob, 'GET', '/orders');
      expect(his.body).toEqual({
        orders: [{ id: bobs.body.orderId, userId: UUID, productId, quantity: 1, amountCents: 250, currency: 'usd', status: 'pending', createdAt: ISO, updatedAt: ISO }],
        next_before: null,
      });
      const stolen = await asUser(bob, 'GET', `/orders/${orderId}`);
      expect(stolen.status).toBe(404);
      expect(stolen.body.error).toEqual({
        code: 'RESOURCE_NOT_FOUND',
        message: `Order '${orderId}' not found.`,
        remediation: "List this user's orders with billing_orders_list.",
        documentation_url: p.docsUrl('billing'),
      });
      // user_token with a key acts as that user, too.
      expect((await asOwner('GET', `/orders/${orderId}?user_token=${bob}`)).status).toBe(404);
    });

    it('payment_intent.payment_failed -> failed', async () => {
      const r = await asUser(bob, 'POST', '/purchase', { productId, quantity: 2, successUrl: SUCCESS, cancelUrl: CANCEL });
      const session = (await row('app_orders', r.body.orderId)).stripe_checkout_session_id;
      const sent = await fake.failPaymentIntent(session);
      expect([sent.event.type, sent.status, JSON.parse(sent.body!)]).toEqual(['payment_intent.payment_failed', 200, RECEIVED]);
      expect((await asUser(bob, 'GET', `/orders/${r.body.orderId}`)).body.status).toBe('failed');
    });

    it("a key naming no user lists every end user's orders, newest first, by userId and status, a page at a time", async () => {
      const all = await asOwner('GET', '/orders');
      expect(all.status).toBe(200);
      const ids = all.body.orders.map((o: { id: string }) => o.id);
      expect(ids).toHaveLength(3);
      expect(ids[2]).toBe(orderId);
      expect(all.body.orders.map((o: { status: string }) => o.status)).toEqual(['failed', 'pending', 'paid']);
      expect(all.body.next_before).toBeNull();
      const alices = all.body.orders[2].userId;
      const bobs = all.body.orders[0].userId;
      expect(bobs).not.toBe(alices);
      expect(all.body.orders[1].userId).toBe(bobs);

      expect((await asOwner('GET', `/orders?userId=${alices}`)).body).toEqual({ orders: [all.body.orders[2]], next_before: null });
      expect((await asOwner('GET', `/orders?userId=${bobs}&status=failed`)).body).toEqual({ orders: [all.body.orders[0]], next_before: null });
      const first = await asOwner('GET', '/orders?limit=2');
      expect(first.body.orders).toEqual(all.body.orders.slice(0, 2));
      expect(first.body.next_before).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z~ord_[a-z0-9]{20}$/);
      const second = await asOwner('GET', `/orders?limit=2&before=${encodeURIComponent(first.body.next_before)}`);
      expect(second.body).toEqual({ orders: all.body.orders.slice(2), next_before: null });
      // Another app's list holds none of them.
      expect((await p.api('GET', billing('/orders', sibling))).body).toEqual({ orders: [], next_before: null });
      // One order of the app, whoever's it is.
      expect((await asOwner('GET', `/orders/${orderId}`)).body).toEqual(all.body.orders[2]);
    });

    it('refuses a bad cursor, a status out of the list, and userId from an end user, with 400 naming the field', async () => {
      for (const [path, token, field] of [
        ['/orders?before=yesterday', undefined, 'before'],
        ['/orders?status=shipped', undefined, 'status'],
        ['/orders?limit=201', undefined, 'limit'],
        [`/orders?userId=${randomUUID()}`, alice, 'userId'],
      ] as const) {
        const r = token ? await asUser(token, 'GET', path) : await asOwner('GET', path);
        expect([path, r.status, r.body.error.code, r.body.error.details[0].path]).toEqual([path, 400, 'VALIDATION_FAILED', field]);
      }
    });

    it('charge.refunded: a partial refund keeps paid, the rest makes it refunded', async () => {
      const partial = await fake.refundCharge(intentId, 100);
      expect([partial.event.type, partial.status, JSON.parse(partial.body!)]).toEqual(['charge.refunded', 200, RECEIVED]);
      expect((await asUser(alice, 'GET', `/orders/${orderId}`)).body.status).toBe('paid');
      const rest = await fake.refundCharge(intentId);
      expect([rest.status, JSON.parse(rest.body!)]).toEqual([200, RECEIVED]);
      expect((await asUser(alice, 'GET', `/orders/${orderId}`)).body.status).toBe('refunded');
    });

    it('a redelivered checkout.session.completed does not make a refunded order paid again', async () => {
      const completed = fake.events.find((d) => d.event.type === 'checkout.session.completed' && (d.event.data.object as { metadata?: { order_id?: string } }).metadata?.order_id === orderId)!;
      const before = await row('app_orders', orderId);
      const replay = await fake.resend(completed.event.id);
      expect([replay.status, JSON.parse(replay.body!)]).toEqual([200, IGNORED]);
      expect(await row('app_orders', orderId)).toEqual(before);
    });
  });

  describe('the Connect webhook', () => {
    /** A Connect event signed like Stripe's, with the SDK's own test-header helper. */
    async function deliver(event: Record<string, unknown>, secret = CONNECT_SECRET) {
      const payload = JSON.stringify({ object: 'event', api_version: Stripe.API_VERSION, created: Math.floor(Date.now() / 1000), livemode: false, ...event });
      const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret });
      return p.api('POST', '/webhooks/payments/connect', { key: null, body: payload, headers: { 'stripe-signature': signature } });
    }

    it('refuses a bad signature with 400 WEBHOOK_SIGNATURE_INVALID', async () => {
      const r = await fake.sendRaw('connect', JSON.stringify({ id: 'evt_forged', type: 'charge.refunded' }), { 'stripe-signature': 't=1,v1=deadbeef' });
      expect(r.status).toBe(400);
      expect(JSON.parse(r.body).error.code).toBe('WEBHOOK_SIGNATURE_INVALID');
      const wrongSecret = await deliver({ id: 'evt_wrong_secret', type: 'charge.refunded', account: accountId, data: { object: {} } }, 'whsec_other');
      expect([wrongSecret.status, wrongSecret.body.error.code]).toEqual([400, 'WEBHOOK_SIGNATURE_INVALID']);
      expect(await p.sql(`select count(*)::int as n from payment_events where id in ('evt_forged', 'evt_wrong_secret')`)).toEqual([{ n: 0 }]);
    });

    it("ignores an event from another connected account, even one naming this app's rows", async () => {
      const [pending] = await p.sql(`select id from app_orders where status = 'pending' order by created_at limit 1`);
      const [sub] = await p.sql(`select id from app_subscriptions where status = 'pending'`);
      const before = await p.sql('select * from app_orders order by id');
      const session = { id: 'cs_foreign', object: 'checkout.session', mode: 'payment', payment_status: 'paid', payment_intent: 'pi_foreign', metadata: { app_id: app.app_id, order_id: pending.id } };
      const foreign = await deliver({ id: 'evt_foreign_1', type: 'payment_intent.payment_failed', account: 'acct_foreign', data: { object: { id: 'pi_foreign', object: 'payment_intent', metadata: { app_id: app.app_id, order_id: pending.id } } } });
      expect([foreign.status, foreign.body]).toEqual([200, IGNORED]);
      const foreignCheckout = await deliver({ id: 'evt_foreign_2', type: 'checkout.session.completed', account: 'acct_foreign', data: { object: session } });
      expect([foreignCheckout.status, foreignCheckout.body]).toEqual([200, IGNORED]);
      const foreignSub = await deliver({
        id: 'evt_foreign_3',
        type: 'customer.subscription.deleted',
        account: 'acct_foreign',
        data: { object: { id: 'sub_foreign', object: 'subscription', status: 'canceled', metadata: { app_id: app.app_id, subscription_id: sub.id } } },
      });
      expect([foreignSub.status, foreignSub.body]).toEqual([200, IGNORED]);
      expect(await p.sql('select * from app_orders order by id')).toEqual(before);
      expect((await row('app_subscriptions', sub.id)).status).toBe('pending');

      // The same event from the right account acts.
      const own = await deliver({ id: 'evt_own_1', type: 'payment_intent.payment_failed', account: accountId, data: { object: { id: 'pi_own', object: 'payment_intent', metadata: { app_id: app.app_id, order_id: pending.id } } } });
      expect([own.status, own.body]).toEqual([200, RECEIVED]);
      expect((await row('app_orders', pending.id)).status).toBe('failed');
    });

    it('an event without an account, or of another type, is received and not handled', async () => {
      expect((await deliver({ id: 'evt_platform', type: 'charge.refunded', data: { object: { id: 'ch_x', payment_intent: 'pi_x' } } })).body).toEqual(IGNORED);
      expect((await deliver({ id: 'evt_other', type: 'customer.created', account: accountId, data: { object: { id: 'cus_x' } } })).body).toEqual(IGNORED);
    });

    it('a failure while applying answers 5xx and records nothing; the redelivery applies the event', async () => {
      const [pending] = await p.sql(`select id, stripe_checkout_session_id from app_subscriptions where status = 'pending'`);
      // The completed checkout's subscription is read back from Stripe, which fails once.
      fake.failNext(500);
      const from = fake.events.length;
      expect((await visit(`${fake.url}/checkout/${pending.stripe_checkout_session_id}`)).status).toBe(502);
      const [failed] = fake.events.slice(from);
      expect([failed!.event.type, failed!.status, JSON.parse(failed!.body!).error.code]).toEqual(['checkout.session.completed', 502, 'PAYMENT_PROVIDER_UNAVAILABLE']);
      expect(await p.sql('select count(*)::int as n from payment_events where id = $1', [failed!.event.id])).toEqual([{ n: 0 }]);

      const again = await fake.resend(failed!.event.id);
      expect([again.status, JSON.parse(again.body!)]).toEqual([200, RECEIVED]);
      expect(await row('app_subscriptions', pending.id)).toMatchObject({ status: 'active', stripe_subscription_id: expect.stringMatching(/^sub_/), current_period_end: expect.any(Date) });
    });

    it('every one of the seven events was handled at least once', async () => {
      const handled = fake.events.filter((d) => d.status === 200 && d.body && JSON.parse(d.body).handled === true).map((d) => d.event.type);
      expect(new Set(handled)).toEqual(
        new Set([
          'checkout.session.completed',
          'customer.subscription.updated',
          'customer.subscription.deleted',
          'invoice.payment_succeeded',
          'invoice.payment_failed',
          'payment_intent.payment_failed',
          'charge.refunded',
        ]),
      );
    });
  });

  describe("the owner's account status", () => {
    const setStatus = async (status: string) => {
      const owner = (await p.sql(`select account_id from apps where id = $1`, [app.app_id]))[0].account_id;
      await p.sql(`update accounts set status = $2, status_reason = 'test' where id = $1`, [owner, status]);
      p.services.billing.gate.forget(owner);
    };
    const outcome = (r: { status: number; body: any }) => [r.status, r.body?.error?.code ?? null];

    it('suspended: every monetization route of the app answers 402 ACCOUNT_SUSPENDED, checkouts included, and nothing is created', async () => {
      const orders = await p.sql('select count(*)::int as n from app_orders');
      await setStatus('suspended');
      try {
        const suspended = [402, 'ACCOUNT_SUSPENDED'];
        expect(outcome(await asUser(bob, 'POST', '/purchase', { productId, successUrl: SUCCESS, cancelUrl: CANCEL }))).toEqual(suspended);
        expect(outcome(await asUser(bob, 'POST', '/subscribe', { planId, successUrl: SUCCESS, cancelUrl: CANCEL }))).toEqual(suspended);
        expect(outcome(await asOwner('POST', '/products', { name: 'Mug', priceCents: 900 }))).toEqual(suspended);
        expect(outcome(await asOwner('PUT', `/plans/${planId}`, { name: 'Renamed' }))).toEqual(suspended);
        expect(outcome(await asOwner('POST', '/connect/onboard'))).toEqual(suspended);
        expect(outcome(await p.api('GET', billing('/products'), { key: null }))).toEqual(suspended);
        expect(outcome(await asUser(bob, 'GET', '/orders'))).toEqual(suspended);
        expect(await p.sql('select count(*)::int as n from app_orders')).toEqual(orders);
      } finally {
        await setStatus('active');
      }
    });

    it('soft-locked: reads and an end user cancelling are served; creating, updating and checkouts answer 402 ACCOUNT_SOFT_LOCKED', async () => {
      // Really over the free plan's storage (the enforcement job would restore a lock without a cause).
      const storage = (delta: number) =>
        p.sql(
          `insert into usage_daily (app_id, meter, day, quantity) values ($1, 'storage_bytes', (now() at time zone 'utc')::date, $2)
           on conflict (app_id, meter, day) do update set quantity = usage_daily.quantity + excluded.quantity`,
          [app.app_id, delta],
        );
      await storage(2 * 1024 ** 3);
      expect((await p.services.billing.enforce()).map((c) => c.to)).toContain('soft_locked');
      try {
        const locked = [402, 'ACCOUNT_SOFT_LOCKED'];
        expect(outcome(await asOwner('POST', '/products', { name: 'Mug', priceCents: 900 }))).toEqual(locked);
        expect(outcome(await asOwner('POST', '/plans', { name: 'Gold', priceCents: 9900 }))).toEqual(locked);
        expect(outcome(await asOwner('PUT', `/products/${productId}`, { name: 'Renamed' }))).toEqual(locked);
        expect(outcome(await asUser(bob, 'POST', '/purchase', { productId, successUrl: SUCCESS, cancelUrl: CANCEL }))).toEqual(locked);
        expect(outcome(await p.api('GET', billing('/plans'), { key: null }))).toEqual([200, null]);
        expect(outcome(await asUser(bob, 'GET', '/orders'))).toEqual([200, null]);
        expect(outcome(await asUser(bob, 'GET', '/subscription'))).toEqual([200, null]);
        expect(outcome(await asOwner('GET', '/connect/status'))).toEqual([200, null]);
        // Not refused by the lock: what the cancel answers is the subscription's own business (bob may have none).
        expect((await asUser(bob, 'POST', '/cancel')).body?.error?.code).not.toBe('ACCOUNT_SOFT_LOCKED');
      } finally {
        await storage(-2 * 1024 ** 3);
        await p.services.billing.enforce();
      }
    });
  });
});

describe('monetization without a Stripe key', () => {
  let bare: TestPlatform;
  let bareApp: App;

  beforeAll(async () => {
    bare = await startTestPlatform({});
    bareApp = (await bare.api('POST', '/init', { body: { name: 'No stripe' } })).body;
  });
  afterAll(async () => {
    await bare?.close();
  });

  it('routes that need Stripe answer 503 STRIPE_NOT_CONFIGURED; the catalog still reads', async () => {
    const expected = {
      error: {
        code: 'STRIPE_NOT_CONFIGURED',
        message: 'Payments are not configured on this platform.',
        remediation: 'The operator sets SVC_STRIPE_SECRET_KEY (and SVC_STRIPE_API_URL for a Stripe-compatible server); plans, meters and limits work without it.',
        documentation_url: bare.docsUrl('billing'),
      },
    };
    for (const [method, path, body] of [
      ['POST', '/connect/onboard', {}],
      ['GET', '/connect/status', undefined],
      ['POST', '/plans', { name: 'Pro', priceCents: 100 }],
      ['PUT', '/plans/pln_x', { name: 'Pro' }],
    ] as const) {
      const r = await bare.api(method, `/v1/${bareApp.app_id}/billing${path}`, { body });
      expect([r.status, r.body], `${method} ${path}`).toEqual([503, expected]);
    }
    expect((await bare.api('GET', `/v1/${bareApp.app_id}/billing/plans`, { key: null })).body).toEqual({ plans: [] });
  });
});
