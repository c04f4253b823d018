// AI gateway end to end: the server as `npm start` runs it, the official openai SDK pointed at an app
// (baseURL {base_url}/v1/{app_id}), and a fake OpenAI-compatible upstream on loopback playing the provider.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-upstream.ts';
import pg from 'pg';
import { databaseUrl } from '../helpers/db.ts';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { callTool, connectMcp, request, resultJson } from './e2e-helpers.ts';

const PLATFORM_UPSTREAM_KEY = 'sk-platform-upstream-key-0001';
let fake: FakeOpenAI;
let server: SpawnedServer;
let appId: string;
let serviceKey: string;

function sdk(apiKey: string, id = appId): OpenAI {
  return new OpenAI({ apiKey, baseURL: `${server.url}/v1/${id}`, maxRetries: 0 });
}

async function newApp(name: string): Promise<{ appId: string; serviceKey: string }> {
  const created = await request(server.url, '/init', { method: 'POST', key: server.platformKey, body: { name } });
  expect(created.status).toBe(201);
  return { appId: created.json.app_id, serviceKey: created.json.service_key.key };
}

async function endUserToken(id: string, email: string): Promise<{ token: string; userId: string }> {
  const res = await request(server.url, `/v1/${id}/auth/signup`, { method: 'POST', body: { email, password: 'correct horse battery staple' } });
  expect(res.status).toBe(201);
  return { token: res.json.access_token, userId: res.json.user.id };
}

async function setConfig(id: string, key: string, body: Record<string, unknown>) {
  const res = await request(server.url, `/v1/${id}/ai/config`, { method: 'PUT', key, body });
  expect(res.status).toBe(200);
  return res.json;
}

/** A statement on the server's control database (plans, balances), as an operator would run it. */
async function controlQuery(text: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: databaseUrl(server.controlDb) });
  await client.connect();
  try {
    return await client.query(text, params);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  fake = await startFakeOpenAI({ costPerToken: 0.000001 });
  server = await spawnServer({ SVC_AI_BASE_URL: fake.url, SVC_AI_API_KEY: PLATFORM_UPSTREAM_KEY });
  ({ appId, serviceKey } = await newApp('AI E2E'));
  // Enough credit for the tests that do not test exhaustion.
  await controlQuery(`update accounts set plan = 'enterprise'`);
});

afterAll(async () => {
  await server?.close();
  await fake?.close();
});

beforeEach(() => fake.reset());

describe('chat completions with the openai SDK', () => {
  it('answers in OpenAI format with a service key, passing unknown fields through and the platform key upstream', async () => {
    const out = await sdk(serviceKey).chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hello there' },
      ],
      temperature: 0.2,
      top_p: 0.9,
      response_format: { type: 'text' },
    });
    expect(out.object).toBe('chat.completion');
    expect(out.choices[0]!.message).toEqual({ role: 'assistant', content: 'echo: hello there', refusal: null });
    expect(out.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 });
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.authorization).toBe(`Bearer ${PLATFORM_UPSTREAM_KEY}`);
    expect(fake.requests[0]!.body).toMatchObject({ model: 'openai/gpt-4o-mini', temperature: 0.2, top_p: 0.9, response_format: { type: 'text' } });
  });

  it('streams chunks as they arrive and ends with [DONE]', async () => {
    const started = Date.now();
    const stream = await sdk(serviceKey).chat.completions.create({
      model: 'fake/slow',
      messages: [{ role: 'user', content: 'one two three four' }],
      stream: true,
    });
    const arrivals: number[] = [];
    let text = '';
    for await (const chunk of stream) {
      arrivals.push(Date.now() - started);
      text += chunk.choices[0]?.delta?.content ?? '';
      expect(chunk.usage ?? null).toBeNull();
    }
    expect(text).toBe('echo: one two three four');
    // fake/slow waits 200 ms between chunks: the first arrived long before the last.
    expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThan(600);
    expect(fake.requests[0]!.body.stream_options).toEqual({ include_usage: true });
  });

  it('relays upstream errors in OpenAI shape with the upstream status', async () => {
    const err = await sdk(serviceKey).chat.completions.create({ model: 'fake/error-429', messages: [{ role: 'user', content: 'x' }] }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.status).toBe(429);
    expect(err.error).toEqual({ message: 'Rate limit reached', type: 'rate_limit_error', code: 'rate_limit_exceeded', param: null });
    const five = await sdk(serviceKey).chat.completions.create({ model: 'fake/error-500', messages: [{ role: 'user', content: 'x' }] }).catch((e) => e);
    expect(five.status).toBe(502);
    expect(five.error).toMatchObject({ type: 'api_error', code: 'upstream_error' });
    expect(five.error.message).toContain('Retry with backoff');
  });

  it('refuses without a credential (401) and a malformed body (400 naming the field), OpenAI-shaped', async () => {
    const none = await request(server.url, `/v1/${appId}/chat/completions`, { method: 'POST', body: { messages: [{ role: 'user', content: 'x' }] } });
    expect(none.status).toBe(401);
    expect(none.json.error).toMatchObject({ type: 'authentication_error', code: 'missing_credentials' });
    const bad = await request(server.url, `/v1/${appId}/chat/completions`, { method: 'POST', key: serviceKey, body: { model: 'openai/x', messages: [] } });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request', param: 'messages' });
    const json = await request(server.url, `/v1/${appId}/chat/completions`, { method: 'POST', key: serviceKey, body: '{nope' });
    expect(json.status).toBe(400);
    expect(json.json.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request' });
    expect(fake.requests).toHaveLength(0);
  });
});

