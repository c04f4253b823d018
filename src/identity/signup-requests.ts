// Open sign-ups confirmed by mail. Where the platform sends mail, a sign-up without an invitation makes no person: it
// is answered alike whether or not the address has one (as a password reset request is), and mails either a link that
// finishes the sign-up or, to the person who has the address, a notice that they already have an account. The link's
// token is made by the job that mails it and stored only as its SHA-256; finishing asks for the password chosen at
// sign-up, so that the address's owner cannot be led to finish a sign-up someone else made with their address. The
// request and its mail are queued by PersonMails.queueSignup.
import { sql, type Kysely, type Transaction } from 'kysely';
import { generateKey, hashKey } from '../core/crypto.ts';
import type { ControlDatabase } from '../db/types.ts';
import { identityErrors } from './errors.ts';

export const SIGNUP_TOKEN_PREFIX = 'svc_sup_';
/** How long the link to finish a sign-up works. */
export const SIGNUP_LINK_HOURS = 24;

/** A fresh token for the live request's link (the identity_signup_mail job), or undefined when it expired meanwhile. */
export async function issueSignupToken(db: Kysely<ControlDatabase>, signupId: string): Promise<{ email: string; token: string } | undefined> {
  const token = generateKey(SIGNUP_TOKEN_PREFIX);
  const row = await db
    .updateTable('signup_requests')
    .set({ token_hash: hashKey(token) })
    .where('id', '=', signupId)
    .where('expires_at', '>', sql<Date>`now()`)
    .returning('email')
    .executeTakeFirst();
  return row && { email: row.email, token };
}

/**
 * Takes the request of a link's token in the caller's transaction: it must exist and be unexpired. Every request of
 * its address goes with it (the address gets one person); a refusal later in the transaction puts them back.
 */
export async function takeSignupRequest(tx: Transaction<ControlDatabase>, token: string): Promise<{ email: string; name: string; password_hash: string }> {
  const row = await tx
    .selectFrom('signup_requests')
    .select(['email', 'name', 'password_hash', sql<boolean>`expires_at <= now()`.as('expired')])
    .where('token_hash', '=', hashKey(token))
    .forUpdate()
    .executeTakeFirst();
  if (!row) throw identityErrors.tokenInvalid();
  if (row.expired) throw identityErrors.tokenExpired('confirm_signup');
  await tx.deleteFrom('signup_requests').where('email', '=', row.email).execute();
  return row;
}
