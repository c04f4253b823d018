// End users' flows through e-mail (supabase-js's auth: sign-up confirmation, one-time codes and magic links, password
// recovery, e-mail change) and PKCE's codes. A route queues the auth_user_mail job; the job makes the link's token and
// the code (so no job payload holds them), stores both hashed in the app's database, and mails them over the app's own
// SMTP server or the platform's. Verifying takes a token once, applies what it was for, and opens a session.
import { createHash, createHmac, randomInt, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { generateKey, hashKey, safeEqual } from '../core/crypto.ts';
import { addressesOf, isInternalAddress, outboundErrors } from '../core/outbound.ts';
import { enqueue } from '../core/jobs.ts';
import type { AppDatabases } from '../apps/app-databases.ts';
import { appHostUrl } from '../apps/hosts.ts';
import type { ControlDatabase } from '../db/types.ts';
import { badCodeVerifier, flowStateExpired, flowStateNotFound, mailUnavailable, otpInvalid, otpSignupRefused, signupDisabled } from './gotrue.ts';
import { authUserMail, type AuthUserMailPayload } from './jobs.ts';
import type { AppMailerFactory, EndUserMailSender } from './mail-port.ts';
import { endUserMail, type EndUserMailKind } from './mail-texts.ts';
import { redirectTarget, type AuthSettings, type AuthSettingsStore } from './settings.ts';
import { emailTaken, type AccountRow, type AuthSession, type EndUsers } from './users.ts';

/** How long a mailed link and code work. */
export const MAIL_TOKEN_TTL_SECONDS = 3600;
/** Wrong codes a mail's code takes before it is void. */
const MAX_CODE_ATTEMPTS = 5;
/** How long a PKCE code waits for its exchange (auth-js exchanges it as the page loads). */
const FLOW_STATE_TTL_SECONDS = 300;

export type PkceMethod = 's256' | 'plain';
export interface Pkce { challenge: string; method: PkceMethod }
/** What the request that asks for a mail says of its link: where it should lead, and PKCE's challenge. */
export interface MailAsk { redirectTo: string | undefined; pkce: Pkce | null }

/** The `type` auth-js's verifyOtp sends, as the kinds of mail whose code it may take. */
export const VERIFY_TYPES = {
  signup: ['confirmation'],
  email: ['confirmation', 'magiclink'],
  magiclink: ['magiclink', 'confirmation'],
  recovery: ['recovery'],
  email_change: ['email_change'],
} as const satisfies Record<string, readonly EndUserMailKind[]>;
export type VerifyType = keyof typeof VERIFY_TYPES;

/** The `type` a mail's link carries back (GoTrue's names, which auth-js reports as the event). */
const LINK_TYPE: Record<EndUserMailKind, VerifyType> = { confirmation: 'signup', magiclink: 'magiclink', recovery: 'recovery', email_change: 'email_change' };

export interface EndUserMailsDeps {
  db: Kysely<ControlDatabase>;
  databases: AppDatabases;
  endUsers: EndUsers;
  settings: AuthSettingsStore;
  /** The platform's mail server (SVC_SMTP_URL), undefined without one. */
  platformSender: EndUserMailSender | undefined;
  openAppSender: AppMailerFactory;
  /** Keys the codes' hashes: six digits are too few to store with a plain hash. */
  codeKey: Uint8Array;
  /** The platform's address (the links' origin) and base domain (apps' own hosts). */
  hosts: { baseUrl: string; baseDomain: string | undefined };
  outboundAllowPrivate: boolean;
  log: Logger;
}

interface TokenRow {
  id: string;
  user_id: string;
  kind: EndUserMailKind;
  otp_hash: string;
  email: string;
  redirect_to: string | null;
  code_challenge: string | null;
  code_challenge_method: PkceMethod | null;
}

/** A verified token: the session it opened, and where its link leads (with the PKCE challenge it was asked with). */
export interface Verified {
  session: AuthSession;
  kind: EndUserMailKind;
  redirectTo: string | null;
  pkce: Pkce | null;
}

const TOKEN_COLUMNS = 'id, user_id, kind, otp_hash, email, redirect_to, code_challenge, code_challenge_method';

// Taken once: of two concurrent uses, the delete lets one through.
const TAKE_TOKEN_SQL = `delete from svc_auth.one_time_tokens where id = $1 and expires_at > now() returning ${TOKEN_COLUMNS}`;
const DROP_SIBLINGS_SQL = `delete from svc_auth.one_time_tokens where user_id = $1 and kind = $2`;

/**
 * What a token was for, applied: every kind proves the address it was mailed to, so it is confirmed; an e-mail change
 * makes that address the user's.
 */
const APPLY_SQL = `update svc_auth.users set
    email_confirmed_at = coalesce(email_confirmed_at, now()),
    email = case when $2 = 'email_change' then $3 else email end,
    new_email = case when $2 = 'email_change' then null else new_email end,
    updated_at = now()
  where id = $1`;

export class EndUserMails {
  readonly #d: EndUserMailsDeps;

  constructor(deps: EndUserMailsDeps) {
    this.#d = deps;
  }

  /** The app's settings, refused (422 email_provider_disabled) when no server can carry its mail. */
  async mailable(appId: string): Promise<AuthSettings> {
    const settings = await this.#d.settings.settings(appId);
    if (this.#d.settings.route(settings) === 'none') throw mailUnavailable();
    return settings;
  }

  /**
   * Queues a mail; one pending per user and kind (a burst of requests before the worker runs sends one). `redirectTo`
   * is kept only where the app allows it (redirectTarget).
   */
  async queue(appId: string, mail: { userId: string; kind: EndUserMailKind; email: string } & MailAsk): Promise<void> {
    const payload: AuthUserMailPayload = {
      app_id: appId,
      user_id: mail.userId,
      kind: mail.kind,
      email: mail.email,
      redirect_to: mail.redirectTo ?? null,
      code_challenge: mail.pkce?.challenge ?? null,
      code_challenge_method: mail.pkce?.method ?? null,
    };
    await enqueue(this.#d.db, authUserMail, payload, { jobKey: `${authUserMail.name}:${appId}:${mail.userId}:${mail.kind}` });
  }

  /** A sign-up: signed in at once, or (the app asks to confirm) an unconfirmed user and the mail that confirms it. */
  async signup(appId: string, user: { email: string; password: string; metadata: Record<string, unknown> }, ask: MailAsk): Promise<AuthSession | AccountRow> {
    const settings = await this.#d.settings.settings(appId);
    if (!settings.allowSignup) throw signupDisabled();
    if (!settings.confirmEmail) return this.#d.endUsers.signup(appId, user.email, user.password, user.metadata);
    if (this.#d.settings.route(settings) === 'none') throw mailUnavailable();
    const row = await this.#d.endUsers.register(appId, user.email, user.password, user.metadata);
    await this.queue(appId, { userId: row.id, kind: 'confirmation', email: row.email, ...ask });
    return row;
  }

  /**
   * signInWithOtp: a magic link and code to the user with this address; a new address (createUser) first becomes a
   * user without a password, whose mail confirms it.
   */
  async otp(appId: string, email: string, create: { createUser: boolean; metadata: Record<string, unknown> }, ask: MailAsk): Promise<void> {
    const settings = await this.mailable(appId);
    let user = await this.#d.endUsers.findByEmail(appId, email);
    if (!user) {
      if (!create.createUser) throw otpSignupRefused();
      if (!settings.allowSignup) throw signupDisabled();
      user = await this.#d.endUsers.register(appId, email, null, create.metadata);
    }
    await this.queue(appId, { userId: user.id, kind: user.email_confirmed_at ? 'magiclink' : 'confirmation', email: user.email, ...ask });
  }

  /** resetPasswordForEmail: a recovery mail when a user has the address; the same answer either way. */
  async recover(appId: string, email: string, ask: MailAsk): Promise<void> {
    await this.mailable(appId);
    const user = await this.#d.endUsers.findByEmail(appId, email);
    if (user) await this.queue(appId, { userId: user.id, kind: 'recovery', email: user.email, ...ask });
  }

  /** auth-js's resend: a sign-up's confirmation (while unconfirmed) or an e-mail change's (to the new address). */
  async resend(appId: string, type: 'signup' | 'email_change', email: string, ask: MailAsk): Promise<void> {
    await this.mailable(appId);
    const user = await this.#d.endUsers.findByEmail(appId, email);
    if (type === 'signup' && user && !user.email_confirmed_at) await this.queue(appId, { userId: user.id, kind: 'confirmation', email: user.email, ...ask });
    if (type === 'email_change' && user?.new_email) await this.queue(appId, { userId: user.id, kind: 'email_change', email: user.new_email, ...ask });
  }

  /** updateUser's new address: changed at once, or (the app asks to confirm) kept as new_email until its mail is followed. */
  async changeEmail(appId: string, userId: string, email: string, ask: MailAsk): Promise<AccountRow> {
    const settings = await this.#d.settings.settings(appId);
    if (!settings.confirmEmail) return this.#d.endUsers.update(appId, userId, { email });
    if (this.#d.settings.route(settings) === 'none') throw mailUnavailable();
    const taken = await this.#d.endUsers.findByEmail(appId, email);
    if (taken && taken.id !== userId) throw emailTaken();
    const row = await this.#d.endUsers.askNewEmail(appId, userId, email);
    await this.queue(appId, { userId, kind: 'email_change', email, ...ask });
    return row;
  }

  /** The job: a fresh token and code, stored hashed, mailed. Without a mail server (any more), logged and dropped. */
  async deliver(p: AuthUserMailPayload): Promise<void> {
    const settings = await this.#d.settings.settings(p.app_id);
    const sender = await this.#sender(settings);
    if (!sender) {
      this.#d.log.warn({ app_id: p.app_id, user_id: p.user_id, kind: p.kind }, 'end-user e-mail not sent: the app has no mail server');
      return;
    }
    const token = generateKey('');
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    await this.#d.databases.sql(p.app_id).query(
      `with expired as (delete from svc_auth.one_time_tokens where user_id = $1 and expires_at <= now())
       insert into svc_auth.one_time_tokens (user_id, kind, token_hash, otp_hash, email, redirect_to, code_challenge, code_challenge_method, expires_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8, now() + make_interval(secs => $9))`,
      [p.user_id, p.kind, hashKey(token), this.#codeHash(p.app_id, p.user_id, p.kind, code), p.email, p.redirect_to, p.code_challenge, p.code_challenge_method, MAIL_TOKEN_TTL_SECONDS],
    );
    const link = new URL(`${this.#d.hosts.baseUrl}/v1/${p.app_id}/auth/v1/verify`);
    link.search = new URLSearchParams({ token, type: LINK_TYPE[p.kind], redirect_to: await this.#redirect(p.app_id, settings, p.redirect_to ?? undefined) }).toString();
    try {
      await sender.send(endUserMail(p.kind, p.email, link.href, code, MAIL_TOKEN_TTL_SECONDS / 60));
    } finally {
      if (sender !== this.#d.platformSender) (sender as ReturnType<AppMailerFactory>).close();
    }
  }

  /** Where a link may lead: the requested address if the app allows it, else its site, its own host or the platform. */
  async redirectFor(appId: string, requested: string | undefined): Promise<string> {
    return this.#redirect(appId, await this.#d.settings.settings(appId), requested);
  }

  async #redirect(appId: string, settings: AuthSettings, requested: string | undefined): Promise<string> {
    const app = await this.#d.db.selectFrom('apps').select('subdomain').where('id', '=', appId).executeTakeFirst();
    // The app's own host, where its site is, else the platform's address (no subdomain routing).
    const home = (app && appHostUrl(this.#d.hosts, app.subdomain)) ?? this.#d.hosts.baseUrl;
    return redirectTarget(settings, requested, home);
  }

  /** auth-js's verifyOtp with email and code: the newest mail's code of those kinds; a wrong one counts a try. */
  async verifyCode(appId: string, type: VerifyType, email: string, code: string): Promise<Verified> {
    const sql = this.#d.databases.sql(appId);
    const kinds: readonly EndUserMailKind[] = VERIFY_TYPES[type];
    const { rows } = await sql.query<TokenRow>(
      `select ${TOKEN_COLUMNS} from svc_auth.one_time_tokens
       where lower(email) = lower($1) and kind = any($2) and expires_at > now() and attempts < $3 order by id desc`,
      [email, kinds, MAX_CODE_ATTEMPTS],
    );
    const match = rows.find((r) => safeEqual(r.otp_hash, this.#codeHash(appId, r.user_id, r.kind, code)));
    if (!match) {
      if (rows.length) await sql.query(`update svc_auth.one_time_tokens set attempts = attempts + 1 where id = any($1)`, [rows.map((r) => r.id)]);
      throw otpInvalid();
    }
    return this.#take(appId, match.id);
  }

  /** A link's token (or auth-js's token_hash, which is the same token here), of one of the kinds of `type`. */
  async verifyToken(appId: string, type: VerifyType, token: string): Promise<Verified> {
    const { rows } = await this.#d.databases.sql(appId).query<{ id: string }>(
      `select id from svc_auth.one_time_tokens where token_hash = $1 and kind = any($2)`,
      [hashKey(token), VERIFY_TYPES[type]],
    );
    if (!rows[0]) throw otpInvalid();
    return this.#take(appId, rows[0].id);
  }

  /** PKCE: a one-time code for the page a verified link leads to, exchanged with the verifier (exchangeCodeForSession). */
  async issueAuthCode(appId: string, userId: string, pkce: Pkce, method: string): Promise<string> {
    const code = randomUUID();
    await this.#d.databases.sql(appId).query(
      `with expired as (delete from svc_auth.flow_states where expires_at <= now())
       insert into svc_auth.flow_states (auth_code_hash, user_id, code_challenge, code_challenge_method, authentication_method, expires_at)
       values ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))`,
      [hashKey(code), userId, pkce.challenge, pkce.method, method, FLOW_STATE_TTL_SECONDS],
    );
    return code;
  }

  /** The code taken once (a wrong verifier spends it too), its verifier checked, a session opened. */
  async exchange(appId: string, authCode: string, verifier: string): Promise<AuthSession> {
    const { rows } = await this.#d.databases.sql(appId).query<{ user_id: string; code_challenge: string; code_challenge_method: PkceMethod; live: boolean }>(
      `delete from svc_auth.flow_states where auth_code_hash = $1 returning user_id, code_challenge, code_challenge_method, expires_at > now() as live`,
      [hashKey(authCode)],
    );
    const flow = rows[0];
    if (!flow) throw flowStateNotFound();
    if (!flow.live) throw flowStateExpired();
    const expected = flow.code_challenge_method === 's256' ? createHash('sha256').update(verifier).digest('base64url') : verifier;
    if (!safeEqual(expected, flow.code_challenge)) throw badCodeVerifier();
    return this.#session(appId, flow.user_id);
  }

  async #take(appId: string, tokenId: string): Promise<Verified> {
    const sql = this.#d.databases.sql(appId);
    const { rows } = await sql.query<TokenRow>(TAKE_TOKEN_SQL, [tokenId]);
    const row = rows[0];
    if (!row) throw otpInvalid();
    await sql.query(DROP_SIBLINGS_SQL, [row.user_id, row.kind]);
    await sql.query(APPLY_SQL, [row.user_id, row.kind, row.email]);
    const pkce = row.code_challenge && row.code_challenge_method ? { challenge: row.code_challenge, method: row.code_challenge_method } : null;
    return { session: await this.#session(appId, row.user_id), kind: row.kind, redirectTo: row.redirect_to, pkce };
  }

  async #session(appId: string, userId: string): Promise<AuthSession> {
    const session = await this.#d.endUsers.startSession(appId, userId);
    if (!session) throw otpInvalid();
    return session;
  }

  #codeHash(appId: string, userId: string, kind: EndUserMailKind, code: string): string {
    return createHmac('sha256', this.#d.codeKey).update(`${appId}:${userId}:${kind}:${code}`).digest('base64url');
  }

  /** The app's own server (its address checked now, and connected to as checked), else the platform's. */
  async #sender(settings: AuthSettings): Promise<EndUserMailSender | undefined> {
    if (!settings.smtpUrl) return this.#d.platformSender;
    const url = new URL(settings.smtpUrl);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const [first, ...rest] = await addressesOf(host, this.#d.outboundAllowPrivate);
    if (!first) throw new Error(`the app's SMTP host ${host} does not resolve`);
    if (!this.#d.outboundAllowPrivate && [first, ...rest].some((a) => isInternalAddress(a.address))) throw outboundErrors.internal(host);
    return this.#d.openAppSender({ url: settings.smtpUrl, address: first.address, from: settings.mailFrom ?? `no-reply@${host}` });
  }
}
