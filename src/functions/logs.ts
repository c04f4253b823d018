// Invocation logs and metrics: one row per invocation in function_logs, counters on the function row, an hourly
// rollup (metrics.ts), and the app's lambda_invocations meter. A process the platform stopped outside any invocation (its CPU use) gets a row of
// trigger 'runtime' that says why; it is no invocation, so it counts toward neither the counters nor the meter. Rows are written in small batches (one insert, one counter update and one
// meter upsert per app per batch) so logging does not cost a round trip per invocation; readers flush first.
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import { recordUsage } from '../usage/meters.ts';
import type { ConsoleLine, LogEntryView } from './types.ts';
import type { ControlDatabase } from '../db/types.ts';
import { hourlyTotals, upsertHourly } from './metrics.ts';
import { budgetColumns, nextCursor, withinBudget } from '../db/byte-pages.ts';

export const INVOCATIONS_METER = 'lambda_invocations';

export interface InvocationRecord {
  functionId: string;
  appId: string;
  trigger: 'http' | 'test' | 'cron' | 'websocket' | 'runtime';
  method: string;
  path: string;
  statusCode: number;
  durationMs: number;
  memoryMb: number | null;
  error: string | null;
  console: ConsoleLine[];
  at: Date;
}

/** Flush when this many rows wait, or this long after the first one arrived. */
const BATCH_ROWS = 500;
const BATCH_DELAY_MS = 100;
const MAX_PATH = 2000;
const MAX_ERROR = 4000;

export class InvocationLog {
  readonly #db: Kysely<ControlDatabase>;
  readonly #log: Logger;
  #pending: InvocationRecord[] = [];
  #timer: NodeJS.Timeout | undefined;
  #chain: Promise<void> = Promise.resolve();

  constructor(db: Kysely<ControlDatabase>, log: Logger) {
    this.#db = db;
    this.#log = log;
  }

  add(record: InvocationRecord): void {
    this.#pending.push(record);
    if (this.#pending.length >= BATCH_ROWS) void this.flush();
    else this.#timer ??= setTimeout(() => void this.flush(), BATCH_DELAY_MS);
  }

  /** Writes everything recorded so far; resolves when it is in the database (or was dropped after an error). */
  flush(): Promise<void> {
    if (this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    const batch = this.#pending;
    this.#pending = [];
    this.#chain = this.#chain.then(() => (batch.length ? this.#write(batch) : undefined));
    return this.#chain;
  }

  async #write(batch: InvocationRecord[]): Promise<void> {
    const rows = batch.map((r) => {
      const path = r.path.length > MAX_PATH ? r.path.slice(0, MAX_PATH) : r.path;
      const error = r.error === null ? null : r.error.slice(0, MAX_ERROR);
      const console = r.console.length ? JSON.stringify(r.console) : '[]';
      return {
        function_id: r.functionId,
        app_id: r.appId,
        trigger: r.trigger,
        method: r.method,
        path,
        status_code: r.statusCode,
        duration_ms: r.durationMs,
        memory_mb: r.memoryMb,
        error,
        level: r.error !== null || r.statusCode >= 500 ? 'error' : 'info',
        console,
        bytes: Buffer.byteLength(console) + (error === null ? 0 : Buffer.byteLength(error)) + Buffer.byteLength(path),
        at_ms: r.at.getTime(),
      };
    });
    const counters = new Map<string, { id: string; n: number; e: number; d: number; lastMs: number }>();
    const perApp = new Map<string, number>();
    const counted: typeof rows = [];
    for (const row of rows) {
      if (row.trigger === 'runtime') continue;
      counted.push(row);
      let c = counters.get(row.function_id);
      if (!c) counters.set(row.function_id, (c = { id: row.function_id, n: 0, e: 0, d: 0, lastMs: row.at_ms }));
      c.n++;
      if (row.level === 'error') c.e++;
      c.d += row.duration_ms;
      if (row.at_ms > c.lastMs) c.lastMs = row.at_ms;
      perApp.set(row.app_id, (perApp.get(row.app_id) ?? 0) + 1);
    }
    const functionCounters = [...counters.values()].map(({ lastMs, ...c }) => ({ ...c, last: new Date(lastMs).toISOString() }));
    const hourly = hourlyTotals(counted);
    try {
      await this.#db.transaction().execute(async (tx) => {
        // Rows of functions deleted meanwhile are dropped rather than failing the batch on the foreign key. One typed
        // array per column: Postgres parses them several times faster than the same rows as a JSON document.
        const column = <K extends keyof (typeof rows)[number]>(key: K) => rows.map((r) => r[key]);
        // Integer columns go as array literals built here: pg would quote and escape each number of the batch.
        const ints = (key: 'status_code' | 'duration_ms' | 'memory_mb' | 'bytes' | 'at_ms') => integerArray(rows.map((r) => r[key]));
        await sql`
          insert into function_logs (function_id, app_id, trigger, method, path, status_code, duration_ms, memory_mb, error, level, console, bytes, created_at)
          select r.function_id, r.app_id, r.trigger, r.method, r.path, r.status_code, r.duration_ms, r.memory_mb, r.error, r.level, r.console, r.bytes,
            timestamptz 'epoch' + r.at_ms * interval '1 millisecond'
          from unnest(${column('function_id')}::uuid[], ${column('app_id')}::text[], ${column('trigger')}::text[], ${column('method')}::text[],
            ${column('path')}::text[], ${ints('status_code')}::int[], ${ints('duration_ms')}::int[], ${ints('memory_mb')}::int[],
            ${column('error')}::text[], ${column('level')}::text[], ${column('console')}::jsonb[], ${ints('bytes')}::int[], ${ints('at_ms')}::bigint[])
            with ordinality as r(function_id, app_id, trigger, method, path, status_code, duration_ms, memory_mb, error, level, console, bytes, at_ms, seq)
          where exists (select 1 from functions f where f.id = r.function_id)
          order by r.seq`.execute(tx);
        await sql`
          update functions f set invocations = f.invocations + c.n, error_count = f.error_count + c.e,
            total_duration_ms = f.total_duration_ms + c.d, last_invocation_at = greatest(f.last_invocation_at, c.last)
          from jsonb_to_recordset(${JSON.stringify(functionCounters)}::jsonb) as c(id uuid, n int, e int, d bigint, last timestamptz)
          where f.id = c.id`.execute(tx);
        await upsertHourly(tx, hourly);
      });
    } catch (err) {
      this.#log.error({ err, rows: rows.length }, 'writing function logs failed; the batch is dropped');
    }
    for (const [appId, n] of perApp) {
      await recordUsage(this.#db, appId, INVOCATIONS_METER, n).catch((err: unknown) =>
        this.#log.error({ err, app_id: appId }, 'recording lambda_invocations failed'),
      );
    }
  }

  async close(): Promise<void> {
    await this.flush();
  }
}

