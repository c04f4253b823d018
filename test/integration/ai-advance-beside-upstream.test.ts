// When a call's advance (its usage row and charge at the worst case, src/ai/usage.ts) is written relative to its
// upstream call (src/ai/gateway.ts): on a plan whose advances are never refused (pro: overage), beside it, and the
// answer waits for it; on the free plan, whose advance may be refused with 402, before it. The account's balance row is
// held locked by the test, so an advance waits on it for as long as the test decides.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-upstream.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { waitFor } from './frontend-helpers.ts';
import { databaseUrl } from '../helpers/db.ts';
import type { AiCaller } from '../../src/ai/gateway.ts';
import type { JsonText } from '../../src/core/json-text.ts';

let fake: FakeOpenAI;
let p: TestPlatform;
let appId: string;

beforeAll(async () => {
  fake = await startFakeOpenAI({ costPerToken: 0.000001 });
  // Role api: no worker, so no job touches the balance rows the test holds.
  p = await startTestPlatform({ SVC_ROLE: 'api', SVC_AI_BASE_URL: fake.url, SVC_AI_API_KEY: 'sk-platform-0000' });
  const created = await p.api('POST', '/init', { body: { name: 'beside' } });
  expect(created.status).toBe(201);
  appId = created.body.app_id;
});
afterAll(async () => {
  await p?.close();
  await fake?.close();
});

/** The app's calls paid by a fresh account of `plan`, its balance row made (and its plan's grant given). */
async function callerOn(plan: 'free' | 'pro'): Promise<AiCaller & { accountId: string }> {
  const [account] = await p.sql(`insert into accounts (name, plan) values ('beside', $1) returning id::text`, [plan]);
  await p.services.credits.plan(account.id);
  const app = (await p.services.apps.get(appId))!;
  return { app: { ...app, account_id: account.id }, endUserId: null, accountId: account.id };
}

/** A transaction holding the account's balance row, until `release`. */
async function holdBalanceRow(accountId: string): Promise<{ release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: databaseUrl(p.controlDb) });
  await client.connect();
  await client.query('begin');
  await client.query('select 1 from credit_balances where account_id = $1 for update', [accountId]);
  return {
    release: async () => {
      await client.query('commit');
      await client.end();
    },
  };
}

/** Waits until a statement of the account's queue waits on a row lock (the balance row the test holds). */
async function advanceWaitingOnLock(): Promise<void> {
  await waitFor(
    async () => (await p.sql(`select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like '%execute balance_%'`)).length === 1 || undefined,
    10_000,
    'an advance waiting on the balance row',
  );
}

const usageOf = (accountId: string) =>
  p.sql(
    `select u.status, u.cost_nanos > 0 as costed, l.amount_nanos < 0 as charged from ai_usage u
     left join credit_ledger l on l.usage_ref = 'ai_usage:' || u.id where u.account_id = $1`,
    [accountId],
  );

const chat = (who: AiCaller) =>
  p.services.ai.chat(who, { model: 'openai/m', messages: [{ role: 'user', content: 'beside' }] }, { signal: undefined, canStream: false });

describe('an advance beside its upstream call', () => {
  it('pro: the upstream is asked while the advance waits, and the answer waits for the advance', async () => {
    const who = await callerOn('pro');
    fake.reset();
    const lock = await holdBalanceRow(who.accountId);
    let answered = false;
    const answer = chat(who).finally(() => (answered = true));
    try {
      await waitFor(async () => fake.requests[0]?.outcome, 10_000, 'the upstream asked and answered');
      expect(await fake.requests[0]!.outcome).toBe('completed');
      await advanceWaitingOnLock();
      // The upstream has answered; the advance has not been written, so neither has the answer.
      expect(answered).toBe(false);
      expect(await usageOf(who.accountId)).toEqual([]);
    } finally {
      await lock.release();
    }
    expect(JSON.parse(((await answer) as JsonText).text).choices[0].message.content).toBe('echo: beside');
    // Written (and charged) before the answer, whatever its correction does after.
    expect(await usageOf(who.accountId)).toEqual([{ status: 'ok', costed: true, charged: true }]);
    await p.services.ai.settled();
  });

  it('free: the upstream is not asked until the advance is written (it may be refused with 402)', async () => {
    const who = await callerOn('free');
    fake.reset();
    const lock = await holdBalanceRow(who.accountId);
    const answer = chat(who);
    try {
      await advanceWaitingOnLock();
      expect(fake.requests).toEqual([]);
    } finally {
      await lock.release();
    }
    expect(JSON.parse(((await answer) as JsonText).text).choices[0].message.content).toBe('echo: beside');
    expect(fake.requests).toHaveLength(1);
    await p.services.ai.settled();
    expect(await usageOf(who.accountId)).toEqual([{ status: 'ok', costed: true, charged: true }]);
  });

  it('pro: an advance that fails fails the call after the upstream answered, and leaves nothing written', async () => {
    const who = await callerOn('pro');
    fake.reset();
    const lock = await holdBalanceRow(who.accountId);
    const answer = chat(who).then(
      () => undefined,
      (err: { code?: string }) => err,
    );
    try {
      await waitFor(async () => fake.requests[0]?.outcome, 10_000, 'the upstream asked and answered');
      await advanceWaitingOnLock();
      const [ended] = await p.sql(
        `select pg_terminate_backend(pid) as ok from pg_stat_activity where wait_event_type = 'Lock' and query like '%execute balance_%'`,
      );
      expect(ended).toEqual({ ok: true });
      // The database's error as the advance met it (its connection ended: the transports answer 503 UNAVAILABLE).
      expect(await answer).toMatchObject({ code: '57P01' });
    } finally {
      await lock.release();
    }
    await p.services.ai.settled();
    expect(await usageOf(who.accountId)).toEqual([]);
  });
});
