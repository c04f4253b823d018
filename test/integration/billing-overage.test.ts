// Pro overage charged through Stripe: a closed month's usage beyond the pro allowance becomes pending invoice items
// on the account's customer (the fake Stripe, driven by the real SDK), once, whatever the job's reruns and failures.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { startFakeStripe, type FakeStripe } from '../fakes/stripe.ts';
import { PlatformStripe, stripeClient } from '../../src/adapters/stripe.ts';

const GB = 1024 ** 3;
/** Early in December 2026: November is the closed period. */
const NOW = new Date('2026-12-01T02:00:00Z');

let p: TestPlatform;
let fake: FakeStripe;
let stripe: PlatformStripe;

beforeAll(async () => {
  fake = await startFakeStripe();
  p = await startTestPlatform({ SVC_STRIPE_SECRET_KEY: 'sk_test_overage', SVC_STRIPE_API_URL: fake.url });
  stripe = new PlatformStripe(stripeClient({ secretKey: 'sk_test_overage', apiUrl: fake.url } as Parameters<typeof stripeClient>[0])!);
});
afterAll(async () => {
  await p?.close();
  await fake?.close();
});

/** A pro account with one app and a real customer at the fake, and usage on the given November and December days. */
async function proAccount(usage: Array<[meter: string, day: string, quantity: number]>, proSince = '2026-10-01'): Promise<{ id: string; customer: string }> {
  const id = (await p.sql(`insert into accounts (name, plan) values ('big', 'pro') returning id`))[0].id as string;
  await p.sql(`update accounts set plan_since = $2 where id = $1`, [id, proSince]);
  const { key } = await p.services.keys.create('platform', id, 'test');
  const app = await p.api('POST', '/init', { key, body: { name: 'busy' } });
  expect(app.status).toBe(201);
  const customer = await stripe.createCustomer(id, 'big');
  await p.sql(`update accounts set stripe_customer_id = $2 where id = $1`, [id, customer]);
  for (const [meter, day, quantity] of usage) {
    await p.sql(
      `insert into usage_daily (app_id, meter, day, quantity) values ($1, $2, $3, $4)
       on conflict (app_id, meter, day) do update set quantity = usage_daily.quantity + excluded.quantity`,
      [app.body.app_id, meter, day, quantity],
    );
  }
  return { id, customer };
}

const meterOf = (r: FakeStripe['requests'][number]) => (r.body.metadata as Record<string, string>).meter;

const itemsOf = (customer: string) =>
  fake.requests.filter((r) => r.method === 'POST' && r.path === '/v1/invoiceitems' && r.status === 200 && r.body.customer === customer);

