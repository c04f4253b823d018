import { sql, type Kysely } from 'kysely';

/**
 * Fixed one-minute rate-limit windows, shared by every api instance through the control database.
 * Unlogged: counters are worth no WAL (a crash or failover simply resets them, which is harmless), and
 * every login attempt writes here. The window_start index serves the purge cron (src/auth/jobs.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create unlogged table rate_limits (
      bucket text not null,
      window_start timestamptz not null,
      hits int not null default 1,
      primary key (bucket, window_start)
    );
    create index rate_limits_window_idx on rate_limits (window_start);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table rate_limits`.execute(db);
}
