// People on the platform: sign-up (with an invitation, or into an account of their own where sign-up is open, confirmed
// by mail where the platform sends mail), sign-in with a password, and the session they then hold; verifying their
// e-mail address and resetting a forgotten password with the links the platform mails them. OpenID Connect sign-in
// builds on the same persons and sessions.
import { sql, type Kysely } from 'kysely';
import type { Role } from '../core/caller.ts';
import type { ControlDatabase } from '../db/types.ts';
import { hashPassword, verifyAgainstDummy, verifyPassword } from '../auth/passwords.ts';
import { identityErrors } from './errors.ts';
import { hashKey } from '../core/crypto.ts';
import { acceptHashedInvitation, openInvitation } from './invitations.ts';
import { PersonMails, type PersonMailsDeps } from './mail.ts';
import { takePersonToken } from './person-tokens.ts';
import { takeSignupRequest } from './signup-requests.ts';
import { Sessions, type ClientInfo, type NewSession, type SessionPolicy } from './sessions.ts';

/** open: anyone, into an account of their own; invite: only with an invitation; closed: no one. */
export type SignupPolicy = 'open' | 'invite' | 'closed';

export interface IdentityConfig extends SessionPolicy {
  signup: SignupPolicy;
}

export interface PersonView {
  id: string;
  email: string;
  name: string;
  email_verified: boolean;
  created_at: string;
}

export interface MembershipView {
  account_id: string;
  account_name: string;
  role: Role;
}

export interface SignedIn {
  person: PersonView;
  account_id: string;
  role: Role;
  session: NewSession;
}

export interface SignupInput {
  email: string;
  password: string;
  name?: string | undefined;
  invitation_token?: string | undefined;
}

/** An open sign-up confirmed by mail: nothing is made until its link is followed (confirmSignup). */
export interface SignupMailed {
  mailed: true;
}

export type PersonRow = { id: string; email: string; name: string; email_verified_at: Date | null; created_at: Date };

export function personView(row: PersonRow): PersonView {
  return { id: row.id, email: row.email, name: row.name, email_verified: row.email_verified_at !== null, created_at: row.created_at.toISOString() };
}

export const PERSON_COLUMNS = ['id', 'email', 'name', 'email_verified_at', 'created_at'] as const;

/** A verified address keeps the time it was first verified. */
const VERIFIED_NOW = sql<Date>`coalesce(email_verified_at, now())`;

export class IdentityService {
  readonly #db: Kysely<ControlDatabase>;
  readonly #config: IdentityConfig;
  readonly sessions: Sessions;
  readonly mail: PersonMails;

  constructor(db: Kysely<ControlDatabase>, config: IdentityConfig, mail: Omit<PersonMailsDeps, 'db'>) {
    this.#db = db;
    this.#config = config;
    this.sessions = new Sessions(db, config);
    this.mail = new PersonMails({ db, ...mail });
  }

