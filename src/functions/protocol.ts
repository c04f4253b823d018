// The wire between the platform (Node) and a function's runner (Deno): newline-delimited JSON frames over the
// child's stdin (platform -> runner) and stdout (runner -> platform). This module is loaded by BOTH runtimes
// (src/functions/runner.ts imports it inside Deno), so it uses web-standard APIs only: no Node imports, no Buffer.
//
// JSON.stringify escapes every newline inside strings, so a raw 0x0A byte only ever ends a frame. Binary bodies
// travel as base64 strings.

export interface EndUser {
  id: string;
  claims: Record<string, unknown>;
}

/** The first frame: the module to load and the context every request of this process shares. */
export interface InitFrame {
  type: 'init';
  /** `data:application/typescript;base64,...`: no file access is needed to load it. */
  url: string;
  /** Shown instead of the long data: URL in error messages and stack traces. */
  filename: string;
  env: Record<string, string>;
  appId: string;
  /**
   * Origins whose fetch() the runner hands to the platform over stdio instead of the network (the platform's own
   * base URL and, when this process serves HTTP, its listener): see PlatformCall.
   */
  platformOrigins: string[];
  /** Whether SVC_FUNCTIONS_ALLOW_PRIVATE_NET is on: only used to word the error for a denied host. */
  allowPrivateNet: boolean;
}

/** One HTTP request; several may be in flight on one runner, told apart by id. */
export interface RequestFrame {
  type: 'request';
  id: number;
  method: string;
  url: string;
  headers: Array<[string, string]>;
  /** base64, or null for no body. */
  body: string | null;
  user: EndUser | null;
  token: string | null;
  /** Whether the app is linked to a substrate user: ctx.substrate exists only then. */
  substrate: boolean;
}

/**
 * A call from a function to its own platform, made while one of its requests is in flight: `ctx.data` (run in-process
 * through the data tools as the invocation's caller), `ctx.substrate`, `ctx.billing` and `ctx.integrations` (as the
 * invocation's end user) or a fetch() to a URL under the platform's own origin (sent to the platform's HTTP listener
 * with the function's headers as given). The stdio channel is the only way out to the platform: the sandbox denies
 * loopback and private addresses, and Deno's --deny-net always wins over --allow-net, so one port of a loopback host
 * cannot be opened without opening the database and every other local service too.
 */
export type PlatformCall =
  /**
   * asApp: as the function's own app whoever called (ctx.asApp), else as the invocation's caller. tx: in the
   * invocation's transaction of that number, as the role it was begun with.
   */
  | { kind: 'data'; op: DataOp; table: string; query: string; body?: unknown; prefer?: string; asApp?: true; tx?: number; get?: true }
  /** ctx.data.transaction: begin answers { tx } (the number data calls name), commit and rollback end it. */
  | { kind: 'tx'; op: 'begin'; asApp?: true }
  | { kind: 'tx'; op: 'commit' | 'rollback'; tx: number }
  | { kind: 'fetch'; method: string; url: string; headers: Array<[string, string]>; body: string | null }
  | { kind: 'substrate'; op: SubstrateOp; args: unknown[] }
  | { kind: 'billing'; op: BillingOp }
  | { kind: 'integrations'; op: 'execute'; toolName: string; params: unknown; userId?: string }
  | { kind: 'app'; tool: AppTool; input: Record<string, unknown>; asApp?: true };

/**
 * The app capabilities behind ctx.ai, ctx.rag, ctx.storage, ctx.realtime (run as the invocation's caller: its end user,
 * else the app) and ctx.people, ctx.meetings (run as the app: their routes are the app owner's, and the function, the
 * app's own code, decides who may trigger it). Each is the tool of that name, through invoke(), on the function's own app.
 */
export const APP_TOOLS = {
  ai_chat: 'caller',
  ai_embed: 'caller',
  rag_query: 'caller',
  rag_ingest: 'caller',
  rag_collections_list: 'caller',
  rag_documents_get: 'caller',
  rag_documents_delete: 'caller',
  integrations_connections_list: 'caller',
  storage_upload_inline: 'caller',
  storage_read: 'caller',
  storage_list: 'caller',
  storage_download: 'caller',
  storage_delete: 'caller',
  realtime_broadcast: 'caller',
  people_search_person: 'app',
  people_search_company: 'app',
  people_profile: 'app',
  people_email_queue: 'app',
  people_email_lookup_get: 'app',
  meetings_spawn: 'app',
  meetings_get: 'app',
  meetings_transcript: 'app',
  meetings_list: 'app',
  meetings_leave: 'app',
} as const;
export type AppTool = keyof typeof APP_TOOLS;

