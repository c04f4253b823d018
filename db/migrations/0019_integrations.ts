import { sql, type Kysely } from 'kysely';

/**
 * Third-party integrations (src/integrations/): apps offer vendor toolkits (Gmail, Slack, ...) to their end users.
 * - `integration_toolkits`: the toolkits an app enabled, with the vendor auth config its users connect through
 *   (`scopes` null: the scopes the vendor manages for the toolkit).
 * - `integration_settings`: per app, the origins (besides the app's own URL) a finished connection may send the
 *   browser back to.
 * - `integration_connection_requests`: one per connect call: the hash of the single-use state token carried by the
 *   callback URL, who asked, where the browser goes afterwards, and the vendor account the hosted link completes.
 * - `integration_connections`: an end user's active connected account per toolkit (reconnecting replaces it).
 *   `user_id` is text: with a key, apps name their end users by their own ids. No foreign key to apps: when an app is
 *   deleted its rows must outlive it until the purge job has revoked each account at the vendor.
 * - `integration_executions`: every tool execution (who, which tool, outcome, duration), listable by the app's keys.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table integration_toolkits (
      app_id text not null references apps(id) on delete cascade,
      toolkit text not null,
      display_name text not null,
      scopes text[],
      auth_config_id text not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      primary key (app_id, toolkit)
    );

    create table integration_settings (
      app_id text primary key references apps(id) on delete cascade,
      redirect_origins text[] not null default '{}',
      updated_at timestamptz not null default now()
    );

    create table integration_connection_requests (
      id uuid primary key,
      state_hash text not null unique,
      app_id text not null references apps(id) on delete cascade,
      user_id text not null,
      toolkit text not null,
      redirect_url text not null,
      vendor_account_id text not null,
      status text not null default 'pending' check (status in ('pending', 'completed', 'failed')),
      connection_id uuid,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      finished_at timestamptz
    );
    create index integration_connection_requests_expiry_idx on integration_connection_requests (expires_at);

    create table integration_connections (
      id uuid primary key,
      app_id text not null,
      user_id text not null,
      toolkit text not null,
      vendor_account_id text not null unique,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (app_id, user_id, toolkit)
    );

    create table integration_executions (
      id bigint generated always as identity primary key,
      app_id text not null references apps(id) on delete cascade,
      user_id text not null,
      tool text not null,
      toolkit text,
      success boolean not null,
      duration_ms integer not null,
      error text,
      created_at timestamptz not null default now()
    );
    create index integration_executions_app_idx on integration_executions (app_id, id desc);
    create index integration_executions_created_idx on integration_executions (created_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table integration_executions, integration_connections, integration_connection_requests, integration_settings, integration_toolkits`.execute(db);
}
