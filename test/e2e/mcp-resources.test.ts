// Per-app resource templates and task prompts over /mcp, with the official MCP SDK client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { toolAreas } from '../../tools/index.ts';
import { callTool, connectMcp, resultJson, type McpConnection, otherAccountKey } from './e2e-helpers.ts';

let server: SpawnedServer;
let mcp: McpConnection;
let other: McpConnection;
let appId: string;
let otherAppId: string;

beforeAll(async () => {
  server = await spawnServer();
  mcp = await connectMcp(server.url, server.platformKey);
  other = await connectMcp(server.url, await otherAccountKey(server.controlDb));
  appId = JSON.parse(((await callTool(mcp.client, 'apps_create', { name: 'Resources' })).content[0] as { text: string }).text).app_id;
  otherAppId = JSON.parse(((await callTool(other.client, 'apps_create', { name: 'Theirs' })).content[0] as { text: string }).text).app_id;
  const applied = await callTool(mcp.client, 'schema_apply', {
    app_id: appId,
    schema: { tables: { notes: { columns: { id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' }, user_id: { type: 'uuid', nullable: false }, title: { type: 'text' } } } } },
  });
  expect(applied.isError).toBeFalsy();
}, 60_000);

afterAll(async () => {
  await mcp?.close().catch(() => {});
  await other?.close().catch(() => {});
  await server?.close();
});

describe('resource templates', () => {
  it('resources/templates/list lists the per-app templates', async () => {
    const { resourceTemplates } = await mcp.client.listResourceTemplates();
    expect(resourceTemplates).toEqual([
      { uriTemplate: 'svc://apps/{app_id}/schema', name: 'App schema', description: expect.any(String), mimeType: 'application/json' },
      { uriTemplate: 'svc://apps/{app_id}/routes', name: 'App routes', description: expect.any(String), mimeType: 'text/plain' },
      { uriTemplate: 'svc://apps/{app_id}/functions', name: 'App functions', description: expect.any(String), mimeType: 'application/json' },
      { uriTemplate: 'svc://apps/{app_id}/openapi', name: 'App data API (OpenAPI)', description: expect.any(String), mimeType: 'application/openapi+json' },
      { uriTemplate: 'svc://clones/{clone_id}', name: 'Clone progress', description: expect.any(String), mimeType: 'application/json' },
      { uriTemplate: 'svc://apps/{app_id}/deployments/{deployment_id}', name: 'Frontend deployment', description: expect.any(String), mimeType: 'application/json' },
      { uriTemplate: 'svc://apps/{app_id}/rag/{collection}/documents/{document_id}', name: 'RAG document', description: expect.any(String), mimeType: 'application/json' },
    ]);
  });

  it("resources/list lists the guide, its area sections and each template for the caller's own apps only", async () => {
    const areas = Object.keys(toolAreas);
    const guides = ['svc://guide/llms.txt', ...areas.map((area) => `svc://guide/${area}`), ...areas.map((area) => `svc://guide/${area}/notes`)];
    const { resources } = await mcp.client.listResources();
    expect(resources.map((r) => r.uri)).toEqual([
      ...guides,
      `svc://apps/${appId}/schema`,
      `svc://apps/${appId}/routes`,
      `svc://apps/${appId}/functions`,
      `svc://apps/${appId}/openapi`,
    ]);
    const theirs = await other.client.listResources();
    expect(theirs.resources.map((r) => r.uri)).toEqual([
      ...guides,
      `svc://apps/${otherAppId}/schema`,
      `svc://apps/${otherAppId}/routes`,
      `svc://apps/${otherAppId}/functions`,
      `svc://apps/${otherAppId}/openapi`,
    ]);
  });

  it("an area's notes are its section without the tool reference tools/list holds, as platform_guide with tools: false", async () => {
    const full = (await mcp.client.readResource({ uri: 'svc://guide/schema' })).contents[0] as { text: string };
    const notes = (await mcp.client.readResource({ uri: 'svc://guide/schema/notes' })).contents[0] as { text: string };
    const viaTool = resultJson(await callTool(mcp.client, 'platform_guide', { area: 'schema', tools: false }));
    expect(notes.text).toBe(viaTool.text);
    expect(full.text.startsWith(notes.text.trimEnd())).toBe(true);
    expect(full.text).toContain('### schema_apply: Apply a schema');
    expect(notes.text).not.toContain('### schema_apply:');
  });

  it('the schema resource of an own app is the schema schema_get returns', async () => {
    const uri = `svc://apps/${appId}/schema`;
    const read = await mcp.client.readResource({ uri });
    const viaTool = JSON.parse(((await callTool(mcp.client, 'schema_get', { app_id: appId })).content[0] as { text: string }).text);
    expect(read.contents).toHaveLength(1);
    expect(read.contents[0]).toEqual({ uri, mimeType: 'application/json', text: expect.any(String) });
    const schema = JSON.parse((read.contents[0] as { text: string }).text);
    expect(schema).toEqual(viaTool);
    expect(Object.keys(schema.tables)).toEqual(['notes']);
    expect(schema.tables.notes.access).toBe('user');
  });

  it("the schema resource of another account's app is an error (403 FORBIDDEN, as schema_get)", async () => {
    await expect(mcp.client.readResource({ uri: `svc://apps/${otherAppId}/schema` })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('403 FORBIDDEN'),
    });
    await expect(mcp.client.readResource({ uri: `svc://apps/${otherAppId}/functions` })).rejects.toMatchObject({ code: -32602 });
    await expect(mcp.client.readResource({ uri: `svc://apps/${otherAppId}/routes` })).rejects.toMatchObject({ code: -32602 });
  });

  it('the openapi resource is the body of GET /v1/{app_id}/ (data_openapi, REST only) for the same key, byte for byte', async () => {
    const uri = `svc://apps/${appId}/openapi`;
    const read = await mcp.client.readResource({ uri });
    expect(read.contents).toEqual([{ uri, mimeType: 'application/openapi+json', text: expect.any(String) }]);
    const text = (read.contents[0] as { text: string }).text;
    const rest = await fetch(`${server.url}/v1/${appId}/`, { headers: { authorization: `Bearer ${server.platformKey}` } });
    expect(rest.headers.get('content-type')).toBe('application/openapi+json; charset=utf-8');
    expect(text).toBe(await rest.text());
    const doc = JSON.parse(text);
    expect(doc).toMatchObject({ swagger: '2.0', basePath: `/v1/${appId}` });
    expect(Object.keys(doc.paths)).toEqual(['/', '/notes']);
    expect(doc.definitions.notes.properties.id).toEqual({ default: 'gen_random_uuid()', description: 'Note:\nThis is a Primary Key.<pk/>', format: 'uuid', type: 'string' });
    // Not offered as a tool: the resource is the MCP side of it.
    expect((await mcp.client.listTools()).tools.map((t) => t.name)).not.toContain('data_openapi');
    await expect(mcp.client.readResource({ uri: `svc://apps/${otherAppId}/openapi` })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('403 FORBIDDEN') });
  });

  // Resource not found is -32602 on every revision (2026-07-28 made it so; the SDK answers it on 2025-11-25 too, whose
  // -32002 clients are asked to accept either way).
  it('an unknown app is resource-not-found (-32602, naming the 404)', async () => {
    await expect(mcp.client.readResource({ uri: 'svc://apps/zzzzzzzzzzzzzzzz/schema' })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('404 RESOURCE_NOT_FOUND') });
    await expect(mcp.client.readResource({ uri: 'svc://apps/zzzzzzzzzzzzzzzz/openapi' })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('404 RESOURCE_NOT_FOUND') });
  });

  it('the functions and routes resources describe the app', async () => {
    const deployed = await callTool(mcp.client, 'functions_deploy', {
      app_id: appId,
      name: 'hello',
      code: 'export default async () => new Response("hi");',
    });
    expect(deployed.isError).toBeFalsy();
    const fns = await mcp.client.readResource({ uri: `svc://apps/${appId}/functions` });
    expect(JSON.parse((fns.contents[0] as { text: string }).text)).toEqual({
      functions: [{ name: 'hello', description: '', trigger: { type: 'http', config: {} }, url: expect.stringContaining('/hello') }],
      next_before: null,
    });
    const routes = (await mcp.client.readResource({ uri: `svc://apps/${appId}/routes` })).contents[0] as { text: string; mimeType: string };
    expect(routes.mimeType).toBe('text/plain');
    expect(routes.text).toContain(`GET /v1/${appId}/schema -> schema_get: Read the schema`);
    expect(routes.text).toContain(`POST /v1/${appId}/functions -> functions_deploy`);
  }, 60_000);
});

