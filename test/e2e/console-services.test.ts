// The console's AI, RAG, Integrations and Monetization tabs (issue 30) in Debian's Chromium against the platform
// started as `npm start` starts it, its vendors played by loopback fakes (an OpenAI-compatible upstream, Composio,
// Stripe with its signed Connect webhooks): the owner sets the AI settings and reads usage by day after chat calls
// made with the service key; creates a RAG collection, ingests a document and finds it from the query playground;
// configures a toolkit and sees the connection an end user made; onboards Stripe, creates a plan and a product, and
// sees in the app-wide lists the order an end user paid and the subscription they took through checkout. A viewer sees no write button on these
// tabs, and the API refuses the writes anyway (403 FORBIDDEN_ROLE).
import pg from 'pg';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { followLikeABrowser, startFakeComposio, type FakeComposio } from '../fakes/composio.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-upstream.ts';
import { startFakeStripe, type FakeStripe } from '../fakes/stripe.ts';
import { callFrom, startConsole, tab, type ConsoleHarness } from '../helpers/console.ts';
import { databaseUrl } from '../helpers/db.ts';
import { clearOfUtcMidnight, request } from './e2e-helpers.ts';

const CONNECT_SECRET = 'whsec_console_connect';
const APP_SITE = 'https://shop.example';
const today = () => new Date().toISOString().slice(0, 10);
/** A cost below a dollar as the AI tab shows it: three significant digits (a call costs millionths). */
const usd = (n: number) => new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumSignificantDigits: 3 }).format(n);

let ai: FakeOpenAI;
let composio: FakeComposio;
let stripe: FakeStripe;
let h: ConsoleHarness;
let appId: string;
let serviceKey: string;
let customer: { id: string; token: string };

beforeAll(async () => {
  [ai, composio, stripe] = await Promise.all([startFakeOpenAI({ costPerToken: 0.000001 }), startFakeComposio(), startFakeStripe({ secretKey: 'sk_test_console' })]);
  h = await startConsole({
    SVC_AI_BASE_URL: ai.url,
    SVC_AI_API_KEY: 'sk-console-upstream',
    SVC_INTEGRATIONS_BASE_URL: composio.url,
    SVC_INTEGRATIONS_API_KEY: composio.apiKey,
    SVC_STRIPE_SECRET_KEY: 'sk_test_console',
    SVC_STRIPE_API_URL: stripe.url,
    PAYMENTS_CONNECT_WEBHOOK_SECRET: CONNECT_SECRET,
    SVC_PLATFORM_FEE_PERCENT: '10',
  });
  stripe.setWebhooks({ connect: { url: `${h.server.url}/webhooks/payments/connect`, secret: CONNECT_SECRET } });
  ({ appId, serviceKey } = await h.createApp('Shop'));
  // AI credits enough for the chat calls and the playground's answer.
  const control = new pg.Client({ connectionString: databaseUrl(h.server.controlDb) });
  await control.connect();
  await control.query(`update accounts set plan = 'enterprise'`);
  await control.end();
  const signup = await request(h.server.url, `/v1/${appId}/auth/signup`, { method: 'POST', body: { email: 'carla@example.com', password: 'correct horse battery' } });
  customer = { id: signup.json.user.id, token: signup.json.access_token };
}, 90_000);
afterAll(async () => {
  await h?.close();
  await Promise.all([ai?.close(), composio?.close(), stripe?.close()]);
});

/** Opens a tab of the app's page from the app's overview. */
async function openTab(page: Page, name: string) {
  await page.goto(`${h.consoleUrl}#/apps/${appId}`);
  await tab(page, 'App', name);
  await page.getByRole('heading', { level: 2, name, exact: true }).waitFor();
}
const button = (page: Page, name: string) => page.getByRole('main').getByRole('button', { name, exact: true });
const region = (page: Page, name: string) => page.getByRole('main').getByRole('table', { name });
/** The cells of a table's rows, as text. */
const cells = (page: Page, table: string) => region(page, table).locator('tbody tr').evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent ?? '')));

