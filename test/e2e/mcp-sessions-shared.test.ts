// MCP sessions across api processes: two `SVC_ROLE=api` processes on one control database, driven by the official
// MCP SDK client whose fetch sends each HTTP request to the process the test names (as a load balancer without
// session affinity may). The worker is not running, so the tools used need no jobs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema, type ClientCapabilities, type LoggingMessageNotification } from '@modelcontextprotocol/sdk/types.js';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { databaseUrl } from '../helpers/db.ts';
import { toolAreas } from '../../tools/index.ts';
import { INIT_BODY, MCP_HEADERS, callTool, request, resultJson, otherAccountKey } from './e2e-helpers.ts';
import { MAX_SESSIONS_PER_ACCOUNT } from '../../src/transports/mcp-sessions.ts';

let a: SpawnedServer;
let b: SpawnedServer;
let control: pg.Client;
const open: Client[] = [];

beforeAll(async () => {
  a = await spawnServer({ SVC_ROLE: 'api' });
  b = await spawnServer({ SVC_ROLE: 'api', SVC_PLATFORM_API_KEY: a.platformKey, SVC_APP_DB_PREFIX: a.appDbPrefix }, { controlDb: a.controlDb });
  control = new pg.Client({ connectionString: databaseUrl(a.controlDb) });
  await control.connect();
}, 90_000);

afterAll(async () => {
  await Promise.all(open.map((c) => c.close().catch(() => {})));
  await control?.end();
  await b?.close();
  await a?.close();
});

/** An MCP client whose every HTTP request goes to `route.to` at the time it is sent; `route.hits` records where each went. */
interface Routed {
  client: Client;
  transport: StreamableHTTPClientTransport;
  route: { to: SpawnedServer; hits: string[] };
  /** The log messages the client received. */
  messages: Array<LoggingMessageNotification['params']>;
}

async function connectVia(first: SpawnedServer, path = '/mcp', capabilities: ClientCapabilities = {}, key = a.platformKey): Promise<Routed> {
  const route = { to: first, hits: [] as string[] };
  const routed = (input: string | URL, init?: RequestInit) => {
    const url = new URL(input);
    url.port = String(route.to.port);
    route.hits.push(`${init?.method ?? 'GET'} ${route.to === a ? 'a' : 'b'}`);
    return fetch(url, init);
  };
  const transport = new StreamableHTTPClientTransport(new URL(path, first.url), {
    fetch: routed,
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  const client = new Client({ name: 'svc-shared-sessions', version: '0.0.0' }, { capabilities });
  const messages: Routed['messages'] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void messages.push(n.params));
  await client.connect(transport);
  open.push(client);
  return { client, transport, route, messages };
}

/** A raw tools/list of the session, on one process. */
function listOn(server: SpawnedServer, sessionId: string, key = a.platformKey) {
  return request(server.url, '/mcp', {
    method: 'POST',
    key,
    body: { jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} },
    headers: { ...MCP_HEADERS, 'mcp-session-id': sessionId },
  });
}

/** The POSTs among the routed requests (the client opens its GET stream when it sees fit). */
const posts = (s: Routed) => s.route.hits.filter((h) => h.startsWith('POST'));

const mcpNames = (area: string) => toolAreas[area]!.filter((t) => t.mcp !== false).map((t) => t.name);

