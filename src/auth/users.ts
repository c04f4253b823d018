import type { Logger } from 'pino';
import { generateKey, hashKey } from '../core/crypto.ts';
import { AppError, errors } from '../core/errors.ts';
import { isUuid } from '../core/uuid.ts';
import type { AppDatabases, AppSql } from '../apps/app-databases.ts';
import type { EndUserTokens } from './end-user-tokens.ts';
import { dummyHash, hashPassword, verifyAgainstDummy, verifyPassword } from './passwords.ts';

export interface EndUserView {
  id: string;
  email: string;
  created_at: string;
  last_sign_in_at: string | null;
}

export interface AuthSession {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
  refresh_token: string;
  user: { id: string; email: string; created_at: string };
  /** The refresh token family: the session auth-js signs out of (claim session_id); the platform's routes omit it. */
  session_id: string;
  /** The access token's expiry, epoch seconds (auth-js's expires_at). */
  expires_at: number;
  /** The user as auth-js reads it (GoTrue's user): the platform's routes omit it. */
  account: AccountRow;
}

/** An end user's row with what auth-js reads of it. */
export interface AccountRow {
  id: string;
  email: string;
  created_at: Date;
  last_sign_in_at: Date | null;
  updated_at: Date | null;
  raw_user_meta_data: Record<string, unknown>;
  /** null until the address is confirmed (only when the app asks sign-ups to confirm, or a code made the user). */
  email_confirmed_at: Date | null;
  /** An address asked for by updateUser and not yet confirmed. */
  new_email: string | null;
}

export interface EndUsersOptions {
  databases: AppDatabases;
  tokens: EndUserTokens;
  accessTokenTtlSeconds: number;
  refreshTokenTtlDays: number;
  log: Logger;
}

/** A signed-in user's row and its session (refresh token family). */
interface UserRow extends AccountRow {
  family: string;
}

type FullUserRow = AccountRow;

/** The columns of an AccountRow, for the statements that return one. */
const ACCOUNT = 'id, email, created_at, last_sign_in_at, updated_at, raw_user_meta_data, email_confirmed_at, new_email';

export const USERS_LIST_LIMIT = 1000;

/** One answer for an unknown email and a wrong password alike: which accounts exist stays private. */
export const invalidCredentials = () =>
  new AppError(401, 'AUTH_INVALID_CREDENTIALS', 'Invalid email or password.', 'Check the email and password and try again; an account must first be created with auth_signup.');

const invalidRefreshToken = () =>
  new AppError(401, 'AUTH_INVALID_TOKEN', 'The refresh token is invalid, expired or revoked.', 'Sign in again with auth_login to start a new session.');

const userGone = () => errors.notFound('User', 'The account was deleted; sign up again with auth_signup.');

/** Every end user signs in with email and password: GoTrue's app_metadata of such a user. */
export const APP_METADATA = { provider: 'email', providers: ['email'] };

export const emailTaken = () =>
  errors.conflict('An account with this email already exists in this app.', 'Log in with auth_login instead, or sign up with a different email.');

/** The platform's auth_signup when the app asks sign-ups to confirm: the account exists, and signs in once confirmed. */
export const confirmationSent = () =>
  new AppError(403, 'AUTH_EMAIL_NOT_CONFIRMED', 'Account created; it signs in once its email is confirmed.', 'Follow the link (or enter the code) mailed to the address, then auth_login.');

/** A right password for an address not yet confirmed (the app asks sign-ups to confirm: auth_settings_get). */
export function emailNotConfirmed(): AppError {
  const err = new AppError(403, 'AUTH_EMAIL_NOT_CONFIRMED', 'Email not confirmed.', 'Follow the link (or enter the code) mailed at sign-up; supabase-js auth.resend sends it again.');
  err.gotrue = { code: 'email_not_confirmed', status: 400 };
  return err;
}

/**
 * Refresh tokens are opaque random secrets (32 bytes, base64url). No `svc_` prefix: those are parsed as
 * API keys. High entropy makes a plain SHA-256 a sufficient at-rest hash.
 */