  /**
   * A new person, signed in. With an invitation they join its account with its role (whatever the sign-up policy, but
   * closed); without one, where sign-up is open, they own a new account of their own, and where the platform sends
   * mail that waits for the link mailed to the address (signUpByMail): the answer then says nothing of the address.
   */
  async signUp(input: SignupInput, client: ClientInfo): Promise<SignedIn | SignupMailed> {
    this.#admit(!!input.invitation_token);
    const email = input.email.toLowerCase();
    // Hashed before the address is looked at, on every path: the answer's time says nothing of it either.
    const passwordHash = await hashPassword(input.password);
    if (this.signUpByMail(input)) {
      await this.mail.queueSignup({ email, name: input.name ?? '', passwordHash });
      return { mailed: true };
    }
    return this.#db.transaction().execute(async (tx) => {
      // An invitation that does not fit is refused before the address is looked at, alike for a known and a new one.
      const invitationHash = input.invitation_token ? hashKey(input.invitation_token) : undefined;
      if (invitationHash !== undefined) await openInvitation(tx, invitationHash, email);
      const person = await tx
        .insertInto('persons')
        .values({ email, name: input.name ?? '', password_hash: passwordHash })
        .onConflict((c) => c.column('email').doNothing())
        .returning(PERSON_COLUMNS)
        .executeTakeFirst();
      if (!person) throw identityErrors.emailTaken();
      const membership =
        invitationHash === undefined ? await ownAccount(tx, person.id, email) : await acceptHashedInvitation(tx, invitationHash, email, person.id, client.ip ?? null);
      // In the sign-up's transaction: a person is never left without their verification mail queued.
      await this.mail.queue(person.id, 'verify_email', tx);
      const session = await this.sessions.create(person.id, membership.accountId, client, tx);
      return { person: personView(person), account_id: membership.accountId, role: membership.role, session };
    });
  }

  /**
   * Whether this sign-up is confirmed by mail before anything is made: one without an invitation, where the platform
   * sends mail. (With an invitation, the account that gave it vouches for its holder, who joins at once; without mail,
   * nothing could confirm it.)
   */
  signUpByMail(input: { invitation_token?: string | undefined }): boolean {
    return !input.invitation_token && this.mail.configured;
  }

  /**
   * Finishes an open sign-up with its link's token and the password chosen at sign-up: the person is made, with the
   * address verified (the link proved it), owns a new account, and is signed in. A request for an address that got a
   * person meanwhile is refused with EMAIL_TAKEN, which tells the holder of its link nothing they do not know.
   */
  async confirmSignup(token: string, password: string, client: ClientInfo): Promise<SignedIn> {
    this.#admit(false);
    return this.#db.transaction().execute(async (tx) => {
      const request = await takeSignupRequest(tx, token);
      if (!(await verifyPassword(request.password_hash, password))) throw identityErrors.signupPasswordWrong();
      const person = await tx
        .insertInto('persons')
        .values({ email: request.email, name: request.name, password_hash: request.password_hash, email_verified_at: sql<Date>`now()` })
        .onConflict((c) => c.column('email').doNothing())
        .returning(PERSON_COLUMNS)
        .executeTakeFirst();
      if (!person) throw identityErrors.emailTaken();
      const membership = await ownAccount(tx, person.id, request.email);
      const session = await this.sessions.create(person.id, membership.accountId, client, tx);
      return { person: personView(person), account_id: membership.accountId, role: membership.role, session };
    });
  }

  /** The sign-up policy (SVC_SIGNUP): closed lets no one in; invite, only the holder of an invitation. */
  #admit(invited: boolean): void {
    if (this.#config.signup === 'closed') throw identityErrors.signupClosed();
    if (this.#config.signup === 'invite' && !invited) throw identityErrors.signupInvitationRequired();
  }

  /** Signs in with a password, in the account the person joined first; the same answer for any wrong e-mail or password. */
  async signIn(emailInput: string, password: string, client: ClientInfo): Promise<SignedIn> {
    const row = await this.#db.selectFrom('persons').select([...PERSON_COLUMNS, 'password_hash']).where('email', '=', emailInput.toLowerCase()).executeTakeFirst();
    const ok = row?.password_hash ? await verifyPassword(row.password_hash, password) : await verifyAgainstDummy(password);
    if (!row || !ok) throw identityErrors.invalidCredentials();
    return this.openSession(row, client);
  }

  /** A session of a person already proven (password, OpenID Connect) in their first account. */
  async openSession(person: PersonRow, client: ClientInfo): Promise<SignedIn> {
    const membership = (await this.memberships(person.id))[0];
    if (!membership) throw identityErrors.noAccount();
    const session = await this.sessions.create(person.id, membership.account_id, client);
    return { person: personView(person), account_id: membership.account_id, role: membership.role, session };
  }

  /** Mails the signed-in person a new verification link (409 once verified). */
  async requestVerification(person: PersonView): Promise<void> {
    if (person.email_verified) throw identityErrors.emailAlreadyVerified();
    await this.mail.queue(person.id, 'verify_email');
  }

  /** Mails a reset link when a person has this e-mail; the caller answers the same either way. */
  async requestPasswordReset(email: string): Promise<void> {
    await this.mail.queueReset(email.toLowerCase());
  }

  /** Takes a verification link's token: the person's address is verified. */
  async verifyEmail(token: string): Promise<{ email: string }> {
    return this.#db.transaction().execute(async (tx) => {
      const personId = await takePersonToken(tx, token, 'verify_email');
      return tx.updateTable('persons').set({ email_verified_at: VERIFIED_NOW }).where('id', '=', personId).returning('email').executeTakeFirstOrThrow();
    });
  }

  /**
   * Takes a reset link's token: the new password replaces the old one and every session of the person ends (whoever
   * knew the old password is signed out). The mail proved the address, so it counts as verified too.
   */
  async resetPassword(token: string, password: string): Promise<{ email: string; sessionsEnded: number }> {
    return this.#db.transaction().execute(async (tx) => {
      const personId = await takePersonToken(tx, token, 'reset_password');
      // Hashed once the token is known good, so that made-up tokens cost no argon2 work.
      const passwordHash = await hashPassword(password);
      const { email } = await tx
        .updateTable('persons')
        .set({ password_hash: passwordHash, email_verified_at: VERIFIED_NOW })
        .where('id', '=', personId)
        .returning('email')
        .executeTakeFirstOrThrow();
      return { email, sessionsEnded: await this.sessions.endAll(personId, tx) };
    });
  }

  async person(personId: string): Promise<PersonView> {
    const row = await this.#db.selectFrom('persons').select(PERSON_COLUMNS).where('id', '=', personId).executeTakeFirstOrThrow();
    return personView(row);
  }

  /** The accounts the person belongs to, the first joined first. */
  async memberships(personId: string): Promise<MembershipView[]> {
    const rows = await this.#db
      .selectFrom('account_members as m')
      .innerJoin('accounts as a', 'a.id', 'm.account_id')
      .select(['m.account_id', 'a.name as account_name', 'm.role'])
      .where('m.person_id', '=', personId)
      .orderBy('m.created_at')
      .orderBy('m.account_id')
      .execute();
    return rows;
  }
}

/** Open sign-up: the person owns a new account, named after their e-mail until they rename it. */
export async function ownAccount(tx: Kysely<ControlDatabase>, personId: string, email: string): Promise<{ accountId: string; role: Role }> {
  const account = await tx.insertInto('accounts').values({ name: email }).returning('id').executeTakeFirstOrThrow();
  await tx.insertInto('account_members').values({ account_id: account.id, person_id: personId, role: 'owner' }).execute();
  return { accountId: account.id, role: 'owner' };
}
