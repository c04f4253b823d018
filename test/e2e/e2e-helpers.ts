// Shared helpers for the end-to-end tests (not a test file itself: vitest only collects *.test.ts).
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { connect } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import pg from 'pg';
import { databaseUrl } from '../helpers/db.ts';
import { generateKey, hashKey } from '../../src/core/crypto.ts';

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body exactly as sent by the server. */
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: any;
}

export interface RawRequestOptions {
  method?: string;
  /** A bearer credential; sent as Authorization: Bearer <key>. */
  key?: string;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string or Buffer is sent as is (with Content-Type: application/json unless given). */
  body?: unknown;
  /** The loopback address to send from (127.0.0.0/8): the client address the server sees. */
  from?: string;
}

/**
 * One HTTP request over node:http on a fresh connection (Connection: close), so it may set any header,
 * including Host, and never leaves a keep-alive socket behind.
 */
export function request(baseUrl: string, path: string, opts: RawRequestOptions = {}): Promise<RawResponse> {
  const url = new URL(path, baseUrl);
  const headers: Record<string, string> = {};
  if (opts.key !== undefined) headers.authorization = `Bearer ${opts.key}`;
  let payload: Buffer | undefined;
  if (opts.body !== undefined) {
    payload =
      typeof opts.body === 'string'
        ? Buffer.from(opts.body)
        : Buffer.isBuffer(opts.body)
          ? opts.body
          : Buffer.from(JSON.stringify(opts.body));
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(payload.length);
  }
  // A name under localhost is loopback, as browsers and curl resolve it (apps' own hosts in development).
  const appHost = url.hostname.endsWith('.localhost');
  if (appHost) headers.host = url.host;
  Object.assign(headers, opts.headers);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: appHost ? '127.0.0.1' : url.hostname, port: url.port, path: url.pathname + url.search, method: opts.method ?? 'GET', headers, agent: false, localAddress: opts.from },
      (res) => readResponse(res).then(resolve, reject),
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** The whole body of a response, as text and (when it is JSON) parsed. */
export function readResponse(res: http.IncomingMessage): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('error', reject);
    res.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
    });
  });
}

/** Resolves true when something accepts TCP connections on the port, false on a refusal. */
export function isListening(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export interface McpConnection {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** Ends the session on the server (DELETE /mcp) and closes the client. */
  close(): Promise<void>;
}

/**
 * Opens an MCP session at {baseUrl}/mcp with the official SDK client, with every toolset (`?toolsets=all`: a session
 * that names none gets only `default`, without the keys tools).
 */
export async function connectMcp(baseUrl: string, key: string | undefined): Promise<McpConnection> {
  const client = new Client({ name: 'svc-e2e', version: '0.0.0' });
  const transport = new StreamableHTTPClientTransport(
    new URL('/mcp?toolsets=all', baseUrl),
    key === undefined ? undefined : { requestInit: { headers: { Authorization: `Bearer ${key}` } } },
  );
  try {
    await client.connect(transport);
  } catch (err) {
    await client.close().catch(() => {});
    throw err;
  }
  return {
    client,
    transport,
    close: async () => {
      await transport.terminateSession().catch(() => {});
      await client.close();
    },
  };
}

export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/**
 * The parsed JSON of a tool result, which carries it once: exactly one text content item and no structuredContent
 * (tools/list declares no outputSchema, so the JSON is not repeated).
 */
export function resultJson(result: CallToolResult): any {
  const [first, ...more] = result.content;
  if (!first || first.type !== 'text' || more.length > 0 || 'structuredContent' in result) {
    throw new Error(`tool result is not one JSON text: ${JSON.stringify(result).slice(0, 500)}`);
  }
  return JSON.parse(first.text);
}

export const APP_ID = /^[a-z0-9]{16}$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** A raw JSON-RPC initialize request for POST /mcp, and the Accept header the streamable HTTP transport requires. */
export const INIT_BODY = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
};
export const MCP_HEADERS = { accept: 'application/json, text/event-stream' };

/**
 * A raw MCP 2026-07-28 request to POST /mcp: its revision, client info and capabilities (none unless given) in _meta,
 * and the headers the revision requires (Mcp-Name is the caller's to add).
 */
export function modernRequest(
  baseUrl: string,
  key: string,
  method: string,
  params: Record<string, unknown> = {},
  opts: { path?: string; headers?: Record<string, string>; capabilities?: Record<string, unknown> } = {},
): Promise<RawResponse> {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': opts.capabilities ?? {},
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' },
  };
  return request(baseUrl, opts.path ?? '/mcp', {
    method: 'POST',
    key,
    headers: { ...MCP_HEADERS, 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...opts.headers },
    body: { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: { ...meta, ...(params._meta as object) } } },
  });
}