/** ctx.substrate's operations, run for the substrate user the app is linked to, as an agent. */
export const SUBSTRATE_OP_NAMES = [
  'propose',
  'getEntity',
  'findEntities',
  'searchMemory',
  'patchEntity',
  'mergeEntities',
  'deleteEntity',
  'wsTicket',
  'actions',
  'action',
  'approve',
  'reject',
] as const;
export type SubstrateOp = (typeof SUBSTRATE_OP_NAMES)[number];
export const SUBSTRATE_OPS: ReadonlySet<string> = new Set(SUBSTRATE_OP_NAMES);

/** ctx.billing's operations, run as the invocation's end user (billing_subscription_get). */
export type BillingOp = 'subscription';
const BILLING_OPS: ReadonlySet<string> = new Set(['subscription']);

/** rpc: ctx.data.rpc(fn, args, { get }), a declared function (`table` is its name, `body` its arguments). */
export type DataOp = 'select' | 'insert' | 'update' | 'delete' | 'rpc';
const DATA_OPS: ReadonlySet<string> = new Set(['select', 'insert', 'update', 'delete', 'rpc']);

/** What a PlatformCall resolves to. error: the platform's envelope (data calls, and fetch calls the platform refused). */
export interface PlatformCallResult {
  status: number;
  /** data calls: the rows (or row); absent on error. */
  data?: unknown;
  /** data calls: PostgREST's Content-Range (with count=exact it ends in the total). */
  contentRange?: string;
  error?: { code: string; message: string; remediation: string };
  /** fetch calls: the response's headers and base64 body. */
  headers?: Array<[string, string]>;
  body?: string | null;
  /** fetch calls answering server-sent events: the body follows as call_chunk frames, then call_end. */
  streamed?: true;
  /** substrate and billing calls: what the operation returned. */
  result?: unknown;
}

/** The platform's answer to call number `call` of request `id`. */
export interface CallResultFrame {
  type: 'call_result';
  id: number;
  call: number;
  result: PlatformCallResult;
}

/** Bytes of a streamed answer (a result with `streamed`), in order. */
export interface CallChunkFrame {
  type: 'call_chunk';
  id: number;
  call: number;
  data: string;
}

/** The end of a streamed answer; `error` when it broke off. */
export interface CallEndFrame {
  type: 'call_end';
  id: number;
  call: number;
  error?: string;
}

export type HostFrame = InitFrame | RequestFrame | CallResultFrame | CallChunkFrame | CallEndFrame;

/** What the platform side answers a call with: the result, and for a streamed body its bytes as they come. */
export type PlatformCallAnswer = PlatformCallResult & { stream?: AsyncIterable<Uint8Array> & { destroy?(): void } };

export type LogLevel = 'log' | 'info' | 'warn' | 'error' | 'debug';

export type RunnerFrame =
  | { type: 'ready' }
  | { type: 'init_error'; message: string }
  | { type: 'head'; id: number; status: number; headers: Array<[string, string]> }
  | { type: 'chunk'; id: number; data: string }
  /** rss: the process's resident set size in bytes when the response ended. */
  | { type: 'end'; id: number; rss?: number }
  | { type: 'error'; id: number; message: string }
  /** id: the request being handled, or null for output outside any request (module top level, background timers). */
  | { type: 'log'; id: number | null; level: LogLevel; message: string }
  /** A call to the platform (ctx.data, fetch to the platform's own URL) by request `id`, numbered `call` by the runner. */
  | { type: 'call'; id: number; call: number; request: PlatformCall };

/**
 * A call frame whose request the platform cannot run (a ctx helper given arguments of the wrong type): parsed from a
 * runner's output, never written by it. The call is answered with 400 VALIDATION_FAILED and `reason`; the process
 * lives on.
 */
export interface InvalidCallFrame {
  type: 'call_invalid';
  id: number;
  call: number;
  reason: string;
}

const LOG_LEVELS: ReadonlySet<string> = new Set(['log', 'info', 'warn', 'error', 'debug']);

export function encodeFrame(frame: HostFrame | RunnerFrame): string {
  return JSON.stringify(frame) + '\n';
}

/**
 * Checks a frame read from a runner. The runner's stdout is reachable by the user's code, so nothing read from it
 * is trusted: a malformed frame is a protocol error that ends the process (returns undefined), except a call frame
 * whose request alone is malformed, which is refused as a call (InvalidCallFrame).
 */
