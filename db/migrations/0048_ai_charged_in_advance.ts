import { sql, type Kysely } from 'kysely';

/*
 * AI calls charged in advance (src/ai/usage.ts): a platform-key call writes its usage row and its credit charge at the
 * worst case before the upstream is asked, and corrects both in place once it has the upstream's usage, after its
 * answer went out. `settle_by` is set while the row still holds that worst case: the call's process corrects it long
 * before, and a process killed first leaves the worst case charged (never an answered call unbilled). The meter job
 * takes a row once it is settled or past settle_by, and clears settle_by as it does, so a late correction cannot
 * change a metered row.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table ai_usage add column settle_by timestamptz`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table ai_usage drop column settle_by`.execute(db);
}