describe('pro overage', () => {
  it('a closed month beyond the allowance becomes one invoice item per meter, at the plan prices', async () => {
    const a = await proAccount([
      ['bandwidth_bytes', '2026-11-10', 260 * GB], // 10 GB over at $0.09
      ['bandwidth_bytes', '2026-12-01', 500 * GB], // December: not November's
      ['monthly_active_users', '2026-11-03', 100_400], // 400 over at $0.00325
      ['storage_bytes', '2026-10-20', 90 * GB], // a level: 90 + 20 = 110 GB at November's end, 10 over at $0.021
      ['storage_bytes', '2026-11-20', 20 * GB],
      ['storage_bytes', '2026-12-01', 50 * GB], // after the period
      ['lambda_invocations', '2026-11-05', 900_000], // no overage price: not charged
    ]);
    const charges = (await p.services.billing.invoiceOverage(NOW)).filter((c) => c.accountId === a.id);
    expect(charges.map(({ meter, quantity, amountCents }) => ({ meter, quantity, amountCents })).sort((x, y) => x.meter.localeCompare(y.meter))).toEqual([
      { meter: 'bandwidth_bytes', quantity: 10 * GB, amountCents: 90 },
      { meter: 'monthly_active_users', quantity: 400, amountCents: 130 },
      { meter: 'storage_bytes', quantity: 10 * GB, amountCents: 21 },
    ]);
    expect(charges.every((c) => c.invoiceItemId?.startsWith('ii_'))).toBe(true);
    const items = itemsOf(a.customer);
    expect(items.map((r) => [r.body.amount, r.body.currency, meterOf(r)]).sort()).toEqual([
      ['130', 'usd', 'monthly_active_users'],
      ['21', 'usd', 'storage_bytes'],
      ['90', 'usd', 'bandwidth_bytes'],
    ]);
    expect(items.find((r) => meterOf(r) === 'bandwidth_bytes')!.body).toMatchObject({
      description: '10.00 GB of bandwidth beyond the pro allowance, 2026-11',
      period: { start: String(Date.UTC(2026, 10, 1) / 1000), end: String(Date.UTC(2026, 11, 1) / 1000) },
      metadata: { account_id: a.id, period: '2026-11-01' },
    });
    expect(items.map((r) => r.idempotencyKey).sort()).toEqual([
      `overage-${a.id}-2026-11-01-bandwidth_bytes-${a.customer}`,
      `overage-${a.id}-2026-11-01-monthly_active_users-${a.customer}`,
      `overage-${a.id}-2026-11-01-storage_bytes-${a.customer}`,
    ]);
  });

  it('runs again without charging twice; a Stripe failure leaves the line pending, with its error, for the next run', async () => {
    const a = await proAccount([['bandwidth_bytes', '2026-11-02', 251 * GB]]);
    fake.failNext(500);
    await p.services.billing.invoiceOverage(NOW);
    const [row] = await p.sql(`select amount_cents::int, stripe_invoice_item_id, attempts, last_error is not null as failed from billing_overage_charges where account_id = $1`, [a.id]);
    expect(row).toEqual({ amount_cents: 9, stripe_invoice_item_id: null, attempts: 1, failed: true });
    await p.services.billing.invoiceOverage(NOW);
    await p.services.billing.invoiceOverage(new Date('2026-12-01T03:00:00Z'));
    expect(itemsOf(a.customer)).toHaveLength(1);
    const [after] = await p.sql(`select stripe_invoice_item_id, last_error from billing_overage_charges where account_id = $1`, [a.id]);
    expect(after.stripe_invoice_item_id).toMatch(/^ii_/);
    expect(after.last_error).toBeNull();
  });

  it('a customer Stripe refuses does not hold up the other accounts', async () => {
    const gone = await proAccount([['bandwidth_bytes', '2026-11-02', 260 * GB]]);
    await p.sql(`update accounts set stripe_customer_id = 'cus_deleted_at_stripe' where id = $1`, [gone.id]);
    const fine = await proAccount([['bandwidth_bytes', '2026-11-02', 260 * GB]]);
    await p.services.billing.invoiceOverage(NOW);
    expect(itemsOf(fine.customer)).toHaveLength(1);
    const [stuck] = await p.sql(`select stripe_invoice_item_id, attempts, last_error from billing_overage_charges where account_id = $1`, [gone.id]);
    expect(stuck).toMatchObject({ stripe_invoice_item_id: null, attempts: 1, last_error: expect.stringContaining('No such customer') });
  });

  it('a month is charged only to an account that was pro all through it', async () => {
    const upgradedLater = await proAccount([['bandwidth_bytes', '2026-11-02', 300 * GB]], '2026-11-20');
    const charges = await p.services.billing.invoiceOverage(NOW);
    expect(charges.filter((c) => c.accountId === upgradedLater.id)).toEqual([]);
    expect(itemsOf(upgradedLater.customer)).toEqual([]);
  });

  it('usage within the allowance, free accounts and lines under a cent charge nothing', async () => {
    const within = await proAccount([['bandwidth_bytes', '2026-11-02', 250 * GB]]);
    const tiny = await proAccount([['monthly_active_users', '2026-11-02', 100_001]]); // $0.00325: under a cent
    const free = (await p.sql(`insert into accounts (name, plan, stripe_customer_id) values ('f', 'free', 'cus_free') returning id`))[0].id as string;
    const charges = await p.services.billing.invoiceOverage(NOW);
    expect(charges.filter((c) => [within.id, tiny.id, free].includes(c.accountId))).toEqual([]);
    expect([...itemsOf(within.customer), ...itemsOf(tiny.customer)]).toEqual([]);
  });
});
