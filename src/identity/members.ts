// An account's members and invitations as its admins manage them: roles change, members are removed or leave,
// invitations are made, listed and revoked, and a signed-in person accepts one. An account always keeps an owner:
// every change that could take away its last one locks the account's owner rows first, so two concurrent changes
// (two owners demoting each other) are serialized and the second sees the first's result. A member's changes are
// recorded in the audit log in their own transaction, with what only it knows (the role before, the keys revoked).
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Logger } from 'pino';
import { ROLES, roleAtLeast, type Role } from '../core/caller.ts';
import { errors } from '../core/errors.ts';
import type { ControlDatabase } from '../db/types.ts';
import { audit, type AuditBy } from './audit.ts';
import { identityErrors } from './errors.ts';
import { acceptInvitation, createInvitation } from './invitations.ts';
import type { PersonMail, PersonMailSender } from './mail-port.ts';
import { consoleLink } from './mail-texts.ts';

type Tx = Transaction<ControlDatabase>;

export interface MemberView {
  person_id: string;
  email: string;
  name: string;
  role: Role;
  joined_at: string;
}

export interface InvitationView {
  id: string;
  /** null: a link-only invitation, which anyone holding the link may accept. */
  email: string | null;
  role: Role;
  invited_by: string | null;
  created_at: string;
  expires_at: string;
}

export interface CreatedInvitation extends InvitationView {
  /** The token, shown only in this response (stored hashed), and the link that carries it. */
  token: string;
  url: string;
  /** Whether the invitation was mailed to `email` (the platform sends e-mail when SVC_SMTP_URL is set). */
  emailed: boolean;
}

/** Whoever manages the account (a member, or a platform key): their role bounds what they may grant or touch. */
export interface Manager {
  accountId: string;
  role: Role;
  /** The person behind them (a key's person for a key; null for the operator's keys): what they make answers to them. */
  person: string | null;
  by: AuditBy;
}

export interface MembersDeps {
  db: Kysely<ControlDatabase>;
  /** undefined without SVC_SMTP_URL: invitations are then passed on by their link only. */
  sender: PersonMailSender | undefined;
  /** Invitation links point at the platform's public URL (SVC_BASE_URL). */
  baseUrl: string;
  /** The keys area (auth/keys.ts): a change of membership answers once this process heard the keys it revoked or lowered. */
  keys: { settled(): Promise<void> };
  log: Logger;
}

/**
 * A role grants and touches roles up to itself: an admin may not make an owner, nor change or remove one (nor a key
 * of the owner role); only owners do. Below it: 403 FORBIDDEN_ROLE naming the role needed.
 */
export function requireRoleFor(held: Role, role: Role): void {
  if (!roleAtLeast(held, role)) throw errors.roleTooLow(role, held);
}

/** The roles above `role`, highest first. */
const rolesAbove = (role: Role): Role[] => ROLES.slice(0, ROLES.indexOf(role));

const memberNotFound = (personId: string) =>
  errors.notFound(`Member '${personId}' of this account`, 'List the members with GET /dashboard/members to find a person_id.');

export class MembersService {
  readonly #d: MembersDeps;

  constructor(deps: MembersDeps) {
    this.#d = deps;
  }

  /** The account's members, the first to join first. */
  async list(accountId: string): Promise<MemberView[]> {
    const rows = await this.#members(this.#d.db, accountId).orderBy('m.created_at').orderBy('m.person_id').execute();
    return rows.map(memberView);
  }

