import { sql, type Kysely } from 'kysely';

/**
 * The substrate outbox: per user and capability, a webhook that receives every executed action of that capability
 * (optionally only those of one app), signed with the target's secret (sealed with the master key). Each delivery is
 * a row, written in the transaction of the execution with its graphile-worker job, retried with backoff, and dead
 * after SVC_OUTBOX_MAX_ATTEMPTS.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table substrate_outbox_targets (
      user_id uuid not null references substrate_users(id) on delete cascade,
      capability text not null,
      webhook_url text not null,
      signing_secret_sealed text not null,
      source_app_id text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      primary key (user_id, capability)
    );
    create table substrate_outbox_deliveries (
      id text primary key,
      user_id uuid not null references substrate_users(id) on delete cascade,
      action_id text not null,
      capability text not null,
      webhook_url text not null,
      body text not null,
      status text not null default 'pending' check (status in ('pending', 'delivered', 'dead')),
      attempts integer not null default 0,
      last_status integer,
      last_error text,
      created_at timestamptz not null default now(),
      delivered_at timestamptz,
      updated_at timestamptz not null default now()
    );
    create index substrate_outbox_deliveries_user_idx on substrate_outbox_deliveries(user_id, created_at desc, id desc);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table substrate_outbox_deliveries, substrate_outbox_targets`.execute(db);
}
