import { sql, type Kysely } from 'kysely';
import { AppError } from '../core/errors.ts';
import type { ControlDatabase } from '../db/types.ts';

/**
 * Routes with their own limit; each is also the first part of its bucket name. End users: signup, login, refresh,
 * auth_mail (the routes that mail them: codes, recovery, resend), verify (codes and links), and end_user_mail (the
 * mails to one address of an app, whichever route asked).
 * People on the platform: person_signup, person_signin, password_reset, verify_email_send, and person_mail (the
 * verification, reset and sign-up e-mails sent to one address, whichever route asked).
 */
export type RateLimitedRoute =
  | 'signup'
  | 'login'
  | 'refresh'
  | 'auth_mail'
  | 'verify'
  | 'end_user_mail'
  | 'person_signup'
  | 'person_signin'
  | 'password_reset'
  | 'verify_email_send'
  | 'person_mail';

export interface RateLimitConfig {
  authRateLimitPerMinute: number;
  refreshRateLimitPerMinute: number;
  personMailRateLimitPerMinute: number;
}

export interface RateLimitHit {
  /** Requests counted in the current window, this one included. */
  hits: number;
  limit: number;
  allowed: boolean;
  /** Whole seconds until the current window ends (at least 1). */
  retryAfterSeconds: number;
}

/**
 * Windows end after a minute; keeping a few more minutes costs nothing and leaves room for clock skew
 * between instances (the windows themselves are cut by the database clock, so there is no skew in counting).
 */
export const PURGE_RATE_LIMITS_SQL = `delete from rate_limits where window_start < now() - interval '5 minutes'`;

/** `scope`: the app of an end-user route; for people on the platform, what the key is (a RateLimitKey). */
export function rateLimitBucket(route: RateLimitedRoute, scope: string, clientId: string): string {
  return `${route}:${scope}:${clientId}`;
}

export function routeLimit(config: RateLimitConfig, route: RateLimitedRoute): number {
  if (route === 'refresh') return config.refreshRateLimitPerMinute;
  if (route === 'person_mail' || route === 'end_user_mail') return config.personMailRateLimitPerMinute;
  return config.authRateLimitPerMinute;
}

/** The verdict for a counted request; pure so the boundary cases are unit-testable. */
export function decide(hits: number, limit: number, secondsLeft: number): RateLimitHit {
  return { hits, limit, allowed: hits <= limit, retryAfterSeconds: Math.max(1, Math.ceil(secondsLeft)) };
}

/** Whose requests a bucket counts: the client's, or (people on the platform) those naming one e-mail address. */
export type RateLimitKey = 'client' | 'email';

const KEY_PHRASE: Record<RateLimitKey, string> = { client: 'from this client', email: 'for this e-mail address' };

export function rateLimited(retryAfterSeconds: number, key: RateLimitKey = 'client'): AppError {
  const unit = retryAfterSeconds === 1 ? 'second' : 'seconds';
  return new AppError(
    429,
    'RATE_LIMITED',
    `Too many requests to this route ${KEY_PHRASE[key]}; retry in ${retryAfterSeconds} ${unit}.`,
    `Wait ${retryAfterSeconds} ${unit} (the end of the current one-minute window) before retrying; do not retry in a loop.`,
    { retry_after_seconds: retryAfterSeconds },
  );
}

/**
 * Fixed one-minute windows counted in the control database, so the limit holds across any number of api
 * instances. One statement per request: the upsert is atomic under concurrency, and the window is cut by
 * the database clock so instances with skewed clocks still share a window.
 */
export class RateLimiter {
  readonly #db: Kysely<ControlDatabase>;

  constructor(db: Kysely<ControlDatabase>) {
    this.#db = db;
  }

  /** Counts one request in the bucket's current window and says whether it is within the limit. */
  async hit(bucket: string, limit: number): Promise<RateLimitHit> {
    const { rows } = await sql<{ hits: number; seconds_left: number }>`
      insert into rate_limits as r (bucket, window_start, hits)
      values (${bucket}, date_trunc('minute', now()), 1)
      on conflict (bucket, window_start) do update set hits = r.hits + 1
      returning r.hits, extract(epoch from r.window_start + interval '1 minute' - now())::float8 as seconds_left`.execute(this.#db);
    const row = rows[0]!;
    return decide(row.hits, limit, row.seconds_left);
  }

  /** Throws 429 RATE_LIMITED when the request is over the limit; call it before any expensive work. */
  async enforce(bucket: string, limit: number, key: RateLimitKey = 'client'): Promise<void> {
    const verdict = await this.hit(bucket, limit);
    if (!verdict.allowed) throw rateLimited(verdict.retryAfterSeconds, key);
  }

  /** Deletes windows that can no longer count; returns how many rows went. */
  async purge(): Promise<number> {
    const result = await sql.raw(PURGE_RATE_LIMITS_SQL).execute(this.#db);
    return Number(result.numAffectedRows ?? 0);
  }
}
