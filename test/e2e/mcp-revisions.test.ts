// Both MCP revisions on one URL, across two api processes behind a round-robin balancer (every HTTP request goes to
// the other process than the one before): the SDK's v1 client speaks 2025-11-25 (initialize, a session) and the 2.x
// client pinned to 2026-07-28 (server/discover, _meta on every request, no session); both build the same app. Then
// what only the new revision has: toolsets per request, input_required for the approval page, signed requestState,
// the answers for requests it does not accept.
import { randomBytes } from 'node:crypto';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { modernRequest, request, rpcMessage, signUpOwner, substrateKeyOf } from './e2e-helpers.ts';

let a: SpawnedServer;
let b: SpawnedServer;
let balancer: Server;
let balanced: string;
/** Which process each request reached, in order. */
const hits: string[] = [];
const closers: Array<() => Promise<unknown>> = [];

/** Sends each request to the other process than the last one (no affinity of any kind). */
function roundRobin(targets: SpawnedServer[]): Server {
  // The targets are added once the processes run, which are told the balancer's address first.
  let next = 0;
  return createServer((req, res) => {
    const target = targets[next++ % targets.length]!;
    hits.push(target === a ? 'a' : 'b');
    const upstream = httpRequest({ host: '127.0.0.1', port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
}

beforeAll(async () => {
  // Every process of one platform shares the master key (secrets; the requestState of 2026-07-28 calls is signed with it).
  // and the public URL, the balancer's (the approval page's address is signed into a call's requestState).
  const targets: SpawnedServer[] = [];
  balancer = roundRobin(targets);
  await new Promise<void>((resolve) => balancer.listen(0, '127.0.0.1', resolve));
  balanced = `http://127.0.0.1:${(balancer.address() as AddressInfo).port}`;
  const shared = { SVC_ROLE: 'api', SVC_MASTER_KEY: randomBytes(32).toString('hex'), SVC_BASE_URL: balanced };
  a = await spawnServer(shared);
  b = await spawnServer({ ...shared, SVC_PLATFORM_API_KEY: a.platformKey, SVC_APP_DB_PREFIX: a.appDbPrefix }, { controlDb: a.controlDb });
  targets.push(a, b);
}, 90_000);

afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  await new Promise((resolve) => balancer?.close(resolve));
  await b?.close();
  await a?.close();
});

const auth = () => ({ requestInit: { headers: { Authorization: `Bearer ${a.platformKey}` } } });

/** What the flow needs of a client, whichever SDK it is. */
interface AnyClient {
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  listTools(): Promise<{ tools: Array<{ name: string }> }>;
  readResource(params: { uri: string }): Promise<{ contents: Array<{ uri: string; text?: unknown }> }>;
}

async function v1(path = '/mcp?toolsets=all'): Promise<ClientV1> {
  const client = new ClientV1({ name: 'v1-client', version: '1.0.0' });
  await client.connect(new TransportV1(new URL(path, balanced), auth()));
  closers.push(() => client.close());
  return client;
}

async function v2(path = '/mcp?toolsets=all', capabilities = {}): Promise<Client> {
  const client = new Client({ name: 'v2-client', version: '2.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities });
  await client.connect(new StreamableHTTPClientTransport(new URL(path, balanced), auth()));
  closers.push(() => client.close());
  return client;
}

/** The JSON a tool result carries (once, as text); a failed call throws with its envelope. */
async function call(client: AnyClient, name: string, args: Record<string, unknown>): Promise<any> {
  const result = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: Array<{ type: string; text: string }> };
  const json = JSON.parse(result.content[0]!.text);
  if (result.isError) throw new Error(`${name}: ${result.content[0]!.text}`);
  return json;
}

/** An agent building a small app: create it, declare a table, write and read a row, read its schema resource, delete it. */
async function buildApp(client: AnyClient, name: string): Promise<void> {
  const app = await call(client, 'apps_create', { name });
  const schema = { tables: { notes: { access: 'public', columns: { id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' }, title: { type: 'text' } } } } };
  await call(client, 'schema_apply', { app_id: app.app_id, schema });
  const inserted = await call(client, 'data_insert', { app_id: app.app_id, table: 'notes', body: [{ title: `${name} works` }], prefer: 'return=representation' });
  expect(inserted).toMatchObject({ status: 201, data: [{ id: expect.any(String), title: `${name} works` }] });
  const selected = await call(client, 'data_select', { app_id: app.app_id, table: 'notes' });
  expect(selected.data.map((r: { title: string }) => r.title)).toEqual([`${name} works`]);
  const listed = await call(client, 'apps_list', {});
  expect(listed.apps.map((x: { app_id: string }) => x.app_id)).toContain(app.app_id);
  const resource = await client.readResource({ uri: `svc://apps/${app.app_id}/schema` });
  expect(JSON.parse(String(resource.contents[0]!.text)).tables.notes.columns.title).toMatchObject({ type: 'text' });
  await call(client, 'apps_delete', { app_id: app.app_id });
}

describe('one flow, both revisions, two processes behind a round-robin balancer', () => {
  it('the v1 SDK client gets 2025-11-25 with a session and builds the app', async () => {
    hits.length = 0;
    const client = await v1();
    expect(client.getServerVersion()).toMatchObject({ name: 'svc-platform' });
    await buildApp(client, 'Legacy');
    expect(new Set(hits)).toEqual(new Set(['a', 'b']));
  });

  it('the 2.x client pinned to 2026-07-28 gets the stateless revision and builds the same app', async () => {
    hits.length = 0;
    const client = await v2();
    expect(client.getProtocolEra()).toBe('modern');
    await buildApp(client, 'Modern');
    expect(new Set(hits)).toEqual(new Set(['a', 'b']));
  });

  it('the 2.x client in auto mode finds the new revision by server/discover', async () => {
    const client = new Client({ name: 'v2-auto', version: '2.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', balanced), auth()));
    closers.push(() => client.close());
    expect(client.getProtocolEra()).toBe('modern');
  });
});

/** A raw 2026-07-28 request to the first process. */
const modern = (method: string, params: Record<string, unknown> = {}, opts: { path?: string; headers?: Record<string, string> } = {}) =>
  modernRequest(a.url, a.platformKey, method, params, opts);

describe('the 2026-07-28 revision', () => {
  it('server/discover names the revision, the server and the toolsets of this request', async () => {
    const res = await modern('server/discover', {}, { path: '/mcp?toolsets=apps' });
    expect(res.status).toBe(200);
    const { result } = rpcMessage(res);
    expect(result.supportedVersions).toContain('2026-07-28');
    expect(result._meta['io.modelcontextprotocol/serverInfo']).toMatchObject({ name: 'svc-platform' });
    expect(result.instructions).toContain('This request has the toolsets apps;');
    expect(result.instructions).toContain('/mcp?toolsets=<comma-separated names> (or with the Mcp-Toolsets header)');
  });

  it('chooses toolsets per request, from the URL or the Mcp-Toolsets header, and refuses a tool the request did not name', async () => {
    const names = async (opts: { path?: string; headers?: Record<string, string> }) => rpcMessage(await modern('tools/list', {}, opts)).result.tools.map((t: { name: string }) => t.name);
    expect(await names({ path: '/mcp?toolsets=rag' })).toEqual(expect.arrayContaining(['rag_query']));
    expect(await names({ path: '/mcp?toolsets=rag' })).not.toContain('apps_list');
    expect(await names({ headers: { 'mcp-toolsets': 'apps' } })).toContain('apps_list');
    const refused = rpcMessage(await modern('tools/call', { name: 'apps_list', arguments: {} }, { path: '/mcp?toolsets=rag', headers: { 'mcp-name': 'apps_list' } }));
    const body = JSON.parse(refused.result.content[0].text);
    expect(refused.result.isError).toBe(true);
    expect(body.error).toMatchObject({
      code: 'TOOL_NOT_IN_TOOLSETS',
      message: "Tool 'apps_list' is in the toolset 'apps', which this request did not name (loaded: rag).",
      remediation: 'Send your requests to /mcp?toolsets=default,apps (or with the Mcp-Toolsets header), then tools/list for its tools.',
    });
    const grow = rpcMessage(await modern('tools/call', { name: 'platform_toolsets_enable', arguments: { toolsets: ['rag'] } }, { path: '/mcp?toolsets=platform', headers: { 'mcp-name': 'platform_toolsets_enable' } }));
    expect(JSON.parse(grow.result.content[0].text).error).toMatchObject({
      code: 'VALIDATION_FAILED',
      remediation: 'On MCP 2026-07-28 name the toolsets on every request: /mcp?toolsets=<names> or the Mcp-Toolsets header; on 2025-11-25 call this in a session.',
    });
  });

  it('answers a 2025 request without a session 400, and a revision it does not serve -32022', async () => {
    const legacy = await request(a.url, '/mcp', { method: 'POST', key: a.platformKey, headers: { accept: 'application/json, text/event-stream' }, body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} } });
    expect(legacy.status).toBe(400);
    expect(legacy.json.error.message).toContain('No session: send an initialize request first');
    const unknown = await modern('tools/list', { _meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } }, { headers: { 'mcp-protocol-version': '2099-01-01' } });
    expect(unknown.status).toBe(400);
    expect(rpcMessage(unknown).error).toMatchObject({ code: -32022 });
  });

  it('answers the methods the revision removed (ping, logging/setLevel, resources/subscribe) as unknown methods', async () => {
    for (const method of ['ping', 'logging/setLevel', 'resources/subscribe']) {
      const params = method === 'logging/setLevel' ? { level: 'debug' } : method === 'resources/subscribe' ? { uri: 'svc://guide/llms.txt' } : {};
      const answer = rpcMessage(await modernRequest(a.url, a.platformKey, method, params));
      expect({ method, answer }).toEqual({ method, answer: { jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'Method not found' } } });
    }
  });

  it('reads no session row: a request is served by a process that never saw the client before', async () => {
    const before = await request(b.url, '/mcp', { method: 'POST', key: a.platformKey, headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' }, body: { jsonrpc: '2.0', id: 3, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } } } });
    expect(before.status).toBe(200);
    expect(before.headers['mcp-session-id']).toBeUndefined();
    expect(rpcMessage(before).result.tools.length).toBeGreaterThan(0);
  });
});

describe('approvals on 2026-07-28: input_required sends the person to the approval page', () => {
  let humanKey: string;
  beforeAll(async () => {
    humanKey = (await substrateKeyOf(a, await signUpOwner(a), 'human')).key;
  });

  const propose = async (client: AnyClient) =>
    (await call(client, 'substrate_propose', { capability: 'record_principle', payload: { title: 'No weekend deploys', applies_to: {}, constraint_spec: { logic: { '==': [1, 1] } } } }))
      .action_id as string;

  it('the client is asked to open the page (a URL elicitation, never a form); declining changes nothing', async () => {
    const asked: Array<{ mode?: string; url?: string }> = [];
    const client = await v2('/mcp?toolsets=substrate', { elicitation: { url: {} } });
    client.setRequestHandler('elicitation/create', async (req) => {
      asked.push(req.params as { mode?: string; url?: string });
      return { action: 'decline' };
    });
    const id = await propose(client);
    const refused = (await client.callTool({ name: 'substrate_actions_approve', arguments: { action_id: id } })) as { isError?: boolean; content: Array<{ text: string }> };
    expect(refused.isError).toBe(true);
    expect(JSON.parse(refused.content[0]!.text)).toMatchObject({ status: 403, error: { code: 'HUMAN_DECLINED' } });
    expect(asked).toEqual([expect.objectContaining({ mode: 'url', url: expect.stringMatching(new RegExp(`/approve/${id}$`)) })]);
    expect((await request(a.url, `/v1/me/substrate/actions/${id}`, { key: humanKey })).json.status).toBe('proposed');
  });

  it('when the person opens the page and approves there, the retried call returns the executed action', async () => {
    const client = await v2('/mcp?toolsets=substrate', { elicitation: { url: {} } });
    client.setRequestHandler('elicitation/create', async (req) => {
      // The person, on the page the URL names, signs in and approves: here over REST with their own substrate key.
      const actionId = String((req.params as { url: string }).url).split('/').at(-1)!;
      const approved = await request(a.url, `/v1/me/substrate/actions/${actionId}/approve`, { method: 'POST', key: humanKey });
      expect(approved.status).toBe(200);
      return { action: 'accept' };
    });
    const id = await propose(client);
    expect(await call(client, 'substrate_actions_approve', { action_id: id })).toMatchObject({ action_id: id, status: 'executed' });
  });

  it('a requestState that was tampered with is refused -32602 before the tool runs', async () => {
    const res = await modern('tools/call', { name: 'substrate_actions_approve', arguments: { action_id: 'act_x' }, requestState: 'tampered', inputResponses: { page: { action: 'accept' } } }, { path: '/mcp?toolsets=substrate', headers: { 'mcp-name': 'substrate_actions_approve' } });
    expect(rpcMessage(res).error).toMatchObject({ code: -32602, message: 'Invalid or expired requestState' });
  });

  it('without URL elicitation declared, the agent is pointed to the page instead', async () => {
    const client = await v2('/mcp?toolsets=substrate');
    const id = await propose(client);
    const refused = (await client.callTool({ name: 'substrate_actions_approve', arguments: { action_id: id } })) as { content: Array<{ text: string }> };
    expect(JSON.parse(refused.content[0]!.text)).toMatchObject({ status: 403, error: { code: 'HUMAN_CONFIRMATION_REQUIRED' } });
  });
});
