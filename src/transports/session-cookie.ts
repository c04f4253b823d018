// The session cookie of people on the platform: opaque, HttpOnly, SameSite=Lax, host-only (no Domain, so no app host
// ever receives it), `__Host-` prefixed and Secure whenever the base URL is https (so no other host, an app's
// subdomain included, can set or replace it), and trusted for a state-changing request only when it comes from the
// platform's own origin.
import { parse, serialize } from 'cookie';
import type { Request } from 'express';
import { oidcBindingCookieName } from '../identity/oidc.ts';

const PLAIN_NAME = 'svc_session';
const HOST_NAME = '__Host-svc_session';

/** Every name a cookie of the platform's may have (the session's, OpenID Connect's binding): tenants never set them. */
export const PLATFORM_COOKIE_NAMES: ReadonlySet<string> = new Set([PLAIN_NAME, HOST_NAME, oidcBindingCookieName(false), oidcBindingCookieName(true)]);

/** The cookie's name: `__Host-svc_session` where the scheme allows the prefix (https), else `svc_session`. */
export function sessionCookieName(secure: boolean): string {
  return secure ? HOST_NAME : PLAIN_NAME;
}

/** The session token the browser sent under the cookie's name, if any. */
export function sessionCookieOf(req: Request, secure: boolean): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  return parse(header)[sessionCookieName(secure)] || undefined;
}

/**
 * Set-Cookie headers for a new session, or (null) those that clear it. Under https the cookie of the plain name, which
 * a platform before the `__Host-` prefix set, is cleared too: it would otherwise linger unread until it expired.
 */
export function sessionCookieHeaders(session: { token: string; expiresAt: Date } | null, secure: boolean): string[] {
  const base = { httpOnly: true, sameSite: 'lax' as const, secure, path: '/' };
  const name = sessionCookieName(secure);
  const set = session ? serialize(name, session.token, { ...base, expires: session.expiresAt }) : serialize(name, '', { ...base, expires: new Date(0) });
  return secure ? [set, serialize(PLAIN_NAME, '', { ...base, expires: new Date(0) })] : [set];
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Whether a request may act with the cookie's (or a sign-in's) authority: reads always; writes only when the browser
 * says they come from the platform's own origin (Origin, or failing that Sec-Fetch-Site). A request with neither
 * header is not a browser's cross-site request (browsers send Origin on every cross-site POST), so it passes.
 */
export function sameOriginWrite(req: Request, platformOrigin: string): boolean {
  if (SAFE_METHODS.has(req.method)) return true;
  const origin = req.headers.origin;
  if (origin !== undefined) return origin === platformOrigin;
  const site = req.headers['sec-fetch-site'];
  return site === undefined || site === 'same-origin' || site === 'none';
}
