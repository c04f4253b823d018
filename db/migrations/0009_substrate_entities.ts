import { sql, type Kysely } from 'kysely';

/**
 * Substrate entities: the people, companies, projects... a substrate user deals with (`ent_` ids), and the aliases
 * that merges leave behind.
 *
 * - `substrate_entities`: scoped by `user_id`. `created_at`/`updated_at` are kept at millisecond precision (the
 *   precision of the ISO strings the API returns), and every write moves `updated_at` strictly forward, so the
 *   `updated_at` a client read is exactly what `patch_entity.if_updated_at` compares against.
 *   Indexes: `(user_id, type, updated_at)` for lists and the type filter; `(user_id, type, lower(primary_email))` for
 *   the email step of upsert dedupe; a GIN (jsonb_path_ops) on `canonical_keys` for the `@>` step. The display-name
 *   search (`q`) is a substring ILIKE over the user's rows (pg_trgm is not installed, and a tsvector would miss
 *   substrings such as "love" in "Lovelace"): it scans one user's entities through the user index, which stays cheap
 *   at the thousands of entities a person has.
 * - `substrate_entity_aliases`: `alias_id` (a merged-away loser) -> `entity_id` (the winner), per user. Deleting the
 *   winner deletes its aliases.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table substrate_entities (
      id text primary key,
      user_id uuid not null references substrate_users(id) on delete cascade,
      type text not null check (type in ('person', 'company', 'fund', 'workspace', 'team', 'project', 'event', 'agent', 'self')),
      display_name text not null,
      primary_email text,
      canonical_keys jsonb not null default '{}' check (jsonb_typeof(canonical_keys) = 'object'),
      attrs jsonb not null default '{}' check (jsonb_typeof(attrs) = 'object'),
      linked_app_user_id uuid,
      linked_app_id text,
      created_at timestamptz not null default date_trunc('milliseconds', now()),
      updated_at timestamptz not null default date_trunc('milliseconds', now())
    );
    create index substrate_entities_user_type_idx on substrate_entities (user_id, type, updated_at desc);
    create index substrate_entities_email_idx on substrate_entities (user_id, type, lower(primary_email)) where primary_email is not null;
    create index substrate_entities_keys_idx on substrate_entities using gin (canonical_keys jsonb_path_ops);

    create table substrate_entity_aliases (
      user_id uuid not null references substrate_users(id) on delete cascade,
      alias_id text not null,
      entity_id text not null references substrate_entities(id) on delete cascade,
      action_id text,
      created_at timestamptz not null default now(),
      primary key (user_id, alias_id)
    );
    create index substrate_entity_aliases_entity_idx on substrate_entity_aliases (entity_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table substrate_entity_aliases, substrate_entities`.execute(db);
}
