// Which browser pages may call /mcp (SVC_MCP_ALLOWED_ORIGINS): DNS-rebinding protection in front of both revisions.
import type { RequestHandler } from 'express';
import type { Config } from '../config.ts';
import { errors } from '../core/errors.ts';
import { sendError } from './rest.ts';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Whether a browser page of this origin may call /mcp (see SVC_MCP_ALLOWED_ORIGINS). */
export function mcpOriginAllowed(origin: string, policy: Config['mcp']): boolean {
  if (policy.allowAnyOrigin) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // "null" (sandboxed frames, file: pages) and anything else that is not an origin
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  if (policy.allowedOrigins.includes(url.origin)) return true;
  return policy.allowLoopbackOrigins && LOOPBACK_HOSTS.has(url.hostname);
}

/**
 * DNS-rebinding protection required by the MCP streamable HTTP transport: a request whose Origin is not allowed is
 * refused with 403 ORIGIN_NOT_ALLOWED in the standard envelope, before credentials are looked at and before CORS
 * answers a preflight. A request without Origin (every non-browser client) goes on. The SDK's own allowedOrigins
 * option is not used: it matches exact strings only (no loopback on any port), answers a JSON-RPC body rather than
 * our envelope, and runs inside a session's transport, after authentication.
 */
export function mcpOriginGuard(policy: Config['mcp']): RequestHandler {
  return (req, res, next) => {
    const origin = req.headers.origin;
    if (origin === undefined || mcpOriginAllowed(origin, policy)) return next();
    sendError(res, errors.originNotAllowed(origin));
  };
}
