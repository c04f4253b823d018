// The function runner: executed by Deno (never by Node), one process per warm instance of one function version.
// Started with no --allow-read/env/run/ffi/sys/write and loopback, metadata and database hosts denied, so the
// permission flags are the sandbox (src/functions/sandbox.ts builds the command line).
//
// Protocol (src/functions/protocol.ts): the platform writes an `init` frame, then `request` frames on stdin, several
// of which may be in flight at once (the platform bounds them, SVC_FUNCTIONS_CONCURRENCY_PER_PROCESS); the runner
// answers `ready` / `init_error`, then per request `head`, `chunk`*, `end` (or `error`), and `log` frames for console
// output, on stdout, each tagged with its request's id. The runner never listens on a port: loopback is denied anyway.
//
// Console attribution: each request's handler runs inside an AsyncLocalStorage context holding its id, so a console
// call is tagged with the request whose handler, or whose awaited promise, timer or callback, made it. Deno provides
// node:async_hooks built in (no npm, no permission). Output from a callback that outlives its request, or from the
// module's top level, carries an id no longer in flight (or none) and is not recorded.
//
// The function's own platform is reached through this channel, never the network (see PlatformCall in protocol.ts):
// `ctx.data`, `ctx.billing`, `ctx.integrations` and `ctx.substrate` send `call` frames the platform runs in-process
// (ctx.data as the invocation's caller, ctx.billing and ctx.integrations as its end user), and fetch() to a URL under the platform's own origin (ctx.env.SVC_API_URL, ...) is sent the same way to the
// platform's HTTP listener; other URLs go to the real fetch. Calls are bound to the request in flight that made them and are
// rejected once it has ended. A host the sandbox denies gets an error naming the setting that governs it.
//
// Keep this file free of other Node imports: besides node:async_hooks, its only import is the shared, web-standard
// protocol module.
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  checkPlatformCall,
  invalidCall,
  LineSplitter,
  type DataOp,
  type HostFrame,
  type InitFrame,
  type LogLevel,
  type PlatformCall,
  type PlatformCallResult,
  type RequestFrame,
  type RunnerFrame,
  type SubstrateOp,
  type AppTool,
} from './protocol.ts';

// The few Deno APIs used here, declared locally so the Node type check (tsc) accepts this file.
interface DenoApi {
  stdin: { read(buffer: Uint8Array): Promise<number | null> };
  stdout: { write(bytes: Uint8Array): Promise<number> };
  memoryUsage(): { rss: number };
  inspect(value: unknown, options?: { depth?: number; colors?: boolean }): string;
  exit(code?: number): never;
}
declare const Deno: DenoApi;

type Handler = (request: Request, ctx: unknown) => unknown;

/** A single console message is cut here (the platform caps the whole invocation's output too). */
const MAX_LOG_MESSAGE = 16 * 1024;

const encoder = new TextEncoder();
// The files themselves, not their web streams: a stream's every read zeroes a fresh buffer and every write goes
// through the streams machinery, several times the cost of the request itself for a small function.
const stdin = Deno.stdin;
const stdout = Deno.stdout;

// The protocol channels belong to the runner: user code that writes to stdout could only corrupt its own
// responses (the process then ends), but there is no reason to offer it the handle at all.
for (const name of ['stdin', 'stdout'] as const) {
  try {
    Object.defineProperty(Deno, name, {
      configurable: false,
      get() {
        throw new Error(`Deno.${name} is reserved for the function runtime; use console.log for output and return a Response`);
      },
    });
  } catch {
    // A future Deno may freeze the namespace; the channel then stays reachable, which only affects this function.
  }
}

// Frames are batched: everything queued within one macrotask goes out in one write. A small response is head +
// chunk + end in a single pipe write (one wake-up of the platform instead of three), and so are the responses of
// every request that finished in the same turn; a stream whose next chunk is not ready yet is flushed at the end
// of the turn, so streaming still delivers chunk by chunk. The end of a turn is a message to ourselves: a task that,
// unlike setTimeout(0), no nesting clamps to 4 ms.
let pending: string[] = [];
let pendingBytes = 0;
let scheduled = false;
let written: Promise<void> = Promise.resolve();
const FLUSH_BYTES = 256 * 1024;
const endOfTurn = new MessageChannel();
endOfTurn.port1.onmessage = () => void flush();

