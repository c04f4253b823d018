// End to end over /mcp with the official MCP SDK client against a server started like `npm start`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { databasesWithPrefix } from '../helpers/db.ts';
import { toolAreas, tools } from '../../tools/index.ts';
import { appMigrations } from '../../src/apps/app-migrations.ts';
import { APP_ID, INIT_BODY, ISO_DATE, MCP_HEADERS, UUID, callTool, connectMcp, request, resultJson, type McpConnection } from './e2e-helpers.ts';


let server: SpawnedServer;
let mcp: McpConnection;

beforeAll(async () => {
  server = await spawnServer();
  mcp = await connectMcp(server.url, server.platformKey);
});

afterAll(async () => {
  await mcp?.close().catch(() => {});
  await server?.close();
});

describe('/mcp authentication', () => {
  it('the SDK client cannot connect without a key', async () => {
    const err = await connectMcp(server.url, undefined).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StreamableHTTPError);
    expect((err as StreamableHTTPError).code).toBe(401);
  });

  it('a raw POST /mcp without Authorization is 401 AUTH_REQUIRED', async () => {
    const res = await request(server.url, '/mcp', { method: 'POST', body: INIT_BODY, headers: MCP_HEADERS });
    expect(res.status).toBe(401);
    // The challenge points at the resource metadata, where an OAuth client finds the authorization server.
    expect(res.headers['www-authenticate']).toBe(`Bearer resource_metadata="http://localhost:${server.port}/.well-known/oauth-protected-resource/mcp"`);
    expect(res.json).toEqual({
      error: { code: 'AUTH_REQUIRED', message: expect.any(String), remediation: expect.any(String), documentation_url: server.docsUrl() },
    });
  });

  it('a bogus platform key is 401 AUTH_INVALID_TOKEN', async () => {
    const res = await request(server.url, '/mcp', {
      method: 'POST',
      key: 'svc_pk_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',
      body: INIT_BODY,
      headers: MCP_HEADERS,
    });
    expect(res.status).toBe(401);
    expect(res.json.error.code).toBe('AUTH_INVALID_TOKEN');
    await expect(connectMcp(server.url, 'svc_pk_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx')).rejects.toMatchObject({ code: 401 });
  });

  it('a service key gets 403 FORBIDDEN on /mcp', async () => {
    const created = await callTool(mcp.client, 'apps_create', { name: 'mcp forbidden' });
    const serviceKey = resultJson(created).service_key.key;
    expect(serviceKey.startsWith('svc_sk_')).toBe(true);

    const res = await request(server.url, '/mcp', { method: 'POST', key: serviceKey, body: INIT_BODY, headers: MCP_HEADERS });
    expect(res.status).toBe(403);
    expect(res.json.error.code).toBe('FORBIDDEN');
    await expect(connectMcp(server.url, serviceKey)).rejects.toMatchObject({ code: 403 });
  });

  it('an unknown Mcp-Session-Id gets 404', async () => {
    const res = await request(server.url, '/mcp', {
      method: 'POST',
      key: server.platformKey,
      body: { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} },
      headers: { ...MCP_HEADERS, 'mcp-session-id': '00000000-0000-4000-8000-000000000000' },
    });
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ jsonrpc: '2.0', error: { code: -32000, message: expect.any(String) }, id: null });
  });

  it('a request without a session that is not initialize is 400', async () => {
    const res = await request(server.url, '/mcp', {
      method: 'POST',
      key: server.platformKey,
      body: { jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} },
      headers: MCP_HEADERS,
    });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ jsonrpc: '2.0', error: { code: -32000, message: expect.any(String) }, id: null });
  });

  it('a terminated session (DELETE /mcp) is gone: its id then gets 404', async () => {
    const conn = await connectMcp(server.url, server.platformKey);
    const sessionId = conn.transport.sessionId;
    expect(sessionId).toMatch(UUID);
    await conn.transport.terminateSession();
    await conn.client.close();
    const res = await request(server.url, '/mcp', {
      method: 'POST',
      key: server.platformKey,
      body: { jsonrpc: '2.0', id: 4, method: 'tools/list', params: {} },
      headers: { ...MCP_HEADERS, 'mcp-session-id': sessionId! },
    });
    expect(res.status).toBe(404);
  });
});