  /**
   * Gives a member another role; what they made follows it (see dropCredentials). The last owner keeps the owner
   * role: 409 LAST_OWNER.
   */
  async setRole(manager: Manager, personId: string, role: Role): Promise<MemberView> {
    requireRoleFor(manager.role, role);
    return this.#changeMember(manager.accountId, personId, async (tx, current, owners) => {
      requireRoleFor(manager.role, current);
      if (current !== role) {
        if (current === 'owner' && owners === 1) throw identityErrors.lastOwner();
        await tx.updateTable('account_members').set({ role }).where('account_id', '=', manager.accountId).where('person_id', '=', personId).execute();
        const dropped = await dropCredentials(tx, manager.accountId, personId, role);
        await audit.record(tx, {
          ...manager.by,
          accountId: manager.accountId,
          action: 'member.role_change',
          resourceType: 'member',
          resourceId: personId,
          details: { from: current, to: role, ...dropped },
        });
      }
      return memberView(await this.#members(tx, manager.accountId).where('m.person_id', '=', personId).executeTakeFirstOrThrow());
    });
  }

  /** Removes a member (not the last owner: 409 LAST_OWNER); see #end for what goes with them. */
  async remove(manager: Manager, personId: string): Promise<void> {
    await this.#changeMember(manager.accountId, personId, async (tx, current, owners) => {
      requireRoleFor(manager.role, current);
      await this.#end(tx, manager.accountId, personId, current, owners, manager.by);
    });
  }

  /** The person leaves the account, whatever their role (but the last owner: 409 LAST_OWNER). */
  async leave(accountId: string, personId: string, by: AuditBy): Promise<void> {
    await this.#changeMember(accountId, personId, (tx, current, owners) => this.#end(tx, accountId, personId, current, owners, by));
  }

  /**
   * A new invitation with a role up to the manager's own, by e-mail (only that address may accept it) or link-only.
   * The token is in the answer once; it is mailed too when the platform sends e-mail, and a failed mail leaves the
   * invitation as made (the link in the answer still works).
   */
  async invite(manager: Manager, input: { email: string | null; role: Role; days: number }): Promise<CreatedInvitation> {
    requireRoleFor(manager.role, input.role);
    const { db, baseUrl } = this.#d;
    const created = await createInvitation(db, manager.accountId, { email: input.email, role: input.role, invitedBy: manager.person, days: input.days });
    const url = invitationLink(baseUrl, created.token);
    const row = await db.selectFrom('invitations').select(INVITATION_COLUMNS).where('id', '=', created.id).executeTakeFirstOrThrow();
    const emailed = input.email !== null && (await this.#mail(manager.accountId, input.email, input.role, url, created.expiresAt));
    return { ...invitationView(row), token: created.token, url, emailed };
  }

  /** The account's invitations still open (neither accepted, revoked nor expired), newest first. Tokens never show. */
  async invitations(accountId: string): Promise<InvitationView[]> {
    const rows = await this.#d.db
      .selectFrom('invitations')
      .select(INVITATION_COLUMNS)
      .where('account_id', '=', accountId)
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', sql<Date>`now()`)
      .orderBy('created_at', 'desc')
      .orderBy('id')
      .execute();
    return rows.map(invitationView);
  }

  /** Revokes an open invitation; its link stops working at once. */
  async revokeInvitation(accountId: string, invitationId: string): Promise<void> {
    const revoked = await this.#d.db
      .updateTable('invitations')
      .set({ revoked_at: sql`now()` })
      .where('id', '=', invitationId)
      .where('account_id', '=', accountId)
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (!revoked.numUpdatedRows) {
      throw errors.notFound(`Open invitation '${invitationId}'`, 'List the open invitations with GET /dashboard/invitations; an accepted or revoked one cannot be revoked.');
    }
  }

  /** A signed-in person accepts an invitation: they become a member of its account. Their session stays where it was. */
  async accept(personId: string, token: string, by: AuditBy): Promise<{ account_id: string; role: Role }> {
    return this.#d.db.transaction().execute(async (tx) => {
      const person = await tx.selectFrom('persons').select('email').where('id', '=', personId).executeTakeFirstOrThrow();
      const joined = await acceptInvitation(tx, token, person.email, personId, by.ip);
      return { account_id: joined.accountId, role: joined.role };
    });
  }

  #members(db: Kysely<ControlDatabase>, accountId: string) {
    return db
      .selectFrom('account_members as m')
      .innerJoin('persons as p', 'p.id', 'm.person_id')
      .select(['m.person_id', 'p.email', 'p.name', 'm.role', 'm.created_at'])
      .where('m.account_id', '=', accountId);
  }

  /**
   * Runs `change` on a member's row with the account's owner rows locked (in person order, the same in every
   * transaction, so two changes never wait on each other crosswise), given the member's role and the owner count;
   * answers once the keys it revoked or lowered are so on this process too.
   */
  async #changeMember<T>(accountId: string, personId: string, change: (tx: Tx, current: Role, owners: number) => Promise<T>): Promise<T> {
    const changed = await this.#d.db.transaction().execute(async (tx) => {
      const owners = await tx
        .selectFrom('account_members')
        .select('person_id')
        .where('account_id', '=', accountId)
        .where('role', '=', 'owner')
        .orderBy('person_id')
        .forUpdate()
        .execute();
      const member = await tx
        .selectFrom('account_members')
        .select('role')
        .where('account_id', '=', accountId)
        .where('person_id', '=', personId)
        .forUpdate()
        .executeTakeFirst();
      if (!member) throw memberNotFound(personId);
      return change(tx, member.role, owners.length);
    });
    await this.#d.keys.settled();
    return changed;
  }

  /** Ends a membership, and with it everything the person made or holds in the account (see dropCredentials). */
  async #end(tx: Tx, accountId: string, personId: string, role: Role, owners: number, by: AuditBy): Promise<void> {
    if (role === 'owner' && owners === 1) throw identityErrors.lastOwner();
    await tx.deleteFrom('account_members').where('account_id', '=', accountId).where('person_id', '=', personId).execute();
    const { keys_revoked, invitations_revoked } = await dropCredentials(tx, accountId, personId, null);
    await audit.record(tx, {
      ...by,
      accountId,
      action: 'member.remove',
      resourceType: 'member',
      resourceId: personId,
      details: { role, keys_revoked, invitations_revoked },
    });
  }

  /** Mails the invitation when the platform sends e-mail; whether it went out. */
  async #mail(accountId: string, to: string, role: Role, url: string, expiresAt: Date): Promise<boolean> {
    const { db, sender, baseUrl, log } = this.#d;
    if (!sender) return false;
    const account = await db.selectFrom('accounts').select('name').where('id', '=', accountId).executeTakeFirstOrThrow();
    try {
      await sender.send(invitationMail({ to, accountName: account.name, role, url, expiresAt, baseUrl }));
      return true;
    } catch (err) {
      log.warn({ err, account: accountId }, 'invitation e-mail not sent; the invitation stands and its link is in the answer');
      return false;
    }
  }
}

