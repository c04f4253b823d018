// What the gateway makes of a failing upstream: every failure answered in OpenAI's shape with the right status,
// recorded as one usage row, its charge in advance given back, and the meters of the calls that worked written.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-upstream.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { METER_AI_USAGE_SQL } from '../../src/ai/usage.ts';

let fake: FakeOpenAI;
let p: TestPlatform;
let appId: string;
let serviceKey: string;
let accountId: string;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  p = await startTestPlatform({ SVC_ROLE: 'api', SVC_AI_BASE_URL: fake.url, SVC_AI_API_KEY: 'sk-platform-0000', SVC_AI_TIMEOUT_MS: '400' });
  const created = await p.api('POST', '/init', { body: { name: 'ai faults' } });
  appId = created.body.app_id;
  serviceKey = created.body.service_key.key;
  accountId = (await p.sql(`select account_id from apps where id = $1`, [appId]))[0].account_id;
});
afterAll(async () => {
  await p?.close();
  await fake?.close();
});
beforeEach(() => p.sql(`delete from ai_usage`));

const chat = (model: string) =>
  p.api('POST', `/v1/${appId}/chat/completions`, { body: { model, messages: [{ role: 'user', content: 'x' }] }, key: serviceKey });

async function usageRows(): Promise<unknown[]> {
  await p.services.ai.settled();
  return p.sql(`select model, status, http_status, total_tokens, cost_nanos::int as cost from ai_usage order by id`);
}

/** What the calls still hold: credit reserved, usage rows at their worst case, and charges of calls that failed. */
async function outstanding(): Promise<{ reserved: string; settling: number; failedCharges: number }> {
  await p.services.ai.settled();
  const [row] = await p.sql(
    `select b.reserved_nanos::text as reserved,
       (select count(*)::int from ai_usage where account_id = $1 and settle_by is not null) as settling,
       (select count(*)::int from credit_ledger l join ai_usage u on l.usage_ref = 'ai_usage:' || u.id where u.account_id = $1 and u.status <> 'ok') as "failedCharges"
     from credit_balances b where b.account_id = $1`,
    [accountId],
  );
  return row;
}

const NOTHING_OUTSTANDING = { reserved: '0', settling: 0, failedCharges: 0 };

describe('upstream failures', () => {
  it.each([
    ['fake/hang', 502, 'api_error', 'upstream_error', 'did not answer in time', 502],
    ['fake/drop', 502, 'api_error', 'upstream_error', 'could not be reached', 502],
    ['fake/error-500', 502, 'api_error', 'upstream_error', 'answered 500', 500],
    ['fake/drop-mid-stream', 502, 'api_error', 'upstream_error', 'Retry with backoff', 502],
  ])('%s answers %i %s/%s, is recorded as an error and gives back its charge', async (model, status, type, code, words, recorded) => {
    const res = await chat(model);
    expect(res.status).toBe(status);
    expect(res.body.error).toMatchObject({ type, code });
    expect(res.body.error.message).toContain(words);
    expect(await usageRows()).toEqual([{ model, status: 'error', http_status: recorded, total_tokens: 0, cost: 0 }]);
    expect(await outstanding()).toEqual(NOTHING_OUTSTANDING);
  });

  it("an upstream 400 is relayed with the upstream's status, message, type and param", async () => {
    const res = await chat('fake/error-400');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { message: 'Invalid parameter: messages', type: 'invalid_request_error', code: null, param: 'messages' } });
    expect(await usageRows()).toEqual([{ model: 'fake/error-400', status: 'error', http_status: 400, total_tokens: 0, cost: 0 }]);
  });

  it('a call that works writes its usage row and charge; the meter job adds it to ai_tokens and ai_credits once', async () => {
    const res = await chat('openai/m');
    expect(res.status).toBe(200);
    // The usage row is written while the answer goes out; the meters by the ai_usage_meter job (run here by hand).
    await p.services.ai.settled();
    expect(await p.sql(METER_AI_USAGE_SQL(1000))).toEqual([{ taken: 1 }]);
    expect(await p.sql(METER_AI_USAGE_SQL(1000))).toEqual([{ taken: 0 }]);
    // 4 prompt + 2 completion tokens at the default price (2.5 and 10 USD per million): 10,000 + 20,000 nano-dollars.
    expect(await usageRows()).toEqual([{ model: 'openai/m', status: 'ok', http_status: 200, total_tokens: 6, cost: 30_000 }]);
    const meters = await p.sql(`select meter, quantity::int from usage_daily where app_id = $1 and meter like 'ai_%' order by meter`, [appId]);
    expect(meters).toEqual([
      { meter: 'ai_credits', quantity: 30_000 },
      { meter: 'ai_tokens', quantity: 6 },
    ]);
    const charges = await p.sql(`select amount_nanos::int from credit_ledger where account_id = $1 and kind = 'charge'`, [accountId]);
    expect(charges).toEqual([{ amount_nanos: -30_000 }]);
    expect(await outstanding()).toEqual(NOTHING_OUTSTANDING);
  });

  it("a key the provider refuses is not the caller's credential: 502 upstream_error for the platform's key, byok_key_rejected for the app's own", async () => {
    const platformKey = await chat('fake/error-401');
    expect(platformKey.status).toBe(502);
    expect(platformKey.body.error).toMatchObject({ type: 'api_error', code: 'upstream_error' });
    expect(platformKey.headers.get('www-authenticate')).toBeNull();
    await p.services.aiSettings.update(appId, { byokKey: 'sk-own-refused-000000' });
    try {
      const own = await chat('fake/error-401');
      expect(own.status).toBe(502);
      expect(own.body.error).toMatchObject({ code: 'byok_key_rejected' });
      expect(own.body.error.message).toContain("refused this app's own key");
    } finally {
      await p.services.aiSettings.update(appId, { byokKey: null });
    }
  });

  it("a provider's error that quotes the key (whole or masked) reaches the caller without it: the platform's key and an app's own", async () => {
    const keys = ['sk-platform-0000', 'sk-own-echoed-key-1234567890'];
    for (const key of keys) {
      if (key !== keys[0]) await p.services.aiSettings.update(appId, { byokKey: key });
      try {
        for (const model of ['fake/echo-key-400', 'fake/echo-key-401']) {
          const res = await chat(model);
          expect(res.status).toBe(model.endsWith('400') ? 400 : 502);
          const text = JSON.stringify(res.body);
          // The platform's refused key is not described at all; the provider's words are relayed otherwise.
          if (model.endsWith('400') || key !== keys[0]) expect(text).toContain('[redacted]');
          expect(text).not.toContain(key);
          expect(text).not.toContain(key.slice(0, 8));
          expect(text).not.toContain(key.slice(-4));
        }
      } finally {
        await p.services.aiSettings.update(appId, { byokKey: null });
      }
    }
    const relayed = await chat('fake/echo-key-400');
    expect(relayed.body.error).toEqual({ message: 'Incorrect API key provided: [redacted] You sent "[redacted]".', type: 'invalid_request_error', code: 'invalid_api_key', param: '[redacted]' });
  });
});

