// The official openai SDK, unchanged, against an app's AI gateway beyond chat and embeddings: models.list and
// models.retrieve, and the Responses API (non-streamed, streamed, a function-call round trip, refusals), with the
// fake OpenAI-compatible upstream on loopback. An old app's tables named models and responses keep the data API.
import OpenAI from 'openai';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-upstream.ts';
import { databaseUrl } from '../helpers/db.ts';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { callTool, connectMcp, request, resultJson } from './e2e-helpers.ts';

let fake: FakeOpenAI;
let server: SpawnedServer;
let bare: SpawnedServer | undefined;
let appId: string;
let serviceKey: string;

const sdk = (apiKey: string, id = appId, url = server.url) => new OpenAI({ apiKey, baseURL: `${url}/v1/${id}`, maxRetries: 0 });

async function newApp(target: SpawnedServer, name: string): Promise<{ appId: string; serviceKey: string }> {
  const created = await request(target.url, '/init', { method: 'POST', key: target.platformKey, body: { name } });
  expect(created.status).toBe(201);
  return { appId: created.json.app_id, serviceKey: created.json.service_key.key };
}

async function setAllowed(allowedModels: string[] | null): Promise<void> {
  const res = await request(server.url, `/v1/${appId}/ai/config`, { method: 'PUT', key: serviceKey, body: { allowedModels } });
  expect(res.status).toBe(200);
}

async function sql(database: string, text: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: databaseUrl(database) });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  fake = await startFakeOpenAI();
  server = await spawnServer({ SVC_AI_BASE_URL: fake.url, SVC_AI_API_KEY: 'sk-platform-upstream-key-0002' });
  ({ appId, serviceKey } = await newApp(server, 'OpenAI SDK'));
  await sql(server.controlDb, `update accounts set plan = 'enterprise'`);
});

afterAll(async () => {
  await server?.close();
  await bare?.close();
  await fake?.close();
});

beforeEach(() => fake.reset());

describe('models', () => {
  it("lists the upstream's models, and retrieves one by its id with a slash", async () => {
    const client = sdk(serviceKey);
    const ids: string[] = [];
    for await (const model of client.models.list()) {
      expect(model).toEqual({ id: model.id, object: 'model', created: 1_700_000_000, owned_by: model.id.split('/')[0] });
      ids.push(model.id);
    }
    expect(ids).toEqual(expect.arrayContaining(['openai/gpt-4o-mini', 'fake/tool-call']));
    expect(await client.models.retrieve('openai/gpt-4o-mini')).toEqual({ id: 'openai/gpt-4o-mini', object: 'model', created: 1_700_000_000, owned_by: 'openai' });
    // The list is kept: the second call (and the retrieve) did not ask the upstream again.
    await client.models.list();
    expect(fake.requests.filter((r) => r.path === '/models')).toHaveLength(1);
    expect(fake.requests[0]!.authorization).toBe('Bearer sk-platform-upstream-key-0002');
  });

  it('with allowedModels: exactly those', async () => {
    await setAllowed(['openai/gpt-4o-mini', 'anthropic/claude-3-haiku']);
    try {
      const page = await sdk(serviceKey).models.list();
      expect(page.data).toEqual([
        { id: 'openai/gpt-4o-mini', object: 'model', created: 0, owned_by: 'openai' },
        { id: 'anthropic/claude-3-haiku', object: 'model', created: 0, owned_by: 'anthropic' },
      ]);
      const raw = await request(server.url, `/v1/${appId}/models`, { key: serviceKey });
      expect(raw.status).toBe(200);
      expect(raw.json).toEqual({ object: 'list', data: page.data });
      expect(await sdk(serviceKey).models.retrieve('anthropic/claude-3-haiku')).toEqual({ id: 'anthropic/claude-3-haiku', object: 'model', created: 0, owned_by: 'anthropic' });
    } finally {
      await setAllowed(null);
    }
  });

  it('an unknown model is a 404 model_not_found; no credential a 401', async () => {
    const err = await sdk(serviceKey)
      .models.retrieve('nope/none')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    const raw = await request(server.url, `/v1/${appId}/models/nope%2Fnone`, { key: serviceKey });
    expect(raw.status).toBe(404);
    expect(raw.json.error).toMatchObject({ type: 'invalid_request_error', code: 'model_not_found', param: 'model' });
    const none = await request(server.url, `/v1/${appId}/models`);
    expect(none.status).toBe(401);
    expect(none.json.error).toMatchObject({ type: 'authentication_error', code: 'missing_credentials' });
  });

  it('without an upstream: 503 provider_unavailable, as chat', async () => {
    bare = await spawnServer();
    const app = await newApp(bare, 'No upstream');
    const err = await sdk(app.serviceKey, app.appId, bare.url)
      .models.list()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect((err as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ type: 'api_error', code: 'provider_unavailable' });
    const responses = await request(bare.url, `/v1/${app.appId}/responses`, { method: 'POST', key: app.serviceKey, body: { model: 'openai/gpt-4o-mini', input: 'x' } });
    expect(responses.status).toBe(503);
    expect(responses.json.error).toMatchObject({ code: 'provider_unavailable' });
    // A model id is checked before anything else, as ai_chat's is: no upstream ever sees one like '__proto__'.
    const badModel = await request(bare.url, `/v1/${app.appId}/responses`, { method: 'POST', key: app.serviceKey, body: { model: '__proto__', input: 'x' } });
    expect(badModel.status).toBe(400);
    expect(badModel.json.error).toMatchObject({ type: 'invalid_request_error', param: 'model' });
  });
});

