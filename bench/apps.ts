// Scenario `apps`: GET /apps against raw node:http + pg (the physical minimum), and MCP tools/call apps_list on both
// revisions (2025-11-25 with a session, 2026-07-28 stateless) against the official MCP SDK's own server of that
// revision (the SDK's limit, not a physical minimum), every baseline running the same two queries on the same control
// database. The MCP pairs run on two api processes of the platform, against two baseline processes. See bench/README.md.
import { isDeepStrictEqual } from 'node:util';
import { startBaseline, type BenchContext, type Pair, type Target } from './harness.ts';

/**
 * Seconds of warm-up per side of the MCP pairs: a fresh process of either side took 15 to 25 s under this load to reach
 * its steady throughput (JIT), the platform's the longest; with the default 3 s the first rounds measured warm-up.
 */
const MCP_WARMUP = 30;

/** The revisions measured: the one with sessions and the stateless one. */
const SESSIONS = '2025-11-25';
const STATELESS = '2026-07-28';

interface RpcReply {
  status: number;
  headers: Headers;
  message: { result?: Record<string, unknown>; error?: unknown } | undefined;
}

/**
 * POST one JSON-RPC message; the reply is JSON or an SSE stream whose events may carry notifications (the platform
 * sends a notifications/message log event before a 2025-11-25 tool's result) ahead of the response, the message with an id.
 */
