// Unknown arguments are refused, not silently dropped: REST bodies, REST query parameters and MCP tool calls all
// answer 400 VALIDATION_FAILED (an isError result over MCP) naming the unknown key and the accepted ones.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { databasesWithPrefix } from '../helpers/db.ts';
import { callTool, connectMcp, request, resultJson, type McpConnection, type RawResponse } from './e2e-helpers.ts';

let server: SpawnedServer;
let mcp: McpConnection;
let appId: string;
let serviceKey: string;

const REMEDIATION = 'Fix the named field and send the request again.';

/** 400 in the standard envelope, linking the guide section of the route's area. */
function expectRefused(res: RawResponse, message: string, area: string): void {
  expect(res.status, res.text).toBe(400);
  expect(res.json).toEqual({ error: { code: 'VALIDATION_FAILED', message, remediation: REMEDIATION, documentation_url: server.docsUrl(area), details: expect.any(Array) } });
}

beforeAll(async () => {
  server = await spawnServer();
  mcp = await connectMcp(server.url, server.platformKey);
  const created = await request(server.url, '/init', { method: 'POST', key: server.platformKey, body: { name: 'strict' } });
  expect(created.status, created.text).toBe(201);
  appId = created.json.app_id;
  serviceKey = created.json.service_key.key;
  const schema = await request(server.url, `/v1/${appId}/schema/apply`, {
    method: 'POST',
    key: serviceKey,
    body: { schema: { tables: { books: { columns: { id: { type: 'integer', primary: true }, title: { type: 'text' } } } } } },
  });
  expect(schema.status, schema.text).toBe(200);
  const rows = await request(server.url, `/v1/${appId}/books`, { method: 'POST', key: serviceKey, body: [{ id: 1, title: 'Dune' }, { id: 2, title: 'Emma' }] });
  expect(rows.status, rows.text).toBe(201);
});

afterAll(async () => {
  await mcp?.close().catch(() => {});
  await server?.close();
});

describe('REST', () => {
  it('an unknown body field is 400 VALIDATION_FAILED naming it and the accepted fields, and nothing is created', async () => {
    const before = await databasesWithPrefix(server.appDbPrefix);
    const res = await request(server.url, '/init', { method: 'POST', key: server.platformKey, body: { name: 'x', colour: 'red' } });
    expectRefused(res, 'Invalid input: Unrecognized key: "colour"; the accepted keys are name, region.', 'apps');
    expect(res.json.error.details).toEqual([{ path: '', message: 'Unrecognized key: "colour"; the accepted keys are name, region' }]);
    expect(await databasesWithPrefix(server.appDbPrefix)).toEqual(before);
  });

  it('a misspelt field is named before the missing one it stands for', async () => {
    const res = await request(server.url, `/v1/${appId}/functions`, {
      method: 'POST',
      key: serviceKey,
      body: { name: 'f', source: 'export default () => new Response("x")' },
    });
    expectRefused(
      res,
      'Invalid input: Unrecognized key: "source"; the accepted keys are app_id, name, code, description, envVars, timeoutMs, memoryLimitMb, trigger.',
      'functions',
    );
  });

  it('an unknown key in a nested option object is refused with its path', async () => {
    const res = await request(server.url, `/v1/${appId}/functions`, {
      method: 'POST',
      key: serviceKey,
      body: { name: 'f', code: 'export default () => new Response("x")', trigger: { type: 'cron', config: { schedule: '* * * * *' }, timezone: 'UTC' } },
    });
    expectRefused(res, `Invalid 'trigger': Unrecognized key: "timezone"; the accepted keys are type, config.`, 'functions');
    expect((await request(server.url, `/v1/${appId}/functions`, { key: serviceKey })).json).toEqual({ functions: [], next_before: null });
  });

  it('an unknown query parameter of a GET route is refused', async () => {
    const res = await request(server.url, `/v1/${appId}/functions/f/logs?lvl=error`, { key: serviceKey });
    expectRefused(res, 'Invalid input: Unrecognized key: "lvl"; the accepted keys are app_id, name, limit, since, until, before, level.', 'functions');
    expectRefused(await request(server.url, '/apps?verbose=1', { key: server.platformKey }), 'Invalid input: Unrecognized key: "verbose"; no keys are accepted here.', 'apps');
    // Declared query parameters still work.
    expect((await request(server.url, `/storage/${appId}/objects?limit=5&offset=0`, { key: serviceKey })).status).toBe(200);
  });

  it('a query parameter on a body route is refused instead of ignored (dry_run=true must not apply)', async () => {
    const res = await request(server.url, `/v1/${appId}/schema/apply?dry_run=true`, {
      method: 'POST',
      key: serviceKey,
      body: { schema: { tables: { notes: { columns: { id: { type: 'integer', primary: true } } } } } },
    });
    expectRefused(res, `Unrecognized query parameter: "dry_run"; POST /v1/{app_id}/schema/apply takes its arguments in the JSON body.`, 'schema');
    expect(Object.keys((await request(server.url, `/v1/${appId}/schema`, { key: serviceKey })).json.tables)).toEqual(['books']);
  });

  it('user data keeps any keys: row bodies, and the data API query string', async () => {
    const inserted = await request(server.url, `/v1/${appId}/books?select=title`, {
      method: 'POST',
      key: serviceKey,
      headers: { prefer: 'return=representation' },
      body: { id: 3, title: 'Ulysses' },
    });
    expect(inserted.status, inserted.text).toBe(201);
    expect(inserted.json).toEqual([{ title: 'Ulysses' }]);
    // A header the binding maps but this tool does not declare (Range on a by-id route) is no unknown argument.
    const byId = await request(server.url, `/v1/${appId}/books/1?select=title`, { key: serviceKey, headers: { range: 'items=0-0' } });
    expect(byId.status, byId.text).toBe(200);
    expect(byId.json).toEqual({ title: 'Dune' });
    // Unknown columns are the database's business (PostgREST's 400), not an unknown argument.
    const col = await request(server.url, `/v1/${appId}/books?colour=eq.red`, { key: serviceKey });
    expect(col.status).toBe(400);
    expect(col.json.error.code).toBe('UNKNOWN_COLUMN');
  });

  it('/openapi.json says request bodies take no other properties', async () => {
    const doc = (await request(server.url, '/openapi.json')).json;
    const body = doc.paths['/init'].post.requestBody.content['application/json'].schema;
    expect(body).toMatchObject({ type: 'object', properties: { name: expect.any(Object) }, required: ['name'], additionalProperties: false });
  });
});