function flush(): Promise<void> {
  scheduled = false;
  if (pending.length) {
    const text = pending.join('');
    pending = [];
    pendingBytes = 0;
    const bytes = encoder.encode(text);
    // A write fails only when the platform closed the pipe: it is gone, and so is the reason to run.
    written = written.then(() => writeAll(bytes)).catch(() => Deno.exit(0));
  }
  return written;
}

async function writeAll(bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.length; ) at += await stdout.write(bytes.subarray(at));
}

/** Queues a frame. The promise settles when the pipe took it (await it for backpressure). */
function send(frame: RunnerFrame): Promise<void> {
  return sendText(JSON.stringify(frame) + '\n');
}

function sendText(text: string): Promise<void> {
  pending.push(text);
  pendingBytes += text.length;
  if (pendingBytes >= FLUSH_BYTES) return flush();
  if (!scheduled) {
    scheduled = true;
    endOfTurn.port2.postMessage(null);
  }
  return written;
}

const requestId = new AsyncLocalStorage<number>();
let moduleUrl = '';
let filename = 'function.ts';

/** Error texts and stacks name the module by its (long) data: URL; show the function's file name instead. */
function clean(text: string): string {
  return moduleUrl && text.includes('data:') ? text.replaceAll(moduleUrl, filename) : text;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return Deno.inspect(value, { depth: 4, colors: false });
  } catch {
    return String(value);
  }
}

const RUNNER_URL = import.meta.url;

/** The error's text and stack, without the runtime's own frames (they name paths on the host). */
function errorText(err: unknown): string {
  const text0 = err instanceof Error ? (err.stack && err.stack.includes(err.message) ? err.stack : `${err.name}: ${err.message}`) : describe(err);
  const text = explainDenied(text0);
  return clean(
    text
      .split('\n')
      .filter((line) => !line.includes(RUNNER_URL))
      .join('\n'),
  );
}

function log(level: LogLevel, args: unknown[]): void {
  let message = clean(args.map(describe).join(' '));
  if (message.length > MAX_LOG_MESSAGE) message = message.slice(0, MAX_LOG_MESSAGE) + '… [truncated]';
  void send({ type: 'log', id: requestId.getStore() ?? null, level, message }).catch(() => {});
}

