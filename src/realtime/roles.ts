// Who a channel acts for: the access token of its join (and of later `access_token` pushes), never the socket's apikey.
// A user JWT of the app is that end user; the app's publishable key (or no token) is anonymous; its secret key the
// service role, as is a realtime token (tokens.ts) until it expires. Anything else refuses the join, with the reason
// realtime-js shows ("<Code>: <message>").
import { decodeJwt } from 'jose';
import type { Caller } from '../core/caller.ts';
import { KEY_PREFIX } from '../auth/keys.ts';

export type ChannelRole =
  | { kind: 'anon' }
  /** `expiresAt`: a realtime token's expiry (a secret key has none). */
  | { kind: 'service'; expiresAt?: number }
  /**
   * `expiresAt`: the token's exp (seconds since the epoch), when the channel is closed unless a new token came;
   * `claims`: the verified token's claims, which row-level security reads (postgres_changes).
   */
  | { kind: 'user'; userId: string; expiresAt: number | undefined; claims: Record<string, unknown> };

/** Why a token was refused: Supabase Realtime's code and its message. */
export interface Refusal {
  code: string;
  message: string;
}

export type RoleResult = { ok: true; role: ChannelRole } | { ok: false; refusal: Refusal };

/** What resolving a token needs: the app keys (services.keys), end-user JWTs (services.endUserTokens), realtime tokens. */
export interface TokenVerifiers {
  keys: { resolve(key: string): Promise<Caller | undefined> };
  endUserTokens: { verify(token: string): Promise<Extract<Caller, { kind: 'user' }> | undefined> };
  realtimeTokens: { role(appId: string, token: string): Promise<RoleResult> };
}

/** How a realtime token (tokens.ts) starts. */
export const REALTIME_TOKEN_PREFIX = 'svc_rt_';
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const ANON: RoleResult = { ok: true, role: { kind: 'anon' } };

const refused = (code: string, message: string): RoleResult => ({ ok: false, refusal: { code, message } });

/** The reason a channel's join is refused with: `<Code>: <message>`. */
export const reason = (r: Refusal): string => `${r.code}: ${r.message}`;

/** The role of a channel of `appId` whose join (or refresh) carried `token`. */
export async function resolveRole(appId: string, token: unknown, verifiers: TokenVerifiers): Promise<RoleResult> {
  if (token === undefined || token === null || token === '') return ANON;
  if (typeof token !== 'string' || token.length > 8192) return refused('MalformedJWT', 'The token provided is not a valid JWT');
  if (token.startsWith(KEY_PREFIX.publishable) || token.startsWith(KEY_PREFIX.service)) {
    const caller = await verifiers.keys.resolve(token);
    if (!caller) return refused('Unauthorized', 'The key is unknown or revoked');
    if (caller.kind === 'none' && caller.appId === appId) return ANON;
    if (caller.kind === 'service' && caller.appId === appId) return { ok: true, role: { kind: 'service' } };
    return refused('Unauthorized', "The key is another app's");
  }
  if (token.startsWith(REALTIME_TOKEN_PREFIX)) return verifiers.realtimeTokens.role(appId, token);
  if (!JWT_SHAPE.test(token)) return refused('MalformedJWT', 'The token provided is not a valid JWT');
  const user = await verifiers.endUserTokens.verify(token);
  if (user) {
    if (user.appId !== appId) return refused('Unauthorized', "The token is another app's");
    const exp = user.claims.exp;
    return { ok: true, role: { kind: 'user', userId: user.userId, expiresAt: typeof exp === 'number' ? exp : undefined, claims: user.claims } };
  }
  const expiredFor = secondsExpired(token);
  if (expiredFor !== undefined) return refused('InvalidJWTToken', expiredMessage(expiredFor));
  return refused('JwtSignatureError', 'Failed to validate JWT signature');
}

/** Supabase's words for a token past its exp. */
export const expiredMessage = (seconds: number): string => `Token has expired ${seconds} seconds ago`;

/** How long ago an (unverified) token expired, or undefined when it has not or says nothing. */
function secondsExpired(token: string): number | undefined {
  try {
    const { exp } = decodeJwt(token);
    const now = Math.floor(Date.now() / 1000);
    return typeof exp === 'number' && exp <= now ? now - exp : undefined;
  } catch {
    return undefined;
  }
}
