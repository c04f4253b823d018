import OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-upstream.ts';

// The fake exists to be driven by the official SDK (as the gateway does), so every check goes through it
// unless the raw wire itself is the point.

let fake: FakeOpenAI | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function start(opts?: Parameters<typeof startFakeOpenAI>[0]): Promise<{ fake: FakeOpenAI; client: OpenAI }> {
  fake = await startFakeOpenAI(opts);
  return { fake, client: new OpenAI({ baseURL: fake.url, apiKey: 'sk-or-v1-platform', maxRetries: 0 }) };
}

const ask = (model: string, content: string) => ({ model, messages: [{ role: 'user' as const, content }] });

const norm = (v: ArrayLike<number>) => Math.hypot(...Array.from(v));

describe('fake OpenAI upstream: chat', () => {
  it('answers a non-stream chat completion in OpenAI format, with usage and no cost by default', async () => {
    const { fake, client } = await start();
    const res = await client.chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hello   there world' },
      ],
    });
    expect(res.id).toMatch(/^chatcmpl-/);
    expect(res).toMatchObject({ object: 'chat.completion', model: 'openai/gpt-4o-mini' });
    expect(Math.abs(res.created - Date.now() / 1000)).toBeLessThan(5);
    expect(res.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: 'echo: hello there world', refusal: null }, logprobs: null, finish_reason: 'stop' },
    ]);
    // prompt: 2 + 3 words, + 3 per message; completion: 4 words
    expect(res.usage).toEqual({ prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 });
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]).toMatchObject({ path: '/chat/completions', authorization: 'Bearer sk-or-v1-platform' });
    expect(await fake.requests[0]!.outcome).toBe('completed');
  });

  it('reports cost when configured, counts array text parts, truncates to max_tokens', async () => {
    const { fake, client } = await start({ costPerToken: 0.000002 });
    const res = await client.chat.completions.create({
      model: 'openai/gpt-4o',
      max_tokens: 3,
      messages: [
        { role: 'user', content: 'first question' },
        { role: 'assistant', content: 'an answer' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'one two three' },
            { type: 'image_url', image_url: { url: 'https://example.com/x.png' } },
            { type: 'text', text: 'four' },
          ],
        },
      ],
    });
    expect(res.choices[0]!.message.content).toBe('echo: one two');
    expect(res.choices[0]!.finish_reason).toBe('length');
    const usage = res.usage as OpenAI.CompletionUsage & { cost?: number };
    expect(usage).toMatchObject({ prompt_tokens: 2 + 2 + 4 + 9, completion_tokens: 3, total_tokens: 20 });
    expect(usage.cost).toBeCloseTo(20 * 0.000002, 12);

    // costPerToken is read per request
    fake.costPerToken = undefined;
    const again = await client.chat.completions.create(ask('openai/gpt-4o', 'hi'));
    expect(again.usage).not.toHaveProperty('cost');
  });

  it('records unknown request fields untouched and the Authorization header exactly', async () => {
    const { fake } = await start();
    const byok = new OpenAI({ baseURL: fake.url, apiKey: 'sk-user-BYOK-123', maxRetries: 0 });
    const params = { ...ask('openai/gpt-4o-mini', 'x'), provider: { order: ['openai'], allow_fallbacks: false }, transforms: ['middle-out'] };
    await byok.chat.completions.create(params as ChatCompletionCreateParamsNonStreaming);
    expect(fake.requests[0]!.authorization).toBe('Bearer sk-user-BYOK-123');
    expect(fake.requests[0]!.body).toEqual(params);

    const raw = await fetch(`${fake.url}/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'bearer Mixed-Case.key', 'content-type': 'application/json' },
      body: JSON.stringify(ask('m', 'y')),
    });
    expect(raw.status).toBe(200);
    expect(fake.requests[1]!.authorization).toBe('bearer Mixed-Case.key');

    fake.reset();
    expect(fake.requests).toHaveLength(0);
  });

  it('streams one chunk per word in OpenAI SSE format, usage chunk only with include_usage', async () => {
    const { fake, client } = await start({ costPerToken: 0.001 });
    const plain: ChatCompletionChunk[] = [];
    for await (const c of await client.chat.completions.create({ ...ask('openai/gpt-4o-mini', 'a b c'), stream: true })) plain.push(c);
    expect(plain.map((c) => c.choices[0]?.delta)).toEqual([{ role: 'assistant', content: '', refusal: null }, { content: 'echo:' }, { content: ' a' }, { content: ' b' }, { content: ' c' }, {}]);
    expect(plain.map((c) => c.choices[0]?.finish_reason)).toEqual([null, null, null, null, null, 'stop']);
    expect(new Set(plain.map((c) => c.id)).size).toBe(1);
    expect(plain[0]).toMatchObject({ object: 'chat.completion.chunk', model: 'openai/gpt-4o-mini' });
    expect(plain.every((c) => !('usage' in c))).toBe(true);

    const withUsage: ChatCompletionChunk[] = [];
    const stream = await client.chat.completions.create({ ...ask('openai/gpt-4o-mini', 'a b c'), stream: true, stream_options: { include_usage: true } });
    for await (const c of stream) withUsage.push(c);
    expect(withUsage).toHaveLength(7);
    expect(withUsage.slice(0, 6).every((c) => c.usage === null)).toBe(true);
    const last = withUsage[6]!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 4, total_tokens: 10 });
    expect((last.usage as { cost?: number }).cost).toBeCloseTo(0.01, 12);
    expect(await fake.requests[1]!.outcome).toBe('completed');

    // the raw wire: data events, then [DONE]
    const raw = await fetch(`${fake.url}/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
      body: JSON.stringify({ ...ask('m', 'hi'), stream: true, stream_options: { include_usage: true } }),
    });
    expect(raw.headers.get('content-type')).toBe('text/event-stream');
    const events = (await raw.text()).split('\n\n');
    expect(events.pop()).toBe('');
    expect(events.every((e) => e.startsWith('data: '))).toBe(true);
    expect(events.at(-1)).toBe('data: [DONE]');
    expect(events).toHaveLength(1 + 2 + 1 + 1 + 1);
  });

  it('flushes each chunk at once: with a chunk delay the first arrives well before the end', async () => {
    const { client } = await start({ streamChunkDelayMs: 100 });
    const t0 = performance.now();
    let first: number | undefined;
    for await (const _ of await client.chat.completions.create({ ...ask('m', 'one two three four'), stream: true })) first ??= performance.now() - t0;
    const total = performance.now() - t0;
    // 7 chunks + [DONE]: 7 gaps of 100 ms
    expect(total).toBeGreaterThanOrEqual(650);
    expect(first!).toBeLessThan(total - 500);
  });
});

