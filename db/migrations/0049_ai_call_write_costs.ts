import { sql, type Kysely } from 'kysely';

/*
 * What an AI call writes, made cheaper (issue 46). Its usage row and its credit charge are inserted at the worst case,
 * then updated in place by the call's settlement moments later:
 * - room on each page for that update: on full pages (fillfactor 100) every such update moved its row to another page
 *   and wrote a new entry in each of the table's indexes; with room left it is a heap-only update, indexes untouched;
 * - grants' keys unique in an index of the grants alone: the unique constraint on (account_id, grant_key) indexed every
 *   charge too (its key null), one more index entry written per call for nothing.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table ai_usage set (fillfactor = 70)`.execute(db);
  await sql`alter table credit_ledger set (fillfactor = 70)`.execute(db);
  await sql`create unique index credit_ledger_grant_key_idx on credit_ledger (account_id, grant_key) where grant_key is not null`.execute(db);
  await sql`alter table credit_ledger drop constraint credit_ledger_account_id_grant_key_key`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table credit_ledger add constraint credit_ledger_account_id_grant_key_key unique (account_id, grant_key)`.execute(db);
  await sql`drop index credit_ledger_grant_key_idx`.execute(db);
  await sql`alter table ai_usage reset (fillfactor)`.execute(db);
  await sql`alter table credit_ledger reset (fillfactor)`.execute(db);
}