export function parseRunnerFrame(line: string): RunnerFrame | InvalidCallFrame | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const f = value as Record<string, unknown>;
  const isId = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);
  switch (f.type) {
    case 'ready':
      return { type: 'ready' };
    case 'init_error':
      return typeof f.message === 'string' ? { type: 'init_error', message: f.message } : undefined;
    case 'head': {
      // A final status an HTTP response can have: a handler's own Response subclass may claim any number.
      if (!isId(f.id) || !isId(f.status) || f.status < 200 || f.status > 599 || !Array.isArray(f.headers)) return undefined;
      const headers: Array<[string, string]> = [];
      for (const pair of f.headers as unknown[]) {
        if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string' || typeof pair[1] !== 'string') return undefined;
        headers.push([pair[0], pair[1]]);
      }
      return { type: 'head', id: f.id, status: f.status, headers };
    }
    case 'chunk':
      return isId(f.id) && typeof f.data === 'string' ? { type: 'chunk', id: f.id, data: f.data } : undefined;
    case 'end':
      if (!isId(f.id)) return undefined;
      return typeof f.rss === 'number' && Number.isFinite(f.rss) ? { type: 'end', id: f.id, rss: f.rss } : { type: 'end', id: f.id };
    case 'error':
      return isId(f.id) && typeof f.message === 'string' ? { type: 'error', id: f.id, message: f.message } : undefined;
    case 'log':
      if (!(f.id === null || isId(f.id)) || typeof f.message !== 'string' || typeof f.level !== 'string' || !LOG_LEVELS.has(f.level)) return undefined;
      return { type: 'log', id: f.id, level: f.level as LogLevel, message: f.message };
    case 'call': {
      if (!isId(f.id) || !isId(f.call)) return undefined;
      const checked = checkPlatformCall(f.request);
      return typeof checked === 'string' ? { type: 'call_invalid', id: f.id, call: f.call, reason: checked } : { type: 'call', id: f.id, call: f.call, request: checked };
    }
    default:
      return undefined;
  }
}

/** The answer to a call that cannot be run, as the platform refuses invalid input: 400 VALIDATION_FAILED. */
export function invalidCall(reason: string): PlatformCallResult {
  return {
    status: 400,
    error: {
      code: 'VALIDATION_FAILED',
      message: `Invalid arguments: ${reason}.`,
      remediation: 'Call the ctx helper with the arguments the functions guide shows (platform_guide area=functions, GET /llms.txt?area=functions).',
    },
  };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const kindOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : `a ${typeof v}`);

/**
 * The call a ctx helper (or fetch to the platform) asks for, or why it cannot be run. Shared by both sides: the
 * runner refuses such a call before sending it (the helper rejects with a PlatformError), and the platform refuses one
 * that arrives anyway without ending the process.
 */