export const newRefreshToken = (): string => generateKey('');

/**
 * A session's expired refresh tokens, deleted as it refreshes (through the family index): a token past its expiry can
 * no longer be used, and every refresh writes a row, so without this a long session's rows only grow.
 */
const PRUNE_EXPIRED = (families: string) => `delete from svc_auth.refresh_tokens where family = ${families} and expires_at < now()`;

// New session: a fresh family per sign-in, so reuse detection revokes only the session that leaked.
const SIGNUP_SQL = `
  with u as (
    insert into svc_auth.users (email, password_hash, last_sign_in_at, raw_user_meta_data, email_confirmed_at) values ($1, $2, now(), $5::jsonb, now())
    returning ${ACCOUNT}
  ), t as (
    insert into svc_auth.refresh_tokens (user_id, token_hash, family, expires_at)
    select id, $3, gen_random_uuid(), now() + make_interval(days => $4::int) from u
    returning family
  )
  select u.*, t.family from u, t`;

/** A user that must confirm first (or that a one-time code made, without a password): no session until then. */
const REGISTER_SQL = `insert into svc_auth.users (email, password_hash, raw_user_meta_data) values ($1, $2, $3::jsonb) returning ${ACCOUNT}`;

const LOGIN_LOOKUP_SQL = `select id, email, password_hash, email_confirmed_at from svc_auth.users where lower(email) = lower($1)`;

const BY_EMAIL_SQL = `select ${ACCOUNT} from svc_auth.users where lower(email) = lower($1)`;

const LOGIN_SESSION_SQL = `
  with u as (
    update svc_auth.users set last_sign_in_at = now() where id = $1
    returning ${ACCOUNT}
  ), t as (
    insert into svc_auth.refresh_tokens (user_id, token_hash, family, expires_at)
    select id, $2, gen_random_uuid(), now() + make_interval(days => $3::int) from u
    returning family
  )
  select u.*, t.family from u, t`;

// Rotation in one statement: of two concurrent uses of one token, the row lock lets exactly one through.
const ROTATE_SQL = `
  with used as (
    update svc_auth.refresh_tokens set revoked_at = now()
    where token_hash = $1 and revoked_at is null and expires_at > now()
    returning user_id, family
  ), fresh as (
    insert into svc_auth.refresh_tokens (user_id, token_hash, family, expires_at)
    select user_id, $2, family, now() + make_interval(days => $3::int) from used
  ), expired as (${PRUNE_EXPIRED('(select family from used)')})
  select ${ACCOUNT.split(', ').map((c) => `u.${c}`).join(', ')}, used.family from used join svc_auth.users u on u.id = used.user_id`;

// A revoked token presented again means it was copied: end every token of its family, the newest included.
const REVOKE_REUSED_FAMILY_SQL = `
  update svc_auth.refresh_tokens set revoked_at = now()
  where family = (select family from svc_auth.refresh_tokens where token_hash = $1 and revoked_at is not null)
    and revoked_at is null`;

const LOGOUT_FAMILY_SQL = `
  update svc_auth.refresh_tokens set revoked_at = now()
  where family = (select family from svc_auth.refresh_tokens where token_hash = $1 and user_id = $2)
    and revoked_at is null`;

const LOGOUT_ALL_SQL = `update svc_auth.refresh_tokens set revoked_at = now() where user_id = $1 and revoked_at is null`;

/** auth-js's sign-out scopes by session (family): `local` ends it, `others` every other one of the user's. */
const LOGOUT_SESSION_SQL = `update svc_auth.refresh_tokens set revoked_at = now() where user_id = $1 and family = $2 and revoked_at is null`;
/** Whether a session (refresh token family) of the user still has a usable token: signed out everywhere, it has none. */
const SESSION_LIVE_SQL = `select exists (select 1 from svc_auth.refresh_tokens
  where user_id = $1 and family = $2 and revoked_at is null and expires_at > now()) as live`;
