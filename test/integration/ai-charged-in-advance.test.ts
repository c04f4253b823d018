// AI calls charged in advance (src/ai/usage.ts): the usage row and its charge are written at the worst case before
// the upstream is asked, and corrected in place after the answer went out. Covered here: what stands while a call is in
// flight, a call whose process died (the worst case stands, and the meter job takes it once settle_by passed), a
// correction run twice, and an advance lost with a database crash (the settlement writes the row and charge afresh).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-upstream.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { waitFor } from './frontend-helpers.ts';
import { METER_AI_USAGE_SQL, settleAiCall, startAiCall, type AiCallStart } from '../../src/ai/usage.ts';
import { GROUP_SETTINGS } from '../../src/credits/balance-queue.ts';
import { CreditLedger } from '../../src/credits/ledger.ts';
import { openControlDb, type ControlDb } from '../../src/db/control.ts';
import { databaseUrl } from '../helpers/db.ts';

let fake: FakeOpenAI;
let p: TestPlatform;
let other: ControlDb;

/** The free plan's grant, in nano-dollars. */
const GRANT = 100_000_000;

beforeAll(async () => {
  fake = await startFakeOpenAI({ costPerToken: 0.000001 });
  // Role api: no worker, so the meter cron does not race the test's own runs.
  p = await startTestPlatform({ SVC_ROLE: 'api', SVC_AI_BASE_URL: fake.url, SVC_AI_API_KEY: 'sk-platform-0000' });
  other = openControlDb(databaseUrl(p.controlDb), 4);
});
afterAll(async () => {
  await other?.close();
  await p?.close();
  await fake?.close();
});

/** An app of the platform key's account, made through /init. */
async function newApp(name: string): Promise<{ appId: string; serviceKey: string; accountId: string }> {
  const created = await p.api('POST', '/init', { body: { name } });
  expect(created.status).toBe(201);
  const [app] = await p.sql(`select account_id::text from apps where id = $1`, [created.body.app_id]);
  return { appId: created.body.app_id, serviceKey: created.body.service_key.key, accountId: app.account_id };
}

/** An app whose calls a fresh account of its own pays (calls made with startAiCall, which take the account as given). */
async function paidByFreshAccount(name: string): Promise<{ appId: string; accountId: string }> {
  const { appId } = await newApp(name);
  const [account] = await p.sql(`insert into accounts (name) values ($1) returning id::text`, [name]);
  return { appId, accountId: account.id };
}

/** The account's money: balance, the sum of its ledger, and its charges with their usage rows. */
async function money(accountId: string): Promise<{ balance: string | undefined; ledger: string | undefined; charges: { amount: string; cost: string; settling: boolean; status: string }[] }> {
  // One statement, so one snapshot: read apart, a charge committed between the reads showed beside the balance before it.
  const [m] = await p.sql(
    `select b.balance_nanos::text as balance,
       case when b.account_id is not null then (select coalesce(sum(amount_nanos), 0)::text from credit_ledger where account_id = $1) end as ledger,
       coalesce((select json_agg(json_build_object('amount', l.amount_nanos::text, 'cost', u.cost_nanos::text, 'settling', u.settle_by is not null, 'status', u.status) order by l.id)
         from credit_ledger l join ai_usage u on l.usage_ref = 'ai_usage:' || u.id where l.account_id = $1 and l.kind = 'charge'), '[]') as charges
     from (select $1::uuid as id) a left join credit_balances b on b.account_id = a.id`,
    [accountId],
  );
  // No balance row before the account's first call.
  return { balance: m.balance ?? undefined, ledger: m.ledger ?? undefined, charges: m.charges };
}

function callOf(app: { appId: string; accountId: string }, costNanos: number): AiCallStart {
  return { appId: app.appId, accountId: app.accountId, endUserId: null, kind: 'chat', model: 'openai/m', tokens: { prompt: 10, completion: 100 }, costNanos, ownKey: false, settleWithinSeconds: 60 };
}

const ended = (costNanos: number) => ({ tokens: { prompt: 5, completion: 3 }, costNanos, latencyMs: 7, status: 'ok' as const, httpStatus: 200, userTokensHeld: 0 });

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

