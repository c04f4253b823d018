// The SDK's limit for MCP tools/call: the official server SDK the platform itself runs on (@modelcontextprotocol/server
// with @modelcontextprotocol/node's toNodeHandler) on raw node:http, one tool that runs the same two queries as
// GET /apps and answers the same text content. MCP_REVISION picks the revision it serves, as the SDK documents each:
// - 2025-11-25: McpServer + a sessionful WebStandardStreamableHTTPServerTransport per session, the sessions in this
//   process's memory (so a client must come back to this process);
// - 2026-07-28: createMcpHandler with legacy: 'reject', a McpServer per request, no session.
// Env: DATABASE_URL, BASE_URL, APPS_DOMAIN, MCP_REVISION.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { createMcpHandler, isInitializeRequest, McpServer, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import { toNodeHandler, type NodeMcpRequestHandler } from '@modelcontextprotocol/node';
import { requiredEnv, serveBaseline } from './harness.ts';
import { appHosts, listApps, openPool } from './sql.ts';

const pool = openPool(requiredEnv('DATABASE_URL'));
const hosts = appHosts(requiredEnv('BASE_URL'), requiredEnv('APPS_DOMAIN'));
const revision = requiredEnv('MCP_REVISION');

function newServer(): McpServer {
  const server = new McpServer({ name: 'bench-baseline', version: '0.0.0' }, { capabilities: { tools: {} } });
  server.registerTool('apps_list', { description: 'List the apps your platform key owns.' }, async (ctx) => {
    const out = await listApps(pool, ctx.http?.req?.headers.get('authorization') ?? undefined, hosts);
    if (!out) return { isError: true, content: [{ type: 'text', text: 'invalid token' }] };
    // The JSON once, as text content, as the platform answers (it declares no outputSchema, so no structuredContent).
    return { content: [{ type: 'text', text: JSON.stringify(out) }] };
  });
  return server;
}

function rpcError(res: http.ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

/** 2026-07-28: the SDK's own entry, as its documentation wires it on node:http. */
function stateless(): http.RequestListener {
  const node = toNodeHandler(createMcpHandler(() => newServer(), { legacy: 'reject' }));
  return (req, res) => {
    if (req.url !== '/mcp') return rpcError(res, 404, 'not found');
    void node(req, res);
  };
}

/** 2025-11-25: a transport per session, found by Mcp-Session-Id; an initialize without one opens a session. */
function sessionful(): http.RequestListener {
  const sessions = new Map<string, NodeMcpRequestHandler>();
  const readJson = async (req: http.IncomingMessage): Promise<unknown> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
  };
  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    if (req.url !== '/mcp') return rpcError(res, 404, 'not found');
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const node = sessions.get(sessionId);
      if (!node) return rpcError(res, 404, 'Session not found');
      return node(req, res);
    }
    const body = req.method === 'POST' ? await readJson(req) : undefined;
    if (!isInitializeRequest(body)) return rpcError(res, 400, 'No session');
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, node),
    });
    const node = toNodeHandler({ fetch: (request, options) => transport.handleRequest(request, options) });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await newServer().connect(transport);
    await node(req, res, body);
  };
  return (req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) rpcError(res, 500, String(err));
      else res.destroy();
    });
  };
}

if (revision !== '2025-11-25' && revision !== '2026-07-28') throw new Error(`MCP_REVISION must be 2025-11-25 or 2026-07-28, got '${revision}'`);
serveBaseline(http.createServer(revision === '2026-07-28' ? stateless() : sessionful()), pool);
