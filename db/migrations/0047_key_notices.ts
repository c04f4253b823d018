import { sql, type Kysely } from 'kysely';

/*
 * Key notices (src/auth/resolved-keys.ts): api processes cache resolved keys while they hear the control database's
 * notices, so every change to what a key resolves to is announced on the channel svc_keys with the key's hash (sha256
 * hex, as hashKey; a publishable key, kept as it is, hashed here the same way):
 * - any update or delete of a key's row (revoked; a platform key's role lowered; the cascades of a deleted account,
 *   app, person or substrate user, which fire these row triggers for each row they touch);
 * - an app leaving the status 'ready' or moving to another account: its service and publishable keys, whose callers
 *   carry the account and resolve only for a ready app.
 * A new key needs no notice: what did not resolve is never cached.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function svc_key_changed() returns trigger language plpgsql as $$
    begin
      perform pg_notify('svc_keys', old.key_hash);
      return null;
    end $$;
    create function svc_publishable_key_changed() returns trigger language plpgsql as $$
    begin
      perform pg_notify('svc_keys', encode(sha256(convert_to(old.key, 'UTF8')), 'hex'));
      return null;
    end $$;
    create function svc_app_keys_changed() returns trigger language plpgsql as $$
    begin
      perform pg_notify('svc_keys', key_hash) from service_keys where app_id = old.id;
      perform pg_notify('svc_keys', encode(sha256(convert_to(key, 'UTF8')), 'hex')) from publishable_keys where app_id = old.id;
      return null;
    end $$;
    create trigger platform_keys_notice after update or delete on platform_keys for each row execute function svc_key_changed();
    create trigger service_keys_notice after update or delete on service_keys for each row execute function svc_key_changed();
    create trigger substrate_keys_notice after update or delete on substrate_keys for each row execute function svc_key_changed();
    create trigger publishable_keys_notice after update or delete on publishable_keys for each row execute function svc_publishable_key_changed();
    create trigger apps_keys_notice after update of status, account_id on apps for each row
      when (old.status = 'ready' and (new.status <> 'ready' or new.account_id <> old.account_id))
      execute function svc_app_keys_changed();
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop trigger apps_keys_notice on apps;
    drop trigger publishable_keys_notice on publishable_keys;
    drop trigger substrate_keys_notice on substrate_keys;
    drop trigger service_keys_notice on service_keys;
    drop trigger platform_keys_notice on platform_keys;
    drop function svc_app_keys_changed();
    drop function svc_publishable_key_changed();
    drop function svc_key_changed();
  `.execute(db);
}
