// The console's billing in Debian's Chromium, against the platform spawned as `npm start` runs it with Stripe played
// by the loopback fake (its hosted checkout and portal pages included): the account's plan and usage against the
// plan's allowances, daily usage charted by meter, one app's share on its overview, the owner's upgrade through
// Stripe Checkout and back, the billing portal, a viewer who sees neither button and whom the API refuses; and an app
// paused for inactivity restored from the apps list.
import pg from 'pg';
import type { Page } from 'playwright-core';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseUrl } from '../helpers/db.ts';
import { callFrom, heading, nav, startConsole, type ConsoleHarness } from '../helpers/console.ts';
import { startFakeStripe, type FakeStripe } from '../fakes/stripe.ts';

const STRIPE_KEY = 'sk_test_console_billing';
const WEBHOOK_SECRET = 'whsec_console_billing';

let fake: FakeStripe;
let h: ConsoleHarness;
let control: pg.Pool;
let shop: string;
let blog: string;
const today = new Date().toISOString().slice(0, 10);

beforeAll(async () => {
  fake = await startFakeStripe({ secretKey: STRIPE_KEY });
  const stripe = new Stripe(STRIPE_KEY, { host: '127.0.0.1', port: fake.port, protocol: 'http' });
  const product = await stripe.products.create({ name: 'Platform pro' });
  const price = await stripe.prices.create({ product: product.id, unit_amount: 2500, currency: 'usd', recurring: { interval: 'month' } });
  h = await startConsole({ SVC_STRIPE_SECRET_KEY: STRIPE_KEY, SVC_STRIPE_API_URL: fake.url, SVC_STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, SVC_STRIPE_PRO_PRICE_ID: price.id });
  fake.setWebhooks({ platform: { url: `${h.server.url}/webhooks/stripe`, secret: WEBHOOK_SECRET } });
  control = new pg.Pool({ connectionString: databaseUrl(h.server.controlDb), max: 1 });
  shop = (await h.createApp('Shop')).appId;
  blog = (await h.createApp('Blog')).appId;
  // A day of function calls in each app, as the meters record them.
  for (const [app, n] of [[shop, 1234], [blog, 66]] as const) {
    await control.query(`insert into usage_daily (app_id, meter, day, quantity) values ($1, 'lambda_invocations', $2::date, $3)`, [app, today, n]);
  }
}, 90_000);
afterAll(async () => {
  await control?.end();
  await h?.close();
  await fake?.close();
});

const usageCell = (page: Page, meter: string) =>
  page.getByRole('table', { name: 'Usage against the plan' }).getByRole('row').filter({ hasText: meter }).getByRole('cell').nth(1).textContent();

/** Resolves when the browser, sent to a Stripe page, has loaded the console again (the redirect back). */
const returnToConsole = (page: Page) =>
  page.waitForEvent('load', { predicate: (p) => p.url().startsWith(h.consoleUrl) }).then(() => heading(page, 'Billing'));