describe('MCP', () => {
  it('data_select with `filter` (not an argument) is an isError VALIDATION_FAILED naming it and `query`, not unfiltered rows', async () => {
    const result = await callTool(mcp.client, 'data_select', { app_id: appId, table: 'books', filter: 'title=eq.Dune' });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect(resultJson(result)).toEqual({
      status: 400,
      error: {
        code: 'VALIDATION_FAILED',
        message: 'Invalid input: Unrecognized key: "filter"; the accepted keys are app_id, table, query, accept, user_token, prefer, range.',
        remediation: REMEDIATION,
        documentation_url: server.docsUrl('data'),
        details: [{ path: '', message: 'Unrecognized key: "filter"; the accepted keys are app_id, table, query, accept, user_token, prefer, range' }],
      },
    });
    const ok = await callTool(mcp.client, 'data_select', { app_id: appId, table: 'books', query: 'select=title&title=eq.Dune' });
    expect(ok.isError).toBeFalsy();
    expect(resultJson(ok)).toMatchObject({ status: 200, data: [{ title: 'Dune' }] });
  });

  it('several unknown keys are all named', async () => {
    const result = await callTool(mcp.client, 'apps_get', { appId, verbose: true });
    expect(result.isError).toBe(true);
    expect(resultJson(result).error.message).toBe('Invalid input: Unrecognized keys: "appId", "verbose"; the accepted keys are app_id.');
  });

  it('tools/list input schemas say additionalProperties: false, except ai_chat and ai_responses_create, which take OpenAI fields', async () => {
    const { tools: listed } = await mcp.client.listTools();
    for (const tool of listed) {
      if (tool.name === 'ai_chat' || tool.name === 'ai_responses_create') expect(tool.inputSchema.additionalProperties, tool.name).toEqual({});
      else expect(tool.inputSchema.additionalProperties, tool.name).toBe(false);
    }
  });

  it('protocol errors are prefixed once ("MCP error -32602: ..."), not twice', async () => {
    const err = await mcp.client.getPrompt({ name: 'no_such_prompt' }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).message).toBe('MCP error -32602: Unknown prompt no_such_prompt; call prompts/list.');
    const missing = await mcp.client.readResource({ uri: 'svc://no/such' }).then(() => undefined, (e: unknown) => e);
    expect((missing as McpError).message).toBe('MCP error -32602: Unknown resource svc://no/such; call resources/list.');
  });
});