describe('embeddings', () => {
  it('float and base64, single and batch', async () => {
    const client = sdk(serviceKey);
    const one = await client.embeddings.create({ model: 'openai/text-embedding-3-small', input: 'hello', encoding_format: 'float' });
    expect(one.data[0]!.embedding).toHaveLength(1536);
    const raw = await request(server.url, `/v1/${appId}/embeddings`, {
      method: 'POST',
      key: serviceKey,
      body: { model: 'openai/text-embedding-3-small', input: ['a', 'b c'], encoding_format: 'base64' },
    });
    expect(raw.status).toBe(200);
    expect(raw.json.data).toHaveLength(2);
    expect(typeof raw.json.data[0].embedding).toBe('string');
    expect(Buffer.from(raw.json.data[1].embedding, 'base64').length).toBe(1536 * 4);
    expect(raw.json.usage.prompt_tokens).toBe(3);
  });
});

describe('configuration, BYOK and caps', () => {
  it('byokKey replaces the platform key, is never returned, and null removes it', async () => {
    const app = await newApp('AI BYOK');
    const view = await setConfig(app.appId, app.serviceKey, { byokKey: 'sk-own-key-of-the-customer-1234', defaultModel: 'openai/gpt-4o' });
    expect(view).toMatchObject({ byokKeySet: true, byokKeyHint: 'sk-ow…1234', defaultModel: 'openai/gpt-4o' });
    expect(JSON.stringify(view)).not.toContain('customer');
    await sdk(app.serviceKey, app.appId).chat.completions.create({ messages: [{ role: 'user', content: 'hi' }] } as never);
    expect(fake.requests[0]!.authorization).toBe('Bearer sk-own-key-of-the-customer-1234');
    expect(fake.requests[0]!.body.model).toBe('openai/gpt-4o');
    const cleared = await setConfig(app.appId, app.serviceKey, { byokKey: null });
    expect(cleared).toMatchObject({ byokKeySet: false, byokKeyHint: null, defaultModel: 'openai/gpt-4o' });
  });

  it('allowedModels refuses other models (403) and maxTokensPerRequest caps max_tokens (400 over it, sent when absent)', async () => {
    const app = await newApp('AI caps');
    await setConfig(app.appId, app.serviceKey, { allowedModels: ['openai/gpt-4o-mini'], maxTokensPerRequest: 50 });
    const client = sdk(app.serviceKey, app.appId);
    const denied = await client.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'x' }] }).catch((e) => e);
    expect(denied.status).toBe(403);
    expect(denied.error).toMatchObject({ type: 'permission_error', code: 'model_not_allowed' });
    const over = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', max_tokens: 51, messages: [{ role: 'user', content: 'x' }] }).catch((e) => e);
    expect(over.status).toBe(400);
    expect(over.error).toMatchObject({ code: 'invalid_request', param: 'max_tokens' });
    expect(fake.requests).toHaveLength(0);
    await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] });
    expect(fake.requests[0]!.body.max_tokens).toBe(50);
  });
});