/** The JSON-RPC message of an MCP answer, whether sent as JSON or as one SSE event. */
export function rpcMessage(res: { text: string }): any {
  const data = res.text.split('\n').filter((l) => l.startsWith('data: ') && l.length > 6).at(-1);
  return JSON.parse(data ? data.slice(6) : res.text);
}

/**
 * The substrate's per-minute tick, as graphile-worker's crontab runs it, told that the first minute after `createdAt`
 * (a `* * * * *` rule's creation, where its cursor starts) has come: exactly one slot. The server's own crontab may
 * fire that same slot (same job key, one firing) but not the next one until a minute later, so a test that asks for
 * "now + 61 s" instead would see two firings whenever it runs across a minute boundary.
 */
export async function tickRulesAfter(controlDb: string, createdAt: string): Promise<void> {
  const slot = (Math.floor(Date.parse(createdAt) / 60_000) + 1) * 60_000;
  const control = new pg.Client({ connectionString: databaseUrl(controlDb) });
  await control.connect();
  try {
    await control.query(`select graphile_worker.add_job('substrate_rules_tick', json_build_object('now', $1::text))`, [new Date(slot + 500).toISOString()]);
  } finally {
    await control.end();
  }
}

/** Waits past the next UTC midnight when it is under `marginMs` away, for tests that compare "today" with the server's day. */
export async function clearOfUtcMidnight(marginMs = 120_000): Promise<void> {
  const toMidnight = 86_400_000 - (Date.now() % 86_400_000);
  if (toMidnight < marginMs) await new Promise((r) => setTimeout(r, toMidnight + 1_000));
}

/** A person signed in with a browser session: the headers of their browser's requests (cookie, origin) and their id. */
export interface SignedInPerson {
  headers: { cookie: string; origin: string };
  personId: string;
}

/** The session cookie a sign-up or sign-in answered (`name=value`). */
export function sessionCookieOf(res: RawResponse): string {
  const set = res.headers['set-cookie']?.find((c) => /^(__Host-)?svc_session=/.test(c));
  if (!set) throw new Error(`no session cookie in ${res.status} ${res.text}`);
  return set.split(';')[0]!;
}

type PlatformServer = { url: string; platformKey: string; docsUrl(): string };

/** The anti-forgery value of an OAuth consent page, which its answer (POST /oauth/consent) sends back. */
export function consentValueOf(page: RawResponse): string {
  const match = /name="consent" value="([^"]+)"/.exec(page.text);
  if (!match) throw new Error(`not a consent page: ${page.status} ${page.text.slice(0, 300)}`);
  return match[1]!;
}

/** A new person signs up into the platform key's account as an owner, with an invitation the key makes. */
export function signUpOwner(server: PlatformServer): Promise<SignedInPerson> {
  return signUpMember(server, 'owner');
}

/** A new person signs up into the platform key's account with `role`, with an invitation the key makes. */
export async function signUpMember(server: PlatformServer, role: string, email = `${role}-${randomUUID()}@example.com`): Promise<SignedInPerson> {
  const invitation = await request(server.url, '/dashboard/invitations', { method: 'POST', key: server.platformKey, body: { role } });
  if (invitation.status !== 201) throw new Error(`invitation: ${invitation.status} ${invitation.text}`);
  const origin = new URL(server.docsUrl()).origin;
  const body = { email, password: 'correct horse battery', invitation_token: invitation.json.token };
  const signedUp = await request(server.url, '/dashboard/signup', { method: 'POST', body, headers: { origin } });
  if (signedUp.status !== 201) throw new Error(`sign-up: ${signedUp.status} ${signedUp.text}`);
  return { headers: { cookie: sessionCookieOf(signedUp), origin }, personId: signedUp.json.person.id };
}

/** A substrate key minted by `person`, signed in (as only a person may): it reaches their own substrate. */
export async function substrateKeyOf(server: { url: string }, person: SignedInPerson, name = 'person'): Promise<{ id: string; key: string }> {
  const created = await request(server.url, '/substrate-keys', { method: 'POST', body: { name }, headers: person.headers });
  if (created.status !== 201) throw new Error(`substrate key: ${created.status} ${created.text}`);
  return created.json;
}

/** A second account with its own platform key, written straight into the control database `controlDb`. */
export async function otherAccountKey(controlDb: string): Promise<string> {
  const key = generateKey('svc_pk_');
  const client = new pg.Client({ connectionString: databaseUrl(controlDb) });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string }>(`insert into accounts (name) values ('other') returning id`);
    await client.query(`insert into platform_keys (account_id, key_hash, hint, name) values ($1, $2, 'other', 'other')`, [rows[0]!.id, hashKey(key)]);
  } finally {
    await client.end();
  }
  return key;
}

/** Reads until `done` holds (polling every 50 ms), then answers the value; past `ms` it fails with the last one read. */
export async function until<T>(what: string, read: () => Promise<T>, done: (v: T) => boolean, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(v).slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
