// REST and MCP serve the same descriptors: same tools, same bodies, same error codes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { tools } from '../../tools/index.ts';
import { callTool, connectMcp, request, resultJson, signUpOwner, substrateKeyOf, type McpConnection } from './e2e-helpers.ts';

let server: SpawnedServer;
let mcp: McpConnection;
let appId: string;

beforeAll(async () => {
  server = await spawnServer();
  mcp = await connectMcp(server.url, server.platformKey);
  const created = await request(server.url, '/init', { method: 'POST', key: server.platformKey, body: { name: 'Parity App' } });
  expect(created.status).toBe(201);
  appId = created.json.app_id;
  expect((await request(server.url, `/apps/${appId}/keys`, { method: 'POST', key: server.platformKey, body: { name: 'second' } })).status).toBe(201);
  await substrateKeyOf(server, await signUpOwner(server), 'sub');
});

afterAll(async () => {
  await mcp?.close().catch(() => {});
  await server?.close();
});

describe('REST and MCP parity', () => {
  it('every tool with an http binding is an MCP tool of the same name, except those marked REST only (a human\'s key and settings, the OAuth callback a browser follows, the OpenAPI document an MCP resource serves)', async () => {
    const { tools: listed } = await mcp.client.listTools();
    const names = new Set(listed.map((t) => t.name));
    const httpTools = tools.filter((t) => t.http);
    expect(httpTools.length).toBeGreaterThan(0);
    for (const tool of httpTools) expect(names.has(tool.name), tool.name).toBe(tool.mcp !== false);
    expect(tools.filter((t) => t.mcp === false).map((t) => t.name)).toEqual([
      'substrate_keys_create',
      // A person's sign-in, sessions, e-mail and OpenID Connect: a browser's, never an agent's.
      'account_signup',
      'account_signin',
      'account_signout',
      'account_signout_all',
      'account_session',
      'account_session_switch',
      'account_verify_email',
      'account_verify_email_send',
      'account_password_reset',
      'account_password_reset_confirm',
      'account_signup_confirm',
      'account_oidc_providers',
      'account_oidc_start',
      'account_oidc_callback',
      // supabase-js's auth (GoTrue's protocol): a client library's wire, beside the auth tools an agent has.
      'auth_gotrue_signup',
      'auth_gotrue_token',
      'auth_gotrue_user',
      'auth_gotrue_user_update',
      'auth_gotrue_logout',
      'auth_gotrue_otp',
      'auth_gotrue_recover',
      'auth_gotrue_resend',
      'auth_gotrue_verify',
      'auth_gotrue_verify_link',
      // realtime-js's httpSend: a client library's wire, beside realtime_broadcast.
      'realtime_broadcast_event',
      // A browser's credential for realtime channels (the console's Live view); agents hold the app's keys.
      'realtime_token',
      // GET and HEAD of /rpc/{function} (postgrest-js's get and head); over MCP data_rpc with read_only.
      'data_rpc_get',
      'data_openapi',
      // OpenAI clients' model list (models.list(), models.retrieve()); an agent reads allowedModels with ai_config_get.
      'ai_models_list',
      'ai_models_get',
      'ai_responses_get',
      'substrate_yolo_set',
      'substrate_app_propose',
      'integrations_callback',
      // A person leaves an account or accepts an invitation themselves.
      'members_leave',
      'invitations_accept',
    ]);
  });

  it.each([
    ['apps_list', '/apps', {}],
    ['apps_get', '/apps/{app_id}', { app_id: '{app_id}' }],
    ['service_keys_list', '/apps/{app_id}/keys', { app_id: '{app_id}' }],
    ['substrate_keys_list', '/substrate-keys', {}],
  ])('%s: the REST body equals the MCP result', async (name, path, args) => {
    const fill = (s: string) => s.replace('{app_id}', appId);
    const rest = await request(server.url, fill(path), { key: server.platformKey });
    expect(rest.status).toBe(200);
    const result = await callTool(
      mcp.client,
      name,
      Object.fromEntries(Object.entries(args).map(([k, v]) => [k, fill(v)])),
    );
    expect(result.isError).toBeFalsy();
    expect(resultJson(result)).toEqual(rest.json);
    // Non-trivial content: the lists are not empty.
    expect(JSON.stringify(rest.json)).not.toMatch(/\[\]/);
  });

  it('platform_health: the status field matches', async () => {
    const rest = await request(server.url, '/health');
    const result = await callTool(mcp.client, 'platform_health');
    expect(rest.status).toBe(200);
    expect(result.isError).toBeFalsy();
    expect(resultJson(result).status).toBe(rest.json.status);
    expect(Object.keys(resultJson(result)).sort()).toEqual(Object.keys(rest.json).sort());
  });

  it('platform_ready: status and database match', async () => {
    const rest = await request(server.url, '/health/ready');
    const result = await callTool(mcp.client, 'platform_ready');
    expect(rest.status).toBe(200);
    expect(result.isError).toBeFalsy();
    const mcpBody = resultJson(result);
    expect({ status: mcpBody.status, database: mcpBody.database }).toEqual({ status: rest.json.status, database: rest.json.database });
    expect(Object.keys(mcpBody).sort()).toEqual(Object.keys(rest.json).sort());
  });

  it('platform_guide: the MCP text equals GET /llms.txt', async () => {
    const rest = await request(server.url, '/llms.txt');
    const result = await callTool(mcp.client, 'platform_guide');
    expect(rest.status).toBe(200);
    expect(result.isError).toBeFalsy();
    expect(resultJson(result)).toEqual({ text: rest.text });
    const restArea = await request(server.url, '/llms.txt?area=functions');
    const area = await callTool(mcp.client, 'platform_guide', { area: 'functions' });
    expect(restArea.status).toBe(200);
    expect(resultJson(area)).toEqual({ text: restArea.text });
    expect(restArea.text).not.toBe(rest.text);
  });

  it('apps_get of an app that does not exist: 404 RESOURCE_NOT_FOUND on both', async () => {
    const missing = 'zzzzzzzzzzzzzzzz';
    const rest = await request(server.url, `/apps/${missing}`, { key: server.platformKey });
    expect(rest.status).toBe(404);
    expect(rest.json.error.code).toBe('RESOURCE_NOT_FOUND');
    const result = await callTool(mcp.client, 'apps_get', { app_id: missing });
    expect(result.isError).toBe(true);
    const body = resultJson(result);
    expect(body.error.code).toBe('RESOURCE_NOT_FOUND');
    expect(body.status).toBe(404);
    // The MCP text is the REST envelope plus status.
    expect(body).toEqual({ status: rest.status, ...rest.json });
  });

  it('apps_get with a malformed app_id: 400 VALIDATION_FAILED on both, same envelope', async () => {
    const rest = await request(server.url, '/apps/NOPE', { key: server.platformKey });
    expect(rest.status).toBe(400);
    expect(rest.json.error.code).toBe('VALIDATION_FAILED');
    const result = await callTool(mcp.client, 'apps_get', { app_id: 'NOPE' });
    expect(result.isError).toBe(true);
    expect(resultJson(result)).toEqual({ status: rest.status, ...rest.json });
  });

  it('service_keys_revoke of an unknown key: 404 RESOURCE_NOT_FOUND on both', async () => {
    const keyId = '00000000-0000-4000-8000-000000000000';
    const rest = await request(server.url, `/apps/${appId}/keys/${keyId}`, { method: 'DELETE', key: server.platformKey });
    expect(rest.status).toBe(404);
    expect(rest.json.error.code).toBe('RESOURCE_NOT_FOUND');
    const result = await callTool(mcp.client, 'service_keys_revoke', { app_id: appId, key_id: keyId });
    expect(result.isError).toBe(true);
    expect(resultJson(result)).toEqual({ status: rest.status, ...rest.json });
  });
});
