// MCP utilities of a session: logging of its own operations, argument completion and tool-call progress.
import type { LoggingLevel, ServerContext } from '@modelcontextprotocol/server';
import type { CallTool } from '../../resources/templates.ts';

type Extra = ServerContext;

/** Severity order of the spec's levels (RFC 5424), least severe first. */
const LEVELS: readonly LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/**
 * Until the client sets a level: refusals only, what a person watching must notice. Each call's own finish (info) is
 * sent once a client asks for it: the client shows the call's result anyway, and the extra event cost every call of
 * every session about a tenth of its throughput (bench/README.md, "The `apps` scenario").
 */
export const DEFAULT_LOG_LEVEL: LoggingLevel = 'warning';

/**
 * The log level of a request: its session's, which logging/setLevel changes (2025-11-25), or the request's own
 * `_meta` logLevel (2026-07-28, where none means no log messages).
 */
export interface SessionLogLevel {
  level: LoggingLevel | undefined;
}

/**
 * Sends a notifications/message about the session's own operation when `level` is at or above the session's, on
 * the stream of the request it is about (a client reads that one; the standalone GET stream may not be open).
 * Callers pass names, statuses and durations only: never inputs or credentials.
 */
async function logToSession(session: SessionLogLevel, extra: Extra, level: LoggingLevel, data: Record<string, unknown>): Promise<void> {
  if (session.level === undefined || LEVELS.indexOf(level) < LEVELS.indexOf(session.level)) return;
  // A client gone mid-call must not turn a finished tool call into a failure.
  await extra.mcpReq.notify({ method: 'notifications/message', params: { level, logger: 'svc-platform', data } }).catch(() => undefined);
}

/**
 * Runs a tools/call with its progress notices (when the client asked for them) and its log messages: started at
 * debug, finished at info, refused at warning (the person watching should notice). Names, status, the error's code
 * and the duration only: an error's message may quote the input. A refusal is rethrown.
 */
export async function observeToolCall<T>(session: SessionLogLevel, extra: Extra, tool: string, run: () => Promise<T>): Promise<T> {
  const started = Date.now();
  await logToSession(session, extra, 'debug', { event: 'tool_call_started', tool });
  const progress = startProgress(extra, tool);
  const finished = async (status: 'succeeded' | 'refused', code?: string) => {
    await progress.stop(status);
    const data = { event: 'tool_call_finished', tool, status, code, duration_ms: Date.now() - started };
    await logToSession(session, extra, status === 'refused' ? 'warning' : 'info', data);
  };
  try {
    const result = await run();
    await finished('succeeded');
    return result;
  } catch (err) {
    await finished('refused', (err as { code?: string }).code);
    throw err;
  }
}

/** How often a running tool call reports that it is still running. */
const PROGRESS_INTERVAL_MS = 2_000;

/** Progress of one tools/call, running until stop(). */
interface CallProgress {
  stop(status: string): Promise<void>;
}

/**
 * Sends notifications/progress for a tools/call that carries `_meta.progressToken`: one at the start, one every
 * PROGRESS_INTERVAL_MS while it runs (long tools: deploys, ingestion, schema applies) and a last one with
 * progress = total. The tools report no fraction done, so progress counts the notices, which keeps it increasing
 * as the spec requires. Without a token, nothing is sent.
 */
function startProgress(extra: Extra, tool: string): CallProgress {
  const progressToken = extra.mcpReq._meta?.progressToken;
  if (progressToken === undefined) return { stop: async () => undefined };
  let progress = 0;
  const send = (message: string, total?: number) =>
    extra.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress, total, message } }).catch(() => undefined);
  void send(`${tool} started`);
  const timer = setInterval(() => {
    progress += 1;
    void send(`${tool} running`);
  }, PROGRESS_INTERVAL_MS);
  return {
    stop: async (status) => {
      clearInterval(timer);
      progress += 1;
      await send(`${tool} ${status}`, progress);
    },
  };
}

/** The spec's cap on the values of one completion answer. */
const MAX_COMPLETIONS = 100;

/** A completion/complete reference and argument, as the SDK's CompleteRequest has them. */
export interface CompletionQuery {
  argument: string;
  value: string;
  /** Arguments already given (a table completes within the app_id already chosen). */
  context: Record<string, string>;
}

/**
 * The values of a resource-template or prompt argument that start with what the client typed: the ids of the
 * apps the caller owns for app_id, the tables of the chosen app for table. Other arguments (free text such as a
 * prompt's idea) have none. Read through the tools, so a caller sees only what those allow; an app the caller may
 * not read completes to nothing rather than an error, as a client asks while its user types.
 */
export async function completeArgument(call: CallTool, query: CompletionQuery): Promise<{ values: string[]; total: number; hasMore: boolean }> {
  const all = await argumentValues(call, query).catch(() => []);
  const matching = all.filter((v) => v.startsWith(query.value));
  return { values: matching.slice(0, MAX_COMPLETIONS), total: matching.length, hasMore: matching.length > MAX_COMPLETIONS };
}

async function argumentValues(call: CallTool, { argument, context }: CompletionQuery): Promise<string[]> {
  if (argument === 'app_id') {
    const { apps } = (await call('apps_list', {})) as { apps: Array<{ app_id: string }> };
    return apps.map((a) => a.app_id);
  }
  const appId = context.app_id;
  if (argument !== 'table' || !appId) return [];
  const { tables } = (await call('schema_get', { app_id: appId })) as { tables: Record<string, unknown> };
  return Object.keys(tables);
}