/** How many of a person's credentials a role change lowered or revoked, for the audit log. */
interface Dropped {
  keys_lowered: number;
  keys_revoked: number;
  invitations_revoked: number;
}

/**
 * What a person made in an account follows their role there, in the transaction that changes it (so no credential
 * resolution pays for it: the rows are simply gone or changed). `role` null: they are no longer a member. Keys made with
 * a key carry that key's person (Caller.keyPerson), so chains of keys follow the person too.
 * - Platform keys keep at most the new role; with the membership, they are revoked.
 * - Service keys (made by developers and above) are revoked below developer, and with the membership.
 * - Substrate keys reach the person's own substrate, which every member uses: revoked with the membership only.
 * - Open invitations (made by admins and above) are revoked below admin, those granting a role above the new one
 *   always, and all with the membership.
 * - With the membership, their sessions in the account end and their OAuth grants there (refresh tokens included) go.
 */
async function dropCredentials(tx: Tx, accountId: string, personId: string, role: Role | null): Promise<Dropped> {
  const holds = (needed: Role) => role !== null && roleAtLeast(role, needed);
  const lost = role === null ? [...ROLES] : rolesAbove(role);
  const lowered = role !== null && lost.length
    ? await tx.updateTable('platform_keys').set({ role }).where('account_id', '=', accountId).where('created_by', '=', personId).where('role', 'in', lost).executeTakeFirst()
    : undefined;
  const revoked = [
    role === null ? await tx.deleteFrom('platform_keys').where('account_id', '=', accountId).where('created_by', '=', personId).executeTakeFirst() : undefined,
    role === null ? await tx.deleteFrom('substrate_keys').where('account_id', '=', accountId).where('created_by', '=', personId).executeTakeFirst() : undefined,
    holds('developer')
      ? undefined
      : await tx
          .deleteFrom('service_keys')
          .where('created_by', '=', personId)
          .where('app_id', 'in', tx.selectFrom('apps').select('id').where('account_id', '=', accountId))
          .executeTakeFirst(),
  ];
  const invitationRoles = holds('admin') ? lost : [...ROLES];
  const invitations = invitationRoles.length
    ? await tx
        .updateTable('invitations')
        .set({ revoked_at: sql`now()` })
        .where('account_id', '=', accountId)
        .where('invited_by', '=', personId)
        .where('accepted_at', 'is', null)
        .where('revoked_at', 'is', null)
        .where('role', 'in', invitationRoles)
        .executeTakeFirst()
    : undefined;
  if (role === null) {
    await tx.deleteFrom('sessions').where('account_id', '=', accountId).where('person_id', '=', personId).execute();
    await tx.deleteFrom('oauth_tokens').where('account_id', '=', accountId).where('person_id', '=', personId).execute();
    await tx.deleteFrom('oauth_codes').where('account_id', '=', accountId).where('person_id', '=', personId).execute();
  }
  return {
    keys_lowered: Number(lowered?.numUpdatedRows ?? 0),
    keys_revoked: revoked.reduce((n, r) => n + Number(r?.numDeletedRows ?? 0), 0),
    invitations_revoked: Number(invitations?.numUpdatedRows ?? 0),
  };
}

const INVITATION_COLUMNS = ['id', 'email', 'role', 'invited_by', 'created_at', 'expires_at'] as const;

type InvitationRow = Pick<Selectable<ControlDatabase['invitations']>, (typeof INVITATION_COLUMNS)[number]>;
type MemberRow = Pick<Selectable<ControlDatabase['account_members']>, 'person_id' | 'role' | 'created_at'> & Pick<Selectable<ControlDatabase['persons']>, 'email' | 'name'>;

function invitationView(row: InvitationRow): InvitationView {
  return { ...row, created_at: row.created_at.toISOString(), expires_at: row.expires_at.toISOString() };
}

function memberView(row: MemberRow): MemberView {
  return { person_id: row.person_id, email: row.email, name: row.name, role: row.role, joined_at: row.created_at.toISOString() };
}

/**
 * Where an invitation's link lands: the console's invitation page, which signs a new person up with the token or lets
 * one signed in accept it (POST /dashboard/invitations/accept).
 */
function invitationLink(baseUrl: string, token: string): string {
  return consoleLink(baseUrl, 'invitation', token);
}

function invitationMail(m: { to: string; accountName: string; role: Role; url: string; expiresAt: Date; baseUrl: string }): PersonMail {
  return {
    to: m.to,
    subject: `You are invited to ${m.accountName}`,
    text:
      `You are invited to join the account ${m.accountName} on ${m.baseUrl} as ${m.role}. Open this link, then sign in or ` +
      `sign up with this address; it works once, until ${m.expiresAt.toISOString()}:\n\n${m.url}\n\n` +
      'If you did not expect this, ignore this e-mail.\n',
  };
}
