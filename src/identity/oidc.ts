// OpenID Connect sign-in of people. start() sends the browser to the provider with a fresh state, nonce and PKCE
// verifier, kept server-side (oidc_signins) and bound to that browser by a random value in a short-lived cookie;
// finish() takes that sign-in once, has the port redeem the code and verify the ID token, then signs the person in:
// a known (issuer, subject) is that person; else a person with the same e-mail is linked only when both the provider
// (email_verified=true) and the platform (a verification or reset link taken) have verified the address; else a new
// person signs up under the platform's sign-up policy.
import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import { hashKey } from '../core/crypto.ts';
import type { ControlDatabase } from '../db/types.ts';
import { identityErrors } from './errors.ts';
import { acceptHashedInvitation } from './invitations.ts';
import { OidcProviderError, type OidcChecks, type OidcClient, type OidcPerson } from './oidc-port.ts';
import { ownAccount, PERSON_COLUMNS, type IdentityService, type PersonRow, type SignedIn, type SignupPolicy } from './service.ts';
import type { ClientInfo } from './sessions.ts';

export const OIDC_START_PATH = '/dashboard/oidc/start';
export const OIDC_CALLBACK_PATH = '/dashboard/oidc/callback';
/** How long a person may take at the provider; the binding cookie lives as long. */
export const OIDC_SIGNIN_SECONDS = 600;

/**
 * The cookie that binds a sign-in to the browser that started it: `__Host-svc_oidc` (Path=/, Secure) where the scheme
 * allows the prefix, so no other host (an app's subdomain included) can set it; `svc_oidc` on plain http.
 */
export function oidcBindingCookieName(secure: boolean): string {
  return secure ? '__Host-svc_oidc' : 'svc_oidc';
}

/** A configured provider, as the sign-in page shows it. */
export interface OidcProviderView {
  name: string;
  start_url: string;
}

export interface OidcStartInput {
  /** A path of this origin (isLocalPath) to land on once signed in; default `/`. */
  redirect?: string | undefined;
  /** An invitation a new person signs up with (whatever the sign-up policy, but closed). */
  invitation_token?: string | undefined;
}

export interface StartedSignIn {
  /** The provider's authorization URL. */
  location: string;
  /** The value of the browser's binding cookie; only its hash is stored. */
  binding: string;
}

export interface FinishedSignIn {
  signedIn: SignedIn;
  redirect: string;
}

/** A sign-in under way, as its callback takes it. */
type PendingSignIn = OidcChecks & { redirect: string; invitationHash: string | null };

/**
 * Whether `path` stays on this origin: one leading slash (`//host` and `/\host` are other hosts to a browser), and
 * only printable ASCII without a backslash, as a Location header carries it (a browser sends other characters
 * percent-encoded).
 */
export function isLocalPath(path: string): boolean {
  return /^\/[!-~]*$/.test(path) && !path.startsWith('//') && !path.includes('\\');
}

export class OidcSignIn {
  readonly #db: Kysely<ControlDatabase>;
  readonly #identity: IdentityService;
  readonly #signup: SignupPolicy;
  readonly #provider: { name: string; client: OidcClient } | undefined;
  readonly #log: Logger;

  constructor(deps: {
    db: Kysely<ControlDatabase>;
    identity: IdentityService;
    signup: SignupPolicy;
    provider: { name: string; client: OidcClient } | undefined;
    log: Logger;
  }) {
    this.#db = deps.db;
    this.#identity = deps.identity;
    this.#signup = deps.signup;
    this.#provider = deps.provider;
    this.#log = deps.log;
  }

  /** The providers people may sign in with: none, or the configured one. */
  providers(): OidcProviderView[] {
    return this.#provider ? [{ name: this.#provider.name, start_url: OIDC_START_PATH }] : [];
  }

  async start(input: OidcStartInput): Promise<StartedSignIn> {
    const client = this.#client();
    const checks: OidcChecks = { state: randomValue(), nonce: randomValue(), codeVerifier: randomValue() };
    const binding = randomValue();
    const location = await this.#fromProvider(() => client.authorizationUrl(checks));
    // Sign-ins abandoned at the provider go here, rather than by a job: each start pays for the ones before it.
    await this.#db.deleteFrom('oidc_signins').where('expires_at', '<=', sql<Date>`now()`).execute();
    await this.#db
      .insertInto('oidc_signins')
      .values({
        state_hash: hashKey(checks.state),
        binding_hash: hashKey(binding),
        nonce: checks.nonce,
        code_verifier: checks.codeVerifier,
        redirect: input.redirect ?? '/',
        invitation_hash: input.invitation_token === undefined ? null : hashKey(input.invitation_token),
        expires_at: sql<Date>`now() + make_interval(secs => ${OIDC_SIGNIN_SECONDS})`,
      })
      .execute();
    return { location, binding };
  }

  /** The callback: `query` is its raw query string, `binding` the browser's binding cookie. */
  async finish(query: string, binding: string | undefined, client: ClientInfo): Promise<FinishedSignIn> {
    const provider = this.#client();
    const pending = await this.#take(query, binding);
    const person = await this.#fromProvider(() => provider.redeem(query, pending));
    const signedIn = await this.#identity.openSession(await this.#personFor(person, pending.invitationHash), client);
    return { signedIn, redirect: pending.redirect };
  }

