// The physical limit for MCP tools/call: the official SDK (McpServer + stateful StreamableHTTPServerTransport)
// on raw node:http, one tool that runs the same two queries as GET /apps. Env: DATABASE_URL, BASE_URL.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { announce, listApps, openPool } from './sql.ts';

const pool = openPool(process.env.DATABASE_URL!);
const baseUrl = process.env.BASE_URL ?? 'http://localhost';
const sessions = new Map<string, StreamableHTTPServerTransport>();

function newServer(): McpServer {
  const server = new McpServer({ name: 'bench-baseline', version: '0.0.0' }, { capabilities: { tools: {} } });
  server.registerTool('apps_list', { description: 'List the apps your platform key owns.' }, async (extra) => {
    const out = await listApps(pool, extra.requestInfo?.headers.authorization as string | undefined, baseUrl);
    if (!out) return { isError: true, content: [{ type: 'text', text: 'invalid token' }] };
    // The JSON once, as text content, as the platform answers (it declares no outputSchema, so no structuredContent).
    return { content: [{ type: 'text', text: JSON.stringify(out) }] };
  });
  return server;
}

function readJson(req: http.IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        resolve(chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined);
      } catch (err) {
        reject(err);
      }
    });
    req.on('error', reject);
  });
}

function rpcError(res: http.ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  if (req.url !== '/mcp') return rpcError(res, 404, 'not found');
  const body = req.method === 'POST' ? await readJson(req) : undefined;
  const sessionId = req.headers['mcp-session-id'];
  if (typeof sessionId === 'string') {
    const transport = sessions.get(sessionId);
    if (!transport) return rpcError(res, 404, 'Session not found');
    return transport.handleRequest(req, res, body);
  }
  if (req.method !== 'POST' || !isInitializeRequest(body)) return rpcError(res, 400, 'No session');
  const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => void sessions.set(id, transport),
  });
  transport.onclose = () => {
    if (transport.sessionId) sessions.delete(transport.sessionId);
  };
  await newServer().connect(transport);
  await transport.handleRequest(req, res, body);
}

const server = http.createServer((req, res) => {
  handle(req, res).catch((err: unknown) => {
    if (!res.headersSent) rpcError(res, 500, String(err));
    else res.destroy();
  });
});

server.listen(0, '127.0.0.1', () => announce((server.address() as AddressInfo).port));
process.on('SIGTERM', () => {
  for (const t of sessions.values()) void t.close();
  server.close(() => void pool.end().then(() => process.exit(0)));
  server.closeAllConnections();
});