export function checkPlatformCall(value: unknown): PlatformCall | string {
  if (!isRecord(value)) return `a call to the platform must be an object, not ${kindOf(value)}`;
  const r = value;
  if (r.kind === 'data') {
    if (typeof r.op !== 'string' || !DATA_OPS.has(r.op)) return `ctx.data has no operation ${JSON.stringify(String(r.op))}`;
    if (typeof r.table !== 'string') return `ctx.data.from(table): the table name must be a string, not ${kindOf(r.table)}`;
    if (typeof r.query !== 'string') return `ctx.data's ${r.op}: the query (filters such as "id=eq.5") must be a string, not ${kindOf(r.query)}`;
    if (r.prefer !== undefined && typeof r.prefer !== 'string') return `ctx.data's ${r.op}: the prefer option must be a string, not ${kindOf(r.prefer)}`;
    const call: PlatformCall = { kind: 'data', op: r.op as DataOp, table: r.table, query: r.query };
    if (r.body !== undefined) call.body = r.body;
    if (r.prefer !== undefined) call.prefer = r.prefer as string;
    if (r.asApp === true) call.asApp = true;
    if (r.get === true && r.op === 'rpc') call.get = true;
    if (r.tx !== undefined) {
      if (!isTxId(r.tx)) return `ctx.data's ${r.op}: ${badTx(r.tx)}`;
      call.tx = r.tx;
    }
    return call;
  }
  if (r.kind === 'tx') return checkTxCall(r);
  if (r.kind === 'fetch') {
    const bad = 'a fetch() to the platform must carry a method, URL, header pairs and a base64 body or null';
    if (typeof r.method !== 'string' || typeof r.url !== 'string' || !Array.isArray(r.headers)) return bad;
    if (!(r.body === null || typeof r.body === 'string')) return bad;
    const headers: Array<[string, string]> = [];
    for (const pair of r.headers as unknown[]) {
      if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string' || typeof pair[1] !== 'string') return bad;
      headers.push([pair[0], pair[1]]);
    }
    return { kind: 'fetch', method: r.method, url: r.url, headers, body: r.body as string | null };
  }
  if (r.kind === 'substrate') {
    if (typeof r.op !== 'string' || !SUBSTRATE_OPS.has(r.op)) return `ctx.substrate has no operation ${JSON.stringify(String(r.op))}`;
    if (!Array.isArray(r.args) || r.args.length > 4) return `ctx.substrate.${r.op}: at most 4 arguments`;
    return { kind: 'substrate', op: r.op as SubstrateOp, args: r.args };
  }
  if (r.kind === 'billing') {
    return typeof r.op === 'string' && BILLING_OPS.has(r.op) ? { kind: 'billing', op: r.op as BillingOp } : `ctx.billing has no operation ${JSON.stringify(String(r.op))}`;
  }
  if (r.kind === 'app') {
    if (typeof r.tool !== 'string' || !Object.hasOwn(APP_TOOLS, r.tool)) return `no ctx helper runs the tool ${JSON.stringify(String(r.tool))}`;
    if (!isRecord(r.input)) return `the ctx helper of ${r.tool} takes its input as one object, not ${kindOf(r.input)}`;
    return { kind: 'app', tool: r.tool as AppTool, input: r.input, ...(r.asApp === true ? { asApp: true as const } : {}) };
  }
  if (r.kind === 'integrations') {
    if (r.op !== 'execute') return `ctx.integrations has no operation ${JSON.stringify(String(r.op))}`;
    if (typeof r.toolName !== 'string') return `ctx.integrations.execute(toolName, params, { userId }?): the tool name must be a string, not ${kindOf(r.toolName)}`;
    if (r.userId !== undefined && typeof r.userId !== 'string') return `ctx.integrations.execute: userId must be a string, not ${kindOf(r.userId)}`;
    const call: PlatformCall = { kind: 'integrations', op: 'execute', toolName: r.toolName, params: r.params };
    if (r.userId !== undefined) call.userId = r.userId as string;
    return call;
  }
  return `no call to the platform is of kind ${JSON.stringify(String(r.kind))}`;
}

const isTxId = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
const badTx = (v: unknown) => `the transaction must be the number begin answered, not ${v === undefined ? 'missing' : typeof v === 'number' ? String(v) : kindOf(v)}`;

function checkTxCall(r: Record<string, unknown>): PlatformCall | string {
  if (r.op === 'begin') return { kind: 'tx', op: 'begin', ...(r.asApp === true ? { asApp: true as const } : {}) };
  if (r.op !== 'commit' && r.op !== 'rollback') return `ctx.data.transaction has no operation ${JSON.stringify(String(r.op))}`;
  if (!isTxId(r.tx)) return `ctx.data.transaction's ${r.op}: ${badTx(r.tx)}`;
  return { kind: 'tx', op: r.op, tx: r.tx };
}

/**
 * Splits a byte stream into lines (without the newline). Chunks are kept as they arrive and only joined when a
 * newline completes a line, so a multi-megabyte frame costs one copy, not one per chunk.
 */
export class LineSplitter {
  readonly #decoder = new TextDecoder();
  #parts: Uint8Array[] = [];
  #pending = 0;
  readonly #maxLine: number;

  /** maxLine: a line longer than this many bytes throws (a runaway or hostile writer). */
  constructor(maxLine = 64 * 1024 * 1024) {
    this.#maxLine = maxLine;
  }

  push(chunk: Uint8Array): string[] {
    const lines: string[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl < 0) break;
      const piece = chunk.subarray(start, nl);
      if (this.#parts.length === 0) {
        lines.push(this.#decoder.decode(piece));
      } else {
        this.#parts.push(piece);
        lines.push(this.#decoder.decode(concat(this.#parts, this.#pending + piece.length)));
        this.#parts = [];
        this.#pending = 0;
      }
      start = nl + 1;
    }
    if (start < chunk.length) {
      // Copy (Uint8Array's slice, not Buffer's view): the caller may reuse its buffer.
      const rest = Uint8Array.prototype.slice.call(chunk, start);
      this.#pending += rest.length;
      if (this.#pending > this.#maxLine) throw new Error(`frame longer than ${this.#maxLine} bytes`);
      this.#parts.push(rest);
    }
    return lines;
  }
}

function concat(parts: Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