describe('the console\'s service tabs', () => {
  it('AI: the owner saves the settings, and usage shows the service key\'s chat calls by day', async () => {
    const page = h.owner;
    // The tab's date range ends today when it opens; the calls below must fall on that day.
    await clearOfUtcMidnight();
    await openTab(page, 'AI');
    const form = page.getByRole('form', { name: 'AI settings' });
    await form.getByLabel('Default model').fill('openai/gpt-4o-mini');
    await form.getByLabel('Max tokens per request').fill('500');
    await form.getByLabel('Allowed models (comma-separated; empty: any)').fill('openai/gpt-4o-mini, openai/gpt-4o, openai/text-embedding-3-small');
    await form.getByLabel('End-user daily token limit').fill('10000');
    await button(page, 'Save settings').click();
    await page.getByRole('definition').getByText('openai/gpt-4o-mini, openai/gpt-4o, openai/text-embedding-3-small', { exact: true }).waitFor();
    const config = await callFrom(page, 'GET', `/v1/${appId}/ai/config`);
    expect(config.json).toEqual({
      defaultModel: 'openai/gpt-4o-mini',
      byokKeySet: false,
      byokKeyHint: null,
      maxTokensPerRequest: 500,
      allowedModels: ['openai/gpt-4o-mini', 'openai/gpt-4o', 'openai/text-embedding-3-small'],
      endUserDailyTokenLimit: 10000,
      updatedAt: expect.any(String),
    });

    let tokens = 0;
    for (const text of ['one', 'two', 'three']) {
      const chat = await request(h.server.url, `/v1/${appId}/chat/completions`, { method: 'POST', key: serviceKey, body: { messages: [{ role: 'user', content: text }] } });
      expect(chat.status).toBe(200);
      tokens += chat.json.usage.total_tokens;
    }
    // The default model served them (no model named).
    expect(ai.requests.map((r) => (r.body as { model: string }).model)).toEqual(['openai/gpt-4o-mini', 'openai/gpt-4o-mini', 'openai/gpt-4o-mini']);
    const usage = await callFrom(page, 'GET', `/v1/${appId}/ai/usage`);
    const day = usage.json.byDay.find((d: { date: string }) => d.date === today());
    expect(day).toEqual({ date: today(), requests: 3, tokens, cost: expect.any(Number) });
    expect(usage.json).toMatchObject({ totalTokens: tokens, byModel: { 'openai/gpt-4o-mini': { requests: 3, tokens } }, byUser: {}, otherUsers: null });

    await button(page, 'Show').click();
    await page.getByRole('img', { name: /^Tokens per day, .* 30 bars$/ }).waitFor();
    await expect.poll(() => cells(page, 'AI usage by day')).toEqual([[today(), '3', String(tokens), usd(day.cost)]]);
    expect(await cells(page, 'AI usage by model')).toEqual([['openai/gpt-4o-mini', '3', String(tokens), usd(day.cost)]]);
  }, 180_000);

  it('RAG: a collection is created, a document ingested, and the playground finds it with its score', async () => {
    const page = h.owner;
    await openTab(page, 'RAG');
    const form = page.getByRole('form', { name: 'New collection' });
    await form.getByLabel('Name').fill('handbook');
    await form.getByLabel('Description').fill('Staff handbook');
    await button(page, 'Create collection').click();
    await page.getByRole('heading', { level: 2, name: 'Collection handbook' }).waitFor();

    const ingest = page.getByRole('form', { name: 'Ingest a text document' });
    await ingest.getByLabel('File name').fill('holidays.txt');
    await ingest.getByLabel('Text').fill('Every employee gets thirty days of paid holiday a year.');
    await button(page, 'Ingest').click();
    // The worker embeds it: refreshed until ready.
    await expect
      .poll(async () => {
        await button(page, 'Refresh').click();
        return (await cells(page, 'Documents'))[0]?.slice(0, 3);
      }, { timeout: 20_000 })
      .toEqual(['holidays.txt', 'ready', '1']);

    const playground = page.getByRole('form', { name: 'Query the collection' });
    await playground.getByLabel('Query').fill('How many days of holiday?');
    await playground.getByLabel('Synthesize an answer (spends AI credits)').check();
    await button(page, 'Run query').click();
    const results = page.getByRole('region', { name: 'Query results' });
    await results.getByRole('heading', { name: /^Answer/ }).waitFor();
    const [match] = await cells(page, 'Matching chunks');
    expect(match!.slice(0, 3)).toEqual(['1', expect.stringMatching(/^\d\.\d{3}$/), 'Every employee gets thirty days of paid holiday a year.']);

    const docs = await callFrom(page, 'GET', `/v1/${appId}/rag/collections/handbook/documents?limit=1`);
    expect([docs.status, docs.json.map((d: { filename: string }) => d.filename), docs.headers['x-next-before']]).toEqual([200, ['holidays.txt'], undefined]);
    const answer = await callFrom(page, 'POST', `/v1/${appId}/rag/collections/handbook/query`, { query: 'How many days of holiday?', topK: 1 });
    expect(answer.json.chunks).toEqual([{ text: 'Every employee gets thirty days of paid holiday a year.', score: expect.closeTo(Number(match![1]), 3), documentId: docs.json[0].id, metadata: {} }]);
  });

  it('Integrations: a toolkit is configured, and the connection an end user made shows with the whole app\'s', async () => {
    const page = h.owner;
    await openTab(page, 'Integrations');
    const form = page.getByRole('form', { name: 'Configure a toolkit' });
    await form.getByLabel('Toolkit slug').fill('gmail');
    await form.getByLabel('Display name').fill('Gmail');
    await form.getByLabel("Redirect origins besides the app's (comma-separated; empty: unchanged)").fill(APP_SITE);
    await button(page, 'Save toolkit').click();
    await expect.poll(() => cells(page, 'Enabled toolkits')).toEqual([['gmail', 'Gmail', 'vendor-managed', expect.any(String), 'Disable']]);
    expect(await page.getByRole('main').getByText(/^End users connect from/).textContent()).toContain(APP_SITE);

    const connect = await request(h.server.url, `/v1/${appId}/integrations/connect`, {
      method: 'POST',
      key: customer.token,
      body: { toolkit: 'gmail', redirectUrl: `${APP_SITE}/settings` },
    });
    expect(connect.status).toBe(200);
    const { location } = await followLikeABrowser(connect.json.authUrl, APP_SITE);
    expect(location.searchParams.get('status')).toBe('success');

    await page.reload();
    await expect.poll(() => cells(page, 'Connections')).toEqual([['gmail', customer.id, 'active', expect.any(String), 'Disconnect']]);
    const listed = await callFrom(page, 'GET', `/v1/${appId}/integrations/connections`);
    expect(listed.json).toEqual({ connections: [{ id: location.searchParams.get('connectionId'), toolkit: 'gmail', userId: customer.id, status: 'active', createdAt: expect.any(String) }] });
    await expect.poll(() => cells(page, 'Available toolkits')).toContainEqual(['gmail', expect.any(String), expect.any(String), 'yes', '']);
  });

  it('Monetization: Stripe onboarding, a plan and a product created, an end user\'s paid order and subscription in the app-wide lists', async () => {
    const page = h.owner;
    await openTab(page, 'Monetization');
    await button(page, 'Start onboarding').click();
    const link = await page.getByRole('link', { name: 'Open Stripe onboarding' }).getAttribute('href');
    // The owner completes Stripe's hosted onboarding.
    expect((await fetch(link!, { redirect: 'manual' })).status).toBe(303);
    await button(page, 'Refresh status').click();
    await page.getByRole('definition').getByText('enabled', { exact: true }).waitFor();

    const plan = page.getByRole('form', { name: 'New plan' });
    await plan.getByLabel('Name').fill('Pro');
    await plan.getByLabel('Price').fill('9.50');
    await plan.getByLabel('Features (comma-separated)').fill('priority support, exports');
    await button(page, 'Create plan').click();
    await expect.poll(() => cells(page, 'Plans on sale')).toEqual([['Pro', '$9.50', 'month: priority support, exports', expect.any(String), 'ChangeTake off sale']]);

    const product = page.getByRole('form', { name: 'New product' });
    await product.getByLabel('Name').fill('Sticker pack');
    await product.getByLabel('Price').fill('2.50');
    await product.getByLabel('Description').fill('Ten stickers');
    await button(page, 'Create product').click();
    await expect.poll(() => cells(page, 'Products on sale')).toEqual([['Sticker pack', '$2.50', 'Ten stickers', expect.any(String), 'ChangeTake off sale']]);
    // A price change through the row's editor.
    await page.getByRole('button', { name: 'Change Sticker pack' }).click();
    await page.getByRole('form', { name: 'Change Sticker pack' }).getByLabel('Price').fill('3');
    await page.getByRole('form', { name: 'Change Sticker pack' }).getByRole('button', { name: 'Save' }).click();
    await expect.poll(async () => (await cells(page, 'Products on sale'))[0]?.[1]).toBe('$3.00');

    const products = await callFrom(page, 'GET', `/v1/${appId}/billing/products`);
    const productId = products.json.products[0].id;
    const purchase = await request(h.server.url, `/v1/${appId}/billing/purchase`, {
      method: 'POST',
      key: customer.token,
      body: { productId, quantity: 2, successUrl: `${APP_SITE}/thanks`, cancelUrl: `${APP_SITE}/shop` },
    });
    expect(purchase.status).toBe(201);
    // The end user pays: the fake completes the checkout and sends the signed Connect webhook before redirecting.
    expect((await fetch(purchase.json.url, { redirect: 'manual' })).status).toBe(303);

    const orders = await callFrom(page, 'GET', `/v1/${appId}/billing/orders`);
    expect(orders.json).toEqual({
      orders: [
        { id: purchase.json.orderId, userId: customer.id, productId, quantity: 2, amountCents: 600, currency: 'usd', status: 'paid', createdAt: expect.any(String), updatedAt: expect.any(String) },
      ],
      next_before: null,
    });
    await page.reload();
    await expect.poll(() => cells(page, 'Orders')).toEqual([[expect.any(String), purchase.json.orderId, customer.id, 'Sticker pack', '2', '$6.00', 'paid']]);
    await page.getByLabel('Status of orders').selectOption('refunded');
    await page.getByRole('main').getByText('No orders.').waitFor();

    // The end user subscribes to the plan through checkout; the subscription shows app-wide, active.
    const planId = (await callFrom(page, 'GET', `/v1/${appId}/billing/plans`)).json.plans[0].id;
    const subscribe = await request(h.server.url, `/v1/${appId}/billing/subscribe`, {
      method: 'POST',
      key: customer.token,
      body: { planId, successUrl: `${APP_SITE}/thanks`, cancelUrl: `${APP_SITE}/plans` },
    });
    expect(subscribe.status).toBe(200);
    expect((await fetch(subscribe.json.url, { redirect: 'manual' })).status).toBe(303);
    const subscriptions = await callFrom(page, 'GET', `/v1/${appId}/billing/subscriptions?status=active`);
    expect(subscriptions.json).toEqual({
      subscriptions: [
        { id: expect.any(String), userId: customer.id, planId, status: 'active', currentPeriodEnd: expect.any(String), cancelAtPeriodEnd: false, createdAt: expect.any(String), updatedAt: expect.any(String) },
      ],
      next_before: null,
    });
    await page.reload();
    await expect.poll(() => cells(page, 'Subscriptions')).toEqual([[expect.any(String), customer.id, 'Pro', 'active', expect.any(String)]]);
  });

  it('a viewer reads the four tabs with no write button, and the API refuses the writes (403 FORBIDDEN_ROLE)', async () => {
    const viewer = await h.personAs('viewer', 'vic@example.com');
    const buttons = () => viewer.getByRole('main').getByRole('button').allTextContents();

    await openTab(viewer, 'AI');
    await viewer.getByRole('table', { name: 'AI usage by day' }).waitFor();
    expect(await buttons()).toEqual(['Show', 'Show the numbers']);
    expect(await viewer.getByRole('form', { name: 'AI settings' }).count()).toBe(0);

    await openTab(viewer, 'RAG');
    await viewer.getByRole('link', { name: 'handbook' }).click();
    await viewer.getByRole('table', { name: 'Documents' }).waitFor();
    expect(await buttons()).toEqual(['Refresh', 'Run query']);
    expect(await viewer.getByLabel('Synthesize an answer (spends AI credits)').count()).toBe(0);

    await openTab(viewer, 'Integrations');
    await viewer.getByRole('table', { name: 'Connections' }).waitFor();
    expect(await buttons()).toEqual(['Search']);

    await openTab(viewer, 'Monetization');
    await viewer.getByRole('table', { name: 'Orders' }).waitFor();
    await viewer.getByRole('table', { name: 'Subscriptions' }).waitFor();
    expect(await buttons()).toEqual(['Refresh status']);

    const plans = await callFrom(viewer, 'GET', `/v1/${appId}/billing/plans`);
    const connections = await callFrom(viewer, 'GET', `/v1/${appId}/integrations/connections`);
    const writes: Array<[string, string, unknown?]> = [
      ['PUT', `/v1/${appId}/ai/config`, { defaultModel: 'openai/gpt-4o' }],
      ['POST', `/v1/${appId}/rag/collections`, { name: 'notes' }],
      ['DELETE', `/v1/${appId}/rag/collections/handbook`],
      ['POST', `/v1/${appId}/rag/collections/handbook/ingest`, { text: 'x' }],
      ['POST', `/v1/${appId}/rag/collections/handbook/query`, { query: 'holiday', synthesize: true }],
      ['POST', `/v1/${appId}/integrations/configure`, { toolkit: 'slack', displayName: 'Slack' }],
      ['DELETE', `/v1/${appId}/integrations/configure/gmail`],
      ['DELETE', `/v1/${appId}/integrations/connections/${connections.json.connections[0].id}`],
      ['POST', `/v1/${appId}/billing/connect/onboard`, {}],
      ['POST', `/v1/${appId}/billing/plans`, { name: 'Cheap', priceCents: 100 }],
      ['PUT', `/v1/${appId}/billing/plans/${plans.json.plans[0].id}`, { active: false }],
      ['POST', `/v1/${appId}/billing/products`, { name: 'Mug', priceCents: 900 }],
    ];
    for (const [method, path, body] of writes) {
      const res = await callFrom(viewer, method, path, body);
      expect([method, path, res.status, res.json?.error?.code, res.json?.error?.details]).toEqual([method, path, 403, 'FORBIDDEN_ROLE', { required_role: 'developer', role: 'viewer' }]);
    }
    // Reading stays a viewer's, the playground's retrieval included.
    const retrieval = await callFrom(viewer, 'POST', `/v1/${appId}/rag/collections/handbook/query`, { query: 'holiday', topK: 1 });
    expect([retrieval.status, retrieval.json.chunks.length]).toEqual([200, 1]);
    expect(h.problems).toEqual([]);
  });
});
