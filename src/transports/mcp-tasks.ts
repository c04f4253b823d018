// The tasks extension (io.modelcontextprotocol/tasks, SEP-2663) on the 2026-07-28 revision, which the SDK does not
// implement. Long-running work (a clone, a frontend deployment, a RAG ingestion) already has a row with a status in
// the control database, so a task is no new state: its id is a signed, expiring reference to that row, bound to the
// account, and tasks/get reads the row through the tool that reads it (authorizing as that tool does). Any api process
// answers any task, and a task exists as soon as its row does, which is before the tools/call answers.
// Clients without the extension (and 2025-11-25 sessions, where it is not defined) get the tool's own answer and poll
// the work's tool or resource (resources/work.ts).
import { createHmac } from 'node:crypto';
import { z } from 'zod';
import {
  createRequestStateCodec,
  isInputRequiredResult,
  type CallToolResult,
  type InputRequiredResult,
  type RequestStateCodec,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { AppError } from '../core/errors.ts';
import { INVALID_PARAMS, rpcError, rpcFromAppError } from './mcp-resources.ts';
import type { CallTool } from '../../resources/templates.ts';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** SEP-2663 error codes: a client that did not declare the extension; an unknown (or expired, or another's) task. */
const MISSING_REQUIRED_CLIENT_CAPABILITY = -32021;

/** How long a task id stays good: a day after the work started, which outlasts any clone, build or ingestion. */
const TASK_TTL_MS = 24 * 60 * 60_000;
/** How often a client should poll a working task: the steps of this work take seconds. */
const POLL_INTERVAL_MS = 2_000;

type Row = Record<string, unknown>;
/** A row's state: still running, finished, finished with the work failed (a tool error, not a protocol one), stopped. */
type WorkState = 'working' | 'done' | 'error' | 'cancelled';

/** A kind of long-running work: the tools that start it, how its row is read, and how its status reads as a task's. */
interface WorkKind {
  /** What the work is, in status messages. */
  noun: string;
  start: readonly string[];
  /** The tool reading the row, and its arguments from the starting call's arguments and answer; undefined: no task. */
  read: string;
  ref(args: Row, answer: Row): Record<string, string> | undefined;
  state(row: Row): WorkState;
  /** The row's status in words. */
  status(row: Row): string;
  /** When the row last changed, where it says. */
  updatedAt(row: Row): unknown;
  /** The tool that stops unfinished work (same arguments as `read`); none: a cancel is acknowledged and not honored. */
  cancel?: string;
}

const text = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

const KINDS: Readonly<Record<string, WorkKind>> = {
  clone: {
    noun: 'Clone',
    start: ['templates_clone'],
    read: 'templates_clone_get',
    ref: (_args, answer) => (text(answer.clone_id) ? { clone_id: text(answer.clone_id)! } : undefined),
    state: (row) => (row.status === 'ready' ? 'done' : row.status === 'failed' ? 'error' : 'working'),
    status: (row) =>
      row.status === 'failed'
        ? `failed at step ${String(row.failed_step)}: ${String(row.error)} (templates_clone_retry or templates_clone_delete)`
        : row.status === 'ready' || row.status === 'queued'
          ? String(row.status)
          : `running step ${String(row.status)}`,
    // A clone's view has no time of its last step: a working clone reads as updated when observed.
    updatedAt: (row) => row.finished_at,
    // Deleting an unfinished clone is how it is stopped: its app, database and files go; its jobs then do nothing.
    cancel: 'templates_clone_delete',
  },
  deployment: {
    noun: 'Deployment',
    start: ['frontend_deploy_start', 'frontend_deploy_files'],
    read: 'frontend_deploy_get',
    ref: (args, answer) => (text(args.app_id) && text(answer.id) ? { app_id: text(args.app_id)!, id: text(answer.id)! } : undefined),
    state: (row) => (row.status === 'READY' ? 'done' : row.status === 'ERROR' ? 'error' : row.status === 'CANCELED' ? 'cancelled' : 'working'),
    status: (row) => (row.status === 'ERROR' ? `ERROR: ${String(row.error)}` : String(row.status)),
    updatedAt: (row) => row.updated_at,
    cancel: 'frontend_deploy_cancel',
  },
  ingestion: {
    noun: 'Ingestion',
    start: ['rag_ingest'],
    read: 'rag_documents_get',
    // An end user's ingestion stays synchronous: its task id would carry their token.
    ref: (args, answer) =>
      text(args.app_id) && text(args.name) && text(answer.documentId) && args.user_token === undefined
        ? { app_id: text(args.app_id)!, name: text(args.name)!, document_id: text(answer.documentId)! }
        : undefined,
    state: (row) => (row.status === 'ready' ? 'done' : row.status === 'failed' ? 'error' : 'working'),
    status: (row) => (row.status === 'failed' ? `failed: ${String(row.errorMessage)}` : String(row.status)),
    updatedAt: (row) => row.updatedAt,
  },
};

const KIND_OF_TOOL = new Map(Object.entries(KINDS).flatMap(([kind, k]) => k.start.map((tool) => [tool, kind] as const)));

/** What a task id vouches for: the work's kind, the read tool's arguments, when the task was created (ms). */
interface TaskRef {
  k: string;
  r: Record<string, string>;
  t: number;
}

/** A task as tasks/get answers it (SEP-2663 DetailedTask). */
interface DetailedTask {
  taskId: string;
  status: 'working' | 'completed' | 'cancelled';
  statusMessage: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  pollIntervalMs?: number;
  result?: CallToolResult;
}

const TaskIdParams = z.object({ taskId: z.string() });
const AnyResult = z.record(z.string(), z.unknown());

/** The tasks extension of a 2026-07-28 server: task creation for long-running tools, tasks/get, update and cancel. */
export class McpTasks {
  readonly #codec: RequestStateCodec<TaskRef>;

  /** `key`: the platform's request-state key; task ids are signed with a key derived from it for this use only. */
  constructor(key: Uint8Array) {
    this.#codec = createRequestStateCodec<TaskRef>({
      key: createHmac('sha256', key).update('mcp tasks').digest(),
      ttlSeconds: TASK_TTL_MS / 1000,
      // A task is the account's that created it (/mcp sets the account as the token's clientId), whatever the method.
      bind: (ctx) => ctx.http?.authInfo?.clientId ?? '',
    });
  }

  /** Advertises the extension and answers its methods, on a 2026-07-28 server; `read` runs a tool as the caller. */
  register(server: Server, read: (ctx: ServerContext) => CallTool): void {
    server.registerCapabilities({ extensions: { [TASKS_EXTENSION]: {} } });
    server.setRequestHandler('tasks/get', { params: TaskIdParams, result: AnyResult }, async ({ taskId }, ctx) => {
      const task = await this.#task(server, taskId, ctx);
      return (await this.#detail(taskId, task, read(ctx))) as unknown as Row;
    });
    // The SDK takes inputResponses out of the params (ctx.mcpReq.inputResponses). No task of ours waits for input, so
    // none is for an outstanding request: each is ignored (SEP-2663).
    server.setRequestHandler('tasks/update', { params: TaskIdParams, result: AnyResult }, async ({ taskId }, ctx) => {
      await this.#task(server, taskId, ctx);
      return {};
    });
    server.setRequestHandler('tasks/cancel', { params: TaskIdParams, result: AnyResult }, async ({ taskId }, ctx) => {
      const task = await this.#task(server, taskId, ctx);
      const kind = KINDS[task.k]!;
      if (kind.cancel === undefined) return {};
      const call = read(ctx);
      // Cancelling is cooperative and acknowledged whatever came of it: work that already ended (or ended meanwhile,
      // which the cancel tool refuses) keeps its outcome, and tasks/get tells which.
      const row = (await call(kind.read, task.r).catch(() => undefined)) as Row | undefined;
      if (row && kind.state(row) === 'working') await call(kind.cancel, task.r).catch(() => undefined);
      return {};
    });
  }

  /**
   * A 2026-07-28 tools/call: a long-running tool called by a client that declared the extension (on this request)
   * answers a task once its work is under way; anything else answers as `call` does (refusals, input_required and
   * work that already finished included).
   */
  async call(server: Server, ctx: ServerContext, name: string, args: unknown, call: () => Promise<CallToolResult | InputRequiredResult>): Promise<CallToolResult | InputRequiredResult> {
    const kindName = KIND_OF_TOOL.get(name);
    if (kindName === undefined || !declared(server)) return call();
    const result = await call();
    if (isInputRequiredResult(result) || result.isError) return result;
    const kind = KINDS[kindName]!;
    const answer = JSON.parse((result.content[0] as { text: string }).text) as Row;
    const ref = kind.ref((args ?? {}) as Row, answer);
    if (!ref || kind.state(answer) !== 'working') return result;
    const createdAt = Date.now();
    const taskId = await this.#codec.mint({ k: kindName, r: ref, t: createdAt }, ctx);
    const stamp = new Date(createdAt).toISOString();
    // The SDK adds an empty `content` to a tools/call result without one; clients tell a task by resultType.
    return {
      resultType: 'task',
      taskId,
      status: 'working',
      statusMessage: `${kind.noun} ${kind.status(answer)}`,
      createdAt: stamp,
      lastUpdatedAt: stamp,
      ttlMs: TASK_TTL_MS,
      pollIntervalMs: POLL_INTERVAL_MS,
    } as unknown as CallToolResult;
  }

  /** The task an id names for this client and account; the spec's errors otherwise. */
  async #task(server: Server, taskId: string, ctx: ServerContext): Promise<TaskRef> {
    if (!declared(server)) {
      throw rpcError(MISSING_REQUIRED_CLIENT_CAPABILITY, `Missing required client capability: declare the ${TASKS_EXTENSION} extension in this request's client capabilities.`, {
        requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
      });
    }
    const task = await this.#codec.verify(taskId, ctx).catch((err: Error) => {
      throw rpcError(INVALID_PARAMS, err.message === 'expired' ? 'Failed to retrieve task: Task has expired' : 'Failed to retrieve task: Task not found');
    });
    if (!KINDS[task.k]) throw rpcError(INVALID_PARAMS, 'Failed to retrieve task: Task not found');
    return task;
  }

  /** A task's state as its row has it now; the work's row gone (deleted, its app deleted) is a cancelled task. */
  async #detail(taskId: string, task: TaskRef, call: CallTool): Promise<DetailedTask> {
    const kind = KINDS[task.k]!;
    const base = { taskId, createdAt: new Date(task.t).toISOString(), ttlMs: TASK_TTL_MS };
    let row: Row;
    try {
      row = (await call(kind.read, task.r)) as Row;
    } catch (err) {
      const e = err as AppError;
      if (e?.status !== 404) rpcFromAppError(err);
      return { ...base, status: 'cancelled', statusMessage: `${kind.noun} no longer exists: ${e.message}`, lastUpdatedAt: new Date().toISOString() };
    }
    const state = kind.state(row);
    const updated = kind.updatedAt(row);
    const lastUpdatedAt = typeof updated === 'string' ? new Date(updated).toISOString() : new Date().toISOString();
    const statusMessage = `${kind.noun} ${kind.status(row)}`;
    if (state === 'working') return { ...base, status: 'working', statusMessage, lastUpdatedAt, pollIntervalMs: POLL_INTERVAL_MS };
    if (state === 'cancelled') return { ...base, status: 'cancelled', statusMessage, lastUpdatedAt };
    // Failed work is the tool's error, not a protocol one: completed, with isError (SEP-2663 "failed" is JSON-RPC only).
    const result: CallToolResult = { content: [{ type: 'text', text: JSON.stringify(row) }], ...(state === 'error' ? { isError: true } : {}) };
    return { ...base, status: 'completed', statusMessage, lastUpdatedAt, result };
  }
}

/** Whether this request's client capabilities (2026-07-28: its _meta) declare the tasks extension. */
function declared(server: Server): boolean {
  const extensions = server.getClientCapabilities()?.extensions as Record<string, unknown> | undefined;
  return extensions?.[TASKS_EXTENSION] !== undefined;
}