const LOGOUT_OTHERS_SQL = `update svc_auth.refresh_tokens set revoked_at = now() where user_id = $1 and family <> $2 and revoked_at is null`;

const USER_SQL = `select ${ACCOUNT} from svc_auth.users where id = $1`;

/**
 * updateUser: top-level metadata keys merged in (a null value removes its key, as GoTrue does) and, when given, a new
 * password hash; either way updated_at moves.
 */
const UPDATE_USER_SQL = `
  update svc_auth.users set
    raw_user_meta_data = case when $2::jsonb is null then raw_user_meta_data
      else coalesce((select jsonb_object_agg(key, value) from jsonb_each(raw_user_meta_data || $2::jsonb) where value <> 'null'::jsonb), '{}'::jsonb) end,
    password_hash = coalesce($3, password_hash),
    email = coalesce($4, email),
    updated_at = now()
  where id = $1
  returning ${ACCOUNT}`;

/** A page after the cursor (created_at, id), optionally of e-mails containing a text (ILIKE, its wildcards escaped). */
const USERS_LIST_SQL = `select ${ACCOUNT},
    to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_at from svc_auth.users
  where ($2::timestamptz is null or (created_at, id) < ($2, $3::uuid))
    and ($4::text is null or email ilike '%' || $4 || '%')
  order by created_at desc, id desc limit $1`;

/** The opaque position after a user: its created_at to the microsecond (a Date keeps milliseconds) and id. */
function encodeUserCursor(r: FullUserRow & { cursor_at: string }): string {
  return Buffer.from(`${r.cursor_at}|${r.id}`).toString('base64url');
}

function decodeUserCursor(cursor: string): { createdAt: string; id: string } {
  const [createdAt, id, extra] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  if (!createdAt || !id || extra !== undefined || Number.isNaN(Date.parse(createdAt)) || !isUuid(id)) {
    throw errors.validation("Invalid 'cursor': pass next_cursor of the previous page as it came.", [{ path: 'cursor', message: 'not a cursor of this list' }]);
  }
  return { createdAt, id };
}

const toView = (r: FullUserRow): EndUserView => ({
  id: r.id,
  email: r.email,
  created_at: r.created_at.toISOString(),
  last_sign_in_at: r.last_sign_in_at?.toISOString() ?? null,
});

const isEmailConflict = (err: unknown): boolean =>
  typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23505' && (err as { constraint?: unknown }).constraint === 'users_email_key';

/** A statement's failure on the unique address index as 409 CONFLICT (GoTrue's user_already_exists). */
function refuseTakenEmail(err: unknown): never {
  throw isEmailConflict(err) ? emailTaken() : err;
}

/**
 * End users of one app, stored in that app's own database (schema svc_auth, never exposed by the data API),
 * reached as the platform login that owns the schema. Access tokens are short-lived stateless JWTs;
 * refresh tokens rotate on every use and are stored hashed.
 */
export class EndUsers {
  readonly #opts: EndUsersOptions;

  constructor(opts: EndUsersOptions) {
    this.#opts = opts;
    // The first unknown-email login must not be slower than the rest (the dummy hash is made once).
    dummyHash().catch((err: unknown) => opts.log.error({ err }, 'could not prepare the dummy password hash'));
  }

