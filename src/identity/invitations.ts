// Invitations into an account: a single-use token (stored hashed) naming a role and, optionally, the e-mail that may
// accept it. The owner claim of a fresh platform is an invitation too: role owner of the first account, written to a
// file in the data dir instead of a log line.
import { mkdirSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { Role } from '../core/caller.ts';
import { generateKey, hashKey } from '../core/crypto.ts';
import type { ControlDatabase } from '../db/types.ts';
import { audit } from './audit.ts';
import { identityErrors } from './errors.ts';

export const INVITATION_PREFIX = 'svc_inv_';
export const OWNER_CLAIM_FILE = 'owner-invitation';
const OWNER_CLAIM_DAYS = 30;

type Db = Kysely<ControlDatabase> | Transaction<ControlDatabase>;

export interface AcceptedInvitation {
  accountId: string;
  role: Role;
}

/**
 * Takes the invitation for `email` in the caller's transaction: valid only once, before it expires, unrevoked, and for
 * the e-mail it names (when it names one). The row is locked, so two people cannot both accept it. A member of the
 * account already is refused, the invitation left open: roles change where the last owner is guarded (PATCH
 * /dashboard/members/{person_id}), never by accepting a lower one. The acceptance and the new member go into the audit
 * log, with the client's address (`ip`) when the caller knows it.
 */
export async function acceptInvitation(tx: Db, token: string, email: string, personId: string, ip: string | null = null): Promise<AcceptedInvitation> {
  return acceptHashedInvitation(tx, hashKey(token), email, personId, ip);
}

/** acceptInvitation for a token held only as its hash (an OpenID Connect sign-in keeps it so until its callback). */
export async function acceptHashedInvitation(tx: Db, tokenHash: string, email: string, personId: string, ip: string | null = null): Promise<AcceptedInvitation> {
  const row = await openInvitation(tx, tokenHash, email);
  const joined = await tx
    .insertInto('account_members')
    .values({ account_id: row.account_id, person_id: personId, role: row.role })
    .onConflict((c) => c.columns(['account_id', 'person_id']).doNothing())
    .returning('person_id')
    .executeTakeFirst();
  if (!joined) throw identityErrors.alreadyMember();
  await tx.updateTable('invitations').set({ accepted_at: sql`now()`, accepted_by: personId }).where('id', '=', row.id).execute();
  const by = { accountId: row.account_id, actor: { kind: 'person', id: personId }, ip } as const;
  await audit.record(tx, { ...by, action: 'invitation.accept', resourceType: 'invitation', resourceId: row.id, details: { role: row.role } });
  await audit.record(tx, { ...by, action: 'member.add', resourceType: 'member', resourceId: personId, details: { role: row.role, invitation_id: row.id } });
  return { accountId: row.account_id, role: row.role };
}

/**
 * The invitation `email` may take, locked in the caller's transaction, or its refusal. Sign-up checks it before
 * looking at the address, so that an invitation that does not fit is refused alike whether the address has a person.
 */
export async function openInvitation(tx: Db, tokenHash: string, email: string) {
  const row = await tx
    .selectFrom('invitations')
    .select(['id', 'account_id', 'role', 'email', 'accepted_at', 'revoked_at', sql<boolean>`expires_at <= now()`.as('expired')])
    .where('token_hash', '=', tokenHash)
    .forUpdate()
    .executeTakeFirst();
  if (!row || row.revoked_at || row.accepted_at || row.expired) throw identityErrors.invitationInvalid();
  if (row.email !== null && row.email !== email) throw identityErrors.invitationOtherEmail();
  return row;
}

/** A new invitation's token (shown once) and row. */
export async function createInvitation(
  db: Db,
  accountId: string,
  invite: { email: string | null; role: Role; invitedBy: string | null; days: number },
): Promise<{ id: string; token: string; expiresAt: Date }> {
  const token = generateKey(INVITATION_PREFIX);
  const row = await db
    .insertInto('invitations')
    .values({
      account_id: accountId,
      email: invite.email,
      role: invite.role,
      token_hash: hashKey(token),
      invited_by: invite.invitedBy,
      expires_at: sql<Date>`now() + make_interval(days => ${invite.days})`,
    })
    .returning(['id', 'expires_at'])
    .executeTakeFirstOrThrow();
  return { id: row.id, token, expiresAt: row.expires_at };
}

/**
 * While the first account has no member, its owner invitation is in `<dataDir>/owner-invitation` (mode 0600): the
 * first person signs up with it and becomes the owner. The token is never logged; a missing file or an expired
 * invitation is replaced at the next start.
 */
export async function ensureOwnerClaim(db: Kysely<ControlDatabase>, dataDir: string, log: Logger): Promise<void> {
  const first = await db.selectFrom('accounts').select('id').orderBy('created_at').orderBy('id').limit(1).executeTakeFirst();
  if (!first) return;
  const member = await db.selectFrom('account_members').select('person_id').where('account_id', '=', first.id).limit(1).executeTakeFirst();
  const file = path.join(dataDir, OWNER_CLAIM_FILE);
  if (member) return;
  const claims = db
    .selectFrom('invitations')
    .select('id')
    .where('account_id', '=', first.id)
    .where('role', '=', 'owner')
    .where('invited_by', 'is', null)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`);
  if ((await claims.executeTakeFirst()) && existsSync(file)) return;
  await db.transaction().execute(async (tx) => {
    await tx.updateTable('invitations').set({ revoked_at: sql`now()` }).where('id', 'in', claims.clearSelect().select('id')).execute();
    const { token } = await createInvitation(tx, first.id, { email: null, role: 'owner', invitedBy: null, days: OWNER_CLAIM_DAYS });
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(file, token + '\n', { mode: 0o600 });
  });
  log.warn({ file }, 'the owner account has no member yet: sign up with the invitation token in this file to become its owner');
}
