import { sql, type Kysely } from 'kysely';

/**
 * Frontend deployments (hosted sites) and the frontend environment, plus the account plan that decides how
 * many deployments stay reachable (free: only the live one; pro and enterprise: every READY one).
 *
 * - `live`: the deployment served at /sites/{app_id}/ and on the app's subdomain; at most one per app
 *   (partial unique index), always a READY one with its files on disk.
 * - `has_site`: the extracted files are on disk and reachable at /sites/{app_id}/d/{id}/.
 * - `frontend_env`: one row per variable, the value sealed with the master key (AES-256-GCM).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table accounts add column plan text not null default 'free' check (plan in ('free', 'pro', 'enterprise'));
    create table frontend_deployments (
      id uuid primary key default gen_random_uuid(),
      app_id text not null references apps(id) on delete cascade,
      framework text not null check (framework in ('react-vite', 'nextjs-static', 'static', 'other')),
      status text not null default 'WAITING' check (status in ('WAITING', 'UPLOADING', 'BUILDING', 'READY', 'ERROR', 'CANCELED')),
      error text,
      size_bytes bigint,
      unzipped_bytes bigint,
      file_count integer,
      live boolean not null default false,
      has_site boolean not null default false,
      upload_expires_at timestamptz not null,
      created_at timestamptz not null default clock_timestamp(),
      updated_at timestamptz not null default clock_timestamp(),
      uploaded_at timestamptz,
      ready_at timestamptz,
      check (not live or (status = 'READY' and has_site)),
      check (not has_site or status = 'READY')
    );
    create index frontend_deployments_app_idx on frontend_deployments (app_id, created_at desc);
    create unique index frontend_deployments_live_idx on frontend_deployments (app_id) where live;
    create table frontend_env (
      app_id text not null references apps(id) on delete cascade,
      name text not null,
      value_sealed text not null,
      updated_at timestamptz not null default now(),
      primary key (app_id, name)
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop table frontend_env, frontend_deployments;
    alter table accounts drop column plan;
  `.execute(db);
}