  #client(): OidcClient {
    if (!this.#provider) throw identityErrors.oidcNotConfigured();
    return this.#provider.client;
  }

  /**
   * The sign-in this callback finishes, taken once: its state must be one issued here, unexpired, and the browser
   * must hold the binding it was issued with. A forged, replayed or foreign state finds nothing (and consumes nothing,
   * so a stranger's attempt does not spoil the browser's own sign-in).
   */
  async #take(query: string, binding: string | undefined): Promise<PendingSignIn> {
    const state = new URLSearchParams(query).get('state');
    if (!state || !binding) throw identityErrors.oidcStateInvalid();
    const row = await this.#db
      .deleteFrom('oidc_signins')
      .where('state_hash', '=', hashKey(state))
      .where('binding_hash', '=', hashKey(binding))
      .where('expires_at', '>', sql<Date>`now()`)
      .returning(['nonce', 'code_verifier', 'redirect', 'invitation_hash'])
      .executeTakeFirst();
    if (!row) throw identityErrors.oidcStateInvalid();
    return { state, nonce: row.nonce, codeVerifier: row.code_verifier, redirect: row.redirect, invitationHash: row.invitation_hash };
  }

  /** The provider's failures as the platform's errors, logged (never with a token: the port's messages carry none). */
  async #fromProvider<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      if (!(err instanceof OidcProviderError)) throw err;
      // A person declining at the provider is ordinary; a provider that fails or does not verify is the operator's concern.
      const level = err.failure === 'refused' ? 'info' : 'warn';
      this.#log[level]({ failure: err.failure, provider_error: err.providerCode }, `OpenID Connect sign-in failed: ${err.message}`);
      if (err.failure === 'refused') throw identityErrors.oidcRefused(err.providerCode);
      throw err.failure === 'invalid' ? identityErrors.oidcIdTokenInvalid() : identityErrors.oidcUnavailable();
    }
  }

  /** The person this identity signs in as: already linked, linked now by a verified e-mail, or new. */
  async #personFor(person: OidcPerson, invitationHash: string | null): Promise<PersonRow> {
    const known = await this.#db
      .selectFrom('persons')
      .select(PERSON_COLUMNS)
      .where('id', 'in', this.#db.selectFrom('person_identities').select('person_id').where('issuer', '=', person.issuer).where('subject', '=', person.subject))
      .executeTakeFirst();
    if (known) return known;
    if (!person.email) throw identityErrors.oidcEmailMissing();
    const email = person.email.toLowerCase();
    const existing = await this.#db.selectFrom('persons').select(PERSON_COLUMNS).where('email', '=', email).executeTakeFirst();
    if (!existing) return this.#signUp(person, email, invitationHash);
    // Anyone can claim any address at some providers: only the provider's word that it verified it links the two.
    if (!person.emailVerified) throw identityErrors.oidcEmailUnverified();
    // Anyone can also sign up with a password under any address: a person whose address the platform never verified
    // may have been made by someone else, ahead of its owner. Linking would hand the owner that person, with whatever
    // its maker set up (their account, keys, other members), and leave the maker's password working; so it is refused,
    // and the person is left as it is. The account logs are the accounts' own, and this person's may be the maker's:
    // the refusal goes to the operator's log instead.
    if (existing.email_verified_at === null) {
      this.#log.warn({ person: existing.id, issuer: person.issuer }, 'OpenID Connect sign-in not linked: a person has this address unverified');
      throw identityErrors.oidcPersonUnverified();
    }
    await this.#db.insertInto('person_identities').values({ issuer: person.issuer, subject: person.subject, person_id: existing.id, email }).execute();
    return existing;
  }

  /** A new person with this identity, under the sign-up policy as POST /dashboard/signup applies it (no password). */
  async #signUp(person: OidcPerson, email: string, invitationHash: string | null): Promise<PersonRow> {
    if (this.#signup === 'closed') throw identityErrors.signupClosed();
    if (this.#signup === 'invite' && invitationHash === null) throw identityErrors.signupInvitationRequired();
    return this.#db.transaction().execute(async (tx) => {
      const row = await tx
        .insertInto('persons')
        .values({ email, name: person.name?.trim().slice(0, 200) ?? '', email_verified_at: person.emailVerified ? sql<Date>`now()` : null })
        .returning(PERSON_COLUMNS)
        .executeTakeFirstOrThrow();
      await tx.insertInto('person_identities').values({ issuer: person.issuer, subject: person.subject, person_id: row.id, email }).execute();
      if (invitationHash === null) await ownAccount(tx, row.id, email);
      else await acceptHashedInvitation(tx, invitationHash, email, row.id);
      return row;
    });
  }
}

/** 32 random bytes, base64url: a state, nonce, PKCE verifier (RFC 7636's 43 characters) or binding. */
function randomValue(): string {
  return randomBytes(32).toString('base64url');
}
