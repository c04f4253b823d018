// Crash recovery for graphile-worker jobs. graphile-worker frees the lock of a job whose process died (kill -9,
// out of memory, a lost machine) only after 4 hours. Here every worker process records a heartbeat for its
// graphile-worker pool (whose id locks the jobs it runs), and releases the jobs locked by pools whose heartbeat
// stopped longer ago than SVC_WORKER_STALE_AFTER_SECONDS, so those jobs run again within minutes. A worker declared gone by mistake (an
// event loop stalled past the threshold) means a job runs twice at once, which tasks already tolerate: they are
// written to be safe to run twice (DESIGN.md section 8).
import { EventEmitter } from 'node:events';
import { sql, type QueryExecutorProvider } from 'kysely';
import type { WorkerEvents } from 'graphile-worker';
import type { Logger } from 'pino';

/** Beats per threshold: a few missed beats (a slow query, a pause) never make a live worker look gone. */
const BEATS_PER_THRESHOLD = 4;

const staleBefore = (staleAfterSeconds: number) => sql`now() - make_interval(secs => ${staleAfterSeconds})`;

/**
 * Releases the jobs (only the job with `jobKey`, when given) locked for longer than the threshold by workers with no
 * heartbeat within it, through graphile-worker's force_unlock_workers: the function WorkerUtils.forceUnlockWorkers
 * calls, here in the caller's transaction. The jobs become runnable at once; a crashed attempt counts as one of
 * their attempts, so a job that keeps killing its worker still runs out of them. Returns the workers released.
 */
export async function releaseGoneWorkers(db: QueryExecutorProvider, staleAfterSeconds: number, jobKey?: string): Promise<string[]> {
  const stale = staleBefore(staleAfterSeconds);
  const { rows } = await sql<{ locked_by: string }>`
    select distinct j.locked_by from graphile_worker.jobs j
    where j.locked_at < ${stale} ${jobKey === undefined ? sql`` : sql`and j.key = ${jobKey}`}
      and not exists (select 1 from worker_heartbeats h where h.worker_id = j.locked_by and h.last_seen >= ${stale})`.execute(db);
  const ids = rows.map((r) => r.locked_by);
  if (ids.length) await sql`select graphile_worker.force_unlock_workers(${ids}::text[])`.execute(db);
  return ids;
}

export interface WorkerLivenessDeps {
  db: QueryExecutorProvider;
  staleAfterSeconds: number;
  log: Logger;
}

/**
 * The heartbeat of one worker process: pass `events` to graphile-worker's run() (its pool is learnt from
 * 'pool:create'), call start() once it runs and stop() after the runner stopped.
 */
export class WorkerLiveness {
  readonly events: WorkerEvents = new EventEmitter();
  /** Ids that lock this process's jobs: its graphile-worker pool's (one per run()). */
  readonly #workerIds: string[] = [];
  readonly #db: QueryExecutorProvider;
  readonly #staleAfterSeconds: number;
  readonly #log: Logger;
  #timer: NodeJS.Timeout | undefined;
  #beating: Promise<void> | undefined;

  constructor(deps: WorkerLivenessDeps) {
    this.#db = deps.db;
    this.#staleAfterSeconds = deps.staleAfterSeconds;
    this.#log = deps.log;
    // graphile-worker (0.18) locks every job with its worker pool's id, not with the id of the worker running it: the
    // pool's id is what a heartbeat must name, or a live worker's job held past the threshold would be released and
    // run a second time at once.
    this.events.on('pool:create', ({ workerPool }) => this.#workerIds.push(workerPool.id));
  }

  /** Beats now and then BEATS_PER_THRESHOLD times per threshold; each beat also releases the jobs of gone workers. */
  start(): void {
    this.#timer = setInterval(() => this.#beat(), (this.#staleAfterSeconds * 1000) / BEATS_PER_THRESHOLD);
    this.#beat();
  }

  /** Removes this process's heartbeats: its runner has stopped and released its jobs. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#beating;
    await sql`delete from worker_heartbeats where worker_id = any(${this.#workerIds}::text[])`.execute(this.#db);
  }

  #beat(): void {
    // A beat still waiting on the database is not doubled up.
    this.#beating ??= this.#beatAndRelease()
      .catch((err: unknown) => this.#log.error({ err }, 'worker heartbeat failed'))
      .finally(() => (this.#beating = undefined));
  }

  async #beatAndRelease(): Promise<void> {
    await sql`insert into worker_heartbeats (worker_id, last_seen) select unnest(${this.#workerIds}::text[]), now()
      on conflict (worker_id) do update set last_seen = excluded.last_seen`.execute(this.#db);
    const gone = await releaseGoneWorkers(this.#db, this.#staleAfterSeconds);
    if (gone.length) this.#log.warn({ workers: gone }, 'released the jobs of workers whose heartbeat stopped');
    // Rows of gone workers: none of their jobs is locked any more, so nothing needs them.
    await sql`delete from worker_heartbeats where last_seen < ${staleBefore(this.#staleAfterSeconds)}`.execute(this.#db);
  }
}
