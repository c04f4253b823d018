// The session cookie of people on the platform: opaque, HttpOnly, SameSite=Lax, Secure whenever the base URL is
// https, and trusted for a state-changing request only when it comes from the platform's own origin.
import { parse, serialize } from 'cookie';
import type { Request } from 'express';

export const SESSION_COOKIE = 'svc_session';

/** The session token the browser sent, if any. */
export function sessionCookieOf(req: Request): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  return parse(header)[SESSION_COOKIE] || undefined;
}

/** Set-Cookie for a new session, or (null) the one that clears it. */
export function sessionCookieHeader(session: { token: string; expiresAt: Date } | null, secure: boolean): string {
  const base = { httpOnly: true, sameSite: 'lax' as const, secure, path: '/' };
  return session ? serialize(SESSION_COOKIE, session.token, { ...base, expires: session.expiresAt }) : serialize(SESSION_COOKIE, '', { ...base, expires: new Date(0) });
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
