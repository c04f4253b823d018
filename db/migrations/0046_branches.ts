import { sql, type Kysely } from 'kysely';

/*
 * Branches and governed change (src/branches/):
 * - apps.protected: changes to the app from agents (platform keys, OAuth clients, service keys) are refused; they go
 *   through a branch whose merge a person approves. A person signed in with the role changes it directly.
 * - app_branches: an app made as a branch of another (a clone of it, src/templates/clones.ts, whose template is the
 *   parent): `base` is the parent's state the branch started from (or was last merged at), the common ancestor of a
 *   merge's three-way diff; it goes with either app.
 * - branch_merges: one merge of a branch into its parent. `changes` is what the job applies (a partial schema
 *   definition, functions, the site), `plan` what a person reads, `production` the digest of the parent's state the
 *   plan was made against (the job refuses to apply over another). `proposed` waits for the substrate action
 *   `action_id`; `queued` and `running` are the job's; `merged` and `failed` are final.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table apps add column protected boolean not null default false;
    create table app_branches (
      app_id text primary key references apps(id) on delete cascade,
      parent_app_id text not null references apps(id) on delete cascade,
      account_id uuid not null references accounts(id) on delete cascade,
      clone_id uuid,
      base jsonb not null,
      data jsonb not null,
      idle_days integer not null,
      created_at timestamptz not null default now(),
      merged_at timestamptz
    );
    create index app_branches_parent_idx on app_branches(parent_app_id, created_at);
    create table branch_merges (
      id uuid primary key default gen_random_uuid(),
      account_id uuid not null references accounts(id) on delete cascade,
      parent_app_id text not null references apps(id) on delete cascade,
      branch_app_id text references apps(id) on delete set null,
      status text not null check (status in ('proposed', 'queued', 'running', 'merged', 'failed')),
      changes jsonb not null,
      plan jsonb not null,
      production text not null,
      branch_state jsonb not null,
      action_id text,
      proposed_by text not null,
      error text,
      created_at timestamptz not null default now(),
      finished_at timestamptz
    );
    create index branch_merges_parent_idx on branch_merges(parent_app_id, created_at);
    create index branch_merges_branch_idx on branch_merges(branch_app_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table branch_merges; drop table app_branches; alter table apps drop column protected`.execute(db);
}
