// Jobs are defined like tools: one definition holds the task name, its payload schema, its handler and its cron
// schedule, so the name is written once. The worker builds its task list and crontab from the definitions
// (workers/index.ts); enqueue/enqueueSql are the only writers of graphile_worker.add_job, so every payload is checked
// against the schema its handler parses with.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { z } from 'zod';

/** What a handler gets besides its payload. `D` is the services it uses, given by the worker (core knows no area). */
export interface JobContext<D> {
  deps: D;
  /** This run's attempt (1-based) and the job's limit: the last attempt may record a failure instead of throwing. */
  attempt: { number: number; max: number };
  logger: JobLogger;
  /** A query on the worker's own control-database pool, for jobs that are one SQL statement. */
  query<R extends Record<string, any> = Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ rows: R[]; rowCount: number | null }>;
}

export interface JobLogger {
  debug(message: string): void;
  info(message: string): void;
}

export interface JobSpec<P extends z.ZodType, D> {
  /** The graphile-worker task name: snake_case, prefixed with its area. */
  name: string;
  payload: P;
  handler: (payload: z.output<P>, ctx: JobContext<D>) => Promise<void>;
  /** Crontab schedule (UTC) when the worker itself runs the job on a schedule. */
  cron?: string;
  /** Crontab `fill`: how far back a missed run is made up after downtime (e.g. '1d'). */
  backfill?: string;
  /** Attempts of an enqueued job unless the enqueue says otherwise; the crontab's `max` for a cron job. */
  maxAttempts?: number;
}

export interface JobDefinition<P extends z.ZodType, D> extends JobSpec<P, D> {
  /** Parses a stored payload with the job's schema, then runs the handler: what the worker's task calls. */
  run: (payload: unknown, ctx: JobContext<D>) => Promise<void>;
}

/**
 * A job as the worker holds it, whatever its payload. A list typed `RunnableJob<Services>[]` only accepts jobs whose
 * `D` those services satisfy (`run` is a property, so its context is checked contravariantly).
 */
export interface RunnableJob<D> {
  name: string;
  cron?: string;
  backfill?: string;
  maxAttempts?: number;
  run: (payload: unknown, ctx: JobContext<D>) => Promise<void>;
}

export function defineJob<P extends z.ZodType, D>(spec: JobSpec<P, D>): JobDefinition<P, D> {
  return { ...spec, run: (payload, ctx) => spec.handler(spec.payload.parse(payload ?? {}), ctx) };
}

/**
 * A platform cron: it gets graphile-worker's crontab payload and one attempt per slot (the next slot runs it again, so
 * a failure is not retried on top of that).
 */
export function defineCron<D>(spec: Omit<JobSpec<typeof CronPayload, D>, 'payload' | 'maxAttempts'> & { cron: string }): JobDefinition<typeof CronPayload, D> {
  return defineJob({ ...spec, payload: CronPayload, maxAttempts: 1 });
}

export interface EnqueueOptions {
  jobKey?: string;
  jobKeyMode?: 'replace' | 'preserve_run_at' | 'unsafe_dedupe';
  runAt?: Date;
  maxAttempts?: number;
  queueName?: string;
  priority?: number;
}

/** Options of a set-based enqueue: each may be a SQL expression over the statement's rows. */
export type EnqueueSqlOptions = { [K in keyof EnqueueOptions]?: EnqueueOptions[K] | RawBuilder<unknown> };

/**
 * Enqueues one job on `db`: pass the transaction of the write that causes the job, so both commit or neither does
 * (the outbox). The payload is validated first: a bad one throws before the database is touched.
 */
export async function enqueue<P extends z.ZodType, DB>(
  db: Kysely<DB>,
  job: JobDefinition<P, never>,
  payload: NoInfer<z.input<P>>,
  opts: EnqueueOptions = {},
): Promise<void> {
  job.payload.parse(payload);
  await enqueueSql(job, sql`${JSON.stringify(payload)}::json`, opts).execute(db);
}

/**
 * `select graphile_worker.add_job(...)` for a payload built in SQL (e.g. `json_build_object('id', id)` over the rows
 * of a CTE): append `from <rows>` to enqueue one job per row in the statement that writes them. Such a payload is
 * only checked by the handler's parse.
 */
export function enqueueSql(job: RunnableJob<never>, payload: RawBuilder<unknown>, opts: EnqueueSqlOptions = {}): RawBuilder<unknown> {
  const maxAttempts = opts.maxAttempts ?? job.maxAttempts;
  const args = [
    sql`${job.name}::text`,
    payload,
    ...named('job_key', opts.jobKey, 'text'),
    ...named('job_key_mode', opts.jobKeyMode, 'text'),
    ...named('run_at', opts.runAt, 'timestamptz'),
    ...named('max_attempts', maxAttempts, 'int'),
    ...named('queue_name', opts.queueName, 'text'),
    ...named('priority', opts.priority, 'int'),
  ];
  return sql`select graphile_worker.add_job(${sql.join(args)})`;
}

/** A named argument of add_job, left out when not given so that graphile-worker's default applies. */
function named(param: string, value: unknown, type: string): RawBuilder<unknown>[] {
  return value === undefined ? [] : [sql`${sql.raw(param)} => ${value}::${sql.raw(type)}`];
}

/** One crontab line per scheduled job (graphile-worker's syntax: `<schedule> <task> ?<options>`). */
export function crontabOf(jobs: readonly RunnableJob<never>[]): string {
  return jobs.flatMap((job) => (job.cron === undefined ? [] : [`${job.cron} ${job.name}${cronOptions(job)}`])).join('\n');
}

function cronOptions(job: RunnableJob<never>): string {
  const opts = [job.backfill && `fill=${job.backfill}`, job.maxAttempts !== undefined && `max=${job.maxAttempts}`].filter(Boolean);
  return opts.length ? ` ?${opts.join('&')}` : '';
}

/** The payload graphile-worker's crontab gives a scheduled run (the slot in `_cron.ts`); tests and operators may pass `now`. */
export const CronPayload = z
  .object({
    now: z.string().datetime({ offset: true }).optional(),
    _cron: z.object({ ts: z.string() }).partial().optional(),
  })
  .passthrough();

/** The time a scheduled run stands for: `now`, else the crontab slot, else the clock. */
export function cronNow(p: z.output<typeof CronPayload>): Date {
  const ts = p.now ?? p._cron?.ts;
  return ts && !Number.isNaN(Date.parse(ts)) ? new Date(ts) : new Date();
}