describe('/mcp tools', () => {
  it('listTools returns exactly the registry, each with an object inputSchema and a description', async () => {
    const { tools: listed } = await mcp.client.listTools();
    expect(listed.map((t) => t.name).sort()).toEqual(tools.filter((t) => t.mcp !== false).map((t) => t.name).sort());
    for (const t of listed) {
      expect(t.inputSchema.type, t.name).toBe('object');
      expect(typeof t.description, t.name).toBe('string');
      expect(t.description!.length, t.name).toBeGreaterThan(0);
    }
  });

  it('apps_create, apps_list, apps_get and apps_delete manage an app and its database', async () => {
    const created = await callTool(mcp.client, 'apps_create', { name: 'MCP Notes' });
    expect(created.isError).toBeFalsy();
    const app = resultJson(created);
    expect(app).toEqual({
      app_id: expect.stringMatching(APP_ID),
      name: 'MCP Notes',
      subdomain: expect.stringMatching(/^mcp-notes-[a-z0-9]{6}$/),
      url: expect.stringMatching(new RegExp(`^http://mcp-notes-[a-z0-9]{6}\\.localhost:${server.port}$`)),
      region: 'local',
      created_at: expect.stringMatching(ISO_DATE),
      paused_at: null,
      service_key: {
        id: expect.stringMatching(UUID),
        name: 'default',
        hint: expect.any(String),
        created_at: expect.stringMatching(ISO_DATE),
        key: expect.stringMatching(/^svc_sk_/),
      },
      publishable_key: expect.stringMatching(/^svc_pub_/),
    });
    // The JSON once: one text item, no structuredContent.
    expect(created.content).toEqual([{ type: 'text', text: JSON.stringify(app) }]);
    expect(created).not.toHaveProperty('structuredContent');
    const { service_key: serviceKey, publishable_key: _publishable, ...view } = app;
    const dbName = server.appDbPrefix + app.app_id;
    expect(await databasesWithPrefix(dbName)).toEqual([dbName]);

    const listed = await callTool(mcp.client, 'apps_list');
    expect(listed.isError).toBeFalsy();
    expect(resultJson(listed).apps).toContainEqual(view);

    const got = await callTool(mcp.client, 'apps_get', { app_id: app.app_id });
    expect(got.isError).toBeFalsy();
    // apps_get adds the version of the app database: created at the latest app migration of this release.
    expect(resultJson(got)).toEqual({ ...view, migration_version: (await appMigrations()).length });

    // The service key works over REST before the delete.
    expect((await request(server.url, `/apps/${app.app_id}`, { key: serviceKey.key })).status).toBe(200);

    const deleted = await callTool(mcp.client, 'apps_delete', { app_id: app.app_id });
    expect(deleted.isError).toBeFalsy();
    expect(resultJson(deleted)).toEqual({ deleted: true, app_id: app.app_id });
    expect(await databasesWithPrefix(dbName)).toEqual([]);

    const after = await request(server.url, `/apps/${app.app_id}`, { key: serviceKey.key });
    expect(after.status).toBe(401);
    expect(after.json.error.code).toBe('AUTH_INVALID_TOKEN');

    const listedAfter = await callTool(mcp.client, 'apps_list');
    expect(resultJson(listedAfter).apps.map((a: { app_id: string }) => a.app_id)).not.toContain(app.app_id);

    const gone = await callTool(mcp.client, 'apps_get', { app_id: app.app_id });
    expect(gone.isError).toBe(true);
    expect(resultJson(gone)).toMatchObject({ status: 404, error: { code: 'RESOURCE_NOT_FOUND' } });
  });

  it.each([
    ['apps_create', {}],
    ['apps_create', { name: '' }],
    ['apps_create', { name: 'x'.repeat(101) }],
    ['apps_get', { app_id: 'NOPE' }],
  ])('%s with bad arguments %j is an isError result with VALIDATION_FAILED', async (name, args) => {
    const before = await databasesWithPrefix(server.appDbPrefix);
    const result = await callTool(mcp.client, name, args);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    const body = resultJson(result);
    expect(body).toEqual({
      status: 400,
      error: { code: 'VALIDATION_FAILED', message: expect.any(String), remediation: expect.any(String), documentation_url: server.docsUrl('apps'), details: expect.any(Array) },
    });
    expect(body.error.message).toContain(name === 'apps_get' ? "'app_id'" : "'name'");
    expect(await databasesWithPrefix(server.appDbPrefix)).toEqual(before);

    // The session keeps working after a failed call.
    const ok = await callTool(mcp.client, 'platform_health');
    expect(ok.isError).toBeFalsy();
    expect(resultJson(ok).status).toBe('ok');
  });

  it('an unknown tool name is an isError result with RESOURCE_NOT_FOUND', async () => {
    const result = await callTool(mcp.client, 'no_such_tool');
    expect(result.isError).toBe(true);
    expect(resultJson(result)).toEqual({
      status: 404,
      error: { code: 'RESOURCE_NOT_FOUND', message: expect.stringContaining('no_such_tool'), remediation: expect.any(String), documentation_url: server.docsUrl() },
    });
    const ok = await callTool(mcp.client, 'apps_list');
    expect(ok.isError).toBeFalsy();
  });

  it('suggestions_create works over MCP and validates its input', async () => {
    const ok = await callTool(mcp.client, 'suggestions_create', { category: 'improvement', description: 'from mcp', source: 'agent' });
    expect(ok.isError).toBeFalsy();
    expect(resultJson(ok)).toEqual({ id: expect.stringMatching(UUID), status: 'received', created_at: expect.stringMatching(ISO_DATE) });
    const bad = await callTool(mcp.client, 'suggestions_create', { category: 'nope', description: 'x' });
    expect(bad.isError).toBe(true);
    expect(resultJson(bad)).toMatchObject({ status: 400, error: { code: 'VALIDATION_FAILED' } });
  });
});

