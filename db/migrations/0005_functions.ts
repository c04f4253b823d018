import { sql, type Kysely } from 'kysely';

/**
 * Serverless functions (src/functions/). `version` changes whenever what a warm process is bound to changes
 * (code, variables, memory limit), so processes of an old version are never reused. Variables are one
 * SecretBox-sealed JSON object; their names are kept in clear for listing. The counters feed the metrics
 * (all-time, unlike the logs, whose retention is bounded by the functions_logs_trim cron).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table functions (
      id uuid primary key default gen_random_uuid(),
      app_id text not null references apps(id) on delete cascade,
      name text not null,
      description text not null default '',
      code text not null,
      env_sealed text,
      env_names text[] not null default '{}',
      timeout_ms int not null check (timeout_ms between 100 and 300000),
      memory_limit_mb int not null check (memory_limit_mb between 64 and 1024),
      trigger_type text not null default 'http' check (trigger_type in ('http', 'cron', 'websocket')),
      trigger_config jsonb not null default '{}',
      version uuid not null,
      cron_cursor timestamptz,
      invocations bigint not null default 0,
      error_count bigint not null default 0,
      total_duration_ms bigint not null default 0,
      last_invocation_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (app_id, name)
    );
    create index functions_cron_idx on functions (id) where trigger_type = 'cron';
    create index functions_ws_idx on functions (app_id, (trigger_config ->> 'event')) where trigger_type = 'websocket';

    create table function_logs (
      id bigint generated always as identity primary key,
      function_id uuid not null references functions(id) on delete cascade,
      app_id text not null,
      trigger text not null,
      method text not null,
      path text not null,
      status_code int not null,
      duration_ms int not null,
      memory_mb int,
      error text,
      level text not null check (level in ('info', 'error')),
      console jsonb not null default '[]',
      created_at timestamptz not null default now()
    );
    create index function_logs_function_idx on function_logs (function_id, id desc);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table function_logs, functions`.execute(db);
}
