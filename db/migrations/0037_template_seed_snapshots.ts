import { sql, type Kysely } from 'kysely';

/*
 * Seed rows pinned when a template is published (src/templates/seed.ts): a clone copies these, never the template's
 * live tables, so rows written after publishing and end users' rows do not cross.
 *
 * - template_seed_snapshots: one per publication that has seed tables. `tables` lists them in copy order, each
 *   `{ name, rows, bytes, batches, columns }` (the columns pinned, user_id never among them); `bytes` is the rows' JSON
 *   text, at most the seed limit; `digest` a hash of the batches, so that a template published again with the same
 *   rows keeps its version. Deleted with the app, and when neither its template nor an unfinished clone refers to it.
 * - template_seed_batches: the rows of one table of a snapshot as JSON text in batches of about 1 MiB (a row longer
 *   than a piece is split across pieces), so that no step holds a whole seed in memory.
 * - templates.seed_snapshot_id: the snapshot a clone asked for now copies (null: no seed rows).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table template_seed_snapshots (
      id uuid primary key default gen_random_uuid(),
      app_id text not null references apps(id) on delete cascade,
      tables jsonb not null,
      bytes bigint not null,
      digest text not null,
      created_at timestamptz not null default now()
    );
    create index template_seed_snapshots_app_idx on template_seed_snapshots (app_id);

    create table template_seed_batches (
      snapshot_id uuid not null references template_seed_snapshots(id) on delete cascade,
      table_name text not null,
      ord integer not null,
      data text not null,
      primary key (snapshot_id, table_name, ord)
    );

    alter table templates add column seed_snapshot_id uuid references template_seed_snapshots(id) on delete set null;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table templates drop column seed_snapshot_id;
    drop table template_seed_batches;
    drop table template_seed_snapshots;
  `.execute(db);
}
