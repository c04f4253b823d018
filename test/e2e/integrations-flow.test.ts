// Issue 16's done-when, against a server started like `npm start` and a fake Composio on loopback: an agent over MCP
// enables a toolkit for an app, an end user connects through the returned URL (the fake vendor completes the OAuth
// dance and calls the platform back), and the end user's tool runs through execute: over REST with their token, over
// MCP with user_token, and from a function through ctx.integrations.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { followLikeABrowser, SOFT_FAILURE_MESSAGE, startFakeComposio, type FakeComposio } from '../fakes/composio.ts';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { callTool, connectMcp, request, resultJson, UUID, type McpConnection } from './e2e-helpers.ts';

const APP_SITE = 'https://crm.example';
const PARAMS = { recipient_email: 'lead@example.com', subject: 'Proposal', body: 'Please find it attached.' };

/** Sends what it is posted through the caller's Gmail, reporting a refusal as JSON. */
const MAILER = `
export default async (req: Request, ctx: any): Promise<Response> => {
  const params = await req.json();
  try {
    return Response.json(await ctx.integrations.execute('GMAIL_SEND_EMAIL', params));
  } catch (err: any) {
    return Response.json({ name: err.name, code: err.code, status: err.status }, { status: 502 });
  }
};`;

let fake: FakeComposio;
let server: SpawnedServer;
let mcp: McpConnection;
let appId: string;
let user: { id: string; token: string };

async function tool(name: string, args: Record<string, unknown>) {
  const result = await callTool(mcp.client, name, args);
  return { result, json: resultJson(result) };
}

beforeAll(async () => {
  fake = await startFakeComposio();
  // SVC_BASE_URL stays the default http://localhost:<port>: the vendor calls back there, as a deployment's would.
  server = await spawnServer({
    SVC_INTEGRATIONS_BASE_URL: fake.url,
    SVC_INTEGRATIONS_API_KEY: fake.apiKey,
  });
  mcp = await connectMcp(server.url, server.platformKey);
  appId = (await tool('apps_create', { name: 'CRM' })).json.app_id;
  const session = (await tool('auth_signup', { app_id: appId, email: 'rep@example.com', password: 'correct horse battery' })).json;
  user = { id: session.user.id, token: session.access_token };
});

afterAll(async () => {
  await mcp?.close().catch(() => {});
  await server?.close();
  await fake?.close();
});

describe('an end user connects Gmail and their tool runs everywhere', () => {
  it('the agent finds and enables the toolkit over MCP', async () => {
    const available = await tool('integrations_available', { app_id: appId });
    expect(available.result.isError).toBeFalsy();
    expect(available.json.toolkits).toContainEqual(expect.objectContaining({ toolkit: 'gmail', curated: true, enabled: false }));
    const { result, json } = await tool('integrations_configure', { app_id: appId, toolkit: 'gmail', displayName: 'Gmail', redirectOrigins: [APP_SITE] });
    expect(result.isError).toBeFalsy();
    expect(json.integrations).toEqual([{ toolkit: 'gmail', displayName: 'Gmail', scopes: null, createdAt: expect.any(String), updatedAt: expect.any(String) }]);
    expect(json.redirectOrigins).toEqual([APP_SITE]);
  });

  it('the end user connects through the returned URL; the vendor calls back and the browser lands on the app', async () => {
    const { json } = await tool('integrations_connect', { app_id: appId, toolkit: 'gmail', redirectUrl: `${APP_SITE}/settings/integrations`, user_token: user.token });
    expect(json.connectionRequestId).toMatch(UUID);
    const { location, statuses } = await followLikeABrowser(json.authUrl, APP_SITE);
    expect(statuses).toEqual([302, 302, 302, 302]);
    expect(location.pathname).toBe('/settings/integrations');
    expect(location.searchParams.get('status')).toBe('success');
    const connections = await tool('integrations_connections_list', { app_id: appId, user_token: user.token });
    expect(connections.json.connections).toEqual([
      { id: location.searchParams.get('connectionId'), toolkit: 'gmail', userId: user.id, status: 'active', createdAt: expect.any(String) },
    ]);
  });

  it('an agent with user_token lists the user\'s connected tools and runs one over MCP', async () => {
    const tools = await tool('integrations_tools', { app_id: appId, user_token: user.token });
    expect(tools.json.tools.map((t: { name: string; connected: boolean }) => [t.name, t.connected])).toEqual([
      ['GMAIL_SEND_EMAIL', true],
      ['GMAIL_FETCH_EMAILS', true],
    ]);
    const { result, json } = await tool('integrations_execute', { app_id: appId, toolName: 'GMAIL_SEND_EMAIL', params: PARAMS, user_token: user.token });
    expect(result.isError).toBeFalsy();
    expect(json).toEqual({ successful: true, data: expect.objectContaining({ tool: 'GMAIL_SEND_EMAIL', arguments: PARAMS, user_id: `${appId}:${user.id}` }) });
    expect(resultJson(result)).toEqual(json);
  });

  it('the same tool runs over REST with the end user\'s token', async () => {
    const r = await request(server.url, `/v1/${appId}/integrations/execute`, { method: 'POST', key: user.token, body: { toolName: 'GMAIL_SEND_EMAIL', params: PARAMS } });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ successful: true, data: expect.objectContaining({ user_id: `${appId}:${user.id}` }) });
  });

  it('a function runs it as the end user whose token reached it (ctx.integrations), and refuses without one', async () => {
    const deployed = await tool('functions_deploy', { app_id: appId, name: 'mailer', code: MAILER });
    expect(deployed.result.isError).toBeFalsy();
    const asUser = await request(server.url, `/v1/${appId}/fn/mailer`, { method: 'POST', key: user.token, body: PARAMS });
    expect(asUser.status).toBe(200);
    expect(asUser.json).toEqual({ successful: true, data: expect.objectContaining({ tool: 'GMAIL_SEND_EMAIL', arguments: PARAMS, user_id: `${appId}:${user.id}` }) });
    const anonymous = await request(server.url, `/v1/${appId}/fn/mailer`, { method: 'POST', body: PARAMS });
    expect(anonymous.status).toBe(502);
    expect(anonymous.json).toEqual({ name: 'IntegrationsError', code: 'VALIDATION_FAILED', status: 400 });
  });

  it('a failing tool is an MCP error result with the standard envelope; a function sees its code and status', async () => {
    fake.faults.set('GMAIL_SEND_EMAIL', 'soft');
    const { result, json } = await tool('integrations_execute', { app_id: appId, toolName: 'GMAIL_SEND_EMAIL', params: PARAMS, user_token: user.token });
    expect(result.isError).toBe(true);
    expect(json.error).toMatchObject({ code: 'INTEGRATIONS_EXECUTION_FAILED', message: `The tool failed: ${SOFT_FAILURE_MESSAGE}` });
    const fromFunction = await request(server.url, `/v1/${appId}/fn/mailer`, { method: 'POST', key: user.token, body: PARAMS });
    expect(fromFunction.json).toEqual({ name: 'IntegrationsError', code: 'INTEGRATIONS_EXECUTION_FAILED', status: 422 });
    fake.faults.clear();
  });

  it('the agent reads every execution in the log', async () => {
    const { json } = await tool('integrations_executions', { app_id: appId });
    expect(json.executions.map((e: { successful: boolean }) => e.successful)).toEqual([false, false, true, true, true]);
    expect(json.executions.every((e: { userId: string; toolName: string }) => e.userId === user.id && e.toolName === 'GMAIL_SEND_EMAIL')).toBe(true);
  });
});