describe("the console's billing", () => {
  it("shows the plan, the account's usage against its allowances and a meter's days charted", async () => {
    const { owner } = h;
    await nav(owner, 'Billing');
    await heading(owner, 'Billing');
    const api = (await callFrom(owner, 'GET', '/dashboard/billing')).json;
    expect(api.usage.lambda_invocations).toBe(1300);
    await expect(owner.locator('.facts div').filter({ hasText: 'Plan' }).getByRole('definition').textContent()).resolves.toBe('free');
    expect(await owner.getByRole('table', { name: 'Usage against the plan' }).getByRole('row').count()).toBe(1 + Object.keys(api.usage).length);
    await expect(usageCell(owner, 'lambda invocations')).resolves.toBe('1,300');
    const chart = owner.getByRole('img', { name: /^lambda invocations per day/ });
    await expect(chart.getAttribute('aria-label')).resolves.toMatch(/, 30 bars$/);
    await owner.getByRole('button', { name: 'Show the numbers' }).click();
    await expect(owner.locator('figure table tr').filter({ hasText: today }).getByRole('cell').textContent()).resolves.toBe('1,300');
    await owner.getByLabel('Meter').selectOption('ai_tokens');
    await owner.getByRole('img', { name: /^ai tokens per day/ }).waitFor();
  });

  it("an app's overview shows that app's share against the plan's allowances", async () => {
    const { owner } = h;
    for (const [app, name, n] of [[shop, 'Shop', '1,234'], [blog, 'Blog', '66']] as const) {
      await owner.goto(`${h.consoleUrl}#/apps/${app}`);
      await heading(owner, name);
      await expect.poll(() => usageCell(owner, 'lambda invocations')).toBe(n);
    }
    expect((await callFrom(owner, 'GET', `/dashboard/billing?appId=${blog}`)).json).toMatchObject({ appId: blog, usage: { lambda_invocations: 66 } });
  });

  it('the owner upgrades through Stripe Checkout and comes back on pro, then opens the billing portal', async () => {
    const { owner } = h;
    await nav(owner, 'Billing');
    await heading(owner, 'Billing');
    // The fake's hosted checkout pays and sends the events, then the browser returns to the console's billing page.
    const checkout = owner.waitForRequest((r) => r.url().startsWith(`${fake.url}/checkout/`));
    const back = returnToConsole(owner);
    await owner.getByRole('button', { name: 'Upgrade to pro' }).click();
    await checkout;
    await back;
    expect(owner.url()).toBe(`${h.consoleUrl}#/billing`);
    await heading(owner, 'Billing');
    const session = fake.requests.find((r) => r.path === '/v1/checkout/sessions' && r.method === 'POST')!;
    expect(session.body).toMatchObject({ mode: 'subscription', success_url: `${h.consoleUrl}#/billing`, cancel_url: `${h.consoleUrl}#/billing` });
    await expect.poll(async () => (await callFrom(owner, 'GET', '/dashboard/billing')).json.plan, { timeout: 15_000 }).toBe('pro');
    await owner.reload();
    await expect(owner.locator('.facts div').filter({ hasText: 'Plan' }).getByRole('definition').textContent()).resolves.toBe('pro');
    const portal = owner.waitForRequest((r) => r.url().startsWith(`${fake.url}/portal/`));
    const again = returnToConsole(owner);
    await owner.getByRole('button', { name: 'Manage billing' }).click();
    await portal;
    await again;
    await heading(owner, 'Billing');
    expect(owner.url()).toBe(`${h.consoleUrl}#/billing`);
    expect(fake.requests.filter((r) => r.path === '/v1/billing_portal/sessions')).toHaveLength(1);
  });

  it('a viewer sees the numbers but neither button, and the API refuses them anyway', async () => {
    const viewer = await h.personAs('viewer', 'vera@example.com');
    await nav(viewer, 'Billing');
    await heading(viewer, 'Billing');
    await viewer.getByRole('table', { name: 'Usage against the plan' }).waitFor();
    // The daily chart loads on its own once the usage is shown: its button comes a round trip later.
    await viewer.getByRole('button', { name: 'Show the numbers' }).waitFor();
    expect(await viewer.getByRole('main').getByRole('button').allTextContents()).toEqual(['Show the numbers']);
    for (const path of ['/dashboard/billing/checkout', '/dashboard/billing/portal']) {
      const res = await callFrom(viewer, 'POST', path, path.endsWith('checkout') ? { planId: 'pro' } : {});
      expect([res.status, res.json.error.code]).toEqual([403, 'FORBIDDEN_ROLE']);
    }
  });

  it('an app paused for inactivity shows as paused and is restored from the apps list', async () => {
    const { owner } = h;
    await control.query(`update apps set paused_at = now() where id = $1`, [blog]);
    await nav(owner, 'Apps');
    await heading(owner, 'Apps');
    const row = owner.getByRole('row').filter({ has: owner.getByRole('link', { name: 'Blog', exact: true }) });
    await expect(row.getByRole('cell').nth(2).textContent()).resolves.toMatch(/^Paused /);
    await row.getByRole('button', { name: 'Restore Blog' }).click();
    await expect.poll(() => row.getByRole('cell').nth(2).textContent()).toBe('Running');
    expect((await callFrom(owner, 'GET', `/apps/${blog}`)).json.paused_at).toBeNull();
    expect((await callFrom(owner, 'GET', `/v1/${blog}/schema`)).status).toBe(200);
    expect(h.problems).toEqual([]);
  });
});