async function rpc(url: string, headers: Record<string, string>, body: unknown): Promise<RpcReply> {
  const res = await fetch(`${url}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await res.text();
  if (!res.headers.get('content-type')?.includes('text/event-stream')) return { status: res.status, headers: res.headers, message: text ? JSON.parse(text) : undefined };
  const messages = text
    .split('\n')
    .filter((l) => l.startsWith('data: ') && l.length > 6)
    .map((l) => JSON.parse(l.slice(6)) as { id?: unknown; result?: Record<string, unknown>; error?: unknown });
  return { status: res.status, headers: res.headers, message: messages.find((m) => m.id !== undefined) ?? messages[0] };
}

/** What every MCP request carries. */
const baseHeaders = (authorization: string) => ({ Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json', Authorization: authorization });

/** initialize + notifications/initialized on 2025-11-25; returns the session's id. */
async function openSession(url: string, authorization: string): Promise<string> {
  const base = baseHeaders(authorization);
  const init = await rpc(url, base, {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: SESSIONS, capabilities: {}, clientInfo: { name: 'svc-bench', version: '0.0.0' } },
  });
  const sessionId = init.headers.get('mcp-session-id');
  const version = init.message?.result?.protocolVersion;
  if (init.status !== 200 || !sessionId || version !== SESSIONS) throw new Error(`initialize at ${url} failed: ${init.status} ${JSON.stringify(init.message)}`);
  const notified = await rpc(url, { ...base, 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': SESSIONS }, { jsonrpc: '2.0', method: 'notifications/initialized' });
  if (notified.status !== 202) throw new Error(`notifications/initialized at ${url} answered ${notified.status}`);
  return sessionId;
}

/** A tools/call apps_list of each revision: its headers (a session's id aside) and its body, `[<id>]` a fresh id per request. */
function toolsCall(revision: string, authorization: string): { headers: Record<string, string>; body: (id: string) => string } {
  const base = { ...baseHeaders(authorization), 'MCP-Protocol-Version': revision };
  if (revision === SESSIONS) {
    return { headers: base, body: (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"apps_list","arguments":{}}}` };
  }
  // 2026-07-28: no session; the revision and the client's capabilities in every request's _meta, and the method and
  // tool name in headers too.
  const meta = JSON.stringify({ 'io.modelcontextprotocol/protocolVersion': revision, 'io.modelcontextprotocol/clientCapabilities': {} });
  return {
    headers: { ...base, 'Mcp-Method': 'tools/call', 'Mcp-Name': 'apps_list' },
    body: (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"apps_list","arguments":{},"_meta":${meta}}}`,
  };
}

async function callAppsList(url: string, headers: Record<string, string>, body: string): Promise<unknown> {
  const reply = await rpc(url, headers, JSON.parse(body));
  const result = reply.message?.result as { isError?: boolean; content?: Array<{ type: string; text?: string }> } | undefined;
  const text = result?.content?.find((c) => c.type === 'text')?.text;
  if (reply.status !== 200 || !result || result.isError || text === undefined) throw new Error(`tools/call at ${url} failed: ${reply.status} ${JSON.stringify(reply.message)}`);
  // The result's JSON as text content (the platform sends no outputSchema, so no structuredContent either).
  return JSON.parse(text);
}

/** Creates 3 apps (it must run before any other scenario adds apps), starts the baselines, checks the answers. */
export async function appsScenario(ctx: BenchContext): Promise<Pair[]> {
  const { platformUrl, authorization } = ctx;
  for (const name of ['Bench One', 'Bench Two', 'Bench Three']) {
    const res = await fetch(`${platformUrl}/init`, { method: 'POST', headers: { Authorization: authorization, 'Content-Type': 'application/json' }, body: JSON.stringify({ name }) });
    if (res.status !== 201) throw new Error(`POST /init answered ${res.status}: ${await res.text()}`);
  }

  // Same database, same base URL and apps' hosts as the platform's defaults (SVC_BASE_URL, SVC_BASE_DOMAIN unset), so
  // the JSON is byte-for-byte the same.
  const baselineEnv = { DATABASE_URL: ctx.controlDatabaseUrl, BASE_URL: `http://localhost:${ctx.port}`, APPS_DOMAIN: `localhost:${ctx.port}` };
  const start = async (script: string, env: Record<string, string> = {}) => {
    const started = await startBaseline(script, { ...baselineEnv, ...env });
    ctx.cleanups.push(started.child.stop);
    return started.url;
  };
  const raw = await start('bench/baseline-raw.ts');
  // MCP runs on two api processes of the platform sharing its control database, and on two processes of each SDK baseline.
  const apiProcesses = [await ctx.startApi('api process A'), await ctx.startApi('api process B')];
  const apis = apiProcesses.map((p) => p.url);
  const apiPids = apiProcesses.map((p) => p.pid);
  const sdk = {
    [SESSIONS]: [await start('bench/baseline-mcp.ts', { MCP_REVISION: SESSIONS }), await start('bench/baseline-mcp.ts', { MCP_REVISION: SESSIONS })],
    [STATELESS]: [await start('bench/baseline-mcp.ts', { MCP_REVISION: STATELESS }), await start('bench/baseline-mcp.ts', { MCP_REVISION: STATELESS })],
  };

  // Pre-flight: every server answers the same apps, so both sides of a ratio do the same work.
  const getApps = async (url: string) => {
    const res = await fetch(`${url}/apps`, { headers: { Authorization: authorization } });
    if (res.status !== 200) throw new Error(`GET ${url}/apps answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as { apps: Array<{ app_id: string }> };
  };
  const expected = await getApps(platformUrl);
  if (expected.apps.length !== 3) throw new Error(`expected 3 apps, got ${JSON.stringify(expected)}`);
  const answers: Array<[string, unknown]> = [['raw', await getApps(raw)]];
  const session = toolsCall(SESSIONS, authorization);
  const stateless = toolsCall(STATELESS, authorization);
  // The platform's sessions: one opened on each api process, each then called on both (no affinity needed).
  const platformSessions = [await openSession(apis[0]!, authorization), await openSession(apis[1]!, authorization)];
  for (const url of apis) {
    for (const id of platformSessions) answers.push([`platform ${SESSIONS} ${url} session ${id}`, await callAppsList(url, { ...session.headers, 'Mcp-Session-Id': id }, session.body('1'))]);
    answers.push([`platform ${STATELESS} ${url}`, await callAppsList(url, stateless.headers, stateless.body('1'))]);
  }
  // The SDK baseline's sessions live in its process's memory: one per process, called on that process only.
  const sdkSessions: Record<string, Record<string, string>> = {};
  for (const url of sdk[SESSIONS]) {
    sdkSessions[url] = { 'Mcp-Session-Id': await openSession(url, authorization) };
    answers.push([`SDK ${SESSIONS} ${url}`, await callAppsList(url, { ...session.headers, ...sdkSessions[url] }, session.body('1'))]);
  }
  for (const url of sdk[STATELESS]) answers.push([`SDK ${STATELESS} ${url}`, await callAppsList(url, stateless.headers, stateless.body('1'))]);
  for (const [who, got] of answers) {
    if (!isDeepStrictEqual(got, expected)) throw new Error(`${who} answered differently:\n${JSON.stringify(got)}\nvs GET /apps:\n${JSON.stringify(expected)}`);
  }

  const lastApp = expected.apps.at(-1)!.app_id;
  const rest = (url: string): Target => ({ url: `${url}/apps`, method: 'GET', headers: { Authorization: authorization }, expect: [lastApp], forbid: [] });
  // autocannon spreads the connections over the processes (connection i to urls[i % 2]) and gives each request a fresh id.
  const mcp = (urls: string[], call: ReturnType<typeof toolsCall>, sessions: Pick<Target, 'headerSets' | 'originHeaders'> = {}): Target => ({
    url: urls.map((u) => `${u}/mcp`),
    method: 'POST',
    headers: call.headers,
    ...sessions,
    body: call.body('"[<id>]"'),
    idReplacement: true,
    expect: [lastApp, '"type":"text"'],
    forbid: ['"isError":true', '"error":'],
  });
  return [
    { label: 'GET /apps', baselineName: 'raw node:http+pg', platform: rest(platformUrl), baseline: rest(raw) },
    // Not physical minimums: the official SDK's own server of each revision doing the same two queries, so the ratios
    // are against the SDK's limit; what its JSON-RPC and transport layers cost shows in its rows against GET /apps'.
    {
      label: `MCP tools/call apps_list ${SESSIONS}, 2 processes`,
      baselineName: '2 SDK servers, sessions pinned',
      warmup: MCP_WARMUP,
      platformPids: apiPids,
      // Each request of every connection takes the next of the two sessions: whichever process a connection reaches,
      // half its requests are of the session the other process opened.
      platform: mcp(apis, session, { headerSets: platformSessions.map((id) => ({ 'Mcp-Session-Id': id })) }),
      // Each connection uses the session of the process it reaches, as a balancer with session affinity would send it.
      baseline: mcp(sdk[SESSIONS], session, { originHeaders: sdkSessions }),
    },
    {
      label: `MCP tools/call apps_list ${STATELESS}, 2 processes`,
      baselineName: '2 SDK createMcpHandler servers',
      warmup: MCP_WARMUP,
      platformPids: apiPids,
      platform: mcp(apis, stateless),
      baseline: mcp(sdk[STATELESS], stateless),
    },
  ];
}