/** The tables a plan reads whole. */
function tablesScannedWhole(node: PlanNode): string[] {
  const own = node['Node Type'] === 'Seq Scan' ? [node['Relation Name']!] : [];
  return [...own, ...(node.Plans ?? []).flatMap(tablesScannedWhole)];
}

describe('AI calls charged in advance', () => {
  it('a call in flight has its usage row and its charge at the worst case; its answer corrects both to what it cost', async () => {
    // The only test whose calls the platform key's account pays.
    const app = await newApp('in flight');
    // The upstream holds its answer until a second call arrives: the first is in flight meanwhile.
    fake.answerTogether(2);
    let worst = 0;
    try {
      const first = p.api('POST', `/v1/${app.appId}/chat/completions`, { key: app.serviceKey, body: { model: 'openai/m', max_tokens: 100, messages: [{ role: 'user', content: 'one' }] } });
      const during = await waitFor(async () => {
        const now = await money(app.accountId);
        return now.charges.length === 1 ? now : undefined;
      }, 10_000, 'the charge in advance');
      worst = -Number(during.charges[0]!.amount);
      expect(worst).toBeGreaterThan(8_000);
      expect(during).toEqual({ balance: String(GRANT - worst), ledger: String(GRANT - worst), charges: [{ amount: String(-worst), cost: String(worst), settling: true, status: 'ok' }] });
      const second = p.api('POST', `/v1/${app.appId}/chat/completions`, { key: app.serviceKey, body: { model: 'openai/m', max_tokens: 100, messages: [{ role: 'user', content: 'two' }] } });
      expect((await first).status).toBe(200);
      expect((await second).status).toBe(200);
    } finally {
      fake.reset();
    }
    await p.services.ai.settled();
    // The fake reports $0.000001 a token: each charge now its call's cost, far under the worst case, settled in place.
    const after = await money(app.accountId);
    expect(after.charges.map((c) => ({ ...c, cost: Number(c.cost) }))).toEqual([
      { amount: String(-Number(after.charges[0]!.cost)), cost: Number(after.charges[0]!.cost), settling: false, status: 'ok' },
      { amount: String(-Number(after.charges[1]!.cost)), cost: Number(after.charges[1]!.cost), settling: false, status: 'ok' },
    ]);
    const spent = after.charges.reduce((n, c) => n + Number(c.cost), 0);
    expect(spent).toBeLessThan(worst);
    expect(after.balance).toBe(String(GRANT - spent));
    expect(after.ledger).toBe(after.balance);
  });

  it('a call whose process died keeps its worst case charged; the meter job takes the row after settle_by, and a late correction changes nothing', async () => {
    const app = await paidByFreshAccount('died');
    const ledger = new CreditLedger(other.db, other.pool);
    const call = callOf(app, 5_000);
    const advance = await startAiCall(other.db, ledger, call);
    expect(await money(app.accountId)).toEqual({ balance: String(GRANT - 5_000), ledger: String(GRANT - 5_000), charges: [{ amount: '-5000', cost: '5000', settling: true, status: 'ok' }] });
    // Not before settle_by: a live call still settles it.
    await p.sql(METER_AI_USAGE_SQL(5000));
    expect((await p.sql(`select metered from ai_usage where id = $1`, [advance.usageId]))[0].metered).toBe(false);
    await p.sql(`update ai_usage set settle_by = now() - interval '1 second' where id = $1`, [advance.usageId]);
    await p.sql(METER_AI_USAGE_SQL(5000));
    const [credits] = await p.sql(`select quantity::text from usage_daily where app_id = $1 and meter = 'ai_credits'`, [app.appId]);
    expect(credits.quantity).toBe('5000');
    await settleAiCall(other.db, ledger, call, advance, ended(1_000));
    expect(await money(app.accountId)).toEqual({ balance: String(GRANT - 5_000), ledger: String(GRANT - 5_000), charges: [{ amount: '-5000', cost: '5000', settling: false, status: 'ok' }] });
  });

  it('a correction run twice charges once', async () => {
    const app = await paidByFreshAccount('twice');
    const ledger = new CreditLedger(other.db, other.pool);
    const call = callOf(app, 5_000);
    const advance = await startAiCall(other.db, ledger, call);
    expect(await settleAiCall(other.db, ledger, call, advance, ended(1_200))).toEqual({ shortfallNanos: 0 });
    await settleAiCall(other.db, ledger, call, advance, ended(1_200));
    expect(await money(app.accountId)).toEqual({ balance: String(GRANT - 1_200), ledger: String(GRANT - 1_200), charges: [{ amount: '-1200', cost: '1200', settling: false, status: 'ok' }] });
  });

  it("a correction that gives credit back takes the account's row only to add it; one that costs more than its advance locks the row to cap the cost", async () => {
    const app = await paidByFreshAccount('row lock');
    const ledger = new CreditLedger(other.db, other.pool);
    const call = callOf(app, 5_000);
    const [cheaper, dearer] = [await startAiCall(other.db, ledger, call), await startAiCall(other.db, ledger, call)];
    // A key-share lock (what a foreign key's check takes) conflicts with a row locked for update, not with an update.
    const holder = await other.pool.connect();
    try {
      await holder.query('begin');
      await holder.query('select 1 from credit_balances where account_id = $1 for key share', [app.accountId]);
      expect(await settleAiCall(other.db, ledger, call, cheaper, ended(1_200))).toEqual({ shortfallNanos: 0 });
      const capped = settleAiCall(other.db, ledger, call, dearer, ended(7_000));
      await waitFor(async () => {
        const waiting = await p.sql(`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query like '%execute%'`);
        return waiting.length > 0 || undefined;
      }, 10_000, 'the dearer correction waits for the row');
      await holder.query('rollback');
      expect(await capped).toEqual({ shortfallNanos: 0 });
    } finally {
      holder.release();
    }
    expect(await money(app.accountId)).toEqual({
      balance: String(GRANT - 8_200),
      ledger: String(GRANT - 8_200),
      charges: [{ amount: '-1200', cost: '1200', settling: false, status: 'ok' }, { amount: '-7000', cost: '7000', settling: false, status: 'ok' }],
    });
  });

  it('a correction run twice at once, by two processes, charges once', async () => {
    const app = await paidByFreshAccount('twice at once');
    const third = openControlDb(databaseUrl(p.controlDb), 2);
    try {
      // Two ledgers on two pools: two queues, so the two corrections are two transactions in flight together.
      const [mine, theirs] = [new CreditLedger(other.db, other.pool), new CreditLedger(third.db, third.pool)];
      const call = callOf(app, 5_000);
      const advance = await startAiCall(other.db, mine, call);
      await Promise.all([settleAiCall(other.db, mine, call, advance, ended(1_200)), settleAiCall(third.db, theirs, call, advance, ended(1_200))]);
      expect(await money(app.accountId)).toEqual({ balance: String(GRANT - 1_200), ledger: String(GRANT - 1_200), charges: [{ amount: '-1200', cost: '1200', settling: false, status: 'ok' }] });
    } finally {
      await third.close();
    }
  });

  it('a failed call gives its charge back; an advance lost with a database crash is written afresh by its settlement', async () => {
    const app = await paidByFreshAccount('lost');
    const ledger = new CreditLedger(other.db, other.pool);
    const call = callOf(app, 5_000);
    const failed = await startAiCall(other.db, ledger, call);
    await settleAiCall(other.db, ledger, call, failed, { ...ended(0), tokens: { prompt: 0, completion: 0 }, status: 'error', httpStatus: 502 });
    expect(await money(app.accountId)).toEqual({ balance: String(GRANT), ledger: String(GRANT), charges: [] });
    expect(await p.sql(`select status, cost_nanos::int as cost from ai_usage where id = $1`, [failed.usageId])).toEqual([{ status: 'error', cost: 0 }]);

    const lost = await startAiCall(other.db, ledger, call);
    // What a crash that lost the uncommitted-to-disk advance leaves: neither the row nor the charge, the balance whole.
    await p.sql(`delete from credit_ledger where id = $1`, [lost.chargeId]);
    await p.sql(`delete from ai_usage where id = $1`, [lost.usageId]);
    await p.sql(`update credit_balances set balance_nanos = balance_nanos + 5000 where account_id = $1`, [app.accountId]);
    await settleAiCall(other.db, ledger, call, lost, ended(1_300));
    expect(await money(app.accountId)).toEqual({ balance: String(GRANT - 1_300), ledger: String(GRANT - 1_300), charges: [{ amount: '-1300', cost: '1300', settling: false, status: 'ok' }] });
  });

  it('calls arriving together are charged in one set, each on the balance the calls before it left: the ones that fit, in order, and no more', async () => {
    const app = await paidByFreshAccount('crowd');
    const ledger = new CreditLedger(other.db, other.pool);
    await ledger.plan(app.accountId);
    // 25 worst cases of $0.006 against $0.10: the first 16 fit, the others are refused; a $0.004 call after them still fits.
    const starts = await Promise.allSettled([...Array.from({ length: 25 }, () => startAiCall(other.db, ledger, callOf(app, 6_000_000))), startAiCall(other.db, ledger, callOf(app, 4_000_000))]);
    expect(starts.map((s) => s.status)).toEqual([...Array(16).fill('fulfilled'), ...Array(9).fill('rejected'), 'fulfilled']);
    expect(starts.filter((s) => s.status === 'rejected').map((s) => (s as PromiseRejectedResult).reason.code)).toEqual(Array(9).fill('INSUFFICIENT_CREDITS'));
    const advances = starts.filter((s) => s.status === 'fulfilled').map((s) => s.value);
    expect(new Set(advances.map((a) => a.usageId)).size).toBe(17);
    expect((await money(app.accountId)).balance).toBe(String(GRANT - 16 * 6_000_000 - 4_000_000));
    // Their corrections, together too (one of them twice): each charge replaced by its cost, the rest given back.
    const costs = advances.map((_, i) => 1_000 * (i + 1));
    const settled = await Promise.all([
      ...advances.map((a, i) => settleAiCall(other.db, ledger, callOf(app, 6_000_000), a, ended(costs[i]!))),
      settleAiCall(other.db, ledger, callOf(app, 6_000_000), advances[3]!, ended(costs[3]!)),
    ]);
    expect(settled).toEqual(Array(18).fill({ shortfallNanos: 0 }));
    const spent = costs.reduce((a, b) => a + b, 0);
    const after = await money(app.accountId);
    expect(after).toMatchObject({ balance: String(GRANT - spent), ledger: String(GRANT - spent) });
    expect(after.charges.map((c) => [c.amount, c.cost, c.settling])).toEqual(costs.map((c) => [String(-c), String(c), false]));
  });

  it('the advances and corrections keep looking rows up by key in plans made while the tables were small', async () => {
    const app = await paidByFreshAccount('plans');
    // One connection: the statements are prepared and first planned on it here, on this test's few rows.
    const one = openControlDb(databaseUrl(p.controlDb), 1);
    try {
      const ledger = new CreditLedger(one.db, one.pool);
      const call = callOf(app, 5_000);
      await settleAiCall(one.db, ledger, call, await startAiCall(one.db, ledger, call), ended(1_200));
      const client = await one.pool.connect();
      try {
        await client.query('begin');
        await client.query(GROUP_SETTINGS);
        const prepared = await client.query<{ name: string; params: number }>(
          `select name, cardinality(parameter_types) as params from pg_prepared_statements where statement like '%jsonb_to_recordset%'`,
        );
        expect(prepared.rows).toHaveLength(2);
        for (const { name, params } of prepared.rows) {
          // The plan the connection keeps for the statement (generic, as the queue runs it); no values are needed to show it.
          const nulls = Array.from({ length: params }, () => 'null').join(', ');
          const [explained] = (await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`explain (format json) execute ${name}(${nulls})`)).rows;
          expect(tablesScannedWhole(explained!['QUERY PLAN'][0].Plan)).toEqual([]);
        }
        await client.query('rollback');
      } finally {
        client.release();
      }
    } finally {
      await one.close();
    }
  });

  it('refused (402) when the worst case does not fit, and nothing is written', async () => {
    const app = await paidByFreshAccount('poor');
    const ledger = new CreditLedger(other.db, other.pool);
    await expect(startAiCall(other.db, ledger, callOf(app, GRANT + 1))).rejects.toMatchObject({ status: 402, code: 'INSUFFICIENT_CREDITS' });
    expect(await money(app.accountId)).toEqual({ balance: String(GRANT), ledger: String(GRANT), charges: [] });
    expect(await p.sql(`select id from ai_usage where app_id = $1`, [app.appId])).toEqual([]);
  });
});
