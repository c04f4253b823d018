// Schema plans off the event loop: one worker thread per process (plan-thread.ts), started by the first apply, one
// plan at a time. A plan that runs past PLAN_TIMEOUT_MS is refused and its thread replaced (a definition that costs
// that much to check is not one to apply); a thread that died is replaced at the next plan.
import { Worker } from 'node:worker_threads';
import { AppError, errors } from '../core/errors.ts';
import type { Catalog } from './catalog.ts';
import type { CanonicalDefaults } from './diff.ts';
import type { ChannelRule, SchemaDefinitionInput } from './definition.ts';
import type { PlanReply, PlanRequest } from './plan-thread.ts';
import type { FunctionRecord } from './functions.ts';

/** The longest a plan may take: measured worst cases of the SQL checks are about 125 ms. */
export const PLAN_TIMEOUT_MS = 5_000;
const THREAD = new URL('./plan-thread.ts', import.meta.url);

/**
 * Plans one app may have waiting or running: its applies already take turns on the app's lock, so more are dry runs,
 * and one tenant's stream of them must not keep every other app's applies waiting behind the thread.
 */
export const MAX_PLANS_PER_APP = 2;

let worker: Worker | undefined;
let queue: Promise<unknown> = Promise.resolve();
let nextId = 0;
const pending = new Map<string, number>();

/** The statements of the plan (the same as plan.ts's planSchema), computed on the plan thread for `appId`. */
export function planOffThread(
  appId: string,
  schema: SchemaDefinitionInput,
  catalog: Catalog,
  canonical: CanonicalDefaults,
  channels: readonly ChannelRule[],
  functions: readonly FunctionRecord[] = [],
): Promise<string[]> {
  const waiting = pending.get(appId) ?? 0;
  if (waiting >= MAX_PLANS_PER_APP) {
    return Promise.reject(new AppError(429, 'RATE_LIMITED', `The app has ${waiting} schema plans waiting or running, its most.`, 'Wait for them to answer, then apply again.'));
  }
  pending.set(appId, waiting + 1);
  const request: PlanRequest = { id: ++nextId, schema, catalog: [...catalog.values()], canonical: [...canonical], channels: [...channels], functions: [...functions] };
  const run = queue.then(() => send(request));
  queue = run.catch(() => undefined);
  return run.finally(() => {
    const left = (pending.get(appId) ?? 1) - 1;
    if (left > 0) pending.set(appId, left);
    else pending.delete(appId);
  });
}

function send(request: PlanRequest): Promise<string[]> {
  const thread = (worker ??= spawn());
  return new Promise<string[]>((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      thread.off('message', onMessage);
      thread.off('exit', onExit);
    };
    const onMessage = (reply: PlanReply) => {
      if (reply.id !== request.id) return;
      done();
      if (reply.ok) return resolve(reply.statements);
      if ('error' in reply) return reject(new AppError(reply.error.status, reply.error.code, reply.error.message, reply.error.remediation, reply.error.details));
      reject(new Error(`schema plan failed: ${reply.crash}`));
    };
    const onExit = () => {
      done();
      worker = undefined;
      reject(new Error('the schema plan thread exited'));
    };
    const timer = setTimeout(() => {
      done();
      worker = undefined;
      void thread.terminate();
      reject(errors.validation(`The definition took over ${PLAN_TIMEOUT_MS / 1000} s to check; split it or simplify its conditions.`));
    }, PLAN_TIMEOUT_MS);
    thread.on('message', onMessage);
    thread.once('exit', onExit);
    thread.postMessage(request);
  });
}

function spawn(): Worker {
  const thread = new Worker(THREAD);
  // An idle plan thread does not keep the process alive.
  thread.unref();
  return thread;
}
