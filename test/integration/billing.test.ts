// Platform billing on the real control database: the dashboard routes, meters, the soft lock on every write path
// (reads still served), grace and suspension with a moved clock and a loopback SMTP server, the platform's Stripe
// webhook (signed with the SDK's own test-header helper), and the idle pause of free apps.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Stripe from 'stripe';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { startSmtp, type LoopbackSmtp, type ReceivedMail } from '../helpers/smtp.ts';

const WEBHOOK_SECRET = 'whsec_platform_test_secret';
const DAY_MS = 86_400_000;
const GB = 1024 ** 3;
const TINY_SCHEMA = { schema: { tables: { tiny: { columns: { id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' } } } } } };

let p: TestPlatform;
let smtp: LoopbackSmtp;
let mails: ReceivedMail[];

beforeAll(async () => {
  smtp = await startSmtp();
  mails = smtp.mails;
  p = await startTestPlatform({
    SVC_STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    SVC_SMTP_URL: smtp.url,
    SVC_SMTP_FROM: 'billing@platform.test',
  });
});
afterAll(async () => {
  await p?.close();
  await smtp?.close();
});

/** A fresh account with its own platform key and one app, so each scenario's status is its own. */
async function account(plan = 'free'): Promise<{ id: string; key: string; appId: string; serviceKey: string }> {
  const id = (await p.sql(`insert into accounts (name, plan) values ('acme', $1) returning id`, [plan]))[0].id as string;
  const { key } = await p.services.keys.create('platform', id, 'test');
  const app = await p.api('POST', '/init', { key, body: { name: 'shop' } });
  expect(app.status).toBe(201);
  return { id, key, appId: app.body.app_id, serviceKey: app.body.service_key.key };
}

async function addUsage(appId: string, meter: string, quantity: number): Promise<void> {
  await p.sql(
    `insert into usage_daily (app_id, meter, day, quantity) values ($1, $2, (now() at time zone 'utc')::date, $3)
     on conflict (app_id, meter, day) do update set quantity = usage_daily.quantity + excluded.quantity`,
    [appId, meter, quantity],
  );
}

function signedEvent(type: string, object: Record<string, unknown>, id = `evt_${Math.random().toString(36).slice(2)}`): { body: string; signature: string } {
  const body = JSON.stringify({ id, object: 'event', type, created: Math.floor(Date.now() / 1000), livemode: false, data: { object } });
  return { body, signature: Stripe.webhooks.generateTestHeaderString({ payload: body, secret: WEBHOOK_SECRET }) };
}

async function deliver(event: { body: string; signature: string }): Promise<{ status: number; body: any }> {
  return p.api('POST', '/webhooks/stripe', { key: null, body: event.body, headers: { 'stripe-signature': event.signature } });
}

async function status(key: string): Promise<any> {
  const res = await p.api('GET', '/dashboard/billing', { key });
  expect(res.status).toBe(200);
  return res.body;
}

async function waitFor<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const got = await probe();
    if (got !== undefined) return got;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('GET /dashboard/billing and /dashboard/usage', () => {
  it('a new free account: plan, status, every meter with its usage, limit and percentage', async () => {
    const a = await account();
    const body = await status(a.key);
    const month = new Date().toISOString().slice(0, 7);
    expect(body).toMatchObject({ plan: 'free', status: 'active', statusReason: null, graceEndsAt: null, subscription: null, overageUsd: {} });
    expect(body.period.start).toBe(`${month}-01`);
    expect(body.limits).toEqual({
      monthly_active_users: 50_000,
      database_bytes: 500 * 1024 ** 2,
      bandwidth_bytes: 5 * GB,
      storage_bytes: GB,
      lambda_invocations: 50_000,
      ai_credits: 0.1,
    });
    expect(body.usage.storage_bytes).toBe(0);
    expect(body.percentages.storage_bytes).toBe(0);
  });

  it('usage sums the apps of the account only; percentages follow; pro shows overage in USD', async () => {
    const a = await account('pro');
    const other = await account();
    await addUsage(a.appId, 'bandwidth_bytes', 260 * GB);
    await addUsage(other.appId, 'bandwidth_bytes', 7);
    const body = await status(a.key);
    expect(body.usage.bandwidth_bytes).toBe(260 * GB);
    expect(body.percentages.bandwidth_bytes).toBe(104);
    expect(body.overageUsd).toEqual({ bandwidth_bytes: 0.9 });
    expect(body.limits.ai_credits).toBe(10);
  });

  it('daily rows by meter, filtered, with the range checked', async () => {
    const a = await account();
    await addUsage(a.appId, 'lambda_invocations', 12);
    await addUsage(a.appId, 'storage_bytes', 300);
    const today = new Date().toISOString().slice(0, 10);
    const all = await p.api('GET', '/dashboard/usage', { key: a.key });
    expect(all.status).toBe(200);
    expect(all.body.endDate).toBe(today);
    expect(all.body.rows).toEqual([
      { date: today, meterType: 'lambda_invocations', quantity: 12 },
      { date: today, meterType: 'storage_bytes', quantity: 300 },
    ]);
    const one = await p.api('GET', `/dashboard/usage?meterType=lambda_invocations&startDate=${today}&endDate=${today}`, { key: a.key });
    expect(one.body.rows).toEqual([{ date: today, meterType: 'lambda_invocations', quantity: 12 }]);
    const reversed = await p.api('GET', '/dashboard/usage?startDate=2026-02-01&endDate=2026-01-01', { key: a.key });
    expect(reversed.status).toBe(400);
    expect(reversed.body.error.code).toBe('VALIDATION_FAILED');
    const unknown = await p.api('GET', '/dashboard/usage?meterType=coffee', { key: a.key });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details[0].path).toBe('meterType');
    const noKey = await p.api('GET', '/dashboard/billing', { key: a.serviceKey });
    expect(noKey.status).toBe(403);
  });

  it("one app's share (appId): its own meters against the account's limits, its daily rows; other accounts' apps refused", async () => {
    const a = await account();
    const second = await p.api('POST', '/init', { key: a.key, body: { name: 'blog' } });
    const other = await account();
    await addUsage(a.appId, 'lambda_invocations', 5_000);
    await addUsage(a.appId, 'storage_bytes', 300);
    await addUsage(second.body.app_id, 'lambda_invocations', 7);
    await addUsage(a.appId, 'ai_credits', 25_000_000); // nano-dollars: $0.025 of the free plan's $0.10
    const whole = await status(a.key);
    expect(whole.appId).toBeNull();
    expect(whole.usage.lambda_invocations).toBe(5_007);
    const share = await p.api('GET', `/dashboard/billing?appId=${a.appId}`, { key: a.key });
    expect(share.status).toBe(200);
    expect(share.body).toMatchObject({ plan: 'free', appId: a.appId, limits: whole.limits });
    expect(share.body.usage).toEqual({ monthly_active_users: 0, database_bytes: 0, bandwidth_bytes: 0, storage_bytes: 300, lambda_invocations: 5_000, ai_credits: 0.025 });
    expect(share.body.percentages).toMatchObject({ lambda_invocations: 10, ai_credits: 25 });
    const today = new Date().toISOString().slice(0, 10);
    const rows = await p.api('GET', `/dashboard/usage?appId=${second.body.app_id}`, { key: a.key });
    expect(rows.body.rows).toEqual([{ date: today, meterType: 'lambda_invocations', quantity: 7 }]);
    for (const path of [`/dashboard/billing?appId=${other.appId}`, `/dashboard/usage?appId=${other.appId}`]) {
      const res = await p.api('GET', path, { key: a.key });
      expect([res.status, res.body.error.code]).toEqual([403, 'FORBIDDEN']);
    }
    const missing = await p.api('GET', '/dashboard/billing?appId=00000000-0000-4000-8000-000000000000', { key: a.key });
    expect([missing.status, missing.body.error.code]).toEqual([404, 'RESOURCE_NOT_FOUND']);
  });

  it('checkout and portal without Stripe: 503 STRIPE_NOT_CONFIGURED; a plan that is not self-serve: 400', async () => {
    const a = await account();
    const checkout = await p.api('POST', '/dashboard/billing/checkout', { key: a.key, body: { planId: 'pro' } });
    expect(checkout.status).toBe(503);
    expect(checkout.body.error.code).toBe('STRIPE_NOT_CONFIGURED');
    const enterprise = await p.api('POST', '/dashboard/billing/checkout', { key: a.key, body: { planId: 'enterprise' } });
    expect(enterprise.status).toBe(400);
    expect(enterprise.body.error.details[0].path).toBe('planId');
    const portal = await p.api('POST', '/dashboard/billing/portal', { key: a.key, body: {} });
    expect(portal.status).toBe(503);
  });
});

describe('meters recorded by the code paths that cause them', () => {
  it('bandwidth of the data API, monthly active users counted once, database size by the measuring job', async () => {
    const a = await account();
    const applied = await p.api('POST', `/v1/${a.appId}/schema/apply`, { key: a.serviceKey, body: { schema: { tables: { notes: { columns: { id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' }, body: { type: 'text' } } } } } } });
    expect(applied.status).toBe(200);
    const read = await p.api('GET', `/v1/${a.appId}/notes`, { key: a.serviceKey });
    expect(read.status).toBe(200);
    const signup = await p.api('POST', `/v1/${a.appId}/auth/signup`, { key: null, body: { email: 'u@example.com', password: 'password123' } });
    expect(signup.status).toBe(201);
    await p.api('POST', `/v1/${a.appId}/auth/login`, { key: null, body: { email: 'u@example.com', password: 'password123' } });
    await p.api('GET', `/v1/${a.appId}/notes`, { key: signup.body.access_token });
    await p.services.billing.traffic.flush();
    await p.services.billing.measureDatabases();
    const body = await status(a.key);
    expect(body.usage.bandwidth_bytes).toBeGreaterThan(300);
    expect(body.usage.monthly_active_users).toBe(1);
    const [size] = await p.sql(`select pg_database_size(db_name)::text as bytes from apps where id = $1`, [a.appId]);
    expect(Math.abs(body.usage.database_bytes - Number(size.bytes))).toBeLessThan(1024 * 1024);
    // Measuring again adds only the change: the level stays the size.
    await p.services.billing.measureDatabases();
    expect(Math.abs((await status(a.key)).usage.database_bytes - Number(size.bytes))).toBeLessThan(1024 * 1024);
    const [active] = await p.sql(`select count(*)::int as n from monthly_active_users where app_id = $1`, [a.appId]);
    expect(active.n).toBe(1);
  });
});

describe('soft lock: a free account over an allowance', () => {
  it('refuses writes on every write path with 402 and a remediation, serves reads, and is restored when usage drops', async () => {
    const a = await account();
    const key = a.serviceKey;
    expect((await p.api('POST', `/v1/${a.appId}/schema/apply`, { key, body: { schema: { tables: { notes: { columns: { id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' }, body: { type: 'text' } } } } } } })).status).toBe(200);
    expect((await p.api('POST', `/v1/${a.appId}/notes`, { key, body: { body: 'before' } })).status).toBe(201);
    const user = await p.api('POST', `/v1/${a.appId}/auth/signup`, { key: null, body: { email: 'reader@example.com', password: 'password123' } });
    await addUsage(a.appId, 'storage_bytes', 2 * GB);
    const changes = await p.services.billing.enforce();
    expect(changes).toContainEqual({ accountId: a.id, from: 'active', to: 'soft_locked', reason: "over the free plan's allowance: storage_bytes 2 GB of 1 GB" });
    expect(await status(a.key)).toMatchObject({ status: 'soft_locked', statusReason: "over the free plan's allowance: storage_bytes 2 GB of 1 GB" });

    const writes: [string, string, unknown][] = [
      ['POST', `/v1/${a.appId}/notes`, { body: 'after' }],
      ['PATCH', `/v1/${a.appId}/notes?body=eq.before`, { body: 'changed' }],
      ['POST', `/v1/${a.appId}/schema/apply`, TINY_SCHEMA],
      ['POST', `/storage/${a.appId}/upload`, { filename: 'a.txt', contentType: 'text/plain', sizeBytes: 3 }],
      ['POST', `/v1/${a.appId}/functions`, { name: 'hello', code: 'export default () => new Response("hi")' }],
      ['POST', `/v1/${a.appId}/frontend/deployments`, { framework: 'static' }],
      ['POST', `/v1/${a.appId}/auth/signup`, { email: 'new@example.com', password: 'password123' }],
    ];
    for (const [method, path, body] of writes) {
      const res = await p.api(method, path, { key, body });
      expect({ path, status: res.status, code: res.body?.error?.code }).toEqual({ path, status: 402, code: 'ACCOUNT_SOFT_LOCKED' });
      expect(res.body.error.remediation).toContain('billing_checkout');
      expect(res.body.error.message).toContain('storage_bytes 2 GB of 1 GB');
    }
    // The AI gateway answers in OpenAI's shape.
    const ai = await p.api('POST', `/v1/${a.appId}/chat/completions`, { key, body: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } });
    expect(ai.status).toBe(402);
    expect(ai.body.error).toMatchObject({ type: 'billing_error', code: 'account_soft_locked' });
    expect((await p.api('GET', `/v1/${a.appId}/notes?select=body`, { key })).body).toEqual([{ body: 'before' }]);
    expect((await p.api('GET', `/v1/${a.appId}/schema`, { key })).status).toBe(200);
    // End users still sign in to read.
    const login = await p.api('POST', `/v1/${a.appId}/auth/login`, { key: null, body: { email: 'reader@example.com', password: 'password123' } });
    expect(login.status).toBe(200);
    expect(user.status).toBe(201);
    // Deleting is how usage drops: allowed.
    expect((await p.api('DELETE', `/v1/${a.appId}/notes?body=eq.before`, { key })).status).toBe(204);

    await addUsage(a.appId, 'storage_bytes', -2 * GB);
    expect(await p.services.billing.enforce()).toContainEqual({ accountId: a.id, from: 'soft_locked', to: 'active', reason: 'restored: usage is back within the plan' });
    expect((await p.api('POST', `/v1/${a.appId}/notes`, { key, body: { body: 'again' } })).status).toBe(201);
    expect(await status(a.key)).toMatchObject({ status: 'active', statusReason: 'restored: usage is back within the plan' });
  });

  it('a paid plan lifts the lock at once: the subscription event restores the account', async () => {
    const a = await account();
    await p.sql(`update accounts set stripe_customer_id = $2 where id = $1`, [a.id, `cus_${a.id.slice(0, 8)}`]);
    await addUsage(a.appId, 'lambda_invocations', 60_000);
    await p.services.billing.enforce();
    expect((await status(a.key)).status).toBe('soft_locked');
    const res = await deliver(
      signedEvent('customer.subscription.created', {
        id: 'sub_up',
        object: 'subscription',
        customer: `cus_${a.id.slice(0, 8)}`,
        status: 'active',
        metadata: { account_id: a.id, plan_id: 'pro' },
        items: { data: [{ current_period_end: Math.floor(Date.now() / 1000) + 30 * 86400 }] },
      }),
    );
    expect(res).toEqual({ status: 200, body: { received: true, handled: true }, headers: expect.anything() });
    const body = await status(a.key);
    expect(body).toMatchObject({ plan: 'pro', status: 'active', statusReason: 'restored: the pro plan', subscription: { status: 'active' } });
    expect((await p.api('POST', `/v1/${a.appId}/schema/apply`, { key: a.serviceKey, body: TINY_SCHEMA })).status).toBe(200);
  });
});

describe('the platform webhook', () => {
  it('refuses a bad signature with 400 and changes nothing', async () => {
    const a = await account();
    const event = signedEvent('checkout.session.completed', { mode: 'subscription', client_reference_id: a.id, customer: 'cus_x', subscription: 'sub_x', metadata: { account_id: a.id, plan_id: 'pro' } });
    const forged = await deliver({ body: event.body.replace('sub_x', 'sub_y'), signature: event.signature });
    expect(forged.status).toBe(400);
    expect(forged.body.error.code).toBe('WEBHOOK_SIGNATURE_INVALID');
    const unsigned = await p.api('POST', '/webhooks/stripe', { key: null, body: event.body });
    expect(unsigned.status).toBe(400);
    expect((await status(a.key)).plan).toBe('free');
  });

  it('checkout completion makes the account pro; a redelivery changes nothing; deletion returns it to free', async () => {
    const a = await account();
    const completed = signedEvent('checkout.session.completed', {
      id: 'cs_1',
      mode: 'subscription',
      client_reference_id: a.id,
      customer: `cus_c${a.id.slice(0, 6)}`,
      subscription: 'sub_c',
      customer_details: { email: 'owner@example.com' },
      metadata: { account_id: a.id, plan_id: 'pro' },
    });
    expect((await deliver(completed)).body).toEqual({ received: true, handled: true });
    expect((await status(a.key)).plan).toBe('pro');
    const [row] = await p.sql(`select stripe_customer_id, billing_email from accounts where id = $1`, [a.id]);
    expect(row).toEqual({ stripe_customer_id: `cus_c${a.id.slice(0, 6)}`, billing_email: 'owner@example.com' });
    // A redelivery of the same event id, freshly signed, is acknowledged and ignored.
    const again = JSON.parse(completed.body) as { id: string };
    const replay = signedEvent('checkout.session.completed', { mode: 'subscription', client_reference_id: a.id, metadata: { account_id: a.id, plan_id: 'enterprise' } }, again.id);
    expect((await deliver(replay)).body).toEqual({ received: true, handled: false });
    expect((await status(a.key)).plan).toBe('pro');
    await deliver(signedEvent('customer.subscription.deleted', { id: 'sub_c', customer: `cus_c${a.id.slice(0, 6)}`, status: 'canceled', metadata: {} }));
    expect(await status(a.key)).toMatchObject({ plan: 'free', subscription: { status: 'canceled' } });
  });

  it('an event for no known account is acknowledged as not handled', async () => {
    const res = await deliver(signedEvent('invoice.payment_failed', { id: 'in_nobody', customer: 'cus_nobody' }));
    expect(res.body).toEqual({ received: true, handled: false });
  });
});

describe('grace and suspension (pro payment failure)', () => {
  it('payment failed: 7 days of grace with an e-mail, then suspended (e-mail) and everything refused, then paid: active', async () => {
    const a = await account('pro');
    const customer = `cus_g${a.id.slice(0, 6)}`;
    await p.sql(`update accounts set stripe_customer_id = $2 where id = $1`, [a.id, customer]);
    const failedAt = Date.now();
    const failed = await deliver(signedEvent('invoice.payment_failed', { id: 'in_fail_1', object: 'invoice', customer, customer_email: 'payer@example.com' }));
    expect(failed.body).toEqual({ received: true, handled: true });
    const grace = await status(a.key);
    expect(grace.status).toBe('grace');
    expect(Math.abs(Date.parse(grace.graceEndsAt) - (failedAt + 7 * DAY_MS))).toBeLessThan(60_000);
    // Grace: the apps keep working.
    expect((await p.api('POST', `/v1/${a.appId}/schema/apply`, { key: a.serviceKey, body: TINY_SCHEMA })).status).toBe(200);
    const mail = await waitFor(async () => mails.find((m) => m.to === 'payer@example.com' && m.body.includes('in_fail_1')), 'the payment-failed e-mail');
    expect(mail.body).toContain('Subject: Payment failed');
    // A second delivery of a failure for the same invoice sends nothing new.
    await deliver(signedEvent('invoice.payment_failed', { id: 'in_fail_1', object: 'invoice', customer }));
    const [queued] = await p.sql(`select count(*)::int as n from billing_notifications where account_id = $1`, [a.id]);
    expect(queued.n).toBe(1);

    // Six days on: still grace. Eight days on: suspended.
    expect((await p.services.billing.enforce(new Date(failedAt + 6 * DAY_MS))).filter((c) => c.accountId === a.id)).toEqual([]);
    expect((await p.services.billing.enforce(new Date(failedAt + 8 * DAY_MS))).filter((c) => c.accountId === a.id)).toEqual([
      { accountId: a.id, from: 'grace', to: 'suspended', reason: 'grace ended unpaid' },
    ]);
    for (const [method, path] of [
      ['GET', `/v1/${a.appId}/schema`],
      ['POST', `/v1/${a.appId}/schema/apply`],
    ] as const) {
      const res = await p.api(method, path, { key: a.serviceKey, body: method === 'POST' ? TINY_SCHEMA : undefined });
      expect({ status: res.status, code: res.body.error.code }).toEqual({ status: 402, code: 'ACCOUNT_SUSPENDED' });
      expect(res.body.error.remediation).toContain('billing_portal');
    }
    await waitFor(async () => mails.find((m) => m.to === 'payer@example.com' && m.body.includes('suspended')), 'the suspension e-mail');
    // The dashboard still answers, and paying restores the account.
    expect((await status(a.key)).status).toBe('suspended');
    await deliver(signedEvent('invoice.payment_succeeded', { id: 'in_fail_1', object: 'invoice', customer, status: 'paid' }));
    expect(await status(a.key)).toMatchObject({ status: 'active', statusReason: 'restored: invoice paid', graceEndsAt: null });
    expect((await p.api('GET', `/v1/${a.appId}/schema`, { key: a.serviceKey })).status).toBe(200);
  });
});

describe('free apps pause after a week without requests', () => {
  it('pauses idle free apps only; a paused app answers 423 APP_PAUSED until apps_restore', async () => {
    const free = await account();
    const pro = await account('pro');
    await p.sql(`update apps set last_request_at = now() - interval '8 days' where id = any($1)`, [[free.appId, pro.appId]]);
    const paused = await p.services.billing.pauseIdle();
    expect(paused).toContain(free.appId);
    expect(paused).not.toContain(pro.appId);
    // The app cache of this process holds the app for a few seconds; a fresh read sees the pause.
    await new Promise((r) => setTimeout(r, 5100));
    const res = await p.api('GET', `/v1/${free.appId}/schema`, { key: free.serviceKey });
    expect(res.status).toBe(423);
    expect(res.body.error).toMatchObject({ code: 'APP_PAUSED' });
    expect(res.body.error.remediation).toContain('apps_restore');
    const fn = await p.api('GET', `/v1/${free.appId}/fn/anything`, { key: null });
    expect(fn.status).toBe(423);
    expect((await p.api('GET', `/apps/${free.appId}`, { key: free.key })).status).toBe(200);
    const restored = await p.api('POST', `/apps/${free.appId}/restore`, { key: free.key, body: {} });
    expect(restored.status).toBe(200);
    expect(restored.body.app_id).toBe(free.appId);
    expect((await p.api('GET', `/v1/${free.appId}/schema`, { key: free.serviceKey })).status).toBe(200);
    const [row] = await p.sql(`select paused_at, last_request_at > now() - interval '1 minute' as fresh from apps where id = $1`, [free.appId]);
    expect(row).toEqual({ paused_at: null, fresh: true });
  });

  it('requests keep an app awake: activity is written at the next flush', async () => {
    const a = await account();
    await p.sql(`update apps set last_request_at = now() - interval '8 days' where id = $1`, [a.appId]);
    expect((await p.api('GET', `/v1/${a.appId}/schema`, { key: a.serviceKey })).status).toBe(200);
    await p.services.billing.traffic.flush();
    expect(await p.services.billing.pauseIdle()).not.toContain(a.appId);
  });
});