describe('fake OpenAI upstream: embeddings', () => {
  it('answers float vectors of the model dimensions, unit length and deterministic', async () => {
    const { fake, client } = await start({ costPerToken: 0.0001 });
    const a = await client.embeddings.create({ model: 'openai/text-embedding-3-small', input: 'the quick fox', encoding_format: 'float' });
    expect(a).toMatchObject({ object: 'list', model: 'openai/text-embedding-3-small', usage: { prompt_tokens: 3, total_tokens: 3 } });
    expect((a.usage as { cost?: number }).cost).toBeCloseTo(0.0003, 12);
    expect(a.data).toHaveLength(1);
    expect(a.data[0]).toMatchObject({ object: 'embedding', index: 0 });
    const v = a.data[0]!.embedding;
    expect(v).toHaveLength(1536);
    expect(norm(v)).toBeCloseTo(1, 5);

    const again = await client.embeddings.create({ model: 'openai/text-embedding-3-small', input: 'the quick fox', encoding_format: 'float' });
    expect(again.data[0]!.embedding).toEqual(v);
    const other = await client.embeddings.create({ model: 'openai/text-embedding-3-small', input: 'the slow fox', encoding_format: 'float' });
    expect(other.data[0]!.embedding).not.toEqual(v);

    for (const [model, dims] of [['openai/text-embedding-3-large', 3072], ['text-embedding-ada-002', 1536], ['some/other-model', 8]] as const) {
      const r = await client.embeddings.create({ model, input: 'x', encoding_format: 'float' });
      expect(r.data[0]!.embedding).toHaveLength(dims);
    }
    const reduced = await client.embeddings.create({ model: 'openai/text-embedding-3-large', input: 'x', dimensions: 256, encoding_format: 'float' });
    expect(reduced.data[0]!.embedding).toHaveLength(256);
    expect(norm(reduced.data[0]!.embedding)).toBeCloseTo(1, 5);
    expect(fake.requests.every((r) => r.path === '/embeddings')).toBe(true);
  });

  it('encodes base64 as little-endian float32, decoded by the SDK by default and identical to float', async () => {
    const { fake, client } = await start();
    const float = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'same text', encoding_format: 'float' });

    // no encoding_format: the SDK asks for base64 on the wire and decodes it to numbers
    const decoded = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'same text' });
    expect(fake.requests[1]!.body.encoding_format).toBe('base64');
    expect(decoded.data[0]!.embedding).toEqual(float.data[0]!.embedding);

    // explicit base64: the SDK hands back the wire string
    const explicit = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'same text', encoding_format: 'base64' });
    const wire = explicit.data[0]!.embedding as unknown as string;
    expect(typeof wire).toBe('string');
    const buf = Buffer.from(wire, 'base64');
    expect(buf.length).toBe(1536 * 4);
    expect(Array.from({ length: 1536 }, (_, i) => buf.readFloatLE(i * 4))).toEqual(float.data[0]!.embedding);
  });

  it('embeds a batch (strings or token arrays) with one vector per input in order', async () => {
    const { client } = await start();
    const batch = await client.embeddings.create({ model: 'm', input: ['alpha beta', 'gamma', 'alpha beta'], encoding_format: 'float' });
    expect(batch.data.map((d) => d.index)).toEqual([0, 1, 2]);
    expect(batch.data[0]!.embedding).toEqual(batch.data[2]!.embedding);
    expect(batch.data[0]!.embedding).not.toEqual(batch.data[1]!.embedding);
    expect(batch.usage).toEqual({ prompt_tokens: 5, total_tokens: 5 });
    const single = await client.embeddings.create({ model: 'm', input: 'gamma', encoding_format: 'float' });
    expect(single.data[0]!.embedding).toEqual(batch.data[1]!.embedding);

    const tokens = await client.embeddings.create({ model: 'm', input: [[1, 2, 3], [4]], encoding_format: 'float' });
    expect(tokens.data).toHaveLength(2);
    expect(tokens.usage.prompt_tokens).toBe(4);
  });
});

