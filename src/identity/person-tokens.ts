// Single-use tokens mailed to a person: e-mail verification (24 hours) and password reset (1 hour). Only the SHA-256
// is stored (person_tokens.token_hash); the token itself exists in the e-mail alone, so neither the database, a job
// payload nor a log line can give it away.
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import { generateKey, hashKey } from '../core/crypto.ts';
import type { ControlDatabase } from '../db/types.ts';
import { identityErrors } from './errors.ts';

export type PersonTokenPurpose = Selectable<ControlDatabase['person_tokens']>['purpose'];

/** A prefix per purpose: a token pasted in the wrong place is recognisable, and secret scanners can spot them. */
const TOKEN_PREFIX: Record<PersonTokenPurpose, string> = { verify_email: 'svc_vfy_', reset_password: 'svc_rst_' };

/** A reset link is a password for as long as it lives, so it lives an hour; verifying an address is less urgent. */
export const TOKEN_LIFETIME_MINUTES: Record<PersonTokenPurpose, number> = { verify_email: 24 * 60, reset_password: 60 };

/** A new token of the person for the purpose; earlier ones stay valid until one of them is used or they expire. */
export async function issuePersonToken(db: Kysely<ControlDatabase>, personId: string, purpose: PersonTokenPurpose): Promise<string> {
  const token = generateKey(TOKEN_PREFIX[purpose]);
  await db
    .insertInto('person_tokens')
    .values({ token_hash: hashKey(token), person_id: personId, purpose, expires_at: sql<Date>`now() + make_interval(mins => ${TOKEN_LIFETIME_MINUTES[purpose]})` })
    .execute();
  return token;
}

/**
 * Takes the token in the caller's transaction and returns its person: it must exist, be of this purpose, unused and
 * unexpired. The row is locked, so two requests cannot both take it; taking one uses up every live token of the person
 * for the purpose, so an older mail's link cannot act after a newer one did.
 */
export async function takePersonToken(tx: Transaction<ControlDatabase>, token: string, purpose: PersonTokenPurpose): Promise<string> {
  const row = await tx
    .selectFrom('person_tokens')
    .select(['person_id', 'purpose', 'used_at', sql<boolean>`expires_at <= now()`.as('expired')])
    .where('token_hash', '=', hashKey(token))
    .forUpdate()
    .executeTakeFirst();
  if (!row) throw identityErrors.tokenInvalid();
  if (row.purpose !== purpose) throw identityErrors.tokenWrongPurpose(row.purpose);
  if (row.used_at) throw identityErrors.tokenUsed(purpose);
  if (row.expired) throw identityErrors.tokenExpired(purpose);
  await tx
    .updateTable('person_tokens')
    .set({ used_at: sql`now()` })
    .where('person_id', '=', row.person_id)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .execute();
  return row.person_id;
}
