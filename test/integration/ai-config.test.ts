// The AI gateway's configuration and refusals on a platform with no upstream configured: every answer of the AI
// routes in OpenAI's error shape, the own key sealed at rest.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

let p: TestPlatform;
let appId: string;
let serviceKey: string;

beforeAll(async () => {
  p = await startTestPlatform({ SVC_ROLE: 'api' });
  const created = await p.api('POST', '/init', { body: { name: 'ai config' } });
  appId = created.body.app_id;
  serviceKey = created.body.service_key.key;
});
afterAll(() => p?.close());

const put = (body: unknown) => p.api('PUT', `/v1/${appId}/ai/config`, { body, key: serviceKey });

describe('AI routes without an upstream', () => {
  it('chat and embeddings answer 503 provider_unavailable in OpenAI shape', async () => {
    const chat = await p.api('POST', `/v1/${appId}/chat/completions`, { body: { model: 'openai/m', messages: [{ role: 'user', content: 'x' }] }, key: serviceKey });
    expect(chat.status).toBe(503);
    expect(chat.body).toEqual({
      error: {
        message: expect.stringContaining('SVC_AI_BASE_URL'),
        type: 'api_error',
        code: 'provider_unavailable',
        param: null,
      },
    });
    const embed = await p.api('POST', `/v1/${appId}/embeddings`, { body: { model: 'openai/text-embedding-3-small', input: 'x' }, key: serviceKey });
    expect(embed.status).toBe(503);
    expect(embed.body.error.code).toBe('provider_unavailable');
  });

  it('a body over 4 MB is 413 in OpenAI shape; up to 4 MB reaches the gateway', async () => {
    const big = await p.api('POST', `/v1/${appId}/chat/completions`, { body: { messages: [{ role: 'user', content: 'x'.repeat(3 * 1024 * 1024) }] }, key: serviceKey });
    expect(big.status).toBe(503);
    const res = await p.api('POST', `/v1/${appId}/chat/completions`, { body: { messages: [{ role: 'user', content: 'x'.repeat(5 * 1024 * 1024) }] }, key: serviceKey });
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'payload_too_large' });
  });
});

