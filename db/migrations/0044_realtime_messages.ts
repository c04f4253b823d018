import { sql, type Kysely } from 'kysely';

/*
 * Realtime messages too large for a NOTIFY (src/realtime/hub.ts): the api process that publishes one writes it here and
 * NOTIFYs its id on svc_realtime; the processes with subscribers on its topic read it by id. Rows are transient: the
 * publishers delete those older than a minute (MESSAGE_KEEP_SECONDS), so app_id names the app for a reader of the table
 * without a foreign key (an app deleted meanwhile must not fail a broadcast of its last second).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table realtime_messages (
      id uuid primary key,
      app_id text not null,
      body text not null,
      created_at timestamptz not null default now()
    );
    create index realtime_messages_created_idx on realtime_messages(created_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table realtime_messages`.execute(db);
}
