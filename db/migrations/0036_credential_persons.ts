import { sql, type Kysely } from 'kysely';

/*
 * Every credential answers to a person (src/auth/keys.ts, src/identity/members.ts).
 *
 * - `substrate_keys.created_by`: the person who minted the key, signed in; `substrate_user_id` is that person's own
 *   substrate user, so the key reaches their substrate and no one else's. Keys made before could be minted by any admin
 *   or platform key (an agent included) and reached the account's default user, its first owner's substrate: nothing
 *   tells who holds them, so they are revoked here, and each person mints their own again, signed in.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    delete from substrate_keys;
    alter table substrate_keys
      add column created_by uuid not null references persons(id) on delete cascade,
      alter column substrate_user_id set not null;
    create index substrate_keys_person_idx on substrate_keys(account_id, created_by);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop index substrate_keys_person_idx;
    alter table substrate_keys drop column created_by, alter column substrate_user_id drop not null;
  `.execute(db);
}
