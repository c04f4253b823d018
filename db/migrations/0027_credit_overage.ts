import { sql, type Kysely } from 'kysely';

/**
 * Plans with an AI credits overage price (pro) are never refused for credit: the part of a charge beyond the account's
 * balance is recorded on the charge row as overage, billed through Stripe once the period has closed (see
 * src/billing/overage.ts), instead of being the platform's write-off (shortfall_nanos).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table credit_ledger add column overage_nanos bigint not null default 0 check (overage_nanos >= 0)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table credit_ledger drop column overage_nanos`.execute(db);
}
