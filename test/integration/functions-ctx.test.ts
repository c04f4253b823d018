// A function reaches every app capability through ctx, as REST does and with the same authorization: ctx.ai, ctx.rag
// and ctx.storage as the calling end user (else the app), ctx.people and ctx.meetings as the app. The AI upstream is
// a fake OpenAI-compatible server on loopback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-upstream.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { freePort } from '../helpers/server.ts';

let fake: FakeOpenAI;
let p: TestPlatform;
let appId: string;
let serviceKey: string;
const tokens: Record<string, string> = {};

/** Runs one ctx call named by the request body and answers its result, or the PlatformError it rejected with. */
const CTX = `
export default async (req: Request, ctx: any) => {
  const { op, args } = await req.json();
  const [area, method] = op.split('.');
  try {
    return Response.json({ ok: true, result: await ctx[area][method](...args) });
  } catch (err: any) {
    return Response.json({ ok: false, name: err.name, code: err.code, status: err.status });
  }
};`;

async function run(op: string, args: unknown[], token?: string): Promise<{ ok: boolean; result?: any; name?: string; code?: string; status?: number }> {
  const res = await fetch(`${p.url}/v1/${appId}/fn/ctx`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ op, args }),
  });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return JSON.parse(text);
}

beforeAll(async () => {
  fake = await startFakeOpenAI({ costPerToken: 0.000001 });
  const port = await freePort();
  p = await startTestPlatform({ PORT: String(port), SVC_BASE_URL: `http://127.0.0.1:${port}`, SVC_AI_BASE_URL: fake.url, SVC_AI_API_KEY: 'sk-fn' });
  const app = (await p.api('POST', '/init', { body: { name: 'fnctx' } })).body;
  appId = app.app_id;
  serviceKey = app.service_key.key;
  await p.sql(`update accounts set plan = 'enterprise'`);
  for (const who of ['ann', 'bob']) {
    const signup = await p.api('POST', `/v1/${appId}/auth/signup`, { body: { email: `${who}@example.com`, password: 'correct horse battery' }, key: null });
    expect(signup.status).toBe(201);
    tokens[who] = signup.body.access_token;
  }
  const collection = await p.api('POST', `/v1/${appId}/rag/collections`, { body: { name: 'kb', accessMode: 'shared' }, key: serviceKey });
  expect(collection.status, JSON.stringify(collection.body)).toBe(201);
  const deployed = await p.api('POST', `/v1/${appId}/functions`, { body: { name: 'ctx', code: CTX }, key: serviceKey });
  expect(deployed.status, JSON.stringify(deployed.body)).toBe(201);
  const streaming = await p.api('POST', `/v1/${appId}/functions`, { body: { name: 'stream', code: STREAM }, key: serviceKey });
  expect(streaming.status, JSON.stringify(streaming.body)).toBe(201);
}, 120_000);

/** Relays a streamed chat completion of the gateway, as the calling end user, to its own caller. */
const STREAM = `
export default async (req: Request, ctx: any) => {
  const upstream = await fetch(ctx.env.SVC_API_URL + '/chat/completions', {
    method: 'POST',
    headers: { authorization: 'Bearer ' + ctx.token, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'fake/slow', stream: true, messages: [{ role: 'user', content: 'a b c d e' }] }),
  });
  return new Response(upstream.body, { status: upstream.status, headers: { 'content-type': upstream.headers.get('content-type') ?? '' } });
};`;

afterAll(async () => {
  await p?.close();
  await fake?.close();
});