const levels: Array<[keyof Console, LogLevel]> = [
  ['log', 'log'],
  ['info', 'info'],
  ['debug', 'debug'],
  ['trace', 'debug'],
  ['warn', 'warn'],
  ['error', 'error'],
];
for (const [method, level] of levels) {
  (console as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => log(level, args);
}

// Errors outside the request's promise chain (timers, unawaited promises) are logged; the process keeps serving.
globalThis.addEventListener('unhandledrejection', (event: Event) => {
  event.preventDefault();
  log('error', ['Unhandled promise rejection:', errorText((event as PromiseRejectionEvent).reason)]);
});
globalThis.addEventListener('error', (event: Event) => {
  event.preventDefault();
  log('error', ['Uncaught error:', errorText((event as ErrorEvent).error ?? (event as ErrorEvent).message)]);
});

let handler: Handler | undefined;
let init: InitFrame | undefined;

// ---- calls to the platform ----------------------------------------------------------------------------------

/** Requests in flight here (their handler has not finished): only they may call the platform. */
const active = new Set<number>();
/** Calls awaiting their call_result, by `${request id}:${call}`. */
const calls = new Map<string, { id: number; resolve: (result: PlatformCallResult) => void; reject: (err: Error) => void }>();
/** Streamed answers still receiving call_chunk frames, by the same key. */
const streams = new Map<string, { id: number; controller: ReadableStreamDefaultController<Uint8Array> }>();
let nextCall = 1;

/**
 * Sends a call and resolves with its answer. A call with arguments of the wrong type (or that JSON cannot carry) is
 * answered here as the platform would answer it, 400 VALIDATION_FAILED, so the helper rejects with a PlatformError
 * (ctx.data resolves with the error) instead of sending what the platform cannot run.
 */
function platformCall(id: number | undefined, request: PlatformCall): Promise<PlatformCallResult> {
  if (id === undefined || !active.has(id)) {
    return Promise.reject(new Error('ctx.data and fetch() to the platform work only while a request is being handled (not at module top level nor after the Response was returned).'));
  }
  const checked = checkPlatformCall(request);
  if (typeof checked === 'string') return Promise.resolve(invalidCall(checked));
  const call = nextCall++;
  let text: string;
  try {
    text = JSON.stringify({ type: 'call', id, call, request: checked } satisfies RunnerFrame) + '\n';
  } catch (err) {
    return Promise.resolve(invalidCall(`they cannot be sent as JSON (${err instanceof Error ? err.message : String(err)})`));
  }
  return new Promise((resolve, reject) => {
    calls.set(`${id}:${call}`, { id, resolve, reject });
    void sendText(text).catch(() => {});
  });
}

/** The request's handler finished: calls it left pending will not be answered. */
function endCalls(id: number): void {
  active.delete(id);
  for (const [key, pending] of calls) {
    if (pending.id !== id) continue;
    calls.delete(key);
    pending.reject(new Error('the request ended before the platform answered this call'));
  }
  for (const [key, open] of streams) {
    if (open.id !== id) continue;
    streams.delete(key);
    open.controller.error(new Error('the request ended before the platform finished this response'));
  }
}

/** A call's answer: with `streamed`, its body as a stream the call_chunk frames fill until call_end. */
function answerCall(frame: Extract<HostFrame, { type: 'call_result' }>): void {
  const key = `${frame.id}:${frame.call}`;
  const pending = calls.get(key);
  calls.delete(key);
  if (!pending || !frame.result.streamed) return pending?.resolve(frame.result);
  const body = new ReadableStream<Uint8Array>({ start: (controller) => void streams.set(key, { id: frame.id, controller }) });
  pending.resolve({ ...frame.result, stream: body } as PlatformCallResult);
}

function streamCall(frame: Extract<HostFrame, { type: 'call_chunk' | 'call_end' }>): void {
  const key = `${frame.id}:${frame.call}`;
  const open = streams.get(key);
  if (!open) return;
  if (frame.type === 'call_chunk') return open.controller.enqueue((Uint8Array as unknown as { fromBase64(s: string): Uint8Array }).fromBase64(frame.data));
  streams.delete(key);
  if (frame.error) open.controller.error(new Error(frame.error));
  else open.controller.close();
}

export interface DataResult<T = unknown> {
  /** The rows (an array; one row for a single-object request), or null on error. */
  data: T | null;
  /** The error envelope of the platform (code, message, remediation), or null. */
  error: { code: string; message: string; remediation: string } | null;
  status: number;
  /** The total of rows matching, when asked for ({ count: true }). */
  count: number | null;
}

function toDataResult(r: PlatformCallResult): DataResult {
  const total = r.contentRange ? Number(r.contentRange.split('/')[1]) : NaN;
  return { data: r.error ? null : (r.data ?? null), error: r.error ?? null, status: r.status, count: Number.isFinite(total) ? total : null };
}

type Options = { query?: string; prefer?: string };
type DataRun = (op: DataOp, table: string, query: string, body: unknown, prefer: string | undefined, get?: boolean) => Promise<DataResult>;

/**
 * ctx.data: the app's own tables, as the invocation's caller (the end user whose verified token reached the
 * function: row-level security applies; else the app itself: every row of this app). `query` takes PostgREST syntax
 * as the data API does (filters, order, limit, on_conflict, ...). Never throws for an API error: see `error`.
 * transaction(fn): fn's tx.from(...) calls run in one transaction (see transaction below).
 */
function dataClient(id: number, asApp: boolean) {
  return { ...tables(dataRun(id, asApp, undefined)), transaction: <T>(fn: (tx: ReturnType<typeof tables>) => Promise<T>) => transaction(id, asApp, fn) };
}

/** Data calls of request `id`, as the app or the caller, in transaction `tx` when given. */
function dataRun(id: number, asApp: boolean, tx: number | undefined): DataRun {
  return (op, table, query, body, prefer, get) =>
    platformCall(id, {
      kind: 'data',
      op,
      table: String(table),
      query,
      ...(body === undefined ? {} : { body }),
      ...(prefer ? { prefer } : {}),
      ...(asApp ? { asApp: true as const } : {}),
      ...(tx === undefined ? {} : { tx }),
      ...(get ? { get: true as const } : {}),
    }).then(toDataResult);
}

/** from(table) and its operations, over `run`. */
function tables(run: DataRun) {
  const join = (...parts: Array<string | undefined>) => parts.filter((p) => p).join('&');
  return {
    /**
     * rpc('fn', { arg: 1 }, { get: true, query: 'select=id&limit=5', count: true }): a declared SQL function (get: read
     * only, as GET); data is its value, its row or its rows (query filters these), null for void.
     */
    rpc: (fn: string, args?: unknown, options: { get?: boolean; query?: string; count?: boolean } = {}) =>
      run('rpc', fn, options.query ?? '', args, options.count ? 'count=exact' : undefined, options.get === true),
    from(table: string) {
      return {
        /** select('id,title', { query: 'done=eq.false&order=id.desc&limit=10', count: true }) */
        select: (columns = '*', options: Options & { count?: boolean } = {}) =>
          run('select', table, join(`select=${columns}`, options.query), undefined, options.prefer ?? (options.count ? 'count=exact' : undefined)),
        /** insert(row | rows): the inserted rows come back (prefer 'return=minimal' to skip them). */
        insert: (rows: unknown, options: Options = {}) => run('insert', table, options.query ?? '', rows, options.prefer ?? 'return=representation'),
        /** update(patch, 'id=eq.5'): at least one filter is required; the updated rows come back. */
        update: (patch: unknown, query: string, options: Options = {}) => run('update', table, query, patch, options.prefer ?? 'return=representation'),
        /** delete('id=eq.5'): at least one filter is required; the deleted rows come back. */
        delete: (query: string, options: Options = {}) => run('delete', table, query, undefined, options.prefer ?? 'return=representation'),
      };
    },
  };
}

/**
 * ctx.data.transaction(async (tx) => ...): tx.from(...) as ctx.data.from, every statement in one transaction of the
 * app's database as the same role. Committed when fn resolves (resolving with what fn returned); rolled back when fn
 * throws (rejecting with what it threw), and by the platform when a tx call fails (later tx calls answer
 * TRANSACTION_ABORTED and this rejects with a TransactionError) or the transaction outlives its time limit.
 */
async function transaction<T>(id: number, asApp: boolean, fn: (tx: ReturnType<typeof tables>) => Promise<T>): Promise<T> {
  if (typeof fn !== 'function') throw new TypeError('ctx.data.transaction takes a function: ctx.data.transaction(async (tx) => { ... })');
  const tx = (await resultOf(id, { kind: 'tx', op: 'begin', ...(asApp ? { asApp: true as const } : {}) }, 'TransactionError')) as { tx: number };
  let value: T;
  try {
    value = await fn(tables(dataRun(id, asApp, tx.tx)));
  } catch (err) {
    await platformCall(id, { kind: 'tx', op: 'rollback', tx: tx.tx }).catch(() => {});
    throw err;
  }
  await resultOf(id, { kind: 'tx', op: 'commit', tx: tx.tx }, 'TransactionError');
  return value;
}

type PlatformErrorName = 'SubstrateError' | 'BillingError' | 'IntegrationsError' | 'PlatformError' | 'TransactionError';

/** A platform error from ctx.substrate, ctx.billing, ctx.integrations or ctx.data.transaction: the envelope's code, status and remediation on an Error. */
class PlatformCallError extends Error {
  code: string;
  status: number;
  remediation: string;

  constructor(name: PlatformErrorName, status: number, error: { code: string; message: string; remediation: string }) {
    super(error.message);
    this.name = name;
    this.code = error.code;
    this.status = status;
    this.remediation = error.remediation;
  }
}

/** A call whose answer is `result`, rejecting with a PlatformCallError named `name` when the platform refuses. */
function resultOf(id: number, request: PlatformCall, name: PlatformErrorName): Promise<unknown> {
  return platformCall(id, request).then((r) => {
    if (r.error) throw new PlatformCallError(name, r.status, r.error);
    return r.result;
  });
}

/**
 * ctx.substrate, present only when the app is linked to a substrate user: proposals and reads for that user, as an
 * agent (source_app_id is this app). Resolves to what the platform returns; rejects with a SubstrateError (code,
 * status, remediation) when the platform refuses.
 */
function substrateClient(id: number) {
  const run = (op: SubstrateOp, ...args: unknown[]) => resultOf(id, { kind: 'substrate', op, args }, 'SubstrateError');
  return {
    /** propose('record_learning', { title, description }, { idempotency_key, require_approval }) -> { action_id, verdict, requires_approval, result? } */
    propose: (capability: string, payload: Record<string, unknown>, opts?: { idempotency_key?: string; require_approval?: boolean }) =>
      run('propose', capability, payload, opts ?? {}),
    getEntity: (entityId: string) => run('getEntity', entityId),
    findEntities: (query: { type?: string; q?: string; limit?: number } = {}) => run('findEntities', query),
    searchMemory: (query: string, opts: { kinds?: string[]; limit?: number } = {}) => run('searchMemory', query, opts),
    patchEntity: (entityId: string, attrsPatch: Record<string, unknown>) => run('patchEntity', entityId, attrsPatch),
    mergeEntities: (loserId: string, winnerId: string, reason: string) => run('mergeEntities', loserId, winnerId, reason),
    deleteEntity: (entityId: string, reason: string) => run('deleteEntity', entityId, reason),
    /** A single-use ticket for /v1/me/substrate/stream?ticket= (valid 60 s): { ticket, expires_in }. */
    wsTicket: () => run('wsTicket'),
    /** This app's own proposals, newest first: { actions }. */
    actions: (query: { status?: string; capability?: string; limit?: number; before?: string } = {}) => run('actions', query),
    /** One of this app's own proposals. */
    action: (actionId: string) => run('action', actionId),
    /** The calling end user approves one of this app's proposals (when a person allowed end users to decide). */
    approve: (actionId: string) => run('approve', actionId),
    reject: (actionId: string, reason?: string) => run('reject', actionId, reason ?? null),
  };
}

type BillingAnswer = { subscription: unknown; plan: string | null };

/**
 * ctx.billing: what the invoking end user pays for, so that a premium function needs no lookup of its own. Without an
 * end user (a key, cron, a test invoke) both resolve to null without asking the platform. Rejects with a BillingError
 * (code, status, remediation) when the platform refuses.
 */
function billingClient(id: number, user: RequestFrame['user']) {
  const ask = (): Promise<BillingAnswer> =>
    user ? (resultOf(id, { kind: 'billing', op: 'subscription' }, 'BillingError') as Promise<BillingAnswer>) : Promise.resolve({ subscription: null, plan: null });
  return {
    /** The end user's current subscription { id, planId, status, currentPeriodEnd, cancelAtPeriodEnd, ... }, or null. */
    subscription: () => ask().then((a) => a.subscription),
    /** The plan id the end user is entitled to (subscription active or past_due), else null. */
    plan: () => ask().then((a) => a.plan),
  };
}

/**
 * ctx.integrations: the app's enabled toolkits' tools, run as the invoking end user through their connected account
 * (integrations_execute). Without an end user (a key, cron) only for a user the function names with { userId }.
 * Resolves to { successful: true, data }; rejects with an IntegrationsError (code, status, remediation).
 */
function integrationsClient(id: number) {
  return {
    execute: (toolName: string, params: Record<string, unknown> = {}, options: { userId?: string } = {}) =>
      resultOf(id, { kind: 'integrations', op: 'execute', toolName, params, ...(options.userId !== undefined ? { userId: options.userId } : {}) }, 'IntegrationsError'),
  };
}

type Input = Record<string, unknown>;

/**
 * A helper's options object with the fields its other arguments name. Anything but an object is passed on as it is,
 * so that the call is refused as invalid rather than spread into nonsense (a string into its characters).
 */
function withFields(options: unknown, fields: Input): unknown {
  return typeof options === 'object' && options !== null && !Array.isArray(options) ? { ...options, ...fields } : options;
}

/**
 * ctx.ai, ctx.rag, ctx.storage, ctx.realtime (as the calling end user, else the app) and ctx.people, ctx.meetings (as the app): each
 * method is the tool of that name on this app, resolving to its output as REST returns it; a refusal rejects with a
 * PlatformError (code, status, remediation).
 */
function appClients(id: number) {
  // input is checked to be an object before it is sent (platformCall).
  const run = (tool: AppTool, input: unknown) => resultOf(id, { kind: 'app', tool, input: input as Input }, 'PlatformError');
  return { ...callerClients(id, run), ...appOnlyClients(run) };
}

type RunTool = (tool: AppTool, input: unknown) => Promise<unknown>;

/**
 * ctx.asApp: ctx.data, ai, rag, storage and realtime as the function's own app whoever called (every row, like a service key of
 * the app), for what the app does on its own behalf: writing a table its end users only read, an index they must not
 * query directly.
 */
function asAppClients(id: number) {
  const run = (tool: AppTool, input: unknown) => resultOf(id, { kind: 'app', tool, input: input as Input, asApp: true }, 'PlatformError');
  return { data: dataClient(id, true), ...callerClients(id, run) };
}

/** The clients that act as the invocation's caller (or, through ctx.asApp, as the app). */
function callerClients(id: number, run: RunTool) {
  return {
    integrations: {
      /** { connections }: the caller's connected accounts; as the app, every end user's (or { userId }'s). */
      connections: (opts: { userId?: string } = {}) => run('integrations_connections_list', opts),
    },
    ai: {
      /** OpenAI chat completion body (no stream: fetch SVC_API_URL + "/chat/completions" to stream). */
      chat: (body: Input) => run('ai_chat', body),
      embed: (body: Input) => run('ai_embed', body),
    },
    rag: {
      query: (collection: string, body: Input) => run('rag_query', withFields(body, { name: collection })),
      ingest: (collection: string, body: Input) => run('rag_ingest', withFields(body, { name: collection })),
      collections: () => run('rag_collections_list', {}),
      document: (collection: string, documentId: string) => run('rag_documents_get', { name: collection, document_id: documentId }),
      deleteDocument: (collection: string, documentId: string) => run('rag_documents_delete', { name: collection, document_id: documentId }),
    },
    storage: {
      upload: (body: Input) => run('storage_upload_inline', body),
      read: (objectId: string, opts: Input = {}) => run('storage_read', withFields(opts, { object_id: objectId })),
      list: (opts: Input = {}) => run('storage_list', opts),
      signedUrl: (objectId: string) => run('storage_download', { object_id: objectId }),
      delete: (objectId: string) => run('storage_delete', { object_id: objectId }),
    },
    realtime: {
      /** realtime_broadcast of one message: every client of channel(topic).on('broadcast', { event }) gets `payload`. */
      broadcast: (topic: string, event: string, payload: unknown, opts?: { private?: boolean }) =>
        run('realtime_broadcast', { messages: [{ topic, event, payload, private: opts?.private }] }),
    },
  };
}

/** ctx.people and ctx.meetings: always as the app (their credits and bots are the app's). */
function appOnlyClients(run: RunTool) {
  return {
    people: {
      searchPerson: (body: Input) => run('people_search_person', body),
      searchCompany: (body: Input) => run('people_search_company', body),
      profile: (body: Input) => run('people_profile', body),
      queueEmail: (body: Input) => run('people_email_queue', body),
      emailLookup: (lookupId: string) => run('people_email_lookup_get', { lookup_id: lookupId }),
    },
    meetings: {
      spawn: (body: Input) => run('meetings_spawn', body),
      get: (botId: string) => run('meetings_get', { bot_id: botId }),
      transcript: (botId: string) => run('meetings_transcript', { bot_id: botId }),
      list: (opts: Input = {}) => run('meetings_list', opts),
      leave: (botId: string) => run('meetings_leave', { bot_id: botId }),
    },
  };
}

const realFetch = globalThis.fetch.bind(globalThis);
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** fetch(): the platform's own origins go over stdio (protocol.ts, PlatformCall); everything else to the network. */
globalThis.fetch = async function fetch(input: RequestInfo | URL, options?: RequestInit): Promise<Response> {
  const request = new Request(input, options);
  if (!init?.platformOrigins.includes(new URL(request.url).origin)) {
    try {
      return await realFetch(request);
    } catch (err) {
      throw withExplanation(err);
    }
  }
  const bytes = request.body ? new Uint8Array(await request.arrayBuffer()) : null;
  const result = await platformCall(requestId.getStore(), {
    kind: 'fetch',
    method: request.method,
    url: request.url,
    headers: [...request.headers],
    body: bytes && bytes.length ? (bytes as unknown as { toBase64(): string }).toBase64() : null,
  });
  if (result.error && !result.headers) return Response.json({ error: result.error }, { status: result.status });
  const stream = (result as { stream?: ReadableStream<Uint8Array> }).stream;
  if (stream) return new Response(stream, { status: result.status, headers: result.headers ?? [] });
  const body = result.body && !NULL_BODY.has(result.status) ? (Uint8Array as unknown as { fromBase64(s: string): Uint8Array<ArrayBuffer> }).fromBase64(result.body) : null;
  return new Response(body, { status: result.status, headers: result.headers ?? [] });
};

const DENIED = /Requires net access to "([^"]*)"(?:, run again with the --allow-net flag)?/;