describe('fake OpenAI upstream: faults', () => {
  it.each([
    ['fake/error-429', 429, { message: 'Rate limit reached', type: 'rate_limit_error', code: 'rate_limit_exceeded' }],
    ['fake/error-400', 400, { message: 'Invalid parameter: messages', type: 'invalid_request_error', code: null, param: 'messages' }],
    ['fake/error-500', 500, { message: 'upstream exploded', type: 'server_error' }],
  ])('%s surfaces as APIError %i with OpenAI error body', async (model, status, error) => {
    const { client } = await start();
    for (const call of [
      () => client.chat.completions.create(ask(model, 'hi')),
      () => client.chat.completions.create({ ...ask(model, 'hi'), stream: true }),
      () => client.embeddings.create({ model, input: 'hi' }),
    ]) {
      const err = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(OpenAI.APIError);
      expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(status);
      expect((err as InstanceType<typeof OpenAI.APIError>).error).toEqual(error);
    }
  });

  it('fake/drop surfaces as APIConnectionError and the exchange as aborted', async () => {
    const { fake, client } = await start();
    await expect(client.chat.completions.create(ask('fake/drop', 'hi'))).rejects.toBeInstanceOf(OpenAI.APIConnectionError);
    expect(await fake.requests[0]!.outcome).toBe('aborted');
  });

  it('fake/drop-mid-stream delivers two chunks, then the stream fails', async () => {
    const { fake, client } = await start();
    const got: ChatCompletionChunk[] = [];
    const stream = await client.chat.completions.create({ ...ask('fake/drop-mid-stream', 'a b c d'), stream: true });
    await expect(
      (async () => {
        for await (const c of stream) got.push(c);
      })(),
    ).rejects.toThrow();
    expect(got.map((c) => c.choices[0]?.delta.content)).toEqual(['', 'echo:']);
    expect(await fake.requests[0]!.outcome).toBe('aborted');

    // non-stream: a 200 whose body is cut; the SDK lets the body read failure (TypeError: terminated) through
    await expect(client.chat.completions.create(ask('fake/drop-mid-stream', 'a'))).rejects.toThrow();
    expect(await fake.requests[1]!.outcome).toBe('aborted');
  });

  it('fake/slow answers a non-stream request after about a second', async () => {
    const { client } = await start();
    const t0 = performance.now();
    const res = await client.chat.completions.create(ask('fake/slow', 'hi'));
    expect(performance.now() - t0).toBeGreaterThanOrEqual(950);
    expect(res.choices[0]!.message.content).toBe('echo: hi');
  });

  it('a client aborting a slow stream (signal or break) makes the outcome aborted', async () => {
    const { fake, client } = await start();
    const controller = new AbortController();
    const stream = await client.chat.completions.create({ ...ask('fake/slow', 'one two three four five'), stream: true }, { signal: controller.signal });
    const got: ChatCompletionChunk[] = [];
    // the SDK ends an aborted stream's iteration quietly rather than throwing
    for await (const c of stream) {
      got.push(c);
      if (got.length === 2) controller.abort();
    }
    expect(got).toHaveLength(2);
    expect(await fake.requests[0]!.outcome).toBe('aborted');

    for await (const _ of await client.chat.completions.create({ ...ask('fake/slow', 'one two three'), stream: true })) break;
    expect(await fake.requests[1]!.outcome).toBe('aborted');
  });

  it('fake/hang holds until the client times out (aborted), and close() ends a hanging request promptly', async () => {
    const { fake, client } = await start();
    await expect(client.chat.completions.create(ask('fake/hang', 'hi'), { timeout: 200 })).rejects.toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
    expect(await fake.requests[0]!.outcome).toBe('aborted');

    const pending = client.chat.completions.create(ask('fake/hang', 'hi')).then(
      () => undefined,
      (e: unknown) => e,
    );
    while (fake.requests.length < 2) await new Promise((r) => setTimeout(r, 10));
    const t0 = performance.now();
    await fake.close();
    expect(performance.now() - t0).toBeLessThan(500);
    expect(await pending).toBeInstanceOf(OpenAI.APIConnectionError);
    expect(await fake.requests[1]!.outcome).toBe('aborted');
  });
});

