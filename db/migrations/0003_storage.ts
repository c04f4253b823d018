import { sql, type Kysely } from 'kysely';

/**
 * File storage: one row per object in the control database, so listing and the per-app quota are one query.
 * A row is `pending` from the upload request until its bytes arrive (then `ready`); pending rows carry
 * `expires_at` (upload URL expiry plus a grace for transfers in flight) and are settled by a cron.
 *
 * usage_daily is the generic daily meter table (storage_bytes, later lambda_invocations, ai_tokens, ...).
 * It has no foreign key on apps: usage of a deleted app stays for billing.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table storage_objects (
      id uuid primary key,
      app_id text not null references apps(id) on delete cascade,
      -- null: uploaded with a service or platform key
      user_id uuid,
      filename text not null,
      content_type text not null,
      size_bytes bigint not null check (size_bytes > 0),
      object_key text not null unique,
      status text not null default 'pending' check (status in ('pending', 'ready')),
      created_at timestamptz not null default now(),
      expires_at timestamptz,
      check ((status = 'pending') = (expires_at is not null))
    );
    create index storage_objects_list_idx on storage_objects (app_id, created_at desc, id desc) where status = 'ready';
    create index storage_objects_user_idx on storage_objects (app_id, user_id, created_at desc) where status = 'ready';
    create index storage_objects_pending_idx on storage_objects (app_id, expires_at) where status = 'pending';
    create index storage_objects_expiry_idx on storage_objects (expires_at) where status = 'pending';

    -- Per-app overrides; null means the platform default (SVC_STORAGE_*). Overrides can only tighten the defaults.
    create table storage_limits (
      app_id text primary key references apps(id) on delete cascade,
      max_file_bytes bigint check (max_file_bytes > 0),
      max_app_bytes bigint check (max_app_bytes > 0),
      allowed_content_types text[],
      updated_at timestamptz not null default now()
    );

    create table usage_daily (
      app_id text not null,
      meter text not null,
      day date not null,
      quantity bigint not null default 0,
      primary key (app_id, meter, day)
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table usage_daily, storage_limits, storage_objects`.execute(db);
}
