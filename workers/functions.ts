import { z } from 'zod';
import type { Task } from 'graphile-worker';
import type { WorkerServices } from './index.ts';

/** graphile-worker's crontab payload carries the slot it was scheduled for; tests (and operators) may pass `now`. */
const TickPayload = z
  .object({
    now: z.string().datetime({ offset: true }).optional(),
    _cron: z.object({ ts: z.string() }).partial().optional(),
  })
  .passthrough();

/**
 * Cron, every minute: enqueues one functions_run_cron job per due slot of every cron function (job key
 * `fncron:<function id>:<slot>`), advancing each function's cursor in the same transaction.
 */
export const functionsCronTick = (s: WorkerServices): Task => async (payload, helpers) => {
  const p = TickPayload.parse(payload ?? {});
  const ts = p.now ?? p._cron?.ts;
  const now = ts && !Number.isNaN(Date.parse(ts)) ? new Date(ts) : new Date();
  const { enqueued } = await s.functions.cronTick(now);
  if (enqueued) helpers.logger.debug(`enqueued ${enqueued} cron function slots`);
};

const RunPayload = z.object({ function_id: z.string().uuid(), scheduled_at: z.string().min(1) });

/**
 * One slot of one cron function. The function's own failure (thrown, timeout, ...) is logged in its
 * invocation log and is not retried. Only failures before it ran (e.g. no process could start) throw, so
 * graphile-worker retries those. A slot whose worker died mid-run runs again once the worker counts as gone
 * (src/jobs/liveness.ts): at least once, with the same x-svc-scheduled-at, so a function can skip a repeat.
 */
export const functionsRunCron = (s: WorkerServices): Task => async (payload) => {
  const p = RunPayload.parse(payload);
  await s.functions.runCron(p.function_id, p.scheduled_at);
};

/** Cron: keeps the newest SVC_FUNCTIONS_LOG_RETENTION invocation logs per function. */
export const functionsLogsTrim = (s: WorkerServices): Task => async (_payload, helpers) => {
  const n = await s.functions.trimLogs();
  if (n) helpers.logger.debug(`trimmed ${n} function log rows`);
};
