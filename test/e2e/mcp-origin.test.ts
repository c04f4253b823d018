// DNS-rebinding protection of /mcp (MCP streamable HTTP transport: servers must validate Origin): a browser page of a
// foreign origin is refused with 403 ORIGIN_NOT_ALLOWED; allowed origins and requests without Origin are served.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { INIT_BODY, MCP_HEADERS, connectMcp, request, type RawResponse } from './e2e-helpers.ts';


let server: SpawnedServer;
let configured: SpawnedServer;

beforeAll(async () => {
  [server, configured] = await Promise.all([
    spawnServer(),
    spawnServer({ SVC_MCP_ALLOWED_ORIGINS: 'https://agent.example.com, http://tools.example.net:8443' }),
  ]);
});

afterAll(async () => {
  await Promise.all([server?.close(), configured?.close()]);
});

function initialize(target: SpawnedServer, origin: string | undefined, key: string | undefined = target.platformKey): Promise<RawResponse> {
  return request(target.url, '/mcp', {
    method: 'POST',
    key,
    body: INIT_BODY,
    headers: { ...MCP_HEADERS, ...(origin === undefined ? {} : { origin }) },
  });
}

function expectRefused(res: RawResponse, origin: string, target: SpawnedServer = server): void {
  expect(res.status, res.text).toBe(403);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.json).toEqual({
    error: {
      code: 'ORIGIN_NOT_ALLOWED',
      message: `Requests from the web origin '${origin}' may not use /mcp.`,
      remediation:
        'Call /mcp from a client that sends no Origin (any non-browser MCP client), or from an allowed origin; the operator allows origins with SVC_MCP_ALLOWED_ORIGINS.',
      documentation_url: target.docsUrl(),
    },
  });
  expect(res.headers['mcp-session-id']).toBeUndefined();
}

function expectServed(res: RawResponse): void {
  expect(res.status, res.text).toBe(200);
  expect(res.headers['mcp-session-id']).toMatch(/^[0-9a-f-]{36}$/);
}

describe('/mcp Origin, default allow-list (loopback and the base URL)', () => {
  it.each(['http://evil.example', 'https://attacker.localhost.example.com', 'null', 'http://192.168.1.10:8080'])(
    'a foreign Origin %s is 403 ORIGIN_NOT_ALLOWED, with a valid key or without one',
    async (origin) => {
      expectRefused(await initialize(server, origin), origin);
      expectRefused(await initialize(server, origin, undefined), origin);
    },
  );

  it('a foreign CORS preflight is refused too, and GET and DELETE with a foreign Origin', async () => {
    const preflight = await request(server.url, '/mcp', {
      method: 'OPTIONS',
      headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' },
    });
    expectRefused(preflight, 'http://evil.example');
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    expectRefused(await request(server.url, '/mcp', { key: server.platformKey, headers: { origin: 'http://evil.example' } }), 'http://evil.example');
    expectRefused(await request(server.url, '/mcp', { method: 'DELETE', key: server.platformKey, headers: { origin: 'http://evil.example' } }), 'http://evil.example');
  });

  it.each(['http://localhost:5173', 'http://127.0.0.1:9', 'https://[::1]:3000', 'http://localhost'])('a loopback Origin %s is served', async (origin) => {
    expectServed(await initialize(server, origin));
  });

  it("the base URL's own origin is served, and a request without Origin is", async () => {
    expectServed(await initialize(server, `http://localhost:${server.port}`));
    expectServed(await initialize(server, undefined));
    const conn = await connectMcp(server.url, server.platformKey);
    expect((await conn.client.listTools()).tools.length).toBeGreaterThan(0);
    await conn.close();
  });

  it('the SDK client sending a foreign Origin cannot connect (403)', async () => {
    const client = new Client({ name: 'foreign', version: '0' });
    const transport = new StreamableHTTPClientTransport(new URL('/mcp', server.url), {
      requestInit: { headers: { Authorization: `Bearer ${server.platformKey}`, Origin: 'http://evil.example' } },
    });
    const err = await client.connect(transport).then(
      () => undefined,
      (e: unknown) => e,
    );
    await client.close().catch(() => {});
    expect(err).toBeInstanceOf(StreamableHTTPError);
    expect((err as StreamableHTTPError).code).toBe(403);
  });

  it('other routes keep answering every origin (apps call them from their own)', async () => {
    const res = await request(server.url, '/health', { headers: { origin: 'http://evil.example' } });
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('http://evil.example');
  });
});

describe('/mcp Origin with SVC_MCP_ALLOWED_ORIGINS', () => {
  it('the listed origins and the base URL are served; loopback is no longer allowed by default', async () => {
    expectServed(await initialize(configured, 'https://agent.example.com'));
    expectServed(await initialize(configured, 'http://tools.example.net:8443'));
    expectServed(await initialize(configured, `http://localhost:${configured.port}`));
    expectServed(await initialize(configured, undefined));
    expectRefused(await initialize(configured, 'http://tools.example.net'), 'http://tools.example.net', configured);
    expectRefused(await initialize(configured, 'http://agent.example.com'), 'http://agent.example.com', configured);
    expectRefused(await initialize(configured, 'http://localhost:5173'), 'http://localhost:5173', configured);
  });
});