describe('AI configuration', () => {
  it('starts empty, keeps omitted fields on update, and seals the own key at rest', async () => {
    const empty = await p.api('GET', `/v1/${appId}/ai/config`, { key: serviceKey });
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({
      defaultModel: null,
      byokKeySet: false,
      byokKeyHint: null,
      maxTokensPerRequest: null,
      allowedModels: null,
      endUserDailyTokenLimit: null,
      updatedAt: null,
    });
    await put({ defaultModel: 'anthropic/claude-3.5-sonnet', byokKey: 'sk-or-v1-secret-value-9876' });
    const second = await put({ maxTokensPerRequest: 1000 });
    expect(second.body).toMatchObject({ defaultModel: 'anthropic/claude-3.5-sonnet', byokKeySet: true, byokKeyHint: 'sk-or…9876', maxTokensPerRequest: 1000 });
    const [row] = await p.sql(`select * from ai_configs where app_id = $1`, [appId]);
    expect(JSON.stringify(row)).not.toContain('secret-value');
    expect(row.byok_key_sealed).toMatch(/^v1\./);
  });

  it("records setting and removing the own key in the account's audit log, with its hint and never the key", async () => {
    const audited = async () => {
      const res = await p.api('GET', `/dashboard/audit?action=ai_config.update&resource_id=${appId}`);
      expect(res.status).toBe(200);
      return res;
    };
    const [{ id: keyId }] = await p.sql(`select id from service_keys where app_id = $1`, [appId]);
    expect((await put({ byokKey: 'sk-or-v1-audited-secret-4321', maxTokensPerRequest: 500 })).status).toBe(200);
    expect((await put({ byokKey: null })).status).toBe(200);
    const res = await audited();
    expect(res.body.entries.slice(0, 2)).toMatchObject([
      { actor_kind: 'key', actor_id: keyId, resource_type: 'app', resource_id: appId, details: { fields: ['byokKey'], byok_key: 'removed', byok_key_hint: null } },
      { actor_kind: 'key', actor_id: keyId, details: { fields: ['byokKey', 'maxTokensPerRequest'], byok_key: 'set', byok_key_hint: 'sk-or…4321' } },
    ]);
    expect(JSON.stringify(res.body)).not.toContain('audited-secret');
  });

  it.each([
    [{ maxTokensPerRequest: 0 }, 'maxTokensPerRequest'],
    [{ maxTokensPerRequest: 100_001 }, 'maxTokensPerRequest'],
    [{ allowedModels: [] }, 'allowedModels'],
    [{ defaultModel: 'gpt-4o' }, 'defaultModel'],
    [{ byokKey: 'short' }, 'byokKey'],
    [{ model: 'openai/x' }, ''],
  ])('refuses %j with 400 naming the field', async (body, param) => {
    const res = await put(body);
    expect(res.status).toBe(400);
    // The standard envelope: only the OpenAI wire routes (chat completions, embeddings) answer in OpenAI's shape.
    expect(res.body.error).toMatchObject({ code: 'VALIDATION_FAILED', remediation: 'Fix the named field and send the request again.', details: [{ path: param }] });
    if (!param) expect(res.body.error.message).toContain('Unrecognized key: "model"');
  });

  it('refuses a defaultModel outside allowedModels, whichever field the update changes, and keeps the old settings', async () => {
    const first = await put({ defaultModel: 'openai/a', allowedModels: ['openai/a', 'openai/b'] });
    expect(first.status).toBe(200);
    const narrowed = await put({ allowedModels: ['openai/b'] });
    expect(narrowed.status).toBe(400);
    expect(narrowed.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'allowedModels' }] });
    const moved = await put({ defaultModel: 'openai/c' });
    expect(moved.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'defaultModel' }] });
    expect((await p.api('GET', `/v1/${appId}/ai/config`, { key: serviceKey })).body).toMatchObject({ defaultModel: 'openai/a', allowedModels: ['openai/a', 'openai/b'] });
    await put({ allowedModels: null });
  });

  it('usage validates its dates', async () => {
    const reversed = await p.api('GET', `/v1/${appId}/ai/usage?startDate=2026-02-01&endDate=2026-01-01`, { key: serviceKey });
    expect(reversed.status).toBe(400);
    expect(reversed.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'startDate' }] });
    const bad = await p.api('GET', `/v1/${appId}/ai/usage?startDate=yesterday`, { key: serviceKey });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'startDate' }] });
    const empty = await p.api('GET', `/v1/${appId}/ai/usage?startDate=2026-01-01&endDate=2026-01-31`, { key: serviceKey });
    expect(empty.body).toEqual({
      startDate: '2026-01-01',
      endDate: '2026-01-31',
      totalTokens: 0,
      totalCost: 0,
      creditsUsed: 0,
      byModel: {},
      byUser: {},
      otherUsers: null,
      byDay: [],
    });
  });

  it('usage has a series of the days with calls (UTC, oldest first), and lists the 50 end users who used the most, the rest added up', async () => {
    const [{ account_id: account }] = await p.sql(`select account_id from apps where id = $1`, [appId]);
    // 52 end users on 2026-03-02 (user i: 100 + i tokens, 1000 i nano-dollars); key calls on 03-01 and 03-04 (own key), and 03-05 outside.
    await p.sql(
      `insert into ai_usage (app_id, account_id, end_user_id, kind, model, total_tokens, cost_nanos, own_key, latency_ms, status, created_at)
       select $1, $2::uuid, gen_random_uuid(), 'chat', 'openai/a', 100 + i, 1000 * i, false, 5, 'ok', '2026-03-02T23:59:59Z'::timestamptz from generate_series(1, 52) i
       union all select $1, $2::uuid, null::uuid, 'chat', 'openai/b', 10, 500000000, false, 5, 'ok', '2026-03-01T00:00:00Z'::timestamptz
       union all select $1, $2::uuid, null::uuid, 'embedding', 'openai/b', 5, 250000000, true, 5, 'ok', '2026-03-04T12:00:00Z'::timestamptz
       union all select $1, $2::uuid, null::uuid, 'chat', 'openai/b', 7, 1, false, 5, 'ok', '2026-03-05T00:00:00Z'::timestamptz`,
      [appId, account],
    );
    const res = await p.api('GET', `/v1/${appId}/ai/usage?startDate=2026-03-01&endDate=2026-03-04`, { key: serviceKey });
    expect(res.status).toBe(200);
    const userTokens = 52 * 100 + (52 * 53) / 2;
    const userNanos = 1000 * ((52 * 53) / 2);
    expect(res.body).toMatchObject({
      totalTokens: userTokens + 15,
      totalCost: (userNanos + 750_000_000) / 1e9,
      creditsUsed: (userNanos + 500_000_000) / 1e9,
      byModel: { 'openai/a': { tokens: userTokens, cost: userNanos / 1e9, requests: 52 }, 'openai/b': { tokens: 15, cost: 0.75, requests: 2 } },
      byDay: [
        { date: '2026-03-01', tokens: 10, cost: 0.5, requests: 1 },
        { date: '2026-03-02', tokens: userTokens, cost: userNanos / 1e9, requests: 52 },
        { date: '2026-03-04', tokens: 5, cost: 0.25, requests: 1 },
      ],
      // Users 1 and 2 used the fewest tokens: they are the ones added up.
      otherUsers: { users: 2, tokens: 101 + 102, cost: 3000 / 1e9, requests: 2 },
    });
    const listed = Object.values(res.body.byUser) as Array<{ tokens: number }>;
    expect(listed).toHaveLength(50);
    expect(listed.map((u) => u.tokens).sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => 103 + i));
  });
});
