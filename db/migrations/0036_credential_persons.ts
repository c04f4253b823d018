import { sql, type Kysely } from 'kysely';

/*
 * Every credential answers to a person (src/auth/keys.ts, src/identity/members.ts), and so does every consent that
 * lets someone else decide for one (src/substrate/service.ts).
 *
 * - `substrate_keys.created_by`: the person who minted the key, signed in; `substrate_user_id` is that person's own
 *   substrate user, so the key reaches their substrate and no one else's. Keys made before could be minted by any admin
 *   or platform key (an agent included) and reached the account's default user, its first owner's substrate: nothing
 *   tells who holds them, so they are revoked here, and each person mints their own again, signed in.
 * - `apps.substrate_end_users_decide_by` / `_at`: who let the app's end users decide on its proposals (signed in, for
 *   their own substrate) and since when; null when nobody does. It replaces the boolean, whose consents named nobody
 *   and are withdrawn here (the person gives theirs again).
 * - `substrate_actions.source_via`: how a linked app proposed: `function` (ctx.substrate) or `service_key` (REST).
 *   Only what its functions proposed can be decided by its end users; older rows, unknown, never can.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    delete from substrate_keys;
    alter table substrate_keys
      add column created_by uuid not null references persons(id) on delete cascade,
      alter column substrate_user_id set not null;
    create index substrate_keys_person_idx on substrate_keys(account_id, created_by);

    alter table apps
      drop column substrate_end_users_decide,
      add column substrate_end_users_decide_by uuid references persons(id) on delete set null,
      add column substrate_end_users_decide_at timestamptz;
    alter table substrate_actions add column source_via text check (source_via in ('function', 'service_key'));
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table substrate_actions drop column source_via;
    alter table apps
      drop column substrate_end_users_decide_by,
      drop column substrate_end_users_decide_at,
      add column substrate_end_users_decide boolean not null default false;
    drop index substrate_keys_person_idx;
    alter table substrate_keys drop column created_by, alter column substrate_user_id drop not null;
  `.execute(db);
}
