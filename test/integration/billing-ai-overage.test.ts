// Pro AI credits overage: a pro account spends beyond its $10 without a 402, the part beyond its balance is recorded
// on its charges (never held twice by concurrent calls), and the closed month's total becomes one Stripe invoice
// item through the fake Stripe, once; a free account is still refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { startFakeStripe, type FakeStripe } from '../fakes/stripe.ts';
import { PlatformStripe, stripeClient } from '../../src/adapters/stripe.ts';
import { openControlDb, type ControlDb } from '../../src/db/control.ts';
import { databaseUrl } from '../helpers/db.ts';

/** Early in December 2026: November is the closed period. */
const NOW = new Date('2026-12-01T02:00:00Z');
const USD = 1_000_000_000;

let p: TestPlatform;
let fake: FakeStripe;
let stripe: PlatformStripe;
/** The caller's transaction handle a settlement runs in. */
let control: ControlDb;

beforeAll(async () => {
  fake = await startFakeStripe();
  // Role api: no worker, so no cron runs the overage job or releases holds behind the test's back.
  p = await startTestPlatform({ SVC_ROLE: 'api', SVC_STRIPE_SECRET_KEY: 'sk_test_ai_overage', SVC_STRIPE_API_URL: fake.url });
  stripe = new PlatformStripe(stripeClient({ secretKey: 'sk_test_ai_overage', apiUrl: fake.url } as Parameters<typeof stripeClient>[0])!);
  control = openControlDb(databaseUrl(p.controlDb), 4);
});
afterAll(async () => {
  await control?.close();
  await p?.close();
  await fake?.close();
});

async function account(plan: 'free' | 'pro'): Promise<{ id: string; customer: string }> {
  const id = (await p.sql(`insert into accounts (name, plan) values ('ai', $1) returning id`, [plan]))[0].id as string;
  const customer = await stripe.createCustomer(id, 'ai');
  await p.sql(`update accounts set stripe_customer_id = $2, plan_since = '2026-10-01' where id = $1`, [id, customer]);
  return { id, customer };
}

const balance = async (id: string) =>
  (await p.sql(`select balance_nanos::text as b, reserved_nanos::text as r from credit_balances where account_id = $1`, [id]))[0];

const itemsOf = (customer: string) =>
  fake.requests.filter((r) => r.method === 'POST' && r.path === '/v1/invoiceitems' && r.status === 200 && r.body.customer === customer);

describe('pro AI credits overage', () => {
  it('spends beyond the $10 without a 402; the part beyond the balance is overage, not a write-off', async () => {
    const a = await account('pro');
    // The first call holds the whole $10; two concurrent calls after it hold nothing, and none is refused.
    const first = await p.services.credits.reserve(a.id, 12 * USD, 60);
    const [second, third] = await Promise.all([p.services.credits.reserve(a.id, 5 * USD, 60), p.services.credits.reserve(a.id, 5 * USD, 60)]);
    const holds = await p.sql(`select amount_nanos::text from credit_reservations where account_id = $1 order by amount_nanos desc`, [a.id]);
    expect(holds.map((h) => h.amount_nanos)).toEqual([String(10 * USD), '0', '0']);
    await p.services.credits.settle(control.db, a.id, first, 12 * USD, 'ai', 'ai_usage:1');
    await Promise.all([
      p.services.credits.settle(control.db, a.id, second, 1 * USD, 'ai', 'ai_usage:2'),
      p.services.credits.settle(control.db, a.id, third, 2 * USD, 'ai', 'ai_usage:3'),
    ]);
    expect(await balance(a.id)).toEqual({ b: '0', r: '0' });
    const charges = await p.sql(
      `select amount_nanos::text, overage_nanos::text, shortfall_nanos::text from credit_ledger where account_id = $1 and kind = 'charge' order by id`,
      [a.id],
    );
    expect(charges.slice(0, 1)).toEqual([{ amount_nanos: String(-10 * USD), overage_nanos: String(2 * USD), shortfall_nanos: '0' }]);
    expect(charges.slice(1).map((c) => [c.amount_nanos, c.overage_nanos, c.shortfall_nanos]).sort()).toEqual([
      ['0', String(1 * USD), '0'],
      ['0', String(2 * USD), '0'],
    ]);
    // Still not refused with nothing left: the plan has an overage price.
    expect(await p.services.credits.reserve(a.id, 1 * USD, 60)).toMatchObject({ accountId: a.id });
  });

  it("the closed month's AI overage becomes one Stripe invoice item at $0.10 per $0.10 credit, once", async () => {
    const a = await account('pro');
    await p.services.credits.plan(a.id);
    const hold = await p.services.credits.reserve(a.id, 10 * USD, 60);
    await p.services.credits.settle(control.db, a.id, hold, 10 * USD + 1_234_567_891, 'ai', 'ai_usage:4');
    await p.sql(`update credit_ledger set created_at = '2026-11-15T12:00:00Z' where account_id = $1`, [a.id]);
    const charges = (await p.services.billing.invoiceOverage(NOW)).filter((c) => c.accountId === a.id);
    expect(charges).toEqual([
      { accountId: a.id, period: '2026-11-01', meter: 'ai_credits', quantity: 1_234_567_891, amountCents: 123, invoiceItemId: expect.stringMatching(/^ii_/) },
    ]);
    await p.services.billing.invoiceOverage(NOW);
    const items = itemsOf(a.customer);
    expect(items).toHaveLength(1);
    expect(items[0]!.body).toMatchObject({
      amount: '123',
      currency: 'usd',
      description: '$1.23 of AI credits beyond the pro allowance, 2026-11',
      metadata: { account_id: a.id, period: '2026-11-01', meter: 'ai_credits' },
    });
    expect(items[0]!.idempotencyKey).toBe(`overage-${a.id}-2026-11-01-ai_credits-${a.customer}`);
  });

  it("GET /dashboard/billing shows this period's AI overage in overageUsd, as the period's close will invoice it", async () => {
    const a = await account('pro');
    await p.services.credits.plan(a.id);
    const hold = await p.services.credits.reserve(a.id, 10 * USD, 60);
    await p.services.credits.settle(control.db, a.id, hold, 15 * USD, 'ai', 'ai_usage:5');
    expect(await p.sql(`select sum(overage_nanos)::text as n from credit_ledger where account_id = $1`, [a.id])).toEqual([{ n: String(5 * USD) }]);
    const { key } = await p.services.keys.create('platform', a.id, 'billing');
    const billing = await p.api('GET', '/dashboard/billing', { key });
    expect(billing.status).toBe(200);
    expect(billing.body).toMatchObject({ plan: 'pro', usage: { ai_credits: 15 }, limits: { ai_credits: 10 }, overageUsd: { ai_credits: 5 } });
  });

  it('a free account (no overage price) is still refused with 402 once its credit is held', async () => {
    const a = await account('free');
    await p.services.credits.reserve(a.id, 100_000_000, 60);
    await expect(p.services.credits.reserve(a.id, 1, 60)).rejects.toMatchObject({ status: 402, code: 'INSUFFICIENT_CREDITS' });
  });
});