const WORDS = 'one two three four five six seven eight nine ten';

describe('token caps and worst cases', () => {
  it('a huge max_tokens holds its worst case (bounded by 1,000,000 output tokens): refused on $0.10, served with $10 and charged only its cost after', async () => {
    const call = () =>
      p.api('POST', `/v1/${appId}/chat/completions`, { body: { model: 'openai/m', max_tokens: 1e15, n: 128, messages: [{ role: 'user', content: 'x' }] }, key: serviceKey });
    // 1,000,000 output tokens at $10 per million: a $10 hold, which $0.10 of credit cannot cover.
    const refused = await call();
    expect(refused.status).toBe(402);
    expect(refused.body.error).toMatchObject({ type: 'billing_error', code: 'insufficient_credits' });
    await p.sql(`update credit_balances set balance_nanos = balance_nanos + 10100000000 where account_id = $1`, [accountId]);
    try {
      const res = await call();
      expect(res.status).toBe(200);
      expect(await outstanding()).toEqual(NOTHING_OUTSTANDING);
    } finally {
      await p.sql(`update credit_balances set balance_nanos = balance_nanos - 10100000000 where account_id = $1`, [accountId]);
    }
  });

  it('the cap applies to max_tokens and max_completion_tokens alike', async () => {
    await p.services.aiSettings.update(appId, { maxTokensPerRequest: 100 });
    try {
      const res = await p.api('POST', `/v1/${appId}/chat/completions`, {
        body: { model: 'openai/m', max_completion_tokens: 1, max_tokens: 101, messages: [{ role: 'user', content: 'x' }] },
        key: serviceKey,
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_request', param: 'max_tokens' });
    } finally {
      await p.services.aiSettings.update(appId, { maxTokensPerRequest: null });
    }
  });

  it("parallel calls of one end user cannot all pass their daily budget: each holds its estimate as it starts", async () => {
    await p.services.aiSettings.update(appId, { endUserDailyTokenLimit: 10 });
    try {
      const app = (await p.services.apps.get(appId))!;
      const who = { app, endUserId: '00000000-0000-4000-8000-00000000000a' };
      const outcomes = await Promise.allSettled(
        Array.from({ length: 6 }, () =>
          p.services.ai.chat(who, { model: 'openai/m', messages: [{ role: 'user', content: WORDS }] }, { signal: undefined, canStream: false }),
        ),
      );
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      expect(outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason.code)).toEqual(Array(5).fill('END_USER_BUDGET_EXCEEDED'));
      await p.services.ai.settled();
      // The hold was replaced by the real count: 13 prompt + 11 completion tokens, over the budget of 10 on its own.
      expect(await p.sql(`select tokens::int from ai_user_daily where end_user_id = $1`, [who.endUserId])).toEqual([{ tokens: 24 }]);
    } finally {
      await p.services.aiSettings.update(appId, { endUserDailyTokenLimit: null });
    }
  });
});
