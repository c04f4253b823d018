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
// Keep this file free of other Node imports: besides node:async_hooks, its only import is the shared, web-standard
// protocol module.
import { AsyncLocalStorage } from 'node:async_hooks';
import { LineSplitter, type HostFrame, type InitFrame, type LogLevel, type RequestFrame, type RunnerFrame } from './protocol.ts';

// The few Deno APIs used here, declared locally so the Node type check (tsc) accepts this file.
interface DenoApi {
  stdin: { readable: ReadableStream<Uint8Array> };
  stdout: { writable: WritableStream<Uint8Array> };
  memoryUsage(): { rss: number };
  inspect(value: unknown, options?: { depth?: number; colors?: boolean }): string;
  exit(code?: number): never;
}
declare const Deno: DenoApi;

type Handler = (request: Request, ctx: unknown) => unknown;

/** A single console message is cut here (the platform caps the whole invocation's output too). */
const MAX_LOG_MESSAGE = 16 * 1024;

const encoder = new TextEncoder();
const input = Deno.stdin.readable;
const writer = Deno.stdout.writable.getWriter();

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
// chunk + end in a single pipe write (one wake-up of the platform instead of three); a stream whose next chunk
// is not ready yet is flushed by the timer, so streaming still delivers chunk by chunk.
let pending: string[] = [];
let pendingBytes = 0;
let timer: number | undefined;
let written: Promise<void> = Promise.resolve();
const FLUSH_BYTES = 256 * 1024;

function flush(): Promise<void> {
  if (timer !== undefined) {
    clearTimeout(timer);
    timer = undefined;
  }
  if (pending.length) {
    const text = pending.join('');
    pending = [];
    pendingBytes = 0;
    // A write fails only when the platform closed the pipe: it is gone, and so is the reason to run.
    written = writer.write(encoder.encode(text)).catch(() => Deno.exit(0));
  }
  return written;
}

/** Queues a frame. The promise settles when the pipe took it (await it for backpressure). */
function send(frame: RunnerFrame): Promise<void> {
  const text = JSON.stringify(frame) + '\n';
  pending.push(text);
  pendingBytes += text.length;
  if (pendingBytes >= FLUSH_BYTES) return flush();
  timer ??= setTimeout(flush, 0) as unknown as number;
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
  const text = err instanceof Error ? (err.stack && err.stack.includes(err.message) ? err.stack : `${err.name}: ${err.message}`) : describe(err);
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
    const ctx = { env: { ...init.env }, appId: init.appId, user: frame.user, token: frame.token };
    const response = await handler(request, ctx);
    if (!(response instanceof Response)) {
      throw new TypeError(`The handler must return a Response (or a promise of one); it returned ${response === null ? 'null' : typeof response}.`);
    }
    void send({ type: 'head', id, status: response.status, headers: [...response.headers] });
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
    void send({ type: 'end', id });
    await flush();
  } catch (err) {
    void send({ type: 'error', id, message: errorText(err) });
    await flush();
  }
}

const splitter = new LineSplitter();
for await (const chunk of input) {
  for (const line of splitter.push(chunk)) {
    if (!line) continue;
    const frame = JSON.parse(line) as HostFrame;
    if (frame.type === 'init') await load(frame);
    // Not awaited: requests run concurrently, each in its own context (the platform bounds how many).
    else if (frame.type === 'request') void requestId.run(frame.id, () => handle(frame));
  }
}
// stdin closed: the platform is done with this process.
Deno.exit(0);
