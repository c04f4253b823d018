import { sql, type Kysely } from 'kysely';

/**
 * Attention rules: per substrate user, a 5-field UTC cron, a JSON-Logic condition (over the latest snapshot, or over
 * rows of one memory table) and a capability proposed with a rendered payload template for each match.
 *
 * - `substrate_attention_rules`: `cron_cursor` is the dispatcher's: slots after it are due (set to now on create, on a
 *   schedule change and on enable, so nothing from before is fired).
 * - `substrate_attention_rule_firings`: one row per fired (rule, slot), rewritten if the slot's job runs again.
 * - `substrate_attention_rule_usage`: proposals made per rule and UTC day, reserved one at a time against
 *   `max_fires_per_day` (concurrent slots of one rule never exceed it).
 * Both rule tables notify the change stream (`attention_rules`, `attention_rule_firings`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table substrate_attention_rules (
      id text primary key,
      user_id uuid not null references substrate_users(id) on delete cascade,
      name text not null,
      description text,
      trigger_cron text not null,
      condition_mode text not null check (condition_mode in ('snapshot_predicate', 'row_query')),
      condition jsonb not null,
      action_capability text not null,
      action_payload_template jsonb not null,
      enabled boolean not null default true,
      max_fires_per_day integer not null,
      cron_cursor timestamptz not null default now(),
      created_at timestamptz not null default date_trunc('milliseconds', now()),
      updated_at timestamptz not null default date_trunc('milliseconds', now())
    );
    create index substrate_attention_rules_user_idx on substrate_attention_rules (user_id, created_at desc, id desc);
    create index substrate_attention_rules_due_idx on substrate_attention_rules (cron_cursor) where enabled;
    create table substrate_attention_rule_firings (
      id text primary key,
      rule_id text not null references substrate_attention_rules(id) on delete cascade,
      user_id uuid not null references substrate_users(id) on delete cascade,
      slot timestamptz not null,
      bindings_count integer not null,
      bindings jsonb not null,
      proposals jsonb not null,
      skipped jsonb not null,
      skip_reason text,
      created_at timestamptz not null default date_trunc('milliseconds', now()),
      updated_at timestamptz not null default date_trunc('milliseconds', now()),
      unique (rule_id, slot)
    );
    create table substrate_attention_rule_usage (
      rule_id text not null references substrate_attention_rules(id) on delete cascade,
      day date not null,
      proposals integer not null,
      primary key (rule_id, day)
    );
  `.execute(db);
  // A rule's frames: not for the dispatcher's cursor, which moves every minute (an UPDATE OF trigger fires only when
  // one of the listed columns is in the statement's SET list).
  await sql`create trigger substrate_attention_rules_notify
    after insert or delete or update of name, description, trigger_cron, condition_mode, condition, action_capability, action_payload_template,
      enabled, max_fires_per_day on substrate_attention_rules
    for each row execute function svc_substrate_notify('attention_rules')`.execute(db);
  await sql`create trigger substrate_attention_rule_firings_notify after insert or update or delete on substrate_attention_rule_firings
    for each row execute function svc_substrate_notify('attention_rule_firings')`.execute(db);
  // row_query reads a user's rows in creation order.
  for (const table of ['substrate_decisions', 'substrate_commitments', 'substrate_learnings', 'substrate_entities']) {
    await sql`create index ${sql.raw(`${table}_created_idx`)} on ${sql.table(table)} (user_id, created_at, id)`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table substrate_attention_rule_usage, substrate_attention_rule_firings, substrate_attention_rules`.execute(db);
}
