import { AppError, errors } from '../core/errors.ts';

/** The Retry-After of 503 FUNCTION_BUSY: about one short request's time, so the app's queue has moved on. */
export const BUSY_RETRY_AFTER_SECONDS = 1;

const LOGS_HINT = 'Read the function\'s logs (functions_logs, GET /v1/{app_id}/functions/{name}/logs) for its console output and the error.';

export const functionErrors = {
  invalid: (message: string, details?: unknown) =>
    new AppError(400, 'FUNCTION_INVALID', `The function code was refused: ${message}`, 'Fix the code so it parses and default-exports a handler `export default async (req: Request, ctx) => new Response(...)`, then deploy again; the previous version keeps serving.', details),
  notFound: (name: string) =>
    errors.notFound(`Function '${name}'`, 'List the app\'s functions with functions_list (GET /v1/{app_id}/functions); deploy one with functions_deploy.'),
  notPublic: (name: string, type: string) =>
    errors.notFound(
      `Function '${name}' on the public route`,
      `It has trigger type '${type}', so it runs on its ${type === 'cron' ? 'schedule' : 'websocket event'}, not on /fn/{name}. Test it with functions_invoke, or redeploy it with trigger { "type": "http" }.`,
    ),
  timeout: (timeoutMs: number) =>
    new AppError(504, 'FUNCTION_TIMEOUT', `The function did not finish within its timeout of ${timeoutMs} ms and was stopped.`, `Make it faster, or raise timeoutMs (at most 300000) with functions_deploy. ${LOGS_HINT}`),
  outOfMemory: (limitMb: number) =>
    new AppError(500, 'FUNCTION_OUT_OF_MEMORY', `The function exceeded its memory limit of ${limitMb} MB and was stopped (the limit is per process: every request in flight on the process was stopped with it).`, `Use less memory, or raise memoryLimitMb (64-1024) with functions_deploy. ${LOGS_HINT}`),
  failed: (message = 'The function threw an error or returned no valid Response.') => new AppError(500, 'FUNCTION_ERROR', message, LOGS_HINT),
  /** No process could take the request: the wait ran out, or the app already has its share of requests waiting. */
  busy: (reason: string) =>
    new AppError(
      503,
      'FUNCTION_BUSY',
      `No function process was free for this request: ${reason}.`,
      `Retry after the Retry-After header's ${BUSY_RETRY_AFTER_SECONDS} s, with backoff; each app gets a share of the function processes (SVC_FUNCTIONS_MAX_PROCESSES_PER_APP) and of waiting requests (SVC_FUNCTIONS_MAX_WAITING_PER_APP).`,
      { retry_after_seconds: BUSY_RETRY_AFTER_SECONDS },
    ),
  cpuExceeded: () =>
    new AppError(
      500,
      'FUNCTION_CPU_EXCEEDED',
      "The function's process used more CPU than its invocations allow and was stopped (every request in flight on it was stopped with it).",
      `Finish all work before returning the Response: await it, terminate Workers you start (worker.terminate()) and clear intervals. ${LOGS_HINT}`,
    ),
  /** The public route forwards one Authorization header it has checked; anything ambiguous is refused, not guessed at. */
  ambiguousAuthorization: (message: string) =>
    new AppError(400, 'AUTH_AMBIGUOUS', message, 'Send at most one Authorization header, with a platform credential (svc_...) only as `Bearer <key>` on its own.'),
  aborted: () =>
    new AppError(
      502,
      'FUNCTION_ABORTED',
      'The function process was stopped because another invocation running on it at the same time exceeded its limits; this request did not fail by itself.',
      'Retry; the request runs on a fresh process. If it keeps happening, fix the function\'s slow invocations (their logs show FUNCTION_TIMEOUT).',
    ),
  unavailable: () => new AppError(503, 'FUNCTION_UNAVAILABLE', 'The function runtime is shutting down.', 'Retry shortly.'),
  gone: (name: string) => errors.notFound(`Function '${name}'`, 'It was deleted or redeployed while the request waited; retry.'),
};
