// Realtime tokens: short-lived access tokens for an app's realtime channels that act as the app (the service role),
// minted by a platform caller (a person's console session, a platform key) with realtime_token. They are what a
// browser holds instead of a secret key: supabase-js passes one as its accessToken, and each join or refresh with it
// checks its signature, its app, its expiry and that the session or key that minted it still stands. A channel closes
// at its token's expiry unless a newer token came (the console asks for one at half its life). Stateless: HMAC-SHA256
// under a key derived from the master key, so every api process reads every token.
import { createHmac } from 'node:crypto';
import { safeEqual } from '../core/crypto.ts';
import type { CredentialRef } from '../auth/keys.ts';
import { expiredMessage, REALTIME_TOKEN_PREFIX, type RoleResult } from './roles.ts';

/** A token's life. */
export const REALTIME_TOKEN_SECONDS = 300;

/** What a token says: its app, its expiry (seconds since the epoch) and the credential that minted it. */
interface Claims {
  appId: string;
  exp: number;
  credential: CredentialRef;
}

/** Where the minting credentials stand (services.keys). */
export type Credentials = { stillValid(credentials: readonly CredentialRef[]): Promise<Set<string>> };

const CLAIMS = /^([a-z0-9]{16})\.(\d{1,12})\.(platform|session)\.([A-Za-z0-9_-]{1,128})$/;

export class RealtimeTokens {
  readonly #key: Buffer;
  readonly #keys: Credentials;

  constructor(key: Buffer, keys: Credentials) {
    this.#key = key;
    this.#keys = keys;
  }

  /** A token for the app's channels, bound to the platform key or session that asks (`credential`). */
  mint(appId: string, credential: CredentialRef, nowMs = Date.now()): { token: string; expires_in: number } {
    const claims = Buffer.from(`${appId}.${Math.floor(nowMs / 1000) + REALTIME_TOKEN_SECONDS}.${credential.kind}.${credential.id}`).toString('base64url');
    return { token: `${REALTIME_TOKEN_PREFIX}${claims}.${this.#sign(claims)}`, expires_in: REALTIME_TOKEN_SECONDS };
  }

  /** The role of a channel of `appId` joined (or refreshed) with `token`, or why it is refused, in Supabase's words. */
  async role(appId: string, token: string): Promise<RoleResult> {
    const claims = this.#read(token);
    if (!claims) return { ok: false, refusal: { code: 'JwtSignatureError', message: 'Failed to validate the token signature' } };
    if (claims.appId !== appId) return { ok: false, refusal: { code: 'Unauthorized', message: "The token is another app's" } };
    const now = Math.floor(Date.now() / 1000);
    if (claims.exp <= now) return { ok: false, refusal: { code: 'InvalidJWTToken', message: expiredMessage(now - claims.exp) } };
    if (!(await this.#keys.stillValid([claims.credential])).size) {
      return { ok: false, refusal: { code: 'Unauthorized', message: 'The session or key that minted the token has ended' } };
    }
    return { ok: true, role: { kind: 'service', expiresAt: claims.exp } };
  }

  #sign(claims: string): string {
    return createHmac('sha256', this.#key).update(claims).digest('base64url');
  }

  /** A token's claims when its signature is ours (whatever its expiry). */
  #read(token: string): Claims | undefined {
    const [claims, mac, ...rest] = token.slice(REALTIME_TOKEN_PREFIX.length).split('.');
    if (!claims || !mac || rest.length || !safeEqual(this.#sign(claims), mac)) return undefined;
    const match = CLAIMS.exec(Buffer.from(claims, 'base64url').toString());
    if (!match) return undefined;
    return { appId: match[1]!, exp: Number(match[2]), credential: { kind: match[3] as 'platform' | 'session', id: match[4]! } };
  }
}
