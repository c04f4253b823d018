// The account credit ledger on the real control database: plan grants, reservations under concurrency, settling,
// and the release of reservations left behind by a process that died.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.ts';
import { CreditLedger, RELEASE_EXPIRED_RESERVATIONS_SQL } from '../../src/credits/ledger.ts';
import { openControlDb, type ControlDb } from '../../src/db/control.ts';
import { databaseUrl } from '../helpers/db.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

let p: TestPlatform;
/** A second handle on the control database, as another api instance (or the caller's transaction) would have. */
let other: ControlDb;

beforeAll(async () => {
  // Role api: no worker, so that the release cron does not race the test's own release.
  p = await startTestPlatform({ SVC_ROLE: 'api' });
  other = openControlDb(databaseUrl(p.controlDb), 10);
});
afterAll(async () => {
  await other?.close();
  await p?.close();
});

async function newAccount(plan = 'free'): Promise<string> {
  return (await p.sql(`insert into accounts (name, plan) values ('t', $1) returning id`, [plan]))[0].id;
}

async function balance(account: string): Promise<{ b: string; r: string }> {
  return (await p.sql(`select balance_nanos::text as b, reserved_nanos::text as r from credit_balances where account_id = $1`, [account]))[0];
}

describe('credit ledger', () => {
  it('grants the free plan its $0.10 once, however many processes ask at once', async () => {
    const account = await newAccount();
    // Separate ledgers: no shared in-process cache, as with several api instances.
    await Promise.all(Array.from({ length: 8 }, () => new CreditLedger(other.db, other.pool).plan(account)));
    const grants = await p.sql(`select amount_nanos::text, grant_key from credit_ledger where account_id = $1`, [account]);
    expect(grants).toEqual([{ amount_nanos: '100000000', grant_key: 'free:lifetime' }]);
    expect(await balance(account)).toEqual({ b: '100000000', r: '0' });
  });

  it('enterprise has unlimited credits: no reservation is taken', async () => {
    const account = await newAccount('enterprise');
    expect(await p.services.credits.reserve(account, 10 ** 12, 60)).toBeUndefined();
  });

  it('concurrent reservations stop exactly when nothing is left beyond what is held', async () => {
    const account = await newAccount();
    const outcomes = await Promise.allSettled(Array.from({ length: 50 }, () => p.services.credits.reserve(account, 10_000_000, 60)));
    const held = outcomes.filter((o) => o.status === 'fulfilled');
    const refused = outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason as AppError);
    expect(held).toHaveLength(10);
    expect(refused).toHaveLength(40);
    expect(refused[0]).toMatchObject({ status: 402, code: 'INSUFFICIENT_CREDITS', details: { balance_usd: 0.1, credit_floor_usd: 0 } });
    expect(await balance(account)).toEqual({ b: '100000000', r: '100000000' });
  });

  it('settle charges and frees the reservation in the caller transaction; settling for nothing only frees it', async () => {
    const account = await newAccount();
    const a = await p.services.credits.reserve(account, 5_000_000, 60);
    const b = await p.services.credits.reserve(account, 5_000_000, 60);
    await p.services.credits.settle(other.db, account, a, 7_000_000, 'ai', 'ai_usage:1');
    await p.services.credits.settle(other.db, account, b, 0, 'ai', 'ai_usage:0');
    expect(await balance(account)).toEqual({ b: '93000000', r: '0' });
    const rows = await p.sql(`select kind, amount_nanos::text, source, usage_ref from credit_ledger where account_id = $1 order by id`, [account]);
    expect(rows).toEqual([
      { kind: 'grant', amount_nanos: '100000000', source: 'plan:free', usage_ref: null },
      { kind: 'charge', amount_nanos: '-7000000', source: 'ai', usage_ref: 'ai_usage:1' },
    ]);
    expect(await p.sql(`select * from credit_reservations where account_id = $1`, [account])).toEqual([]);
  });

  it('a charge is at most the hold plus what no other call holds: the balance never goes below zero, the rest is a recorded write-off', async () => {
    const account = await newAccount();
    const a = await p.services.credits.reserve(account, 40_000_000, 60);
    const b = await p.services.credits.reserve(account, 30_000_000, 60);
    // a's upstream reported $0.25: a pays its hold plus the $0.03 nobody holds; b's hold stays b's.
    await p.services.credits.settle(other.db, account, a, 250_000_000, 'ai', 'ai_usage:a');
    expect(await balance(account)).toEqual({ b: '30000000', r: '30000000' });
    await p.services.credits.settle(other.db, account, b, 45_000_000, 'ai', 'ai_usage:b');
    expect(await balance(account)).toEqual({ b: '0', r: '0' });
    const rows = await p.sql(`select amount_nanos::text, shortfall_nanos::text from credit_ledger where account_id = $1 and kind = 'charge' order by id`, [account]);
    expect(rows).toEqual([
      { amount_nanos: '-70000000', shortfall_nanos: '180000000' },
      { amount_nanos: '-30000000', shortfall_nanos: '15000000' },
    ]);
  });

  it('a hold must fit whole in what is left: a $0.06 hold is refused beside one of $0.05', async () => {
    const account = await newAccount();
    await p.services.credits.reserve(account, 50_000_000, 60);
    await expect(p.services.credits.reserve(account, 60_000_000, 60)).rejects.toMatchObject({ status: 402, code: 'INSUFFICIENT_CREDITS' });
    expect(await p.services.credits.reserve(account, 50_000_000, 60)).toMatchObject({ accountId: account });
    expect(await balance(account)).toEqual({ b: '100000000', r: '100000000' });
  });

  it('upTo holds what is left when the whole does not fit (a meeting bot), and nothing is refused until the balance is held', async () => {
    const account = await newAccount();
    await p.services.credits.reserve(account, 70_000_000, 60);
    await p.services.credits.reserve(account, 50_000_000, 60, { upTo: true });
    expect(await balance(account)).toEqual({ b: '100000000', r: '100000000' });
    expect(await p.sql(`select amount_nanos::text from credit_reservations where account_id = $1 order by amount_nanos`, [account])).toEqual([
      { amount_nanos: '30000000' },
      { amount_nanos: '70000000' },
    ]);
    await expect(p.services.credits.reserve(account, 50_000_000, 60, { upTo: true })).rejects.toMatchObject({ status: 402, code: 'INSUFFICIENT_CREDITS' });
  });

  it('a settlement whose hold expired meanwhile is charged from the unheld balance only', async () => {
    const account = await newAccount();
    const lost = await p.services.credits.reserve(account, 30_000_000, 0);
    await p.services.credits.reserve(account, 90_000_000 - 30_000_000, 600);
    await p.sql(RELEASE_EXPIRED_RESERVATIONS_SQL);
    await p.services.credits.settle(other.db, account, lost, 55_000_000, 'ai', 'ai_usage:late');
    expect(await balance(account)).toEqual({ b: '60000000', r: '60000000' });
    const rows = await p.sql(`select amount_nanos::text, shortfall_nanos::text from credit_ledger where account_id = $1 and kind = 'charge'`, [account]);
    expect(rows).toEqual([{ amount_nanos: '-40000000', shortfall_nanos: '15000000' }]);
  });

  it('expired reservations (their process died) are released once; settling one later does not release it again', async () => {
    const account = await newAccount();
    const lost = await p.services.credits.reserve(account, 30_000_000, 0);
    await p.services.credits.reserve(account, 1_000_000, 600);
    expect(await balance(account)).toEqual({ b: '100000000', r: '31000000' });
    await p.sql(RELEASE_EXPIRED_RESERVATIONS_SQL);
    await p.sql(RELEASE_EXPIRED_RESERVATIONS_SQL);
    expect(await balance(account)).toEqual({ b: '100000000', r: '1000000' });
    await p.services.credits.settle(other.db, account, lost, 2_000_000, 'ai', 'ai_usage:2');
    expect(await balance(account)).toEqual({ b: '98000000', r: '1000000' });
  });
});
