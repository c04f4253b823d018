import { sql, type Kysely } from 'kysely';

/**
 * Pro overage billed through Stripe (src/billing/overage.ts): one row per account, closed billing period and meter
 * beyond the plan's allowance, written before the Stripe invoice item is created and marked with its id after, so the
 * hourly job is safe to run twice and after a crash (the item's idempotency key is derived from the same three); a
 * line Stripe refuses keeps its error and is tried again next hour without holding up the others.
 * `accounts.plan_since` (kept by a trigger) says whether the account had its plan all through a closed month.
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
      attempts integer not null default 0,
      last_error text,
      created_at timestamptz not null default now(),
      invoiced_at timestamptz,
      primary key (account_id, period, meter)
    );
    create index billing_overage_charges_pending on billing_overage_charges (created_at) where stripe_invoice_item_id is null;

    -- Since when the account has its plan: a month is charged pro overage only when the account was pro all of it.
    alter table accounts add column plan_since timestamptz;
    update accounts set plan_since = created_at;
    alter table accounts alter column plan_since set not null, alter column plan_since set default now();
    create function accounts_plan_since() returns trigger language plpgsql as $$
    begin
      if new.plan is distinct from old.plan then new.plan_since := now(); end if;
      return new;
    end $$;
    create trigger accounts_plan_since before update of plan on accounts for each row execute function accounts_plan_since();
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table billing_overage_charges;
    drop trigger accounts_plan_since on accounts; drop function accounts_plan_since(); alter table accounts drop column plan_since;`.execute(db);
}
