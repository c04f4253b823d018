// The standard envelope's documentation_url (issue 26): the guide section of the area of the tool whose call failed,
// the guide itself for errors of no one area, and nothing in OpenAI's shape; the link serves what it names.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { callTool, connectMcp, request, resultJson, type McpConnection } from './e2e-helpers.ts';

let server: SpawnedServer;
let mcp: McpConnection;
/** The server's SVC_BASE_URL (its default, http://localhost:<PORT>), which documentation_url starts with. */
let base: string;
let appId: string;
let serviceKey: string;

beforeAll(async () => {
  server = await spawnServer();
  base = `http://localhost:${server.port}`;
  mcp = await connectMcp(server.url, server.platformKey);
  const app = resultJson(await callTool(mcp.client, 'apps_create', { name: 'error envelope' }));
  appId = app.app_id;
  serviceKey = app.service_key.key;
});

afterAll(async () => {
  await mcp?.close().catch(() => {});
  await server?.close();
});

const NO_TABLE = {
  code: 'RESOURCE_NOT_FOUND',
  message: "Table 'no_such_table' not found.",
  remediation: 'Create it with schema_apply, or list tables with schema_get.',
};

describe('documentation_url', () => {
  it("a data tool's error over REST links the data section, beside PostgREST's fields", async () => {
    const res = await request(server.url, `/v1/${appId}/no_such_table`, { key: serviceKey });
    expect(res.status).toBe(404);
    expect(res.json).toEqual({
      code: 'PGRST205',
      message: "Could not find the table 'public.no_such_table' in the schema cache",
      details: null,
      hint: null,
      error: { ...NO_TABLE, documentation_url: `${base}/llms.txt?area=data` },
    });
    expect(Object.keys(res.json.error)).toEqual(['code', 'message', 'remediation', 'documentation_url']);
  });

  it("an MCP tool's error carries the same envelope, linking its area's section", async () => {
    const result = await callTool(mcp.client, 'data_select', { app_id: appId, table: 'no_such_table' });
    expect(result.isError).toBe(true);
    expect(resultJson(result)).toEqual({ status: 404, error: { ...NO_TABLE, documentation_url: `${base}/llms.txt?area=data` } });
  });

  it('an error of no one area (an unknown route, a body that is not JSON) links the guide', async () => {
    const route = await request(server.url, '/no/such/route');
    expect(route.status).toBe(404);
    expect(route.json).toEqual({
      error: {
        code: 'ROUTE_NOT_FOUND',
        message: 'No route GET /no/such/route.',
        remediation: "See /openapi.json for the routes this server offers (one area's routes and tools: /llms.txt?area=<area>).",
        documentation_url: `${base}/llms.txt`,
      },
    });
    const json = await request(server.url, '/apps', { method: 'POST', key: server.platformKey, body: '{nope' });
    expect(json.status).toBe(400);
    expect(json.json).toEqual({
      error: {
        code: 'INVALID_JSON',
        message: 'The request body is not valid JSON.',
        remediation: 'Send a well-formed JSON body with Content-Type: application/json.',
        documentation_url: `${base}/llms.txt`,
      },
    });
  });

  it("a raw route names its area: a function invocation's error links the functions section", async () => {
    const res = await request(server.url, `/v1/${appId}/fn/nope`, { key: serviceKey });
    expect(res.status).toBe(404);
    expect(res.json.error).toMatchObject({ code: 'RESOURCE_NOT_FOUND', documentation_url: `${base}/llms.txt?area=functions` });
  });

  it("OpenAI-shaped errors (chat completions) keep OpenAI's shape, without documentation_url", async () => {
    const res = await request(server.url, `/v1/${appId}/chat/completions`, { method: 'POST', body: { messages: [{ role: 'user', content: 'x' }] } });
    expect(res.status).toBe(401);
    expect(res.json).toEqual({
      error: {
        message: 'This route needs a credential. Send Authorization: Bearer <key or token>.',
        type: 'authentication_error',
        code: 'missing_credentials',
        param: null,
      },
    });
  });

  it('the links serve what they name: the area section and the guide, as text', async () => {
    const section = await request(`${base}/llms.txt?area=data`, '');
    expect(section.status).toBe(200);
    expect(section.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(section.text.startsWith('# svc platform: the data area\n')).toBe(true);
    const guide = await request(`${base}/llms.txt`, '');
    expect(guide.status).toBe(200);
    expect(guide.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(guide.text).toContain('documentation_url');
  });
});
