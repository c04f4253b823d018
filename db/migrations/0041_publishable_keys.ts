import { sql, type Kysely } from 'kysely';

/*
 * Publishable keys (svc_pub_...): an app's key for browsers and public clients, as Supabase's anon/publishable key is
 * to supabase-js. It stands for no one (the data API runs it as svc_anon, on its own app only), so it is not a secret:
 * kept as it is, so it can be shown again (service keys are kept hashed). Every app gets one when its row is written
 * (however it is made: apps_create, a template's clone), and every existing app now.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table publishable_keys (
      id uuid primary key default gen_random_uuid(),
      app_id text not null references apps(id) on delete cascade,
      key text not null unique,
      name text not null,
      created_at timestamptz not null default now()
    );
    create index publishable_keys_app_idx on publishable_keys(app_id);
    -- 244 random bits, from the two UUIDs' random parts.
    create function svc_new_publishable_key() returns text language sql volatile
      as $$ select 'svc_pub_' || replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', '') $$;
    create function svc_app_publishable_key() returns trigger language plpgsql as $$
    begin
      insert into publishable_keys (app_id, key, name) values (new.id, svc_new_publishable_key(), 'default');
      return new;
    end $$;
    create trigger apps_publishable_key after insert on apps for each row execute function svc_app_publishable_key();
    insert into publishable_keys (app_id, key, name) select id, svc_new_publishable_key(), 'default' from apps;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop trigger apps_publishable_key on apps;
    drop function svc_app_publishable_key();
    drop table publishable_keys;
    drop function svc_new_publishable_key();
  `.execute(db);
}
