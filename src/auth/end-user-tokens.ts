import { randomBytes } from 'node:crypto';
import { SignJWT, decodeJwt, decodeProtectedHeader, exportJWK, exportPKCS8, generateKeyPair, importJWK, importPKCS8, jwtVerify, type CryptoKey, type JWK } from 'jose';
import type { Kysely, Transaction } from 'kysely';
import type { SecretBox } from '../core/crypto.ts';
import type { Caller } from '../core/caller.ts';
import type { ControlDatabase } from '../db/types.ts';

const ALG = 'ES256';
const PUBLIC_KEY_TTL_MS = 60_000;
const MAX_CACHED_APPS = 1000;
/** Verified tokens kept so that an active user's requests skip the ES256 check (~0.2 ms of CPU each). */
const MAX_CACHED_TOKENS = 10_000;

type UserCaller = Extract<Caller, { kind: 'user' }>;

export interface EndUserClaims {
  sub: string;
  [claim: string]: unknown;
}

/** A public EC signing key as published at the app's JWKS URL. */
export interface PublicJwk {
  kty: string;
  crv: string;
  x: string;
  y: string;
  kid: string;
  alg: typeof ALG;
  use: 'sig';
}

interface CachedKeys {
  keys: Map<string, CryptoKey>;
  expires: number;
}

/**
 * End-user JWTs: one ES256 key pair per app (private half sealed with the master key), the app id as
 * audience, the platform base URL as issuer. Issuance routes come with end-user auth; verification is the
 * seam every app-scoped route uses.
 */
export class EndUserTokens {
  readonly #db: Kysely<ControlDatabase>;
  readonly #box: SecretBox;
  readonly #issuer: string;
  readonly #publicKeys = new Map<string, CachedKeys>();
  readonly #verified = new Map<string, { caller: UserCaller; expiresMs: number }>();
  #seen: (appId: string, userId: string) => void = () => {};

  constructor(db: Kysely<ControlDatabase>, box: SecretBox, issuer: string) {
    this.#db = db;
    this.#box = box;
    this.#issuer = issuer;
  }

  async createSigningKey(appId: string, db: Kysely<ControlDatabase> | Transaction<ControlDatabase>): Promise<void> {
    const { publicKey, privateKey } = await generateKeyPair(ALG, { extractable: true });
    const kid = randomBytes(8).toString('hex');
    const jwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: ALG, use: 'sig' };
    await db
      .insertInto('app_signing_keys')
      .values({ app_id: appId, kid, alg: ALG, public_jwk: JSON.stringify(jwk), private_key_sealed: this.#box.seal(await exportPKCS8(privateKey)) })
      .execute();
  }

  /** Called with every token signed or verified (monthly active users are counted from it). */
  onUse(listener: (appId: string, userId: string) => void): void {
    this.#seen = listener;
  }

  async sign(appId: string, claims: EndUserClaims, ttlSeconds: number): Promise<string> {
    this.#seen(appId, claims.sub);
    const row = await this.#db
      .selectFrom('app_signing_keys')
      .select(['kid', 'private_key_sealed'])
      .where('app_id', '=', appId)
      .orderBy('created_at', 'desc')
      .executeTakeFirstOrThrow();
    const key = await importPKCS8(this.#box.open(row.private_key_sealed), ALG);
    return new SignJWT(claims)
      .setProtectedHeader({ alg: ALG, kid: row.kid, typ: 'JWT' })
      .setIssuer(this.#issuer)
      .setAudience(appId)
      .setIssuedAt()
      .setExpirationTime(`${ttlSeconds}s`)
      .sign(key);
  }

  /** The caller a valid token stands for, or undefined for any token we did not issue or that has expired. */
  async verify(token: string): Promise<UserCaller | undefined> {
    const hit = this.#verified.get(token);
    if (hit) {
      if (hit.expiresMs > Date.now()) return this.#used(hit.caller);
      this.#verified.delete(token);
    }
    const caller = await this.#verifySignature(token);
    if (caller && typeof caller.claims.exp === 'number') {
      if (this.#verified.size >= MAX_CACHED_TOKENS) this.#verified.delete(this.#verified.keys().next().value as string);
      this.#verified.set(token, { caller, expiresMs: caller.claims.exp * 1000 });
    }
    return caller && this.#used(caller);
  }

  #used(caller: UserCaller): UserCaller {
    this.#seen(caller.appId, caller.userId);
    return caller;
  }

  async #verifySignature(token: string): Promise<UserCaller | undefined> {
    let appId: unknown;
    let kid: unknown;
    try {
      appId = decodeJwt(token).aud;
      kid = decodeProtectedHeader(token).kid;
    } catch {
      return undefined;
    }
    if (typeof appId !== 'string' || typeof kid !== 'string') return undefined;
    const key = (await this.#keysOf(appId)).get(kid);
    if (!key) return undefined;
    try {
      const { payload } = await jwtVerify(token, key, { issuer: this.#issuer, audience: appId, algorithms: [ALG] });
      if (typeof payload.sub !== 'string') return undefined;
      return { kind: 'user', appId, userId: payload.sub, claims: payload as Record<string, unknown> };
    } catch {
      return undefined;
    }
  }

  /**
   * The app's public keys as a JWKS document, newest first, so third parties can verify its tokens.
   * Only the public members are copied: a stored JWK can never leak more than it should.
   */
  async jwks(appId: string): Promise<{ keys: PublicJwk[] }> {
    const rows = await this.#db
      .selectFrom('app_signing_keys')
      .select(['kid', 'public_jwk'])
      .where('app_id', '=', appId)
      .orderBy('created_at', 'desc')
      .execute();
    return {
      keys: rows.map((r) => {
        const { kty, crv, x, y } = r.public_jwk as JWK;
        return { kty: String(kty), crv: String(crv), x: String(x), y: String(y), kid: r.kid, alg: ALG, use: 'sig' };
      }),
    };
  }

  /** Drops what is cached for an app (its keys and its verified tokens), e.g. when it is deleted. */
  forget(appId: string): void {
    this.#publicKeys.delete(appId);
    for (const [token, entry] of this.#verified) if (entry.caller.appId === appId) this.#verified.delete(token);
  }

  async #keysOf(appId: string): Promise<Map<string, CryptoKey>> {
    const cached = this.#publicKeys.get(appId);
    if (cached && cached.expires > Date.now()) return cached.keys;
    const rows = await this.#db.selectFrom('app_signing_keys').select(['kid', 'public_jwk']).where('app_id', '=', appId).execute();
    const keys = new Map<string, CryptoKey>();
    for (const r of rows) keys.set(r.kid, (await importJWK(r.public_jwk as JWK, ALG)) as CryptoKey);
    if (this.#publicKeys.size >= MAX_CACHED_APPS) this.#publicKeys.clear();
    this.#publicKeys.set(appId, { keys, expires: Date.now() + PUBLIC_KEY_TTL_MS });
    return keys;
  }
}
