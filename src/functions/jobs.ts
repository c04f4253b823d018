// The functions area's jobs: the cron dispatcher's tick, one slot of a cron function, and the log trim.
import { z } from 'zod';
import { cronNow, defineCron, defineJob, type JobContext } from '../core/jobs.ts';
import type { FunctionsService } from './service.ts';

type Deps = JobContext<{ functions: FunctionsService }>;

/**
 * Cron, every minute: enqueues one functions_run_cron job per due slot of every cron function (job key
 * `fncron:<function id>:<slot>`), advancing each function's cursor in the same transaction.
 */
export const functionsCronTick = defineCron({
  name: 'functions_cron_tick',
  cron: '* * * * *',
  handler: async (p, { deps, logger }: Deps) => {
    const { enqueued } = await deps.functions.cronTick(cronNow(p));
    if (enqueued) logger.debug(`enqueued ${enqueued} cron function slots`);
  },
});

/**
 * One slot of one cron function. The function's own failure (thrown, timeout, ...) is logged in its
 * invocation log and is not retried. Only failures before it ran (e.g. no process could start) throw, so
 * graphile-worker retries those: five attempts, e^1 to e^4 seconds apart (about 85 s in all), so that a minute of
 * overload does not lose a slot. A slot whose worker died mid-run runs again once the worker counts as gone
 * (src/jobs/liveness.ts): at least once, with the same x-svc-scheduled-at, so a function can skip a repeat.
 */
export const functionsRunCron = defineJob({
  name: 'functions_run_cron',
  payload: z.object({ function_id: z.string().uuid(), scheduled_at: z.string().min(1) }),
  maxAttempts: 5,
  handler: async (p, { deps }: Deps) => {
    await deps.functions.runCron(p.function_id, p.scheduled_at);
  },
});

/** Cron: keeps the newest SVC_FUNCTIONS_LOG_RETENTION invocation logs per function. */
export const functionsLogsTrim = defineCron({
  name: 'functions_logs_trim',
  cron: '*/5 * * * *',
  handler: async (_payload, { deps, logger }: Deps) => {
    const n = await deps.functions.trimLogs();
    if (n) logger.debug(`trimmed ${n} function log rows`);
  },
});
