import { readFileSync } from 'node:fs';
import type { Router } from 'express';
import type { RawRoutes } from './index.ts';

const page = (name: string) => readFileSync(new URL(`./pages/${name}`, import.meta.url));
const HTML = page('approve.html');
const SCRIPT = page('approve.js');

/**
 * The page may not be framed (a framed approve button is a click-jacking target), runs only its own script, and
 * talks only to this origin.
 */
export const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

/**
 * GET /approve/{action_id}: the platform's approval page, where a person signs in with their substrate key and
 * approves or rejects one proposed action through the public REST routes. MCP clients send their person here (URL
 * elicitation) because an agent's own client must never answer for them. The URL carries no credential.
 */
export const approvalRoutes: RawRoutes = {
  platformHostOnly: true,
  early: (router: Router) => {
    router.get('/approve.js', (_req, res) => {
      res.set({ ...SECURITY_HEADERS, 'content-type': 'text/javascript; charset=utf-8' }).send(SCRIPT);
    });
    router.get('/approve/:action_id', (_req, res) => {
      res.set({ ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8' }).send(HTML);
    });
  },
};
