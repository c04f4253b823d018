import { readFileSync } from 'node:fs';
import type { Request, Router } from 'express';
import type { RawRoutes } from './index.ts';

const page = (name: string) => readFileSync(new URL(`./pages/${name}`, import.meta.url));
const HTML = page('approve.html');
const SCRIPT = page('approve.js');

/** The platform's pages may not be framed (a framed approve button is a click-jacking target), cached or sniffed. */
export const SECURITY_HEADERS = {
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

/**
 * CSP sources of a platform page's own file at `path`: on the platform's origin, and on the host the page was asked
 * on when that differs (an address or localhost; the platform's pages answer on no other, see platformHostOnly). Named
 * by path, not 'self': tenants' content has paths of the platform's origin too (/v1/{app_id}/fn/..., /sites/...), and
 * a page that an injection made load one of them must not run it.
 */
export function ownFileSources(req: Request, platformOrigin: string, path: string): string {
  const sources = [`${platformOrigin}${path}`];
  const host = (req.headers.host ?? '').toLowerCase();
  // A host-source has no room for an IPv6 literal; such a request keeps the platform's origin alone.
  if (/^[a-z0-9.-]{1,253}(?::\d{1,5})?$/.test(host) && host !== new URL(platformOrigin).host) sources.push(`${host}${path}`);
  return sources.join(' ');
}

/** The headers of the approval page and of the sign-in page, each running the one script at `scriptPath` and talking only to this origin. */
export function scriptPageHeaders(req: Request, platformOrigin: string, scriptPath: string): Record<string, string> {
  const policy = `default-src 'none'; script-src ${ownFileSources(req, platformOrigin, scriptPath)}; connect-src 'self'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;
  return { ...SECURITY_HEADERS, 'content-security-policy': policy };
}

/**
 * GET /approve/{action_id}: the platform's approval page, where a person signs in with their substrate key and
 * approves or rejects one proposed action through the public REST routes. MCP clients send their person here (URL
 * elicitation) because an agent's own client must never answer for them. The URL carries no credential.
 */
export const approvalRoutes: RawRoutes = {
  platformHostOnly: true,
  early: (router: Router, services) => {
    const { platformOrigin } = services.config;
    router.get('/approve.js', (req, res) => {
      res.set({ ...scriptPageHeaders(req, platformOrigin, '/approve.js'), 'content-type': 'text/javascript; charset=utf-8' }).send(SCRIPT);
    });
    router.get('/approve/:action_id', (req, res) => {
      res.set({ ...scriptPageHeaders(req, platformOrigin, '/approve.js'), 'content-type': 'text/html; charset=utf-8' }).send(HTML);
    });
  },
};