  /** Email arrives validated and lower-cased; a taken email is 409 CONFLICT. */
  async signup(appId: string, email: string, password: string, metadata: Record<string, unknown> = {}): Promise<AuthSession> {
    const passwordHash = await hashPassword(password);
    const refreshToken = newRefreshToken();
    const params = [email, passwordHash, hashKey(refreshToken), this.#opts.refreshTokenTtlDays, JSON.stringify(metadata)];
    const { rows } = await this.#db(appId).query<UserRow>(SIGNUP_SQL, params).catch(refuseTakenEmail);
    return this.#session(appId, rows[0]!, refreshToken);
  }

  /**
   * A user whose address is not confirmed yet, without a session: a sign-up the app asks to confirm, or (password
   * null) one a one-time code makes. It signs in once a mailed link or code confirms the address.
   */
  async register(appId: string, email: string, password: string | null, metadata: Record<string, unknown> = {}): Promise<AccountRow> {
    const passwordHash = password === null ? null : await hashPassword(password);
    const { rows } = await this.#db(appId).query<AccountRow>(REGISTER_SQL, [email, passwordHash, JSON.stringify(metadata)]).catch(refuseTakenEmail);
    return rows[0]!;
  }

  /** The user with this (lower-cased) address, if any. */
  async findByEmail(appId: string, email: string): Promise<AccountRow | undefined> {
    const { rows } = await this.#db(appId).query<AccountRow>(BY_EMAIL_SQL, [email]);
    return rows[0];
  }

  async login(appId: string, email: string, password: string): Promise<AuthSession> {
    const db = this.#db(appId);
    const { rows } = await db.query<{ id: string; password_hash: string | null; email_confirmed_at: Date | null }>(LOGIN_LOOKUP_SQL, [email]);
    const found = rows[0];
    // A user without a password (made by a one-time code) answers as an unknown address does, in the same time.
    const ok = found?.password_hash ? await verifyPassword(found.password_hash, password) : await verifyAgainstDummy(password);
    if (!found?.password_hash || !ok) throw invalidCredentials();
    if (found.email_confirmed_at === null) throw emailNotConfirmed();
    const session = await this.startSession(appId, found.id);
    // Deleted between the lookup and now: as if it never existed.
    if (!session) throw invalidCredentials();
    return session;
  }

  /** A new session (refresh token family) of the user, who has just proven who they are; undefined if it is gone. */
  async startSession(appId: string, userId: string): Promise<AuthSession | undefined> {
    const refreshToken = newRefreshToken();
    const { rows } = await this.#db(appId).query<UserRow>(LOGIN_SESSION_SQL, [userId, hashKey(refreshToken), this.#opts.refreshTokenTtlDays]);
    return rows[0] && this.#session(appId, rows[0], refreshToken);
  }

  /** Rotates: the presented token is revoked and a new one of the same family is issued. */
  async refresh(appId: string, refreshToken: string): Promise<AuthSession> {
    const db = this.#db(appId);
    const presented = hashKey(refreshToken);
    const next = newRefreshToken();
    const { rows } = await db.query<UserRow>(ROTATE_SQL, [presented, hashKey(next), this.#opts.refreshTokenTtlDays]);
    if (rows[0]) return this.#session(appId, rows[0], next);
    const reuse = await db.query(REVOKE_REUSED_FAMILY_SQL, [presented]);
    if (reuse.rowCount) this.#opts.log.warn({ app_id: appId, revoked: reuse.rowCount }, 'refresh token reuse: session family revoked');
    throw invalidRefreshToken();
  }

  /**
   * With a refresh token: ends that session (its whole family), if it is the caller's. Without: ends every
   * session of the user. Idempotent, and silent about tokens it does not know. Access tokens already
   * issued stay valid until they expire.
   */
  async logout(appId: string, userId: string, refreshToken: string | undefined): Promise<number> {
    const db = this.#db(appId);
    const result = refreshToken === undefined
      ? await db.query(LOGOUT_ALL_SQL, [userId])
      : await db.query(LOGOUT_FAMILY_SQL, [hashKey(refreshToken), userId]);
    return result.rowCount ?? 0;
  }

  async get(appId: string, userId: string): Promise<EndUserView> {
    return toView(await this.account(appId, userId));
  }

  /** The user's whole row (auth-js's getUser). */
  async account(appId: string, userId: string): Promise<AccountRow> {
    const { rows } = await this.#db(appId).query<FullUserRow>(USER_SQL, [userId]);
    if (!rows[0]) throw userGone();
    return rows[0];
  }

  /** auth-js's updateUser: metadata merged key by key (null removes a key), a new password and address when given. */
  async update(appId: string, userId: string, change: { metadata?: Record<string, unknown> | undefined; password?: string | undefined; email?: string | undefined }): Promise<AccountRow> {
    const passwordHash = change.password === undefined ? null : await hashPassword(change.password);
    const metadata = change.metadata === undefined ? null : JSON.stringify(change.metadata);
    const params = [userId, metadata, passwordHash, change.email ?? null];
    const { rows } = await this.#db(appId).query<FullUserRow>(UPDATE_USER_SQL, params).catch(refuseTakenEmail);
    if (!rows[0]) throw userGone();
    return rows[0];
  }

  /** An address the user asked to change to, kept until the mail sent there is followed. */
  async askNewEmail(appId: string, userId: string, email: string): Promise<AccountRow> {
    const { rows } = await this.#db(appId).query<AccountRow>(`update svc_auth.users set new_email = $2, updated_at = now() where id = $1 returning ${ACCOUNT}`, [userId, email]);
    if (!rows[0]) throw userGone();
    return rows[0];
  }

  /** Whether the session an access token names (its session_id) is still open, as GoTrue checks on each call. */
  async sessionOpen(appId: string, userId: string, sessionId: string): Promise<boolean> {
    const { rows } = await this.#db(appId).query<{ live: boolean }>(SESSION_LIVE_SQL, [userId, sessionId]);
    return rows[0]?.live === true;
  }

  /** auth-js's sign-out scopes: `global` ends every session of the user, `local` the token's own, `others` the rest. */
  async logoutScope(appId: string, userId: string, sessionId: string | undefined, scope: 'global' | 'local' | 'others'): Promise<void> {
    const db = this.#db(appId);
    // A token without session_id (issued before it was a claim) cannot name its session: local ends them all.
    if (scope === 'global' || sessionId === undefined) await db.query(LOGOUT_ALL_SQL, [userId]);
    else await db.query(scope === 'local' ? LOGOUT_SESSION_SQL : LOGOUT_OTHERS_SQL, [userId, sessionId]);
  }

  /**
   * Newest first, `limit` (at most USERS_LIST_LIMIT) after `cursor`, e-mails containing `q` when given; next_cursor
   * continues the list, null at its end.
   */
  async list(appId: string, page: { limit?: number; cursor?: string; q?: string } = {}): Promise<{ users: EndUserView[]; next_cursor: string | null }> {
    const limit = page.limit ?? USERS_LIST_LIMIT;
    const after = page.cursor === undefined ? null : decodeUserCursor(page.cursor);
    const pattern = page.q === undefined ? null : page.q.replace(/[\\%_]/g, (c) => `\\${c}`);
    const { rows } = await this.#db(appId).query<FullUserRow & { cursor_at: string }>(USERS_LIST_SQL, [limit + 1, after?.createdAt ?? null, after?.id ?? null, pattern]);
    const users = rows.slice(0, limit);
    const last = users.at(-1);
    return { users: users.map(toView), next_cursor: rows.length > limit && last ? encodeUserCursor(last) : null };
  }

  async #session(appId: string, user: UserRow, refreshToken: string): Promise<AuthSession> {
    const ttl = this.#opts.accessTokenTtlSeconds;
    const { family, ...account } = user;
    // The claims supabase-js reads (GoTrue's), beside sub, email and role that row-level security uses.
    const claims = {
      sub: user.id,
      email: user.email,
      role: 'authenticated',
      session_id: family,
      app_metadata: APP_METADATA,
      user_metadata: user.raw_user_meta_data,
      is_anonymous: false,
    };
    const accessToken = await this.#opts.tokens.sign(appId, claims, ttl);
    return {
      access_token: accessToken,
      token_type: 'bearer',
      expires_in: ttl,
      refresh_token: refreshToken,
      user: { id: user.id, email: user.email, created_at: user.created_at.toISOString() },
      session_id: family,
      expires_at: Math.floor(Date.now() / 1000) + ttl,
      account,
    };
  }

  #db(appId: string): AppSql {
    return this.#opts.databases.sql(appId);
  }
}
