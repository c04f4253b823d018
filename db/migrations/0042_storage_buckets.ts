import { sql, type Kysely } from 'kysely';

/*
 * Storage buckets (storage-js's face, issue 41): every object lives in a bucket of its app, at a path (`name`) unique
 * among the bucket's ready objects. Every app has the bucket `files` (made by a trigger on apps, as publishable keys
 * are), where the spec's routes (/storage/{app_id}/...) keep storing: their rows get `name` from their object key
 * (`<user_id|service>/<uuid>_<filename>`) when they come without one. Access: 'owner' (end users see their own
 * objects), 'authenticated' (every end user reads), 'public' (anyone reads).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table storage_buckets (
      app_id text not null references apps(id) on delete cascade,
      id text not null,
      access text not null default 'owner' check (access in ('owner', 'authenticated', 'public')),
      file_size_limit bigint check (file_size_limit > 0),
      allowed_mime_types text[],
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      primary key (app_id, id)
    );
    create function svc_app_files_bucket() returns trigger language plpgsql as $$
    begin
      insert into storage_buckets (app_id, id) values (new.id, 'files') on conflict do nothing;
      return new;
    end $$;
    create trigger apps_files_bucket after insert on apps for each row execute function svc_app_files_bucket();
    insert into storage_buckets (app_id, id) select id, 'files' from apps;

    alter table storage_objects add column bucket_id text not null default 'files', add column name text,
      add column cache_control text;
    update storage_objects set name = substr(object_key, length(app_id) + 2);
    create function svc_storage_object_name() returns trigger language plpgsql as $$
    begin
      if new.name is null then new.name := substr(new.object_key, length(new.app_id) + 2); end if;
      return new;
    end $$;
    create trigger storage_objects_name before insert on storage_objects for each row execute function svc_storage_object_name();
    alter table storage_objects alter column name set not null,
      add foreign key (app_id, bucket_id) references storage_buckets (app_id, id) on delete cascade;
    create unique index storage_objects_path_key on storage_objects (app_id, bucket_id, name) where status = 'ready';
    create index storage_objects_prefix_idx on storage_objects (app_id, bucket_id, name text_pattern_ops) where status = 'ready';
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop index storage_objects_prefix_idx;
    drop index storage_objects_path_key;
    drop trigger storage_objects_name on storage_objects;
    drop function svc_storage_object_name();
    alter table storage_objects drop column bucket_id, drop column name, drop column cache_control;
    drop trigger apps_files_bucket on apps;
    drop function svc_app_files_bucket();
    drop table storage_buckets;
  `.execute(db);
}
