// resumeSession rebuilds a session another process opened by replaying its initialize into a new transport: these tests
// fail when an SDK upgrade changes how a transport takes that replay, rather than sessions failing on a second process.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { resumeSession, type SessionInitialize } from '../../src/transports/mcp-sessions.ts';

const SESSION_ID = '6f2a1c1e-0d4b-4c55-9a7e-2b8f4f0c9d11';
const INITIALIZE: SessionInitialize = {
  protocolVersion: '2025-11-25',
  capabilities: { elicitation: { url: {} } },
  clientInfo: { name: 'elsewhere', version: '1.2.3' },
};

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A server with one tool, resumed as session SESSION_ID, behind a plain node HTTP listener. */
async function resumed(): Promise<{ server: Server; transport: WebStandardStreamableHTTPServerTransport; url: URL }> {
  const server = new Server({ name: 'resume-test', version: '0' }, { capabilities: { tools: {} } });
  server.setRequestHandler('tools/list', async () => ({ tools: [{ name: 'ping', inputSchema: { type: 'object' as const } }] }));
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => SESSION_ID });
  await resumeSession(server, transport, INITIALIZE);
  const node = toNodeHandler({ fetch: (request, options) => transport.handleRequest(request, options) });
  const listener = http.createServer((req, res) => void node(req, res));
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => listener.close(resolve)), () => transport.close());
  return { server, transport, url: new URL(`http://127.0.0.1:${(listener.address() as AddressInfo).port}/mcp`) };
}

function post(url: URL, body: unknown, sessionId?: string): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
  if (sessionId) headers['mcp-session-id'] = sessionId;
  return fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
}

describe('resumeSession', () => {
  it("gives the transport the session's id and the server the stored client's capabilities and name", async () => {
    const { server, transport } = await resumed();
    expect(transport.sessionId).toBe(SESSION_ID);
    expect(server.getClientCapabilities()).toEqual(INITIALIZE.capabilities);
    expect(server.getClientVersion()).toEqual(INITIALIZE.clientInfo);
  });

  it("serves the session's requests to a client that never initialized with it", async () => {
    const { url } = await resumed();
    const client = new Client({ name: 'elsewhere', version: '1.2.3' });
    // A client transport holding a session id does not initialize (the SDK client's reconnect path).
    await client.connect(new StreamableHTTPClientTransport(url, { sessionId: SESSION_ID }));
    closers.push(() => client.close());
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['ping']);
  });

  it('refuses a second initialize and another session id, as the original transport would', async () => {
    const { url } = await resumed();
    const again = await post(url, { jsonrpc: '2.0', id: 1, method: 'initialize', params: INITIALIZE });
    expect(again.status).toBe(400);
    expect(await again.text()).toContain('already initialized');
    const other = await post(url, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, '00000000-0000-4000-8000-000000000000');
    expect(other.status).toBe(404);
    await other.text();
  });
});