describe('an MCP session on two api processes', () => {
  it('is opened on A and serves tools/call on B', async () => {
    const s = await connectVia(a);
    expect(s.route.hits.every((h) => h.endsWith(' a'))).toBe(true);
    s.route.to = b;
    s.route.hits.length = 0;
    const listed = await callTool(s.client, 'apps_list');
    expect(listed.isError).toBeFalsy();
    expect(resultJson(listed)).toEqual({ apps: [] });
    expect(posts(s)).toEqual(['POST b']);
    const guide = await callTool(s.client, 'platform_guide', {});
    expect(guide.isError).toBeFalsy();
  });

  it('answers requests alternating between the processes (round robin)', async () => {
    const s = await connectVia(a);
    for (const to of [b, a, b, a, b, a]) {
      s.route.to = to;
      expect((await callTool(s.client, 'apps_list')).isError).toBeFalsy();
    }
    expect(posts(s).slice(-6)).toEqual(['POST b', 'POST a', 'POST b', 'POST a', 'POST b', 'POST a']);
  });

  it('lists on A the toolsets platform_toolsets_enable added on B, although A holds the session in memory', async () => {
    const s = await connectVia(a, '/mcp?toolsets=platform');
    expect((await s.client.listTools()).tools.map((t) => t.name).sort()).toEqual(mcpNames('platform').sort());
    s.route.to = b;
    const enabled = resultJson(await callTool(s.client, 'platform_toolsets_enable', { toolsets: ['apps'] }));
    expect(enabled).toMatchObject({ toolsets: ['platform', 'apps'], added: ['apps'] });
    s.route.to = a;
    const names = (await s.client.listTools()).tools.map((t) => t.name);
    expect(names.sort()).toEqual([...mcpNames('platform'), ...mcpNames('apps')].sort());
    expect((await callTool(s.client, 'apps_list')).isError).toBeFalsy();
  });

  it('keeps on B the log level logging/setLevel set on A', async () => {
    const s = await connectVia(a);
    await s.client.setLoggingLevel('debug');
    s.route.to = b;
    s.messages.length = 0;
    await callTool(s.client, 'apps_list');
    expect(s.messages.map((m) => m.level)).toEqual(['debug', 'info']);
    s.route.to = a;
    await s.client.setLoggingLevel('warning');
    s.route.to = b;
    s.messages.length = 0;
    await callTool(s.client, 'apps_list');
    expect(s.messages).toEqual([]);
  });

  it("refuses another account's key on either process, as a single process does", async () => {
    const s = await connectVia(a);
    const otherKey = await otherAccountKey(a.controlDb);
    for (const server of [a, b]) {
      const res = await listOn(server, s.transport.sessionId!, otherKey);
      expect(res.status).toBe(403);
      expect(res.json.error).toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining('a credential of the account that opened this session') });
    }
    expect((await listOn(b, s.transport.sessionId!)).status).toBe(200);
  });

  it('is gone on A once DELETEd on B: A answers 404', async () => {
    const s = await connectVia(a);
    await s.client.listTools();
    const id = s.transport.sessionId!;
    s.route.to = b;
    await s.transport.terminateSession();
    const { rows } = await control.query(`select 1 from mcp_sessions where id = $1`, [id]);
    expect(rows).toEqual([]);
    const res = await listOn(a, id);
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ jsonrpc: '2.0', error: { code: -32000, message: 'Session not found; initialize a new session.' }, id: null });
  });

  it('refuses an initialize whose capabilities would park more than 16 KB in the session row, and stores nothing', async () => {
    const { rows: before } = await control.query(`select count(*)::int as n from mcp_sessions`);
    const params = { protocolVersion: '2025-06-18', capabilities: { experimental: { padding: { data: 'x'.repeat(17 * 1024) } } }, clientInfo: { name: 'big', version: '1' } };
    const res = await request(a.url, '/mcp', { method: 'POST', key: a.platformKey, headers: MCP_HEADERS, body: { jsonrpc: '2.0', id: 1, method: 'initialize', params } });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringContaining('at most 16384 are accepted') });
    const { rows: after } = await control.query(`select count(*)::int as n from mcp_sessions`);
    expect(after).toEqual(before);
  });

  it(`keeps at most ${MAX_SESSIONS_PER_ACCOUNT} sessions per account: opening one more ends the least recently used`, async () => {
    // A raw initialize: an SDK client would go on with requests that mark the session used.
    const opened = await request(a.url, '/mcp', { method: 'POST', key: a.platformKey, headers: MCP_HEADERS, body: INIT_BODY });
    const id = String(opened.headers['mcp-session-id']);
    const { rows } = await control.query<{ account_id: string }>(`select account_id from mcp_sessions where id = $1`, [id]);
    const account = rows[0]!.account_id;
    // The account's other sessions, all used more lately than this one.
    await control.query(`update mcp_sessions set last_seen = now() - interval '20 minutes' where id = $1`, [id]);
    await control.query(
      `insert into mcp_sessions (id, account_id, toolsets, log_level, initialize, last_seen)
       select 'filler-' || n, $1, '{apps}', 'info', '{}', now() - interval '10 minutes' from generate_series(1, $2::int) n`,
      [account, MAX_SESSIONS_PER_ACCOUNT],
    );
    const next = await connectVia(b);
    const { rows: left } = await control.query<{ id: string }>(`select id from mcp_sessions where account_id = $1`, [account]);
    expect(left).toHaveLength(MAX_SESSIONS_PER_ACCOUNT);
    expect(left.map((r) => r.id)).toContain(next.transport.sessionId);
    expect(left.map((r) => r.id)).not.toContain(id);
    expect((await listOn(a, id)).status).toBe(404);
    await control.query(`delete from mcp_sessions where id like 'filler-%'`);
  });

  it('expires when idle for MCP_SESSION_IDLE_MS: 404 on both processes, which both cached it', async () => {
    const s = await connectVia(a);
    const id = s.transport.sessionId!;
    expect((await listOn(b, id)).status).toBe(200);
    await control.query(`update mcp_sessions set last_seen = now() - interval '31 minutes' where id = $1`, [id]);
    // The next session opened anywhere deletes the expired rows, and every process hears it.
    await connectVia(b);
    expect((await listOn(a, id)).status).toBe(404);
    expect((await listOn(b, id)).status).toBe(404);
  });

  it('sends a URL elicitation from B, which learnt the client can take one from the initialize A received', async () => {
    const s = await connectVia(a, '/mcp?toolsets=substrate', { elicitation: { url: {} } });
    const asked: Array<{ mode?: string; url?: string }> = [];
    s.client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params as { mode?: string; url?: string });
      return { action: 'decline' };
    });
    const proposed = resultJson(await callTool(s.client, 'substrate_propose', { capability: 'retire_principle', payload: { principle_id: 'prn_x', reason: 'r' } }));
    expect(proposed.requires_approval).toBe(true);
    // B answers the call and receives the client's answer to its elicitation: both requests reach B.
    s.route.to = b;
    const rejected = await callTool(s.client, 'substrate_actions_reject', { action_id: proposed.action_id });
    expect(resultJson(rejected)).toMatchObject({ status: 403, error: { code: 'HUMAN_DECLINED' } });
    expect(asked).toEqual([expect.objectContaining({ mode: 'url', url: `http://localhost:${b.port}/approve/${proposed.action_id}` })]);
  });

  it('tells a session of the resources it subscribed to on B, on the stream A holds, when an app changes on B', async () => {
    const s = await connectVia(a, '/mcp?toolsets=all');
    const updated: string[] = [];
    s.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
    // The client opens its standalone stream after initialize: that stream is A's.
    await expect.poll(() => s.route.hits).toContain('GET a');
    const watched = resultJson(await callTool(s.client, 'apps_create', { name: 'Watched' })).app_id as string;
    const other = resultJson(await callTool(s.client, 'apps_create', { name: 'Unwatched' })).app_id as string;
    s.route.to = b;
    for (const uri of [`svc://apps/${watched}/schema`, `svc://apps/${watched}/functions`, 'test://not-served']) await s.client.subscribeResource({ uri });
    const schema = { tables: { notes: { columns: { id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' }, title: { type: 'text' } } } } };
    expect((await callTool(s.client, 'schema_apply', { app_id: watched, schema })).isError).toBeFalsy();
    await expect.poll(() => updated).toEqual([`svc://apps/${watched}/schema`, `svc://apps/${watched}/functions`]);

    // A function's definition written by any path (here straight into its table) announces its app too; another
    // app's change tells nobody, and an unsubscribed resource is no longer told.
    await s.client.unsubscribeResource({ uri: `svc://apps/${watched}/schema` });
    expect((await callTool(s.client, 'schema_apply', { app_id: other, schema })).isError).toBeFalsy();
    updated.length = 0;
    await control.query(
      `insert into functions (app_id, name, code, timeout_ms, memory_limit_mb, version) values ($1, 'hello', 'export default () => 1', 1000, 128, gen_random_uuid())`,
      [watched],
    );
    await expect.poll(() => updated).toEqual([`svc://apps/${watched}/functions`]);

    // Work announces its own resource when its status moves on: here a deployment, its status written straight.
    const { rows } = await control.query<{ id: string }>(
      `insert into frontend_deployments (app_id, framework, upload_expires_at) values ($1, 'static', now() + interval '1 hour') returning id`,
      [watched],
    );
    const deployment = `svc://apps/${watched}/deployments/${rows[0]!.id}`;
    await s.client.subscribeResource({ uri: deployment });
    expect(JSON.parse(String(((await s.client.readResource({ uri: deployment })).contents[0] as { text: string }).text))).toMatchObject({ id: rows[0]!.id, status: 'WAITING' });
    updated.length = 0;
    await control.query(`update frontend_deployments set status = 'CANCELED' where id = $1`, [rows[0]!.id]);
    await expect.poll(() => updated).toEqual([deployment]);
  });

  it("refuses a subscription to another account's app as reading it is refused, and bounds a URI's length", async () => {
    const s = await connectVia(b);
    const theirs = resultJson(await callTool((await connectVia(a)).client, 'apps_create', { name: 'Mine' })).app_id as string;
    const key = await otherAccountKey(a.controlDb);
    const stranger = await connectVia(b, '/mcp', {}, key);
    await expect(stranger.client.subscribeResource({ uri: `svc://apps/${theirs}/schema` })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('403 FORBIDDEN') });
    await expect(s.client.subscribeResource({ uri: `test://${'x'.repeat(1_000)}` })).rejects.toMatchObject({ code: -32602, message: 'MCP error -32602: A resource URI has at most 1000 characters.' });
  });

  // Last: it kills A.
  it('goes on on B after A is killed (SIGKILL)', async () => {
    const s = await connectVia(a);
    expect((await callTool(s.client, 'apps_list')).isError).toBeFalsy();
    const exited = new Promise((resolve) => a.child.once('exit', resolve));
    a.child.kill('SIGKILL');
    await exited;
    s.route.to = b;
    const listed = await callTool(s.client, 'apps_list');
    expect(listed.isError).toBeFalsy();
    expect((await s.client.listTools()).tools.length).toBeGreaterThan(0);
  });
});