describe('fake OpenAI upstream: protocol edges', () => {
  const post = (fake: FakeOpenAI, path: string, body: string, headers: Record<string, string> = { authorization: 'Bearer k' }) =>
    fetch(`${fake.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

  it('401 without a bearer key (still recorded), 404 unknown path, 400 malformed JSON', async () => {
    const { fake } = await start();
    const noKey = await post(fake, '/chat/completions', JSON.stringify(ask('m', 'x')), {});
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toEqual({ error: { message: 'Missing API key', type: 'invalid_request_error', code: 'invalid_api_key' } });
    expect(fake.requests[0]).toMatchObject({ path: '/chat/completions', authorization: undefined, body: ask('m', 'x') });
    const basic = await post(fake, '/chat/completions', '{}', { authorization: 'Basic abc' });
    expect(basic.status).toBe(401);

    const unknown = await post(fake, '/nope', '{}');
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: { type: 'invalid_request_error', code: null } });

    const malformed = await post(fake, '/chat/completions', '{"model":');
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ error: { type: 'invalid_request_error' } });
    expect(fake.requests.at(-1)!.body).toBe('{"model":');
  });

  it('lists models in OpenAI list format', async () => {
    const { fake, client } = await start();
    const ids: string[] = [];
    for await (const m of client.models.list()) {
      expect(m.object).toBe('model');
      ids.push(m.id);
    }
    expect(ids).toEqual(expect.arrayContaining(['openai/text-embedding-3-small', 'fake/slow', 'fake/error-429', 'fake/hang', 'fake/drop-mid-stream']));
    expect(fake.requests[0]).toMatchObject({ path: '/models', body: undefined });
  });
});
