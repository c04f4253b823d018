import { sql, type Kysely } from 'kysely';

/**
 * Meeting bots (src/meetings/):
 * - `meeting_bots`: one row per spawned bot, keyed by our uuid (the spec's bot id); `provider_bot_id` is the
 *   provider's. `status_at` is the provider's time of the event that set `status`, so an older event arriving late
 *   cannot move the bot back. `reservation_id` is the credit held at spawn, settled when the session ends.
 * - `meeting_webhooks`: the app's forward URL and its signing secret (wsec_..., sealed with the master key).
 * - `meeting_forwards`: each event forwarded to an app, retried by graphile-worker and dead after the attempt limit.
 * - `meeting_usage`: one row per dimension of a finished session, unique per bot so a replayed `done` charges once;
 *   the charge is a credit_ledger row written in the same transaction (usage_ref meeting_usage:<id>).
 * - `meeting_provider_events`: the provider's webhook ids already applied (Svix redelivers the same id).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table meeting_bots (
      id uuid primary key,
      app_id text not null references apps(id) on delete cascade,
      provider_bot_id text not null unique,
      status text not null default 'joining'
        check (status in ('joining', 'waiting_room', 'in_call', 'recording', 'ended', 'done', 'fatal')),
      status_at timestamptz,
      status_code text,
      status_sub_code text,
      bot_name text not null default 'Meeting Notetaker',
      meeting_url text not null,
      metadata jsonb not null default '{}',
      transcript boolean not null default true,
      recording text not null default 'mp4' check (recording in ('mp4', 'audio_only', 'none')),
      automatic_leave jsonb not null default '{}',
      reservation_id uuid,
      started_at timestamptz,
      completed_at timestamptz,
      duration_seconds integer,
      leave_requested_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index meeting_bots_app_idx on meeting_bots(app_id, created_at desc, id desc);
    create index meeting_bots_app_status_idx on meeting_bots(app_id, status, created_at desc, id desc);
    create table meeting_webhooks (
      app_id text primary key references apps(id) on delete cascade,
      forward_url text not null,
      secret_sealed text not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create table meeting_forwards (
      id uuid primary key default gen_random_uuid(),
      app_id text not null references apps(id) on delete cascade,
      bot_id uuid not null references meeting_bots(id) on delete cascade,
      event text not null,
      body text not null,
      status text not null default 'pending' check (status in ('pending', 'delivered', 'dead')),
      attempts integer not null default 0,
      last_status integer,
      last_error text,
      created_at timestamptz not null default now(),
      delivered_at timestamptz,
      updated_at timestamptz not null default now()
    );
    create index meeting_forwards_app_idx on meeting_forwards(app_id, created_at desc, id desc);
    create table meeting_usage (
      id uuid primary key default gen_random_uuid(),
      app_id text not null references apps(id) on delete cascade,
      bot_id uuid not null references meeting_bots(id) on delete cascade,
      dimension text not null check (dimension in ('recording', 'transcription')),
      seconds integer not null check (seconds >= 0),
      usd_nanos bigint not null check (usd_nanos >= 0),
      created_at timestamptz not null default now(),
      unique (bot_id, dimension)
    );
    create index meeting_usage_app_idx on meeting_usage(app_id, created_at desc, id desc);
    create table meeting_provider_events (
      id text primary key,
      event text not null,
      provider_bot_id text,
      received_at timestamptz not null default now()
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table meeting_provider_events, meeting_usage, meeting_forwards, meeting_webhooks, meeting_bots`.execute(db);
}
