// People on the platform: sign-up (with an invitation, or into an account of their own where sign-up is open), sign-in
// with a password, and the session they then hold. OpenID Connect sign-in, e-mail verification and password reset
// build on the same persons and sessions.
import type { Kysely } from 'kysely';
import type { Role } from '../core/caller.ts';
import type { ControlDatabase } from '../db/types.ts';
import { hashPassword, verifyAgainstDummy, verifyPassword } from '../auth/passwords.ts';
import { identityErrors } from './errors.ts';
import { acceptInvitation } from './invitations.ts';
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

type PersonRow = { id: string; email: string; name: string; email_verified_at: Date | null; created_at: Date };

export function personView(row: PersonRow): PersonView {
  return { id: row.id, email: row.email, name: row.name, email_verified: row.email_verified_at !== null, created_at: row.created_at.toISOString() };
}

const PERSON_COLUMNS = ['id', 'email', 'name', 'email_verified_at', 'created_at'] as const;

export class IdentityService {
  readonly #db: Kysely<ControlDatabase>;
  readonly #config: IdentityConfig;
  readonly sessions: Sessions;

  constructor(db: Kysely<ControlDatabase>, config: IdentityConfig) {
    this.#db = db;
    this.#config = config;
    this.sessions = new Sessions(db, config);
  }

  /**
   * A new person, signed in. With an invitation they join its account with its role (whatever the sign-up policy, but
   * closed); without one, where sign-up is open, they own a new account of their own.
   */
  async signUp(input: SignupInput, client: ClientInfo): Promise<SignedIn> {
    if (this.#config.signup === 'closed') throw identityErrors.signupClosed();
    if (this.#config.signup === 'invite' && !input.invitation_token) throw identityErrors.signupInvitationRequired();
    const email = input.email.toLowerCase();
    const passwordHash = await hashPassword(input.password);
    return this.#db.transaction().execute(async (tx) => {
      const person = await tx
        .insertInto('persons')
        .values({ email, name: input.name ?? '', password_hash: passwordHash })
        .onConflict((c) => c.column('email').doNothing())
        .returning(PERSON_COLUMNS)
        .executeTakeFirst();
      if (!person) throw identityErrors.emailTaken();
      const membership = input.invitation_token
        ? await acceptInvitation(tx, input.invitation_token, email, person.id)
        : await ownAccount(tx, person.id, email);
      const session = await this.sessions.create(person.id, membership.accountId, client, tx);
      return { person: personView(person), account_id: membership.accountId, role: membership.role, session };
    });
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
async function ownAccount(tx: Kysely<ControlDatabase>, personId: string, email: string): Promise<{ accountId: string; role: Role }> {
  const account = await tx.insertInto('accounts').values({ name: email }).returning('id').executeTakeFirstOrThrow();
  await tx.insertInto('account_members').values({ account_id: account.id, person_id: personId, role: 'owner' }).execute();
  return { accountId: account.id, role: 'owner' };
}
