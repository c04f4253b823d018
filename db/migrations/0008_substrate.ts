import { sql, type Kysely } from 'kysely';

/**
 * The substrate, part 1: each account is an org whose substrate users own their records; every write is an action in
 * the ledger (substrate_actions), proposed, decided by policy (or a human), executed in the transaction that updates
 * its row, and undoable through what `undo` keeps.
 *
 * - `substrate_users`: one default user per account (created on first use); a substrate key may name another.
 * - `substrate_actions`: the ledger. `idempotency_key` is unique per user and kept forever.
 * - `substrate_decisions`, `_commitments`, `_learnings`, `_principles`: the memory rows capabilities write, each with
 *   a generated tsvector for full-text search.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table substrate_users (
      id uuid primary key default gen_random_uuid(),
      account_id uuid not null references accounts(id) on delete cascade,
      name text not null,
      is_default boolean not null default false,
      yolo_mode boolean not null default false,
      created_at timestamptz not null default now()
    );
    create unique index substrate_users_default_idx on substrate_users(account_id) where is_default;
    alter table substrate_keys add column substrate_user_id uuid references substrate_users(id) on delete cascade;

    create table substrate_actions (
      id text primary key,
      user_id uuid not null references substrate_users(id) on delete cascade,
      capability text not null,
      payload jsonb not null,
      proposer_kind text not null check (proposer_kind in ('human', 'agent')),
      source_app_id text,
      source_rule_id text,
      status text not null check (status in ('proposed', 'executed', 'rejected')),
      verdict jsonb not null,
      requires_approval boolean not null,
      skip_approval boolean not null default false,
      result jsonb,
      undo jsonb,
      reverted_by text,
      reject_reason text,
      -- how the human decided: 'rest' (their substrate key) or 'mcp_elicitation' (confirmed at an agent's MCP client)
      decided_via text check (decided_via in ('rest', 'mcp_elicitation')),
      idempotency_key text,
      -- millisecond precision, as the API returns it, so that \`before\` taken from a row is exact
      created_at timestamptz not null default date_trunc('milliseconds', now()),
      decided_at timestamptz,
      executed_at timestamptz,
      unique (user_id, idempotency_key)
    );
    create index substrate_actions_user_idx on substrate_actions(user_id, created_at desc, id desc);

    create table substrate_decisions (
      id text primary key,
      user_id uuid not null references substrate_users(id) on delete cascade,
      title text not null,
      kind text not null,
      rationale text,
      salience text not null,
      status text not null default 'active',
      supersedes text,
      source_artifact_id text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      tsv tsvector generated always as (to_tsvector('english', title || ' ' || coalesce(rationale, ''))) stored
    );
    create table substrate_commitments (
      id text primary key,
      user_id uuid not null references substrate_users(id) on delete cascade,
      description text not null,
      status text not null,
      from_entity text,
      to_entity text,
      amount numeric,
      unit text,
      due_at timestamptz,
      source_artifact_id text,
      attrs jsonb not null default '{}',
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      tsv tsvector generated always as (to_tsvector('english', description)) stored
    );
    create table substrate_learnings (
      id text primary key,
      user_id uuid not null references substrate_users(id) on delete cascade,
      title text not null,
      description text not null,
      resolution_taken text,
      related_decision_id text,
      source_artifact_id text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      tsv tsvector generated always as (to_tsvector('english', title || ' ' || description || ' ' || coalesce(resolution_taken, ''))) stored
    );
    create table substrate_principles (
      id text primary key,
      user_id uuid not null references substrate_users(id) on delete cascade,
      title text not null,
      applies_to jsonb not null,
      constraint_spec jsonb not null,
      rationale text,
      salience text not null,
      status text not null default 'active',
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index substrate_principles_active_idx on substrate_principles(user_id) where status = 'active';
  `.execute(db);
  for (const table of ['decisions', 'commitments', 'learnings']) {
    await sql`create index ${sql.raw(`substrate_${table}_tsv_idx`)} on ${sql.table(`substrate_${table}`)} using gin (tsv)`.execute(db);
    await sql`create index ${sql.raw(`substrate_${table}_user_idx`)} on ${sql.table(`substrate_${table}`)} (user_id, updated_at desc)`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop table substrate_principles, substrate_learnings, substrate_commitments, substrate_decisions, substrate_actions;
    alter table substrate_keys drop column substrate_user_id;
    drop table substrate_users;
  `.execute(db);
}