describe('ctx reaches every app capability', () => {
  it('ctx.ai chats and embeds as the end user, with the usage recorded for them; streaming is refused with a pointer to fetch', async () => {
    const chat = await run('ai.chat', [{ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hello there' }] }], tokens.ann);
    expect(chat).toMatchObject({ ok: true, result: { object: 'chat.completion', choices: [{ message: { role: 'assistant', content: 'echo: hello there' } }] } });
    const embed = await run('ai.embed', [{ model: 'openai/text-embedding-3-small', input: 'x' }]);
    expect(embed.result.data[0].embedding).toHaveLength(1536);
    const users = await p.sql(`select count(*)::int as n from ai_usage where app_id = $1 and end_user_id is not null`, [appId]);
    expect(users[0].n).toBe(1);
    expect(await run('ai.chat', [{ messages: [{ role: 'user', content: 'x' }], stream: true }])).toEqual({ ok: false, name: 'PlatformError', code: 'VALIDATION_FAILED', status: 400 });
  });

  it("fetch() of the gateway's streamed chat reaches the function as it streams, not at its end", async () => {
    const res = await fetch(`${p.url}/v1/${appId}/fn/stream`, { method: 'POST', headers: { authorization: `Bearer ${tokens.ann}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const started = performance.now();
    const arrivals: number[] = [];
    let text = '';
    const decoder = new TextDecoder();
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      arrivals.push(performance.now() - started);
      text += decoder.decode(chunk, { stream: true });
    }
    expect(text).toContain('data: [DONE]');
    // fake/slow waits 200 ms between chunks: streamed, the first arrived long before the last.
    expect(arrivals.length).toBeGreaterThan(2);
    expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThan(600);
  });

  it('ctx.rag ingests and queries; ctx.storage keeps each end user to their own files', async () => {
    const ingested = await run('rag.ingest', ['kb', { text: 'The refund window is thirty days from delivery.' }]);
    expect(ingested).toMatchObject({ ok: true, result: { documentId: expect.any(String), status: 'pending' } });
    let ready = false;
    for (let i = 0; i < 100 && !ready; i++) {
      const doc = await run('rag.document', ['kb', ingested.result.documentId]);
      ready = doc.result?.status === 'ready';
      if (!ready) await new Promise((r) => setTimeout(r, 100));
    }
    expect(ready).toBe(true);
    const answer = await run('rag.query', ['kb', { query: 'refund window', topK: 1 }], tokens.ann);
    expect(answer).toMatchObject({ ok: true, result: { chunks: [{ text: 'The refund window is thirty days from delivery.' }] } });

    const uploaded = await run('storage.upload', [{ filename: 'a.txt', contentType: 'text/plain', content: 'ann', encoding: 'utf8' }], tokens.ann);
    expect(uploaded).toMatchObject({ ok: true, result: { id: expect.any(String) } });
    expect((await run('storage.list', [], tokens.ann)).result.objects).toHaveLength(1);
    expect((await run('storage.list', [], tokens.bob)).result.objects).toHaveLength(0);
    expect(await run('storage.read', [uploaded.result.id], tokens.bob)).toMatchObject({ ok: false, name: 'PlatformError', status: 404 });
    expect(await run('storage.read', [uploaded.result.id, { encoding: 'utf8' }], tokens.ann)).toMatchObject({ ok: true, result: { content: 'ann' } });
  });

  it('ctx.people and ctx.meetings act as the app: without a provider they answer the routes\' own refusals', async () => {
    const meetings = await run('meetings.list', [{}], tokens.ann);
    expect(meetings).toMatchObject({ ok: false, name: 'PlatformError', status: 501 });
    const rest = await p.api('GET', `/v1/${appId}/ai/meetings`, { key: serviceKey });
    expect(meetings.status).toBe(rest.status);
    // An end user may not call the people routes over REST; through the app's function they act as the app.
    const people = await run('people.searchPerson', [{ query: 'founders in Berlin' }], tokens.ann);
    const peopleRest = await p.api('POST', `/v1/${appId}/people/search/person`, { body: { query: 'founders in Berlin' }, key: serviceKey });
    expect(peopleRest.status).toBeGreaterThanOrEqual(400);
    expect(people).toMatchObject({ ok: false, name: 'PlatformError', status: peopleRest.status });
  });
});

/** Calls a ctx helper with arguments of the wrong type, by case name; answers how the call ended. */
const BAD_ARGS = `
export default async (req: Request, ctx: any) => {
  const cases: Record<string, () => Promise<unknown>> = {
    // The functions guide's signature is upload({ filename, contentType, content }).
    upload: () => ctx.storage.upload('a.txt', new TextEncoder().encode('hi'), { contentType: 'text/plain' }),
    query: () => ctx.rag.query('kb', 'refund window'),
    execute: () => ctx.integrations.execute(42, {}),
    bigint: () => ctx.ai.chat({ model: 'openai/gpt-4o-mini', max_tokens: 1n }),
    update: () => ctx.data.from('notes').update({ done: true }, { id: 5 }),
    // An object for the runner, a string once sent as JSON: the platform's own check refuses it.
    date: () => ctx.storage.upload(new Date()),
    list: () => ctx.storage.list(),
  };
  try {
    return Response.json({ ok: true, result: await cases[new URL(req.url).searchParams.get('case')!]!() });
  } catch (err: any) {
    return Response.json({ ok: false, name: err.name, code: err.code, status: err.status, message: err.message });
  }
};`;

describe('ctx helpers given arguments of the wrong type', () => {
  beforeAll(async () => {
    const deployed = await p.api('POST', `/v1/${appId}/functions`, { body: { name: 'bad-args', code: BAD_ARGS }, key: serviceKey });
    expect(deployed.status, JSON.stringify(deployed.body)).toBe(201);
  });

  async function attempt(name: string): Promise<{ ok: boolean; result?: any; name?: string; code?: string; status?: number; message?: string }> {
    const res = await fetch(`${p.url}/v1/${appId}/fn/bad-args?case=${name}`);
    const text = await res.text();
    expect(res.status, text).toBe(200);
    return JSON.parse(text);
  }

  it.each([
    ['upload', 'PlatformError', 'storage_upload_inline takes its input as one object, not a string'],
    ['query', 'PlatformError', 'rag_query takes its input as one object, not a string'],
    ['execute', 'IntegrationsError', 'the tool name must be a string, not a number'],
    ['bigint', 'PlatformError', 'cannot be sent as JSON'],
    ['date', 'PlatformError', 'storage_upload_inline takes its input as one object, not a string'],
  ])('%s rejects with %s VALIDATION_FAILED, and the process serves on', async (name, errorName, reason) => {
    expect(await attempt(name)).toMatchObject({ ok: false, name: errorName, code: 'VALIDATION_FAILED', status: 400, message: expect.stringContaining(reason) });
    expect(await attempt('list')).toMatchObject({ ok: true, result: { objects: expect.any(Array) } });
  });

  it('ctx.data resolves with the error instead of throwing', async () => {
    expect(await attempt('update')).toMatchObject({
      ok: true,
      result: { data: null, status: 400, error: { code: 'VALIDATION_FAILED', message: expect.stringContaining('must be a string, not an object') } },
    });
  });
});
