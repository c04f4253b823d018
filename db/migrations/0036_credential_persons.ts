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
 * - `service_keys.created_by`: the person behind the caller that made the key (the app's first key: whoever created
 *   the app); null when the platform made it. Platform keys made with a key now carry that key's person too (they
 *   carried null). A person's removal or demotion revokes what needed the role they lost, in its transaction.
 *
 * For credentials made before, the audit log tells who: each key.create, app.create and invitation.create entry names
 * a person or a key, and a key's person is followed up the chain of keys that made keys. The platform keys, service
 * keys and invitations found that way are then brought in line with their person's membership now: revoked when they
 * left the account, lowered (platform keys) or revoked (service keys below developer, invitations below admin or
 * above their role) when demoted; OAuth grants of people no longer members go. What the log no longer tells (entries
 * older than SVC_AUDIT_RETENTION_DAYS) stays without a person, like the operator's keys: it lasts until revoked.
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

    alter table service_keys add column created_by uuid references persons(id) on delete cascade;
    create index service_keys_person_idx on service_keys(created_by) where created_by is not null;

    -- A person deleted outright takes what they made with them, as their removal from an account does (set null would
    -- have turned their keys and invitations into ones of no person, which last until revoked).
    alter table platform_keys drop constraint platform_keys_created_by_fkey,
      add constraint platform_keys_created_by_fkey foreign key (created_by) references persons(id) on delete cascade;
    alter table invitations drop constraint invitations_invited_by_fkey,
      add constraint invitations_invited_by_fkey foreign key (invited_by) references persons(id) on delete cascade;
  `.execute(db);
  await attributeOlderCredentials(db);
}

const ROLE_RANK = sql`array['owner', 'admin', 'developer', 'viewer']`;

async function attributeOlderCredentials(db: Kysely<unknown>): Promise<void> {
  await sql`
    create temporary table key_people as
    with recursive made as (
      select resource_id::uuid as key_id, actor_kind, actor_id from audit_log
      where action = 'key.create' and resource_type = 'platform_key' and actor_kind in ('person', 'key')
    ), behind(key_id, person) as (
      select id, created_by from platform_keys where created_by is not null
      union
      select key_id, actor_id::uuid from made where actor_kind = 'person'
      union
      select m.key_id, b.person from made m join behind b on b.key_id = m.actor_id::uuid where m.actor_kind = 'key'
    )
    select distinct on (key_id) key_id, person from behind where exists (select 1 from persons p where p.id = behind.person)
  `.execute(db);
  // The person an audit entry's actor stands for: the person, or the key's person.
  const personOf = (a: string) =>
    sql.raw(`case ${a}.actor_kind when 'person' then ${a}.actor_id::uuid when 'key' then (select person from key_people where key_id = ${a}.actor_id::uuid) end`);
  await sql`
    update platform_keys k set created_by = kp.person from key_people kp where k.id = kp.key_id and k.created_by is null;
    update service_keys k set created_by = ${personOf('a')} from audit_log a
      where a.action = 'key.create' and a.resource_type = 'service_key' and a.resource_id = k.id::text and a.actor_kind in ('person', 'key')
        and k.created_by is null;
    update service_keys k set created_by = ${personOf('a')} from audit_log a
      where a.action = 'app.create' and a.resource_id = k.app_id and a.actor_kind in ('person', 'key') and k.name = 'default'
        and k.created_by is null;
    update invitations i set invited_by = ${personOf('a')} from audit_log a
      where a.action = 'invitation.create' and a.resource_id = i.id::text and a.actor_kind = 'key' and i.invited_by is null;

    delete from platform_keys k where k.created_by is not null
      and not exists (select 1 from account_members m where m.account_id = k.account_id and m.person_id = k.created_by);
    update platform_keys k set role = m.role from account_members m
      where m.account_id = k.account_id and m.person_id = k.created_by and array_position(${ROLE_RANK}, k.role) < array_position(${ROLE_RANK}, m.role);
    delete from service_keys k using apps a where a.id = k.app_id and k.created_by is not null
      and not exists (select 1 from account_members m where m.account_id = a.account_id and m.person_id = k.created_by and m.role <> 'viewer');
    update invitations i set revoked_at = now()
      where i.accepted_at is null and i.revoked_at is null and i.invited_by is not null
        and not exists (select 1 from account_members m where m.account_id = i.account_id and m.person_id = i.invited_by
                          and m.role in ('owner', 'admin') and array_position(${ROLE_RANK}, m.role) <= array_position(${ROLE_RANK}, i.role));
    delete from oauth_tokens t where not exists (select 1 from account_members m where m.account_id = t.account_id and m.person_id = t.person_id);
    delete from oauth_codes c where not exists (select 1 from account_members m where m.account_id = c.account_id and m.person_id = c.person_id);
    drop table key_people;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table invitations drop constraint invitations_invited_by_fkey,
      add constraint invitations_invited_by_fkey foreign key (invited_by) references persons(id) on delete set null;
    alter table platform_keys drop constraint platform_keys_created_by_fkey,
      add constraint platform_keys_created_by_fkey foreign key (created_by) references persons(id) on delete set null;
    drop index service_keys_person_idx;
    alter table service_keys drop column created_by;
    alter table substrate_actions drop column source_via;
    alter table apps
      drop column substrate_end_users_decide_by,
      drop column substrate_end_users_decide_at,
      add column substrate_end_users_decide boolean not null default false;
    drop index substrate_keys_person_idx;
    alter table substrate_keys drop column created_by, alter column substrate_user_id drop not null;
  `.execute(db);
}