describe('usage', () => {
  it('adds up the calls by model', async () => {
    const app = await newApp('AI usage');
    const client = sdk(app.serviceKey, app.appId);
    await client.chat.completions.create({ model: 'openai/a', messages: [{ role: 'user', content: 'one two' }] });
    await client.chat.completions.create({ model: 'openai/a', messages: [{ role: 'user', content: 'three' }] });
    await client.embeddings.create({ model: 'openai/text-embedding-3-small', input: 'four five', encoding_format: 'float' });
    const res = await request(server.url, `/v1/${app.appId}/ai/usage`, { key: app.serviceKey });
    expect(res.status).toBe(200);
    // chat 1: prompt 2+3, completion 3; chat 2: prompt 1+3, completion 2; embedding: 2.
    expect(res.json.byModel).toEqual({
      'openai/a': { tokens: 8 + 6, cost: 14e-6, requests: 2 },
      'openai/text-embedding-3-small': { tokens: 2, cost: 2e-6, requests: 1 },
    });
    expect(res.json.totalTokens).toBe(16);
  });
});

describe('end users', () => {
  it('an end user JWT calls chat and embeddings directly; usage shows them in byUser; the daily budget answers 429', async () => {
    const app = await newApp('AI end users');
    const alice = await endUserToken(app.appId, 'alice@example.com');
    const bob = await endUserToken(app.appId, 'bob@example.com');
    await setConfig(app.appId, app.serviceKey, { endUserDailyTokenLimit: 20 });
    const asAlice = sdk(alice.token, app.appId);
    const first = await asAlice.chat.completions.create({ model: 'openai/m', messages: [{ role: 'user', content: 'one two three four five six' }] });
    expect(first.usage!.total_tokens).toBe(9 + 7);
    // A call holds its estimate against the budget until its record replaces it with the real count (just after the
    // answer): a usage report waits for that.
    await request(server.url, `/v1/${app.appId}/ai/usage`, { key: app.serviceKey });
    await asAlice.chat.completions.create({ model: 'openai/m', messages: [{ role: 'user', content: 'x' }] });
    // Usage is written as the answer goes out; a usage report waits for it (a call right after could still pass).
    await request(server.url, `/v1/${app.appId}/ai/usage`, { key: app.serviceKey });
    // 16 + 6 = 22 tokens: over the budget of 20, so the next call is refused before the upstream.
    fake.reset();
    const refused = await asAlice.chat.completions.create({ model: 'openai/m', messages: [{ role: 'user', content: 'x' }] }).catch((e) => e);
    expect(refused.status).toBe(429);
    expect(refused.error).toMatchObject({ type: 'rate_limit_error', code: 'end_user_budget_exceeded' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(fake.requests).toHaveLength(0);
    // Bob has his own budget; the service key has none.
    await sdk(bob.token, app.appId).embeddings.create({ model: 'openai/text-embedding-3-small', input: 'hi', encoding_format: 'float' });
    await sdk(app.serviceKey, app.appId).chat.completions.create({ model: 'openai/m', messages: [{ role: 'user', content: 'x' }] });
    const usage = await request(server.url, `/v1/${app.appId}/ai/usage`, { key: app.serviceKey });
    expect(usage.json.byUser).toEqual({
      [alice.userId]: { tokens: 22, cost: 22e-6, requests: 2 },
      [bob.userId]: { tokens: 1, cost: 1e-6, requests: 1 },
    });
    expect(usage.json.totalTokens).toBe(22 + 1 + 6);
  });

  it("an end user cannot read or change the app's AI config, and a JWT of another app is refused", async () => {
    const app = await newApp('AI end user limits');
    const carol = await endUserToken(app.appId, 'carol@example.com');
    const get = await request(server.url, `/v1/${app.appId}/ai/config`, { key: carol.token });
    expect(get.status).toBe(403);
    expect(get.json.error).toMatchObject({ code: 'FORBIDDEN', remediation: 'Call it with one of the accepted credentials.' });
    const other = await sdk(carol.token, appId).chat.completions.create({ model: 'openai/m', messages: [{ role: 'user', content: 'x' }] }).catch((e) => e);
    expect(other.status).toBe(403);
  });
});

describe('credits', () => {
  it('a free account spends its $0.10; exhausted credits answer 402 before any upstream call; own-key calls still work', async () => {
    const account = (await controlQuery(`insert into accounts (name) values ('poor') returning id`)).rows[0].id;
    const key = `svc_pk_${'p'.repeat(20)}${Date.now()}`;
    await controlQuery(`insert into platform_keys (account_id, key_hash, hint, name) values ($1, encode(sha256($2::bytea), 'hex'), 'x', 'k')`, [account, key]);
    const created = await request(server.url, '/init', { method: 'POST', key, body: { name: 'poor app' } });
    expect(created.status).toBe(201);
    const poor = { appId: created.json.app_id, serviceKey: created.json.service_key.key };
    const client = sdk(poor.serviceKey, poor.appId);
    // The upstream reports $0.001 a token for this call: 204 tokens, $0.204, while the table estimated about $0.0104 and
    // the account has $0.10. It is charged what the account has; the rest is the platform's write-off.
    fake.costPerToken = 0.001;
    try {
      const words = Array.from({ length: 100 }, () => 'w').join(' ');
      await client.chat.completions.create({ model: 'openai/m', messages: [{ role: 'user', content: words }] });
    } finally {
      fake.costPerToken = 0.000001;
    }
    await request(server.url, `/v1/${poor.appId}/ai/usage`, { key: poor.serviceKey });
    fake.reset();
    const refused = await client.chat.completions.create({ model: 'openai/m', messages: [{ role: 'user', content: 'x' }] }).catch((e) => e);
    expect(refused.status).toBe(402);
    expect(refused.error).toMatchObject({ type: 'billing_error', code: 'insufficient_credits' });
    expect(fake.requests).toHaveLength(0);
    const ledger = await controlQuery(`select kind, amount_nanos::text as amount, shortfall_nanos::text as shortfall from credit_ledger where account_id = $1 order by id`, [account]);
    expect(ledger.rows).toEqual([
      { kind: 'grant', amount: '100000000', shortfall: '0' },
      { kind: 'charge', amount: '-100000000', shortfall: String(204_000_000 - 100_000_000) },
    ]);
    await setConfig(poor.appId, poor.serviceKey, { byokKey: 'sk-own-key-0000000000000000' });
    const own = await client.chat.completions.create({ model: 'openai/m', messages: [{ role: 'user', content: 'x' }] });
    expect(own.choices[0]!.message.content).toBe('echo: x');
    await request(server.url, `/v1/${poor.appId}/ai/usage`, { key: poor.serviceKey });
    const after = await controlQuery(`select count(*)::int as n from credit_ledger where account_id = $1`, [account]);
    expect(after.rows[0].n).toBe(2);
  });

  /** A free account ($0.10 of credit) with an app: its service key and app id. */
  async function freeApp(name: string): Promise<{ account: string; appId: string; serviceKey: string }> {
    const account = (await controlQuery(`insert into accounts (name) values ($1) returning id`, [name])).rows[0].id;
    const key = `svc_pk_${'r'.repeat(20)}${Date.now()}${Math.random().toString(36).slice(2)}`;
    await controlQuery(`insert into platform_keys (account_id, key_hash, hint, name) values ($1, encode(sha256($2::bytea), 'hex'), 'x', 'k')`, [account, key]);
    const created = await request(server.url, '/init', { method: 'POST', key, body: { name: `${name} app` } });
    expect(created.status).toBe(201);
    return { account, appId: created.json.app_id, serviceKey: created.json.service_key.key };
  }

  async function ledgerOf(account: string): Promise<{ balance: string; reserved: string; charged: string; shortfall: string }> {
    const { rows } = await controlQuery(
      `select b.balance_nanos::text as balance, b.reserved_nanos::text as reserved,
              (select coalesce(sum(-amount_nanos), 0)::text from credit_ledger where account_id = $1 and kind = 'charge') as charged,
              (select coalesce(sum(shortfall_nanos), 0)::text from credit_ledger where account_id = $1) as shortfall
       from credit_balances b where b.account_id = $1`,
      [account],
    );
    return rows[0];
  }

  it('concurrent calls never take the balance below zero: each holds its worst case, which must fit', async () => {
    const racer = await freeApp('racer');
    const client = sdk(racer.serviceKey, racer.appId);
    // Each call costs 2,003 tokens = $0.002003 and holds about $0.00257 (the table's price for the prompt's size and
    // max_tokens). 80 at once; then one at a time until the next hold no longer fits.
    const words = Array.from({ length: 1_997 }, () => 'w').join(' ');
    const results = await Promise.allSettled(
      Array.from({ length: 80 }, () => client.chat.completions.create({ model: 'openai/m', max_tokens: 3, messages: [{ role: 'user', content: words }] })),
    );
    let ok = results.filter((r) => r.status === 'fulfilled').length;
    const refused = results.filter((r) => r.status === 'rejected' && (r.reason as { status?: number }).status === 402).length;
    expect(ok + refused).toBe(80);
    for (;;) {
      // The previous call's charge is written as its answer goes out: wait for it, as a usage report does.
      await request(server.url, `/v1/${racer.appId}/ai/usage`, { key: racer.serviceKey });
      const one = await client.chat.completions.create({ model: 'openai/m', max_tokens: 3, messages: [{ role: 'user', content: words }] }).catch((e) => e);
      if (one instanceof OpenAI.APIError) {
        expect(one.status).toBe(402);
        break;
      }
      ok++;
    }
    await request(server.url, `/v1/${racer.appId}/ai/usage`, { key: racer.serviceKey });
    // 49 calls fit; what is left ($0.001853) is less than the next call's hold.
    expect(ok).toBe(49);
    expect(await ledgerOf(racer.account)).toEqual({ balance: String(100_000_000 - 49 * 2_003_000), reserved: '0', charged: String(49 * 2_003_000), shortfall: '0' });
  });

  it('50 parallel calls against an upstream reporting far more than the price table: the balance ends at exactly zero, never below', async () => {
    const racer = await freeApp('underpriced');
    const alice = await endUserToken(racer.appId, 'alice@under.example');
    // The upstream reports $0.001 a token ($0.008 a call: 5 prompt and 3 completion tokens) while the table's estimate
    // is about $0.0002: every hold fits, every call is answered, and the charges stop at what the account had. End
    // users take the same path. The upstream answers once all 50 have reached it, so every hold is taken before the
    // first charge (on a slow machine, early answers would otherwise empty the account before the last calls hold).
    fake.costPerToken = 0.001;
    fake.answerTogether(50);
    try {
      const results = await Promise.allSettled(
        Array.from({ length: 50 }, (_, i) =>
          sdk(i % 2 ? alice.token : racer.serviceKey, racer.appId).chat.completions.create({ model: 'openai/m', max_tokens: 10, messages: [{ role: 'user', content: `call ${i}` }] }),
        ),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(50);
    } finally {
      fake.costPerToken = 0.000001;
    }
    await request(server.url, `/v1/${racer.appId}/ai/usage`, { key: racer.serviceKey });
    const cost = (await controlQuery(`select sum(cost_nanos)::text as c from ai_usage where account_id = $1`, [racer.account])).rows[0].c;
    expect(cost).toBe('400000000');
    expect(await ledgerOf(racer.account)).toEqual({ balance: '0', reserved: '0', charged: '100000000', shortfall: String(Number(cost) - 100_000_000) });
    // Nothing left: the next call is refused before the upstream is asked.
    fake.reset();
    const next = await sdk(racer.serviceKey, racer.appId).chat.completions.create({ model: 'openai/m', messages: [{ role: 'user', content: 'x' }] }).catch((e) => e);
    expect(next.status).toBe(402);
    expect(fake.requests).toHaveLength(0);
  });
});

describe('streams and disconnects', () => {
  it('a client that disconnects aborts the upstream request, and the call is recorded as aborted', async () => {
    const app = await newApp('AI abort');
    const aborter = new AbortController();
    const stream = await sdk(app.serviceKey, app.appId).chat.completions.create(
      { model: 'fake/slow', messages: [{ role: 'user', content: 'a b c d e f g h i j' }], stream: true },
      { signal: aborter.signal },
    );
    let chunks = 0;
    for await (const _ of stream) {
      if (++chunks === 2) aborter.abort();
    }
    expect(await fake.requests[0]!.outcome).toBe('aborted');
    await expect.poll(async () => (await controlQuery(`select status from ai_usage where app_id = $1`, [app.appId])).rows).toEqual([{ status: 'aborted' }]);
  });

  it('a stream the upstream drops ends with an error event the openai SDK raises', async () => {
    const stream = await sdk(serviceKey).chat.completions.create({ model: 'fake/drop-mid-stream', messages: [{ role: 'user', content: 'a b c' }], stream: true });
    const err = await (async () => {
      for await (const _ of stream);
    })().catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(String(err.message)).toContain('Retry with backoff');
  });

  it('stream_options.include_usage asked by the client gets the usage chunk', async () => {
    const stream = await sdk(serviceKey).chat.completions.create({
      model: 'openai/m',
      messages: [{ role: 'user', content: 'a b' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const usages = [];
    for await (const chunk of stream) if (chunk.usage) usages.push(chunk.usage);
    expect(usages).toEqual([expect.objectContaining({ prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 })]);
  });
});

describe('MCP tools', () => {
  it('ai_config_set, ai_chat, ai_embed and ai_usage work over MCP; stream is refused there', async () => {
    const app = await newApp('AI MCP');
    const mcp = await connectMcp(server.url, server.platformKey);
    try {
      const set = await callTool(mcp.client, 'ai_config_set', { app_id: app.appId, defaultModel: 'openai/gpt-4o-mini', byokKey: 'sk-mcp-own-key-00000000' });
      expect(set.isError).toBeFalsy();
      expect(resultJson(set)).toMatchObject({ defaultModel: 'openai/gpt-4o-mini', byokKeySet: true });
      const got = await callTool(mcp.client, 'ai_config_get', { app_id: app.appId });
      expect(JSON.stringify(got)).not.toContain('sk-mcp-own-key');
      const chat = await callTool(mcp.client, 'ai_chat', { app_id: app.appId, messages: [{ role: 'user', content: 'hi mcp' }] });
      expect(chat.isError).toBeFalsy();
      expect(resultJson(chat).choices[0].message.content).toBe('echo: hi mcp');
      const embed = await callTool(mcp.client, 'ai_embed', { app_id: app.appId, model: 'openai/text-embedding-3-small', input: ['a'] });
      expect(resultJson(embed).data[0].embedding).toHaveLength(1536);
      const stream = await callTool(mcp.client, 'ai_chat', { app_id: app.appId, stream: true, messages: [{ role: 'user', content: 'x' }] });
      expect(stream.isError).toBe(true);
      expect(resultJson(stream)).toMatchObject({ status: 400, error: { code: 'VALIDATION_FAILED' } });
      const usage = await callTool(mcp.client, 'ai_usage', { app_id: app.appId });
      expect(resultJson(usage)).toMatchObject({ totalTokens: 5 + 3 + 1, creditsUsed: 0 });
    } finally {
      await mcp.close();
    }
  });
});