describe('responses', () => {
  it('non-streamed: output_text is the answer, usage recorded as a chat call', async () => {
    const client = sdk(serviceKey);
    const before = (await request(server.url, `/v1/${appId}/ai/usage`, { key: serviceKey })).json;
    const response = await client.responses.create({ model: 'openai/gpt-4o-mini', instructions: 'be brief', input: 'hello there', max_output_tokens: 20, metadata: { k: 'v' } });
    expect(response).toMatchObject({
      object: 'response',
      status: 'completed',
      model: 'openai/gpt-4o-mini',
      instructions: 'be brief',
      max_output_tokens: 20,
      metadata: { k: 'v' },
      store: false,
      error: null,
      incomplete_details: null,
      output: [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'echo: hello there', annotations: [] }] }],
      usage: { input_tokens: 10, output_tokens: 3, total_tokens: 13, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
    });
    expect(response.id).toMatch(/^resp_/);
    expect(response.output_text).toBe('echo: hello there');
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.path).toBe('/chat/completions');
    expect(fake.requests[0]!.body).toEqual({
      model: 'openai/gpt-4o-mini',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hello there' },
      ],
      max_tokens: 20,
    });
    const after = (await request(server.url, `/v1/${appId}/ai/usage`, { key: serviceKey })).json;
    expect(after.totalTokens - before.totalTokens).toBe(13);
    expect(after.byModel['openai/gpt-4o-mini'].requests - (before.byModel['openai/gpt-4o-mini']?.requests ?? 0)).toBe(1);
  });

  it('streamed: the event sequence, deltas concatenating to the text, and the final response', async () => {
    const stream = await sdk(serviceKey).responses.create({ model: 'openai/gpt-4o-mini', input: 'one two three', stream: true });
    const types: string[] = [];
    let text = '';
    let completed: any;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') completed = event.response;
    }
    expect(text).toBe('echo: one two three');
    expect(types.slice(0, 4)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
    expect(types.slice(-4)).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
    expect(types.filter((t) => t === 'response.output_text.delta')).toHaveLength(4);
    expect(completed).toMatchObject({ status: 'completed', usage: { input_tokens: 6, output_tokens: 4, total_tokens: 10 } });
    expect(completed.output[0].content[0].text).toBe('echo: one two three');
    expect(fake.requests[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });

    const final = await sdk(serviceKey).responses.stream({ model: 'openai/gpt-4o-mini', input: 'four five' }).finalResponse();
    expect(final.output_text).toBe('echo: four five');
    expect(final.status).toBe('completed');
  });

  it('a function call round trip, non-streamed and streamed', async () => {
    const client = sdk(serviceKey);
    const tools = [{ type: 'function' as const, name: 'lookup', description: 'Looks up', parameters: { type: 'object', properties: { text: { type: 'string' } } }, strict: false }];
    const first = await client.responses.create({ model: 'fake/tool-call', input: 'find cats', tools });
    expect(first.output).toEqual([{ id: expect.stringMatching(/^fc_/), type: 'function_call', status: 'completed', call_id: 'call_fake_1', name: 'lookup', arguments: '{"text":"find cats"}' }]);
    expect(fake.requests[0]!.body.tools).toEqual([{ type: 'function', function: { name: 'lookup', description: 'Looks up', parameters: tools[0]!.parameters, strict: false } }]);
    const second = await client.responses.create({
      model: 'fake/tool-call',
      tools,
      input: [{ role: 'user', content: 'find cats' }, ...(first.output as OpenAI.Responses.ResponseFunctionToolCall[]), { type: 'function_call_output', call_id: 'call_fake_1', output: 'three cats' }],
    });
    expect(second.output_text).toBe('echo: three cats');
    expect(fake.requests[1]!.body.messages).toEqual([
      { role: 'user', content: 'find cats' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_fake_1', type: 'function', function: { name: 'lookup', arguments: '{"text":"find cats"}' } }] },
      { role: 'tool', tool_call_id: 'call_fake_1', content: 'three cats' },
    ]);

    const streamed = await client.responses.stream({ model: 'fake/tool-call', input: 'find dogs', tools }).finalResponse();
    // parsed_arguments is the SDK's own addition.
    expect(streamed.output).toEqual([
      { id: expect.stringMatching(/^fc_/), type: 'function_call', status: 'completed', call_id: 'call_fake_1', name: 'lookup', arguments: '{"text":"find dogs"}', parsed_arguments: null },
    ]);
  });

  it('refuses what it does not serve with a 400 naming the param, before calling the upstream', async () => {
    const client = sdk(serviceKey);
    for (const [body, param] of [
      [{ model: 'openai/gpt-4o-mini', input: 'x', previous_response_id: 'resp_123' }, 'previous_response_id'],
      [{ model: 'openai/gpt-4o-mini', input: 'x', background: true }, 'background'],
      [{ model: 'openai/gpt-4o-mini', input: 'x', conversation: 'conv_1' }, 'conversation'],
      [{ model: 'openai/gpt-4o-mini', input: 'x', tools: [{ type: 'web_search' }] }, 'tools[0].type'],
    ] as const) {
      const err = await client.responses.create(body as never).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect((err as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request', param });
    }
    const raw = await request(server.url, `/v1/${appId}/responses`, { method: 'POST', key: serviceKey, body: { model: 'openai/gpt-4o-mini', input: 'x', previous_response_id: 'r' } });
    expect(raw.status).toBe(400);
    expect(raw.json.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request', param: 'previous_response_id' });
    expect(raw.json.error.message).toContain('send the conversation in input');
    const unknown = await client.responses.retrieve('resp_x').catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect((unknown as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({ type: 'invalid_request_error', code: 'not_found', param: null });
    expect((unknown as InstanceType<typeof OpenAI.NotFoundError>).message).toContain('does not store responses');
    expect(fake.requests).toHaveLength(0);
  });

  it('upstream errors come back as for chat', async () => {
    const err = await sdk(serviceKey)
      .responses.create({ model: 'fake/error-429', input: 'x' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as InstanceType<typeof OpenAI.APIError>).error).toEqual({ message: 'Rate limit reached', type: 'rate_limit_error', code: 'rate_limit_exceeded', param: null });
  });
});

describe('over MCP', () => {
  it('ai_responses_create answers the response object; stream is refused; the model routes are REST only', async () => {
    const mcp = await connectMcp(server.url, server.platformKey);
    try {
      const out = await callTool(mcp.client, 'ai_responses_create', { app_id: appId, model: 'openai/gpt-4o-mini', input: 'hi mcp' });
      expect(out.isError).toBeFalsy();
      expect(resultJson(out)).toMatchObject({ object: 'response', status: 'completed', output: [{ type: 'message', content: [{ type: 'output_text', text: 'echo: hi mcp' }] }] });
      const stream = await callTool(mcp.client, 'ai_responses_create', { app_id: appId, model: 'openai/gpt-4o-mini', input: 'x', stream: true });
      expect(stream.isError).toBe(true);
      expect(resultJson(stream)).toMatchObject({ status: 400, error: { code: 'VALIDATION_FAILED', message: expect.stringContaining('POST /v1/{app_id}/responses') } });
      const refused = await callTool(mcp.client, 'ai_responses_create', { app_id: appId, input: 'x', previous_response_id: 'resp_1' });
      expect(resultJson(refused)).toMatchObject({ status: 400, error: { code: 'VALIDATION_FAILED', details: [{ path: 'previous_response_id' }] } });
      const names = (await mcp.client.listTools()).tools.map((t) => t.name);
      expect(names).toContain('ai_responses_create');
      expect(names).not.toContain('ai_models_list');
      expect(names).not.toContain('ai_models_get');
      expect(fake.requests).toHaveLength(1);
    } finally {
      await mcp.close();
    }
  });
});

describe('an old app whose tables are named models and responses', () => {
  it('keeps them on the data API, and /rest/v1/models too', async () => {
    const old = await newApp(server, 'Old tables');
    const schema = {
      tables: {
        old_models: { columns: { id: { type: 'bigint', primary: true, identity: true }, name: { type: 'text' } }, access: 'public' },
        old_responses: { columns: { id: { type: 'bigint', primary: true, identity: true }, body: { type: 'text' } }, access: 'public' },
      },
    };
    const applied = await request(server.url, `/v1/${old.appId}/schema/apply`, { method: 'POST', key: old.serviceKey, body: { schema, name: 'init' } });
    expect(applied.status).toBe(200);
    // As an app made before the names were reserved has them.
    await sql(
      server.appDbPrefix + old.appId,
      `alter table old_models rename to models; alter table old_responses rename to responses;
       update svc_meta.table_access set table_name = substr(table_name, 5) where table_name in ('old_models', 'old_responses');
       insert into models (name) values ('mine');`,
    );
    // The data API re-reads the catalog on a miss (at most once a second): wait until it knows the table.
    let rest = await request(server.url, `/v1/${old.appId}/rest/v1/models`, { key: old.serviceKey });
    while (rest.status !== 200) rest = await request(server.url, `/v1/${old.appId}/rest/v1/models`, { key: old.serviceKey });
    expect(rest.json).toEqual([{ id: 1, name: 'mine' }]);
    const data = await request(server.url, `/v1/${old.appId}/models`, { key: old.serviceKey });
    expect(data.status).toBe(200);
    expect(data.json).toEqual([{ id: 1, name: 'mine' }]);
    const inserted = await request(server.url, `/v1/${old.appId}/responses`, { method: 'POST', key: old.serviceKey, body: { body: 'kept' }, headers: { prefer: 'return=representation' } });
    expect(inserted.status).toBe(201);
    expect(inserted.json).toEqual([{ id: 1, body: 'kept' }]);
    const row = await request(server.url, `/v1/${old.appId}/responses/1`, { key: old.serviceKey });
    expect(row.status).toBe(200);
    expect(row.json).toEqual({ id: 1, body: 'kept' });
    // The gateway still serves the other apps, and the tables' names are refused to new tables.
    expect((await request(server.url, `/v1/${appId}/models`, { key: serviceKey })).json.object).toBe('list');
    const refused = await request(server.url, `/v1/${appId}/schema/apply`, {
      method: 'POST',
      key: serviceKey,
      body: { schema: { tables: { models: { columns: { id: { type: 'bigint', primary: true } } } } }, name: 'models' },
    });
    expect(refused.status).toBe(400);
    expect(refused.json.error.message).toContain("Table 'models': the name is reserved");
  });
});
