// The pages an OAuth authorization shows a person: sign-in (static, with its same-origin script, posting to
// POST /dashboard/signin) and consent (filled in on the server: a plain form, it needs no script).
import { readFileSync } from 'node:fs';
import type { Response, Router } from 'express';
import { scriptPageHeaders, SECURITY_HEADERS } from './approvals.ts';

const page = (name: string) => readFileSync(new URL(`./pages/${name}`, import.meta.url), 'utf8');
const SIGNIN_HTML = page('oauth-signin.html');
const SIGNIN_SCRIPT = page('oauth-signin.js');
const CONSENT_HTML = page('oauth-consent.html');

/** What the consent page names: every value comes from a person or a client, so each is escaped as it is filled in. */
export interface ConsentView {
  client: string;
  /** Who vouches for the client: the host publishing its metadata document, or no one. */
  publisher: string;
  person: string;
  account: string;
  role: string;
  /** The page's anti-forgery value, sent back with the answer. */
  consent: string;
}

const SIGNIN_SCRIPT_PATH = '/oauth/signin.js';

export function sendSignInPage(res: Response, platformOrigin: string): void {
  res.set({ ...scriptPageHeaders(res.req, platformOrigin, SIGNIN_SCRIPT_PATH), 'content-type': 'text/html; charset=utf-8' }).send(SIGNIN_HTML);
}

/** GET /oauth/signin.js, the sign-in page's script. */
export function mountSignInScript(router: Router, platformOrigin: string): void {
  router.get(SIGNIN_SCRIPT_PATH, (req, res) => {
    res.set({ ...scriptPageHeaders(req, platformOrigin, SIGNIN_SCRIPT_PATH), 'content-type': 'text/javascript; charset=utf-8' }).send(SIGNIN_SCRIPT);
  });
}

/**
 * The consent page. Its answer is a redirect to the client, and browsers hold a form's redirects to form-action too,
 * so the policy names the redirect's target besides this origin. It runs no script at all.
 */
export function sendConsentPage(res: Response, view: ConsentView, redirectUri: string): void {
  const target = new URL(redirectUri);
  const policy = `default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self' ${formActionSource(target)}; frame-ancestors 'none'`;
  const html = fill(CONSENT_HTML, { ...view, redirect: `${target.protocol}//${target.host}` });
  res.set({ ...SECURITY_HEADERS, 'content-security-policy': policy, 'content-type': 'text/html; charset=utf-8' }).send(html);
}

/** A CSP source allowing the redirect: the origin of a web URL, the scheme of a native app's own (RFC 8252 §7.1). */
function formActionSource(target: URL): string {
  const source = target.protocol === 'http:' || target.protocol === 'https:' ? target.origin : target.protocol;
  // A registered host may hold characters that would end the directive; such a target is left out (the browser then
  // stops at the redirect) rather than let it shape the policy.
  return /^[a-z][a-z0-9+.-]*:(\/\/[a-z0-9.:[\]-]+)?$/i.test(source) ? source : '';
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** The template with each {{name}} replaced by its value, HTML-escaped. */
function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{\{(\w+)\}\}/g, (_, name: string) => values[name]!.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!));
}
