import { sql, type Kysely } from 'kysely';

/*
 * Stored broadcasts of private channels (realtime-js's `persist`), replayed to a join that asks with
 * `config.broadcast.replay` (src/realtime/stored.ts). A row lives until expires_at (at most 3 days) and goes with its app.
 * JSON payloads are kept as jsonb, bytes as bytea.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table realtime_stored (
      id uuid primary key,
      app_id text not null references apps(id) on delete cascade,
      topic text not null,
      event text not null,
      payload jsonb,
      bytes bytea,
      created_at timestamptz not null default clock_timestamp(),
      expires_at timestamptz not null,
      check ((payload is null) <> (bytes is null))
    );
    create index realtime_stored_topic_idx on realtime_stored(app_id, topic, created_at);
    create index realtime_stored_expires_idx on realtime_stored(expires_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table realtime_stored`.execute(db);
}
