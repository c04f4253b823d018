import type { IncomingMessage, ServerResponse } from 'node:http';
import cors from 'cors';
import type { RequestHandler } from 'express';

/** Headers a browser page may read from a cross-origin response (auth-js reads GoTrue's error codes by the version). */
const EXPOSED_HEADERS = ['X-Request-Id', 'Mcp-Session-Id', 'Content-Range', 'Location', 'X-Supabase-Api-Version'];

/**
 * Apps built on the platform call it from browsers on their own origins; credentials are bearer tokens, never cookies:
 * any origin is reflected, preflights are answered here (cached 10 minutes).
 */
export const corsMiddleware: RequestHandler = cors({ origin: true, credentials: false, exposedHeaders: EXPOSED_HEADERS, maxAge: 600 });

const EXPOSED = EXPOSED_HEADERS.join(',');

/**
 * What corsMiddleware sets on an actual (non-preflight) request, for the functions' hot path that runs before it:
 * the origin reflected when there is one, Vary: Origin, the exposed headers (test/e2e/functions-hot-path.test.ts
 * compares both).
 */
export function corsOfActualRequest(req: IncomingMessage, res: ServerResponse): void {
  setHeaderList(res, corsHeaders(req));
}

/** Sets headers given as name, value, name, value... on a response. */
export function setHeaderList(res: ServerResponse, headers: readonly string[]): void {
  for (let i = 0; i < headers.length; i += 2) res.setHeader(headers[i]!, headers[i + 1]!);
}

/** The same headers as name, value, name, value...: for a route that writes all of its headers at once (writeHead). */
export function corsHeaders(req: IncomingMessage): string[] {
  const origin = req.headers.origin;
  const headers = origin ? ['Access-Control-Allow-Origin', origin] : [];
  headers.push('Vary', 'Origin', 'Access-Control-Expose-Headers', EXPOSED);
  return headers;
}
