import { sql, type Kysely } from 'kysely';

/**
 * Hourly rollup of each function's invocations (functions_metrics): upserted in the same transaction as the
 * function_logs rows, which keep only a function's newest 1,000 entries and so cannot answer for last month. Days are
 * sums of hours. Backfilled from the log rows still kept; 'runtime' rows are no invocation, as for the counters.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table function_metrics_hourly (
      function_id uuid not null references functions(id) on delete cascade,
      hour timestamptz not null,
      invocations integer not null,
      errors integer not null,
      total_duration_ms bigint not null,
      max_duration_ms integer not null,
      primary key (function_id, hour)
    );
    insert into function_metrics_hourly (function_id, hour, invocations, errors, total_duration_ms, max_duration_ms)
    select function_id, date_trunc('hour', created_at at time zone 'UTC') at time zone 'UTC', count(*), count(*) filter (where level = 'error'),
      sum(duration_ms), max(duration_ms)
    from function_logs where trigger <> 'runtime'
    group by 1, 2;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table function_metrics_hourly`.execute(db);
}