describe('/mcp resources and prompts', () => {
  it('lists the guide resource and reads the same text as GET /llms.txt', async () => {
    const { resources } = await mcp.client.listResources();
    expect(resources.map((r) => r.uri)).toContain('svc://guide/llms.txt');
    const read = await mcp.client.readResource({ uri: 'svc://guide/llms.txt' });
    expect(read.contents).toHaveLength(1);
    const content = read.contents[0]!;
    expect(content.uri).toBe('svc://guide/llms.txt');
    const rest = await request(server.url, '/llms.txt');
    expect(rest.status).toBe(200);
    expect('text' in content ? content.text : undefined).toBe(rest.text);
  });

  it("each area's section is a resource, the same text as GET /llms.txt?area= and platform_guide with area", async () => {
    const { resources } = await mcp.client.listResources();
    for (const area of Object.keys(toolAreas)) {
      const uri = `svc://guide/${area}`;
      expect(resources.find((r) => r.uri === uri), uri).toMatchObject({ name: `Guide: ${area}`, mimeType: 'text/plain' });
      const read = await mcp.client.readResource({ uri });
      const text = (read.contents[0] as { text: string }).text;
      expect(text).toContain(`# svc platform: the ${area} area`);
      for (const t of toolAreas[area]!) expect(text).toContain(`### ${t.name}: `);
      const rest = await request(server.url, `/llms.txt?area=${area}`);
      expect(rest.status).toBe(200);
      expect(rest.headers['content-type']).toMatch(/^text\/plain/);
      expect(rest.text).toBe(text);
      const tool = await callTool(mcp.client, 'platform_guide', { area });
      expect(resultJson(tool)).toEqual({ text });
    }
  });

  it('an unknown area is 400 VALIDATION_FAILED naming the areas, over REST and MCP', async () => {
    const rest = await request(server.url, '/llms.txt?area=nope');
    expect(rest.status).toBe(400);
    expect(rest.json.error.code).toBe('VALIDATION_FAILED');
    expect(rest.json.error.message).toContain('area');
    for (const area of Object.keys(toolAreas)) expect(JSON.stringify(rest.json.error)).toContain(area);
    const tool = await callTool(mcp.client, 'platform_guide', { area: 'nope' });
    expect(tool.isError).toBe(true);
    expect(resultJson(tool)).toMatchObject({ status: 400, error: { code: 'VALIDATION_FAILED' } });
  });

  it('lists create_backend and renders it', async () => {
    const { prompts } = await mcp.client.listPrompts();
    const prompt = prompts.find((p) => p.name === 'create_backend');
    expect(prompt).toBeDefined();
    expect(prompt!.arguments).toEqual([{ name: 'idea', description: expect.any(String), required: true }]);
    const got = await mcp.client.getPrompt({ name: 'create_backend', arguments: { idea: 'a recipe sharing site' } });
    expect(got.messages).toHaveLength(1);
    expect(got.messages[0]!.role).toBe('user');
    const content = got.messages[0]!.content;
    expect(content.type).toBe('text');
    expect(content.type === 'text' ? content.text : '').toContain('a recipe sharing site');
  });

  // MCP spec (server/prompts "Error Handling"): an unknown prompt name and missing required arguments are
  // -32602 Invalid params; -32603 Internal error is for failures of the server itself.
  it('getPrompt with an unknown name or without a required argument is -32602 InvalidParams', async () => {
    const missingArg = await mcp.client.getPrompt({ name: 'create_backend', arguments: {} }).then(() => undefined, (e: unknown) => e);
    expect(missingArg).toBeInstanceOf(McpError);
    expect((missingArg as McpError).code).toBe(ErrorCode.InvalidParams);
    const unknown = await mcp.client.getPrompt({ name: 'no_such_prompt' }).then(() => undefined, (e: unknown) => e);
    expect(unknown).toBeInstanceOf(McpError);
    expect((unknown as McpError).code).toBe(ErrorCode.InvalidParams);
    // The session keeps working.
    expect((await mcp.client.listPrompts()).prompts.length).toBeGreaterThan(0);
  });

  // MCP spec (server/resources "Error Handling"): resource not found is -32002 (2025-06-18), -32602 since SEP-2164;
  // either way not -32603 Internal error.
  it('readResource of an unknown uri is a not-found protocol error, not an internal error', async () => {
    const err = await mcp.client.readResource({ uri: 'svc://no/such/resource' }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    expect([-32002, ErrorCode.InvalidParams]).toContain((err as McpError).code);
    expect((await mcp.client.listResources()).resources.length).toBeGreaterThan(0);
  });
});
