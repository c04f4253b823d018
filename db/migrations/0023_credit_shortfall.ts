import { sql, type Kysely } from 'kysely';

/**
 * A charge never takes an account below its floor: the part of a call's cost beyond what the account could pay (its
 * hold plus its unheld balance; the price table was too low for the upstream's report) is recorded on the charge row
 * as the platform's write-off instead of being charged.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table credit_ledger add column shortfall_nanos bigint not null default 0 check (shortfall_nanos >= 0)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table credit_ledger drop column shortfall_nanos`.execute(db);
}
