import { sql, type Kysely } from 'kysely';

/**
 * People search (src/people/).
 * - `people_profile_cache`: enriched profiles by normalized profile URL, shared by every app (the data is public and
 *   the provider charges per fetch). `result` ok (profile kept for 30 days), not_found (7 days) or failed (1 hour,
 *   never served: a miss). `expires_at` is written from the service's clock, so tests move time without waiting.
 * - `people_email_lookups`: asynchronous work-email lookups: `pending` until the provider's callback (`resolved` with
 *   an e-mail, `failed` without one) or the deadline (`expired`, by the people_email_expire job queued with the row).
 *   The callback proves itself with a per-lookup secret kept only as its SHA-256. `hold_reservation_id` holds the
 *   resolution's credit from queue time, so that a callback can never charge what the account no longer has.
 * - `people_usage_logs`: one row per provider call, cache hit and callback, with the spec's fields; the credit
 *   charge of a billed row is written in the same statement (credit_ledger.usage_ref = 'people_usage:<id>').
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table people_profile_cache (
      url text primary key,
      result text not null check (result in ('ok', 'not_found', 'failed')),
      profile jsonb,
      slot text not null check (slot in ('primary', 'secondary')),
      fetched_at timestamptz not null,
      expires_at timestamptz not null
    );

    create table people_email_lookups (
      id uuid primary key,
      app_id text not null references apps(id) on delete cascade,
      account_id uuid not null references accounts(id) on delete cascade,
      slot text not null check (slot in ('primary', 'secondary')),
      social_url text not null,
      status text not null check (status in ('pending', 'resolved', 'failed', 'expired')),
      email text,
      credits_consumed integer not null default 0,
      secret_sha256 text not null,
      hold_reservation_id uuid,
      deadline timestamptz not null,
      created_at timestamptz not null default now(),
      settled_at timestamptz
    );
    create index people_email_lookups_app_idx on people_email_lookups (app_id, created_at);

    create table people_usage_logs (
      id bigserial primary key,
      app_id text not null references apps(id) on delete cascade,
      account_id uuid not null,
      action text not null check (action in (
        'search_person', 'search_company', 'profile', 'profile_cache_hit', 'profile_email_queue', 'profile_email_resolved',
        'search_person_error', 'search_company_error', 'profile_error', 'profile_email_queue_error', 'profile_email_resolved_error'
      )),
      slot text not null check (slot in ('primary', 'secondary')),
      credits_consumed integer not null default 0,
      usd_cost numeric(18, 9) not null default 0,
      usd_charged numeric(18, 9) not null default 0,
      -- the provider's HTTP status for this call (a cache hit: the cached answer's); null when it never answered
      response_status integer,
      social_url text,
      lookup_id uuid,
      created_at timestamptz not null default now()
    );
    create index people_usage_logs_app_idx on people_usage_logs (app_id, created_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table people_usage_logs, people_email_lookups, people_profile_cache`.execute(db);
}
