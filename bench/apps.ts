// Scenario `apps`: GET /apps against raw node:http + pg (the physical minimum), and MCP tools/call apps_list against
// the official MCP SDK's own server (the SDK's limit, not a physical minimum), both baselines running the same two
// queries on the same control database. See bench/README.md.
import { isDeepStrictEqual } from 'node:util';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { startBaseline, type BenchContext, type Pair, type Target } from './harness.ts';

interface RpcReply {
  status: number;
  headers: Headers;
  message: { result?: Record<string, unknown>; error?: unknown } | undefined;
}

/**
 * POST one JSON-RPC message; the reply is JSON or an SSE stream whose events may carry notifications (the platform
 * sends a notifications/message log event before a tool's result) ahead of the response, the message with an id.
 */
async function rpc(url: string, headers: Record<string, string>, body: unknown): Promise<RpcReply> {
  const res = await fetch(`${url}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await res.text();
  if (!res.headers.get('content-type')?.includes('text/event-stream')) return { status: res.status, headers: res.headers, message: text ? JSON.parse(text) : undefined };
  const messages = text
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => JSON.parse(l.slice(6)) as { id?: unknown; result?: Record<string, unknown>; error?: unknown });
  return { status: res.status, headers: res.headers, message: messages.find((m) => m.id !== undefined) ?? messages[0] };
}

/** initialize + notifications/initialized; returns the headers every later request of the session carries. */
async function openSession(url: string, authorization: string): Promise<Record<string, string>> {
  const base = { Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json', Authorization: authorization };
  const init = await rpc(url, base, {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'svc-bench', version: '0.0.0' } },
  });
  const sessionId = init.headers.get('mcp-session-id');
  const version = init.message?.result?.protocolVersion;
  if (init.status !== 200 || !sessionId || typeof version !== 'string') throw new Error(`initialize at ${url} failed: ${init.status} ${JSON.stringify(init.message)}`);
  const headers = { ...base, 'Mcp-Session-Id': sessionId, 'mcp-protocol-version': version };
  const notified = await rpc(url, headers, { jsonrpc: '2.0', method: 'notifications/initialized' });
  if (notified.status !== 202) throw new Error(`notifications/initialized at ${url} answered ${notified.status}`);
  return headers;
}

const TOOLS_CALL = JSON.stringify({ jsonrpc: '2.0', id: '[<id>]', method: 'tools/call', params: { name: 'apps_list', arguments: {} } });

async function callAppsList(url: string, headers: Record<string, string>): Promise<unknown> {
  const reply = await rpc(url, headers, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'apps_list', arguments: {} } });
  const result = reply.message?.result as { isError?: boolean; content?: Array<{ type: string; text?: string }> } | undefined;
  const text = result?.content?.find((c) => c.type === 'text')?.text;
  if (reply.status !== 200 || !result || result.isError || text === undefined) throw new Error(`tools/call at ${url} failed: ${reply.status} ${JSON.stringify(reply.message)}`);
  // The result's JSON as text content (the platform sends no outputSchema, so no structuredContent either).
  return JSON.parse(text);
}

/** Creates 3 apps (it must run before any other scenario adds apps), starts both baselines, checks the answers. */
export async function appsScenario(ctx: BenchContext): Promise<Pair[]> {
  const { platformUrl, authorization } = ctx;
  for (const name of ['Bench One', 'Bench Two', 'Bench Three']) {
    const res = await fetch(`${platformUrl}/init`, { method: 'POST', headers: { Authorization: authorization, 'Content-Type': 'application/json' }, body: JSON.stringify({ name }) });
    if (res.status !== 201) throw new Error(`POST /init answered ${res.status}: ${await res.text()}`);
  }

  // Same database, same base URL as the platform's default (SVC_BASE_URL unset), so the JSON is byte-for-byte the same.
  const baselineEnv = { DATABASE_URL: ctx.controlDatabaseUrl, BASE_URL: `http://localhost:${ctx.port}` };
  const raw = await startBaseline('bench/baseline-raw.ts', baselineEnv);
  ctx.cleanups.push(raw.child.stop);
  const sdk = await startBaseline('bench/baseline-mcp.ts', baselineEnv);
  ctx.cleanups.push(sdk.child.stop);

  // Pre-flight: every server answers the same apps, so both sides of a ratio do the same work.
  const getApps = async (url: string) => {
    const res = await fetch(`${url}/apps`, { headers: { Authorization: authorization } });
    if (res.status !== 200) throw new Error(`GET ${url}/apps answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as { apps: Array<{ app_id: string }> };
  };
  const expected = await getApps(platformUrl);
  if (expected.apps.length !== 3) throw new Error(`expected 3 apps, got ${JSON.stringify(expected)}`);
  const platformSession = await openSession(platformUrl, authorization);
  const sdkSession = await openSession(sdk.url, authorization);
  const answers = { raw: await getApps(raw.url), platformMcp: await callAppsList(platformUrl, platformSession), sdkMcp: await callAppsList(sdk.url, sdkSession) };
  for (const [who, got] of Object.entries(answers)) {
    if (!isDeepStrictEqual(got, expected)) throw new Error(`${who} answered differently:\n${JSON.stringify(got)}\nvs GET /apps:\n${JSON.stringify(expected)}`);
  }

  const lastApp = expected.apps.at(-1)!.app_id;
  const rest = (url: string): Target => ({ url: `${url}/apps`, method: 'GET', headers: { Authorization: authorization }, expect: [lastApp], forbid: [] });
  const mcp = (url: string, headers: Record<string, string>): Target => ({
    url: `${url}/mcp`,
    method: 'POST',
    headers,
    body: TOOLS_CALL,
    idReplacement: true,
    expect: [lastApp, '"type":"text"'],
    forbid: ['"isError":true', '"error":'],
  });
  return [
    { label: 'GET /apps', baselineName: 'raw node:http+pg', platform: rest(platformUrl), baseline: rest(raw.url) },
    // Not a physical minimum: the official SDK's own server (McpServer + StreamableHTTPServerTransport) doing the same
    // two queries, so the ratio is against the SDK's limit; what the SDK's JSON-RPC and transport layers cost shows in
    // its row against the raw GET /apps baseline's.
    { label: 'MCP tools/call apps_list', baselineName: "MCP SDK server (the SDK's limit)", platform: mcp(platformUrl, platformSession), baseline: mcp(sdk.url, sdkSession) },
  ];
}
