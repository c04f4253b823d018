// Issue 14's "done when", against the server as `npm start` runs it (API and worker) and a fake Stripe on loopback:
// an agent over MCP sets up an app's paid plan and a premium table; an end user subscribes through the checkout URL
// (the fake completes it and sends the signed webhooks), the subscription shows active and the premium table opens
// to that user by row-level security; the free account over its limit is soft-locked and restored; the account
// upgrades itself through the platform's own checkout.
import pg from 'pg';
import Stripe from 'stripe';
import { PostgrestClient } from '@supabase/postgrest-js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseUrl } from '../helpers/db.ts';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { startFakeStripe, type FakeStripe } from '../fakes/stripe.ts';
import { request, resultJson } from './e2e-helpers.ts';

const PLATFORM_SECRET = 'whsec_e2e_platform';
const CONNECT_SECRET = 'whsec_e2e_connect';
const STRIPE_KEY = 'sk_test_e2e';
const GB = 1024 ** 3;

let fake: FakeStripe;
let server: SpawnedServer;
let agent: Client;
let control: pg.Pool;

async function call(name: string, args: Record<string, unknown>): Promise<any> {
  const res = (await agent.callTool({ name, arguments: args })) as CallToolResult;
  expect(res.isError, JSON.stringify(res.content)).toBeFalsy();
  return resultJson(res);
}

async function callError(name: string, args: Record<string, unknown>): Promise<any> {
  const res = (await agent.callTool({ name, arguments: args })) as CallToolResult;
  expect(res.isError).toBe(true);
  return resultJson(res);
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  fake = await startFakeStripe({ secretKey: STRIPE_KEY });
  // The pro plan's price, on the platform's own Stripe account.
  const stripe = new Stripe(STRIPE_KEY, { host: '127.0.0.1', port: fake.port, protocol: 'http' });
  const product = await stripe.products.create({ name: 'Platform pro' });
  const price = await stripe.prices.create({ product: product.id, unit_amount: 2500, currency: 'usd', recurring: { interval: 'month' } });
  server = await spawnServer({
    SVC_STRIPE_SECRET_KEY: STRIPE_KEY,
    SVC_STRIPE_API_URL: fake.url,
    SVC_STRIPE_WEBHOOK_SECRET: PLATFORM_SECRET,
    PAYMENTS_CONNECT_WEBHOOK_SECRET: CONNECT_SECRET,
    SVC_STRIPE_PRO_PRICE_ID: price.id,
    SVC_PLATFORM_FEE_PERCENT: '10',
  });
  fake.setWebhooks({
    platform: { url: `${server.url}/webhooks/stripe`, secret: PLATFORM_SECRET },
    connect: { url: `${server.url}/webhooks/payments/connect`, secret: CONNECT_SECRET },
  });
  control = new pg.Pool({ connectionString: databaseUrl(server.controlDb), max: 1 });
  agent = new Client({ name: 'billing-agent', version: '0.0.0' });
  await agent.connect(
    new StreamableHTTPClientTransport(new URL('/mcp?toolsets=default,billing', server.url), { requestInit: { headers: { Authorization: `Bearer ${server.platformKey}` } } }),
  );
});
afterAll(async () => {
  await agent?.close().catch(() => {});
  await control?.end();
  await server?.close();
  await fake?.close();
});