function isIn(ip: string, cidrs: Array<[string, number]>): boolean {
  const parts = ip.split('.').map(Number);
  if (parts.length !== 4 || parts.some((n) => !Number.isInteger(n) || n < 0 || n > 255)) return false;
  const value = ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
  return cidrs.some(([base, bits]) => {
    const b = base.split('.').map(Number);
    const start = ((b[0]! << 24) | (b[1]! << 16) | (b[2]! << 8) | b[3]!) >>> 0;
    const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
    return (value & mask) === (start & mask);
  });
}

/** Deno's "Requires net access" names a flag the function cannot set; say which platform setting governs the host. */
function explainDenied(text: string): string {
  const m = DENIED.exec(text);
  if (!m) return text;
  const target = m[1]!;
  const host = target
    .replace(/:\d+$/, '')
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/^::ffff:(?=\d+\.)/, '');
  let why: string;
  if (host === 'localhost' || host.endsWith('.localhost') || host === '::1' || host === '::' || isIn(host, [['127.0.0.0', 8], ['0.0.0.0', 8]])) {
    why = 'loopback addresses are never reachable from functions (the database and other local services listen there)';
  } else if (isIn(host, [['169.254.0.0', 16]])) {
    why = 'link-local addresses (cloud metadata) are never reachable from functions';
  } else if (!init?.allowPrivateNet && isIn(host, [['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16], ['100.64.0.0', 10]])) {
    why = 'private network ranges are closed to functions unless the operator sets SVC_FUNCTIONS_ALLOW_PRIVATE_NET=true';
  } else {
    why =
      'the host is closed to functions: a database host or this machine\'s own address (never reachable), ' +
      (init?.allowPrivateNet ? '' : 'a private address (SVC_FUNCTIONS_ALLOW_PRIVATE_NET=true opens private ranges), ') +
      'or listed in SVC_FUNCTIONS_DENY_NET';
  }
  const own = `to reach this platform's own API use ctx.data, or fetch() under ctx.env.SVC_API_URL (${init?.env.SVC_API_URL ?? ''}), which the platform forwards itself`;
  return text.replace(m[0], `Network access to "${target}" is denied: ${why}; ${own}`);
}

/** The same error (its class stays Deno.errors.NotCapable), its message explained. */
function withExplanation(err: unknown): unknown {
  if (err instanceof Error && DENIED.test(err.message)) {
    try {
      err.message = explainDenied(err.message);
    } catch {
      // a frozen error keeps Deno's text
    }
  }
  return err;
}

// Deno.connect and connectTls are denied by the same flags: their errors get the same explanation.
for (const name of ['connect', 'connectTls'] as const) {
  const api = Deno as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const original = api[name];
  if (typeof original !== 'function') continue;
  try {
    Object.defineProperty(Deno, name, {
      configurable: true,
      writable: true,
      value: (...args: unknown[]) =>
        original.apply(Deno, args).catch((err: unknown) => {
          throw withExplanation(err);
        }),
    });
  } catch {
    // a frozen namespace keeps Deno's text
  }
}

async function load(frame: InitFrame): Promise<void> {
  init = frame;
  moduleUrl = frame.url;
  filename = frame.filename;
  try {
    const mod = (await import(frame.url)) as { default?: unknown };
    if (typeof mod.default !== 'function') {
      const got = mod.default === undefined ? 'no default export' : `a default export of type ${typeof mod.default}`;
      void send({ type: 'init_error', message: `The module must default-export a handler function (request, ctx) => Response; it has ${got}.` });
      return;
    }
    handler = mod.default as Handler;
    void send({ type: 'ready' });
  } catch (err) {
    void send({ type: 'init_error', message: errorText(err) });
  }
  await flush();
}

async function handle(frame: RequestFrame): Promise<void> {
  const { id } = frame;
  try {
    if (!handler || !init) throw new Error('the function is not loaded');
    const requestInit: RequestInit = { method: frame.method, headers: frame.headers };
    if (frame.body !== null && frame.method !== 'GET' && frame.method !== 'HEAD') {
      requestInit.body = (Uint8Array as unknown as { fromBase64(s: string): Uint8Array<ArrayBuffer> }).fromBase64(frame.body);
    }
    const request = new Request(frame.url, requestInit);
    const clients = appClients(id);
    const ctx = {
      env: { ...init.env },
      appId: init.appId,
      user: frame.user,
      token: frame.token,
      data: dataClient(id, false),
      asApp: asAppClients(id),
      billing: billingClient(id, frame.user),
      ...clients,
      integrations: { ...integrationsClient(id), ...clients.integrations },
      ...(frame.substrate ? { substrate: substrateClient(id) } : {}),
    };
    const response = await handler(request, ctx);
    if (!(response instanceof Response)) {
      throw new TypeError(`The handler must return a Response (or a promise of one); it returned ${response === null ? 'null' : typeof response}.`);
    }
    const status = response.status;
    if (!Number.isInteger(status) || status < 200 || status > 599) throw new TypeError(`The handler's Response has status ${String(status)}; a response's status is 200-599.`);
    void send({ type: 'head', id, status, headers: [...response.headers] });
    if (response.body) {
      const reader = response.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!value || !value.length) continue;
        // Resolves once the batch holding this chunk reached the pipe: a slow reader slows the stream down.
        await send({ type: 'chunk', id, data: (value as unknown as { toBase64(): string }).toBase64() });
      }
    }
    endCalls(id);
    // Not flushed here: the timer sends it with the frames of every other request that ends in this turn.
    void send({ type: 'end', id });
  } catch (err) {
    endCalls(id);
    void send({ type: 'error', id, message: errorText(err) });
  }
}

const splitter = new LineSplitter();
// One buffer for every read: the splitter copies what it keeps of a chunk.
const inputBuffer = new Uint8Array(64 * 1024);
for (;;) {
  const n = await stdin.read(inputBuffer);
  if (n === null) break;
  for (const line of splitter.push(inputBuffer.subarray(0, n))) {
    if (!line) continue;
    const frame = JSON.parse(line) as HostFrame;
    if (frame.type === 'init') await load(frame);
    // Not awaited: requests run concurrently, each in its own context (the platform bounds how many).
    else if (frame.type === 'request') {
      active.add(frame.id);
      void requestId.run(frame.id, () => handle(frame));
    } else if (frame.type === 'call_result') answerCall(frame);
    else if (frame.type === 'call_chunk' || frame.type === 'call_end') streamCall(frame);
  }
}
// stdin closed: the platform is done with this process.
Deno.exit(0);
