// POST /mcp ahead of the express stack: every MCP message is one, and the stack's router, middleware and body parser
// cost a call more than /mcp's own code does. Node's request and response only: express's set-up of them (their
// prototypes swapped for its own) was itself a measurable part of a call.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { errors } from '../core/errors.ts';
import type { Services } from '../services.ts';
import { isPlatformHost } from './app-host.ts';
import { corsOfActualRequest } from './cors.ts';
import type { McpTransport } from './mcp.ts';
import { mcpOriginAllowed } from './mcp-origins.ts';
import { beginRequest } from './request-log.ts';
import { sendNodeError } from './rest.ts';

/** A UTF-8 JSON body (what every MCP client sends); other types and charsets take the express stack's parser. */
const PLAIN_JSON = /^application\/json\s*(?:;\s*charset="?utf-8"?\s*)?$/i;

/**
 * POST /mcp with a UTF-8 JSON body of a declared length, on the platform's own host: what the express stack does for
 * /mcp (the request id and log line, the MCP origin guard, CORS headers, the JSON body) done here, then
 * McpTransport.handle. Answers false for anything else (another method or host, a chunked, encoded or
 * too large body, a preflight): the express stack serves it as before (a body over `limitBytes` gets its 413).
 */
export function mcpHotPath(services: Services, log: Logger, mcp: McpTransport, limitBytes: number): (req: IncomingMessage, res: ServerResponse) => boolean {
  const begin = beginRequest(log);
  const { platformHost, mcp: origins, baseUrl } = services.config;
  return (incoming, outgoing) => {
    if (incoming.method !== 'POST') return false;
    const url = incoming.url ?? '';
    if (url !== '/mcp' && !url.startsWith('/mcp?')) return false;
    const { headers } = incoming;
    const length = Number(headers['content-length']);
    if (!(length > 0 && length <= limitBytes) || headers['content-encoding'] !== undefined) return false;
    if (!PLAIN_JSON.test(headers['content-type'] ?? '') || !isPlatformHost(headers.host, platformHost)) return false;
    begin(incoming, outgoing);
    const origin = headers.origin;
    if (origin !== undefined && !mcpOriginAllowed(origin, origins)) {
      sendNodeError(outgoing, errors.originNotAllowed(origin), baseUrl);
      return true;
    }
    corsOfActualRequest(incoming, outgoing);
    void serve(incoming, outgoing, mcp, baseUrl);
    return true;
  };
}

async function serve(req: IncomingMessage & { body?: unknown }, res: ServerResponse, mcp: McpTransport, baseUrl: string): Promise<void> {
  const text = await bodyText(req);
  if (text === undefined) return; // the client went away mid-body
  const body = parseStrictJson(text);
  if (body === undefined) return sendNodeError(res, errors.invalidJson(), baseUrl);
  req.body = body;
  await mcp.handle(req, res);
}

/** The request's body as UTF-8 text; undefined when the client aborted it. */
function bodyText(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.once('error', () => resolve(undefined));
    req.once('aborted', () => resolve(undefined));
  });
}

/** An object or array of JSON, as express.json's strict mode takes; undefined for anything else. */
function parseStrictJson(text: string): unknown {
  const first = /\S/.exec(text)?.[0];
  if (first !== '{' && first !== '[') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
