import { sql, type Kysely } from 'kysely';

/**
 * Substrate, part 1: source artifacts and daily snapshots.
 *
 * - `substrate_artifacts` (`art_` ids): the documents, mails, transcripts... memory rows cite. `(user_id,
 *   external_system, external_id)` is unique when both are set: upsert_source_artifact resolves by it (capability
 *   rule 2). `tsv` (title, summary, content; english) is the full-text index of the artifact list and memory search.
 * - Capability rule 3: `source_artifact_id` of commitments, and likewise of decisions and learnings, references an
 *   artifact; deleting the artifact sets it to null. Values written before this migration (there were no artifacts
 *   yet, so they named nothing) are cleared first. Partial indexes on the column serve memory/list?source_artifact_id
 *   and the ON DELETE SET NULL lookups.
 * - `substrate_snapshots`: one row of counters per user and UTC day, written by the substrate_snapshots cron (and on
 *   demand by GET snapshots when today's is missing). Re-running for a day replaces that day's counters.
 * - `(user_id, updated_at desc, id desc)` indexes on the memory tables: the cursor order of memory/list and the
 *   most-recent listing of memory search.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table substrate_artifacts (
      id text primary key,
      user_id uuid not null references substrate_users(id) on delete cascade,
      kind text not null,
      external_system text,
      external_id text,
      title text not null,
      summary text,
      content text,
      url text,
      storage_object_id text,
      links jsonb not null default '{}' check (jsonb_typeof(links) = 'object'),
      attrs jsonb not null default '{}' check (jsonb_typeof(attrs) = 'object'),
      source_app_id text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      tsv tsvector generated always as (
        to_tsvector('english', title || ' ' || coalesce(summary, '') || ' ' || coalesce(content, ''))
      ) stored
    );
    create unique index substrate_artifacts_external_idx on substrate_artifacts (user_id, external_system, external_id)
      where external_system is not null and external_id is not null;
    create index substrate_artifacts_user_idx on substrate_artifacts (user_id, updated_at desc, id desc);
    create index substrate_artifacts_kind_idx on substrate_artifacts (user_id, kind, updated_at desc);
    create index substrate_artifacts_tsv_idx on substrate_artifacts using gin (tsv);

    create table substrate_snapshots (
      user_id uuid not null references substrate_users(id) on delete cascade,
      snapshot_date date not null,
      entity_count integer not null,
      decision_count integer not null,
      commitment_count integer not null,
      learning_count integer not null,
      principle_count integer not null,
      artifact_count integer not null,
      open_commitment_count integer not null,
      action_count integer not null,
      pending_approval_count integer not null,
      taken_at timestamptz not null default now(),
      primary key (user_id, snapshot_date)
    );
  `.execute(db);
  for (const table of ['decisions', 'commitments', 'learnings']) {
    const t = sql.table(`substrate_${table}`);
    await sql`update ${t} m set source_artifact_id = null
      where source_artifact_id is not null and not exists (select 1 from substrate_artifacts a where a.id = m.source_artifact_id)`.execute(db);
    await sql`alter table ${t} add constraint ${sql.raw(`substrate_${table}_artifact_fk`)}
      foreign key (source_artifact_id) references substrate_artifacts(id) on delete set null`.execute(db);
    await sql`create index ${sql.raw(`substrate_${table}_artifact_idx`)} on ${t} (source_artifact_id) where source_artifact_id is not null`.execute(db);
    await sql`create index ${sql.raw(`substrate_${table}_cursor_idx`)} on ${t} (user_id, updated_at desc, id desc)`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['decisions', 'commitments', 'learnings']) {
    await sql`alter table ${sql.table(`substrate_${table}`)} drop constraint ${sql.raw(`substrate_${table}_artifact_fk`)}`.execute(db);
    await sql`drop index ${sql.raw(`substrate_${table}_artifact_idx`)}, ${sql.raw(`substrate_${table}_cursor_idx`)}`.execute(db);
  }
  await sql`drop table substrate_snapshots, substrate_artifacts`.execute(db);
}