/** A Postgres array literal of integers (null as NULL): what pg would send for the array, without quoting each one. */
function integerArray(values: ReadonlyArray<number | null>): string {
  let text = '{';
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (i > 0) text += ',';
    text += v === null || v === undefined ? 'NULL' : String(v);
  }
  return text + '}';
}

/** Keeps the newest `keep` log rows of every function (the retention cron). Returns the number deleted. */
export async function trimLogs(db: Kysely<ControlDatabase>, keep: number): Promise<number> {
  const result = await sql`
    delete from function_logs l
    using (
      select f.id as function_id,
        (select id from function_logs x where x.function_id = f.id order by x.id desc offset ${keep} limit 1) as cutoff
      from functions f
    ) c
    where l.function_id = c.function_id and c.cutoff is not null and l.id <= c.cutoff`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

export interface LogQuery {
  limit: number;
  since?: Date | undefined;
  /** Entries before this date-time only (exclusive). */
  until?: Date | undefined;
  /** Entries older than the entry with this id only: the next page after its last entry. */
  before?: string | undefined;
  level?: 'error' | 'info' | undefined;
}

/**
 * What one answer of functions_logs carries at most: the console output, error and path of its entries, counted in
 * bytes of their JSON text (the row's `bytes`, written with it) and summed in SQL, so that no answer (nor its parsing
 * and serialising here) grows with what a function logs. An entry is at most ~64 KB of console output
 * (LIMITS.consoleMaxBytes, in characters), so the first entry is always returned whole.
 */
export const LOG_ANSWER_MAX_BYTES = 1024 * 1024;

export interface LogPage {
  logs: LogEntryView[];
  /** The `before` of the next page (the last entry's id) while older matching entries remain, else null. */
  next_before: string | null;
}

/** One function's log rows, newest first, as functions_logs shows them (flush first to include pending rows). */
export async function readLogs(db: Kysely<ControlDatabase>, functionId: string, q: LogQuery): Promise<LogPage> {
  let query = db
    .selectFrom('function_logs')
    .select(['id', 'trigger', 'method', 'path', 'status_code', 'duration_ms', 'memory_mb', 'error', 'level', 'console', 'created_at'])
    .select(budgetColumns(sql`coalesce(bytes, octet_length(console::text) + coalesce(octet_length(error), 0) + octet_length(path))`, sql`id desc`))
    .where('function_id', '=', functionId);
  if (q.since) query = query.where('created_at', '>=', q.since);
  if (q.until) query = query.where('created_at', '<', q.until);
  if (q.before) query = query.where('id', '<', q.before as never);
  if (q.level) query = query.where('level', '=', q.level);
  const page = query.orderBy('id', 'desc').limit(q.limit);
  const rows = await db.selectFrom(page.as('p')).selectAll().where(withinBudget(LOG_ANSWER_MAX_BYTES)).orderBy('id', 'desc').execute();
  return {
    logs: rows.map((r) => ({
      id: String(r.id),
      trigger: r.trigger,
      method: r.method,
      path: r.path,
      status_code: r.status_code,
      duration_ms: r.duration_ms,
      memory_mb: r.memory_mb,
      error: r.error,
      level: r.level,
      // Written by InvocationLog from ConsoleLine[] only.
      console: r.console as unknown as ConsoleLine[],
      created_at: r.created_at.toISOString(),
    })),
    next_before: nextCursor(rows, (r) => String(r.id)),
  };
}
