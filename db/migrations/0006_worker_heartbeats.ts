import { sql, type Kysely } from 'kysely';

/**
 * One row per graphile-worker worker id, refreshed by its process every few seconds (src/jobs/liveness.ts).
 * A job locked by a worker whose row is missing or stale belongs to a dead process and is unlocked, so that it
 * runs again within minutes instead of graphile-worker's own 4 hours.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table worker_heartbeats (
      worker_id text primary key,
      last_seen timestamptz not null default now()
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table worker_heartbeats`.execute(db);
}