describe('prompts', () => {
  it('prompts/list has the task prompts with their arguments', async () => {
    const { prompts } = await mcp.client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(['create_backend', 'add_user_table', 'deploy_data_function']);
    expect(prompts.find((p) => p.name === 'add_user_table')!.arguments).toEqual([
      { name: 'app_id', description: "The app's id, from apps_list or apps_create", required: true },
      { name: 'table', description: 'Table name (default notes)', required: false },
    ]);
    expect(prompts.find((p) => p.name === 'deploy_data_function')!.arguments!.map((a) => [a.name, a.required])).toEqual([
      ['app_id', true],
      ['table', true],
    ]);
  });

  it('prompts/get renders them with the tools they name', async () => {
    const table = await mcp.client.getPrompt({ name: 'add_user_table', arguments: { app_id: appId, table: 'books' } });
    expect(table.messages).toHaveLength(1);
    const text = (table.messages[0]!.content as { text: string }).text;
    for (const s of ['schema_apply', 'access: "user"', 'user_id: { type: "uuid"', 'auth_signup', 'data_insert', 'data_select', 'user_token', appId, 'books']) {
      expect(text).toContain(s);
    }
    const fn = await mcp.client.getPrompt({ name: 'deploy_data_function', arguments: { app_id: appId, table: 'books' } });
    const fnText = (fn.messages[0]!.content as { text: string }).text;
    for (const s of ['functions_deploy', 'ctx.data.from("books").select(', 'functions_invoke', 'user_token', 'functions_logs']) {
      expect(fnText).toContain(s);
    }
    await expect(mcp.client.getPrompt({ name: 'deploy_data_function', arguments: { app_id: appId } })).rejects.toMatchObject({ code: -32602 });
  });

  it("the deploy_data_function prompt's code, deployed as is, counts only the caller's rows", async () => {
    const fn = await mcp.client.getPrompt({ name: 'deploy_data_function', arguments: { app_id: appId, table: 'notes' } });
    const text = (fn.messages[0]!.content as { text: string }).text;
    const code = text.slice(text.indexOf('export default'), text.indexOf('};\n') + 2);
    const tokens: string[] = [];
    for (const email of ['a@example.com', 'b@example.com']) {
      const session = JSON.parse(((await callTool(mcp.client, 'auth_signup', { app_id: appId, email, password: 'password123' })).content[0] as { text: string }).text);
      tokens.push(session.access_token);
    }
    for (const [i, token] of [tokens[0], tokens[0], tokens[1]].entries()) {
      const ins = await callTool(mcp.client, 'data_insert', { app_id: appId, table: 'notes', body: { title: `n${i}` }, user_token: token });
      expect(ins.isError).toBeFalsy();
    }
    const deployed = await callTool(mcp.client, 'functions_deploy', { app_id: appId, name: 'count-notes', code });
    expect(deployed.isError, JSON.stringify(deployed.content)).toBeFalsy();
    const body = async (args: Record<string, unknown>) =>
      JSON.parse(((await callTool(mcp.client, 'functions_invoke', { app_id: appId, name: 'count-notes', ...args })).content[0] as { text: string }).text).body;
    expect(await body({ user_token: tokens[0] })).toEqual({ user: expect.any(String), count: 2 });
    expect(await body({ user_token: tokens[1] })).toEqual({ user: expect.any(String), count: 1 });
    expect(await body({})).toEqual({ user: null, count: 3 });
    const logs = JSON.parse(((await callTool(mcp.client, 'functions_logs', { app_id: appId, name: 'count-notes', limit: 5 })).content[0] as { text: string }).text);
    expect(logs.logs).toHaveLength(3);
  }, 90_000);
});