describe('billing end to end', () => {
  let appId: string;
  let planId: string;

  it('an agent over MCP onboards the owner, creates a paid plan and a premium table gated by it', async () => {
    appId = (await call('apps_create', { name: 'premium news' })).app_id;
    const onboard = await call('billing_connect_onboard', { app_id: appId });
    expect(onboard.accountId).toMatch(/^acct_/);
    // The owner completes Stripe's onboarding in a browser.
    expect((await fetch(onboard.onboardingUrl, { redirect: 'manual' })).status).toBe(303);
    expect(await call('billing_connect_status', { app_id: appId })).toMatchObject({ chargesEnabled: true, payoutsEnabled: true });
    const plan = await call('billing_plans_create', { app_id: appId, name: 'Premium', priceCents: 900, interval: 'month', features: ['premium articles'] });
    planId = plan.id;
    expect(plan).toMatchObject({ name: 'Premium', priceCents: 900, interval: 'month', features: ['premium articles'] });
    await call('schema_apply', {
      app_id: appId,
      name: 'premium articles',
      schema: {
        tables: {
          articles: {
            access: 'public',
            plans: [planId],
            columns: { id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' }, title: { type: 'text' } },
          },
        },
      },
    });
    await call('data_insert', { app_id: appId, table: 'articles', body: [{ title: 'The scoop' }] });
    // The catalog is public.
    const catalog = await request(server.url, `/v1/${appId}/billing/plans`);
    expect(catalog.status).toBe(200);
    expect(JSON.stringify(catalog.json)).toContain(planId);
  });

  it('an end user subscribes through the checkout URL; the subscription turns active and the premium rows open to them', async () => {
    const signup = await request(server.url, `/v1/${appId}/auth/signup`, { method: 'POST', body: { email: 'reader@example.com', password: 'password123' } });
    expect(signup.status).toBe(201);
    const token = signup.json.access_token as string;
    const db = new PostgrestClient(`${server.url}/v1/${appId}`, { headers: { Authorization: `Bearer ${token}` } });
    expect((await db.from('articles').select('title')).data).toEqual([]);

    const subscribe = await request(server.url, `/v1/${appId}/billing/subscribe`, {
      method: 'POST',
      key: token,
      body: { planId, successUrl: 'https://news.example.com/thanks', cancelUrl: 'https://news.example.com/plans' },
    });
    expect(subscribe.status).toBe(200);
    // The browser pays: the fake completes the checkout and sends the signed Connect events before redirecting.
    const paid = await fetch(subscribe.json.url, { redirect: 'manual' });
    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toBe('https://news.example.com/thanks');
    const created = fake.requests.find((r) => r.path === '/v1/checkout/sessions' && r.stripeAccount);
    expect((created?.body as any)?.subscription_data?.application_fee_percent).toBe('10');

    const sub = await request(server.url, `/v1/${appId}/billing/subscription`, { key: token });
    expect(sub.status).toBe(200);
    expect(JSON.stringify(sub.json)).toContain('"status":"active"');
    expect(JSON.stringify(sub.json)).toContain(planId);
    const rows = await until('the premium rows to open', async () => {
      const { data } = await db.from('articles').select('title');
      return data && data.length ? data : undefined;
    });
    expect(rows).toEqual([{ title: 'The scoop' }]);
  });

  it('the free account over its limit is soft-locked (writes refused, reads served) and restored when usage drops', async () => {
    await control.query(
      `insert into usage_daily (app_id, meter, day, quantity) values ($1, 'storage_bytes', (now() at time zone 'utc')::date, $2)
       on conflict (app_id, meter, day) do update set quantity = usage_daily.quantity + excluded.quantity`,
      [appId, 2 * GB],
    );
    expect(await call('billing_get', {})).toMatchObject({ plan: 'free', status: 'soft_locked', statusReason: "over the free plan's allowance: storage_bytes 2 GB of 1 GB" });
    const refused = await callError('data_insert', { app_id: appId, table: 'articles', body: [{ title: 'Blocked' }] });
    expect(refused.status).toBe(402);
    expect(refused.error.code).toBe('ACCOUNT_SOFT_LOCKED');
    expect((await call('data_select', { app_id: appId, table: 'articles' })).rows ?? []).toBeDefined();

    await control.query(`update usage_daily set quantity = quantity - $2 where app_id = $1 and meter = 'storage_bytes'`, [appId, 2 * GB]);
    expect(await call('billing_get', {})).toMatchObject({ status: 'active', statusReason: 'restored: usage is back within the plan' });
    await call('data_insert', { app_id: appId, table: 'articles', body: [{ title: 'Allowed again' }] });
  });

  it('the account upgrades to pro through the platform checkout', async () => {
    const checkout = await call('billing_checkout', { planId: 'pro', successUrl: 'https://dashboard.example.com/ok' });
    expect((await fetch(checkout.url, { redirect: 'manual' })).status).toBe(303);
    expect(await call('billing_get', {})).toMatchObject({ plan: 'pro', status: 'active', subscription: { status: 'active' } });
    expect((await call('billing_get', {})).limits.storage_bytes).toBe(100 * GB);
    const portal = await call('billing_portal', {});
    expect(portal.url).toContain(fake.url);
  });
});
