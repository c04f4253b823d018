import { sql, type Kysely } from 'kysely';

/**
 * Pro overage billed through Stripe (src/billing/overage.ts): one row per account, closed billing period and meter
 * beyond the plan's allowance, written before the Stripe invoice item is created and marked with its id after, so the
 * hourly job is safe to run twice and after a crash (the item's idempotency key is derived from the same three).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table billing_overage_charges (
      account_id uuid not null references accounts(id) on delete cascade,
      period date not null,
      meter text not null,
      quantity bigint not null,
      amount_cents bigint not null check (amount_cents > 0),
      stripe_invoice_item_id text,
      created_at timestamptz not null default now(),
      invoiced_at timestamptz,
      primary key (account_id, period, meter)
    );
    create index billing_overage_charges_pending on billing_overage_charges (created_at) where stripe_invoice_item_id is null;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table billing_overage_charges`.execute(db);
}
