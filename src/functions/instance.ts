// One Deno process running one version of one function of one app (src/functions/runner.ts inside).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { Logger } from 'pino';
import { CpuCredit, cpuStopReason, parseStatCpuMs, type CpuOverrun } from './cpu-watchdog.ts';
import { ProcFile } from './proc-file.ts';
import { encodeFrame, invalidCall, LineSplitter, parseRunnerFrame, type EndUser, type InvalidCallFrame, type PlatformCall, type PlatformCallAnswer, type PlatformCallResult, type RunnerFrame } from './protocol.ts';
import { runnerArgs, runnerEnv, type SandboxSpec } from './sandbox.ts';
import type { ConsoleLine } from './types.ts';
import { LIMITS } from './types.ts';

/** Everything a process is bound to. */
export interface InstanceSpec {
  /** `<function id>:<version>`: processes are never shared between keys. */
  key: string;
  functionId: string;
  appId: string;
  name: string;
  code: string;
  /** Variables plus the injected SVC_APP_ID and SVC_API_URL. */
  env: Record<string, string>;
  memoryLimitMb: number;
  /** Origins whose fetch() the runner forwards to the platform (protocol.ts, InitFrame). */
  platformOrigins: string[];
  allowPrivateNet: boolean;
}

export interface InstanceOptions {
  sandbox: SandboxSpec;
  /** The resident-set cap is memoryLimitMb plus this (ArrayBuffers and wasm memory live outside the V8 heap). */
  rssHeadroomMb: number;
  /** Requests in flight on the process at once (multiplexed by id over its stdio); 1 when absent. */
  concurrency?: number;
  /** Cores the process may use while it serves requests, per request in flight (see cpu-watchdog.ts). */
  cpuCores: number;
  /** CPU time (ms) the process may use beyond that, and in all with no request in flight. */
  cpuGraceMs: number;
  /** The process was stopped with no request in flight to carry the reason: it goes to the function's logs. */
  onStopped: (spec: InstanceSpec, reason: string) => void;
  log: Logger;
}

export interface RunRequest {
  method: string;
  url: string;
  headers: Array<[string, string]>;
  body: Buffer | null;
  user: EndUser | null;
  token: string | null;
  /** The app is linked to a substrate user (ctx.substrate). */
  substrate: boolean;
  timeoutMs: number;
  /** Runs the function's calls to its own platform (ctx.data, fetch to the platform's URL); absent: refused. */
  calls?: (call: PlatformCall) => Promise<PlatformCallAnswer>;
}

/** Platform calls one request may have in flight at once; more are answered 429 at once. */
const MAX_CALLS_IN_FLIGHT = 16;

/** Where a response goes: a client connection (streamed) or a buffer. */
export interface ResponseSink {
  head(status: number, headers: Array<[string, string]>): void;
  /** Returns false to apply backpressure: the process's output pauses until `resume` is called. */
  chunk(data: Buffer, resume: () => void): boolean;
}

/**
 * aborted: the process was killed because ANOTHER request in flight on it timed out; this one did nothing wrong.
 * memory: the process (shared by every request in flight on it) exceeded its limit; no single request can be blamed.
 * cpu: the process used more CPU than its requests in flight allow (a Worker or loop running beside them).
 */
export type FailureKind = 'timeout' | 'memory' | 'error' | 'aborted' | 'cpu';

export interface RunOutcome {
  /** The function's status, or the status of the failure. */
  status: number;
  /** Set when the invocation failed: the function threw, timed out, ran out of memory or crashed. */
  failure?: { kind: FailureKind; message: string };
  /** Whether `head` reached the sink (the response may then be cut short but its status cannot change). */
  headSent: boolean;
  console: ConsoleLine[];
  durationMs: number;
  memoryMb: number | null;
}

export class InitError extends Error {
  readonly kind: 'invalid' | 'timeout' | 'crash';
  readonly console: ConsoleLine[];
  constructor(kind: 'invalid' | 'timeout' | 'crash', message: string, consoleLines: ConsoleLine[]) {
    super(message);
    this.kind = kind;
    this.console = consoleLines;
  }
}

const OOM = /out of memory|Reached heap limit|allocation failed|Fatal process out of memory|JavaScript heap/i;
const STDERR_KEEP = 8 * 1024;
/** /proc sampling: the resident set often while a request runs; on every SLOW_EVERY-th tick, idle too, and CPU time. */
const SAMPLE_BUSY_MS = 50;
const SLOW_EVERY = 20;

type State = 'starting' | 'idle' | 'busy' | 'dead';

interface Current {
  id: number;
  sink: ResponseSink;
  console: ConsoleLine[];
  consoleBytes: number;
  consoleCut: boolean;
  headSent: boolean;
  status: number;
  startedMs: number;
  /** The highest resident set seen while this request was in flight (kB). */
  peakKb: number;
  timeoutMs: number;
  /** performance.now() up to which this request's wall time was added to the CPU budget. */
  creditedAt: number;
  timer: NodeJS.Timeout;
  resolve: (outcome: RunOutcome) => void;
  calls: RunRequest['calls'];
  callsInFlight: number;
}

let nextRequestId = 1;

export class Instance {
  readonly spec: InstanceSpec;
  state: State = 'starting';
  /** Date.now() of the last release; the pool evicts the least recently used idle instance. */
  lastUsed = Date.now();
  readonly #opts: InstanceOptions;
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #splitter = new LineSplitter();
  #stderr = '';
  #killReason: FailureKind | 'evicted' | 'init' | undefined;
  /** Requests in flight, by id. */
  readonly #requests = new Map<number, Current>();
  /** Slots taken: reserved by the pool (reserve) and not yet finished. Never above `concurrency`. */
  #used = 0;
  /** Requests whose own timeout fired: they get 'timeout', the others in flight get 'aborted'. */
  readonly #timedOut = new Set<number>();
  readonly concurrency: number;
  #initConsole: ConsoleLine[] = [];
  #onReady: ((frame: RunnerFrame) => void) | undefined;
  /** Whether stdin is corked until the end of this turn of the event loop (see #write). */
  #corked = false;
  readonly #exited: Promise<void>;
  #exitListeners: Array<() => void> = [];
  #sampler: NodeJS.Timeout;
  /** /proc/<pid>/status (resident set) and /proc/<pid>/stat (CPU time), opened on the first sample. */
  readonly #procStatus: ProcFile;
  readonly #procStat: ProcFile;
  #sampleTick = 0;
  /** Resident set of this process at the last sample (kB). */
  #lastKb = 0;
  /** The process's CPU credit (cpu-watchdog.ts). */
  readonly #cpu: CpuCredit;
  /** Why the process was stopped for its CPU use, for the requests that were in flight. */
  #cpuReason = '';

  constructor(spec: InstanceSpec, opts: InstanceOptions) {
    this.spec = spec;
    this.#opts = opts;
    this.concurrency = Math.max(1, opts.concurrency ?? 1);
    this.#cpu = new CpuCredit(opts);
    this.#child = spawn(opts.sandbox.deno, runnerArgs(opts.sandbox, spec.memoryLimitMb), {
      env: runnerEnv(opts.sandbox),
      // A neutral working directory: the sandbox reads nothing, and Deno.cwd() should tell nothing.
      cwd: '/',
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.#exited = new Promise((resolve) => {
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        this.#onExit();
        resolve();
      };
      this.#child.once('exit', finish);
      this.#child.once('error', (err) => {
        this.#stderr += `\n${err.message}`;
        finish();
      });
    });
    this.#child.stdin.on('error', () => {}); // EPIPE after the process died: the exit handler reports it
    this.#child.stdout.on('data', (chunk: Buffer) => this.#onStdout(chunk));
    this.#child.stderr.on('data', (chunk: Buffer) => {
      this.#stderr = (this.#stderr + chunk.toString('utf8')).slice(-STDERR_KEEP);
    });
    this.#procStatus = new ProcFile(`/proc/${this.#child.pid}/status`, 4096);
    this.#procStat = new ProcFile(`/proc/${this.#child.pid}/stat`, 2048);
    this.#sampler = setInterval(() => this.#sample(), SAMPLE_BUSY_MS);
    this.#sampler.unref();
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  get alive(): boolean {
    return this.state !== 'dead';
  }

  /** Slots taken (reserved or in flight). */
  get load(): number {
    return this.#used;
  }

  /** Takes a slot for a request the caller will `run` next; false when the process is full, starting or dead. */
  reserve(): boolean {
    if ((this.state !== 'idle' && this.state !== 'busy') || this.#used >= this.concurrency) return false;
    this.#used++;
    this.state = 'busy';
    return true;
  }

  /** Sends the module and waits for the runner to report it loaded with a default-exported function. */
  async start(timeoutMs: number): Promise<void> {
    const { spec } = this;
    const url = `data:application/typescript;base64,${Buffer.from(spec.code, 'utf8').toString('base64')}`;
    const ready = new Promise<RunnerFrame | 'exit' | 'timeout'>((resolve) => {
      const timer = setTimeout(() => resolve('timeout'), timeoutMs);
      this.onExit(() => {
        clearTimeout(timer);
        resolve('exit');
      });
      this.#onReady = (frame) => {
        clearTimeout(timer);
        resolve(frame);
      };
    });
    this.#write(
      encodeFrame({ type: 'init', url, filename: `${spec.name}.ts`, env: spec.env, appId: spec.appId, platformOrigins: spec.platformOrigins, allowPrivateNet: spec.allowPrivateNet }),
    );
    const result = await ready;
    this.#onReady = undefined;
    if (result !== 'exit' && result !== 'timeout' && result.type === 'ready') {
      if (this.state === 'starting') this.state = 'idle';
      this.#sample(true);
      return;
    }
    const consoleLines = this.#initConsole;
    if (result === 'timeout') {
      this.kill('init');
      throw new InitError('timeout', `the module did not finish loading within ${timeoutMs} ms (top-level await that never settles?)`, consoleLines);
    }
    if (result === 'exit') {
      throw new InitError('crash', this.#exitMessage('the process exited while loading the module'), consoleLines);
    }
    this.kill('init');
    throw new InitError('invalid', result.type === 'init_error' ? result.message : `unexpected ${result.type} frame while loading`, consoleLines);
  }

  /**
   * Runs one request, alongside others in flight (up to `concurrency`); never rejects (failures are outcomes).
   * Uses a slot taken by `reserve`, or takes one.
   */
  run(req: RunRequest, sink: ResponseSink): Promise<RunOutcome> {
    if (this.state !== 'idle' && this.state !== 'busy') throw new Error(`instance is ${this.state}`);
    if (this.#requests.size >= this.#used && !this.reserve()) throw new Error('instance is full');
    const id = nextRequestId++;
    return new Promise<RunOutcome>((resolve) => {
      const timer = setTimeout(() => {
        this.#timedOut.add(id);
        this.kill('timeout');
      }, req.timeoutMs);
      // This request's peak: the last reading before it, then the sampler's readings while it runs.
      this.#requests.set(id, { id, sink, console: [], consoleBytes: 0, consoleCut: false, headSent: false, status: 0, startedMs: performance.now(), peakKb: this.#lastKb, timeoutMs: req.timeoutMs, creditedAt: performance.now(), timer, resolve, calls: req.calls, callsInFlight: 0 });
      this.#write(
        encodeFrame({
          type: 'request',
          id,
          method: req.method,
          url: req.url,
          headers: req.headers,
          body: req.body && req.body.length ? req.body.toString('base64') : null,
          user: req.user,
          token: req.token,
          substrate: req.substrate,
        }),
      );
    });
  }

  /** SIGKILL: no handler in the sandbox can delay it. The exit handler settles an in-flight request. */
  kill(reason: FailureKind | 'evicted' | 'init'): void {
    if (this.state === 'dead') return;
    this.#killReason ??= reason;
    this.#child.kill('SIGKILL');
  }

  /** Resolves once the process has exited. */
  exited(): Promise<void> {
    return this.#exited;
  }

  onExit(listener: () => void): void {
    if (this.state === 'dead') listener();
    else this.#exitListeners.push(listener);
  }

  /**
   * Frames written within one turn of the event loop go out as one pipe write (the requests of every connection that
   * turned readable together): one syscall and one wake-up of the process instead of one per request.
   */
  #write(text: string): void {
    const stdin = this.#child.stdin;
    if (!stdin.writable) return;
    if (!this.#corked) {
      this.#corked = true;
      stdin.cork();
      setImmediate(() => {
        this.#corked = false;
        stdin.uncork();
      });
    }
    stdin.write(text);
  }

  #onStdout(chunk: Buffer): void {
    let lines: string[];
    try {
      lines = this.#splitter.push(chunk);
    } catch {
      return this.#protocolError('an output frame exceeded the size limit');
    }
    for (const line of lines) {
      if (!line) continue;
      const frame = parseRunnerFrame(line);
      if (!frame) return this.#protocolError('the process wrote something that is not a runtime frame to stdout');
      this.#onFrame(frame);
      if (this.state === 'dead') return;
    }
  }

  #protocolError(message: string): void {
    this.#stderr += `\n${message}`;
    this.kill('error');
  }

  #onFrame(frame: RunnerFrame | InvalidCallFrame): void {
    if (frame.type === 'ready' || frame.type === 'init_error') {
      this.#onReady?.(frame);
      return;
    }
    if (frame.type === 'log') {
      // The runner tags each line with the request whose handler (or a callback it scheduled) logged it. Lines of
      // no request in flight (module top level after start, timers outliving their request) are not recorded.
      const line = { level: frame.level, message: frame.message };
      const owner = frame.id === null ? undefined : this.#requests.get(frame.id);
      if (owner) this.#addConsole(owner, line);
      else if (this.state === 'starting' && this.#initConsole.length < 50) this.#initConsole.push(line);
      return;
    }
    if (frame.type === 'call' || frame.type === 'call_invalid') {
      // A call racing its request's end finds no request here: dropped (the runner rejects calls of ended requests).
      const owner = this.#requests.get(frame.id);
      if (owner) this.#call(owner, frame.call, frame.type === 'call' ? frame.request : { invalid: frame.reason });
      return;
    }
    const cur = this.#requests.get(frame.id);
    if (!cur) return this.#protocolError(`a ${frame.type} frame for a request that is not in flight`);
    switch (frame.type) {
      case 'head':
        if (cur.headSent) return this.#protocolError('a second head frame');
        cur.headSent = true;
        cur.status = frame.status;
        cur.sink.head(frame.status, frame.headers);
        return;
      case 'chunk': {
        if (!cur.headSent) return this.#protocolError('a chunk before the head');
        const ok = cur.sink.chunk(Buffer.from(frame.data, 'base64'), () => this.#child.stdout.resume());
        if (!ok) this.#child.stdout.pause();
        return;
      }
      case 'end':
        if (frame.rss !== undefined) cur.peakKb = Math.max(cur.peakKb, Math.round(frame.rss / 1024));
        return this.#finish(cur, undefined);
      case 'error':
        this.#addConsole(cur, { level: 'error', message: frame.message });
        return this.#finish(cur, { kind: 'error', message: firstLine(frame.message) });
    }
  }

  /**
   * One call of a request to its platform, answered with a call_result frame while the request is still in flight
   * (its caller and app are the request's: the runner names neither). Bounded per request; never throws.
   */
  #call(cur: Current, call: number, request: PlatformCall | { invalid: string }): void {
    const live = () => this.#requests.get(cur.id) === cur && this.state !== 'dead';
    const answer = (result: PlatformCallResult) => {
      if (live()) this.#write(encodeFrame({ type: 'call_result', id: cur.id, call, result }));
    };
    const refuse = (status: number, code: string, message: string, remediation: string) => answer({ status, error: { code, message, remediation } });
    if (!cur.calls) return refuse(501, 'NOT_AVAILABLE', 'Calls to the platform are not available for this invocation.', 'Call the platform over HTTPS with a key of your own.');
    // The runner refuses these itself; one that arrives anyway is the function's mistake, not the process's end.
    if ('invalid' in request) return answer(invalidCall(request.invalid));
    if (cur.callsInFlight >= MAX_CALLS_IN_FLIGHT) {
      return refuse(429, 'RATE_LIMITED', `At most ${MAX_CALLS_IN_FLIGHT} calls to the platform may be in flight per invocation.`, 'Await calls (or batch rows into one insert) instead of starting many at once.');
    }
    cur.callsInFlight++;
    cur
      .calls(request)
      .then(
        ({ stream, ...result }) => {
          answer(result);
          return stream && this.#relay(cur, call, stream, live);
        },
        (err: unknown) => {
          this.#opts.log.error({ err, function_id: this.spec.functionId }, 'platform call from a function failed');
          refuse(500, 'INTERNAL_ERROR', 'The call to the platform failed.', 'Retry; if it keeps failing, check the platform logs.');
        },
      )
      .finally(() => {
        cur.callsInFlight--;
      });
  }

  /**
   * A streamed answer's bytes as call_chunk frames while its request lives (then the stream is dropped), and its end;
   * counted in flight until then.
   */
  async #relay(cur: Current, call: number, stream: NonNullable<PlatformCallAnswer['stream']>, live: () => boolean): Promise<void> {
    let error: string | undefined;
    try {
      for await (const chunk of stream) {
        if (!live()) return stream.destroy?.();
        this.#write(encodeFrame({ type: 'call_chunk', id: cur.id, call, data: Buffer.from(chunk).toString('base64') }));
      }
    } catch (err) {
      error = `The platform's streamed response broke off: ${(err as Error).message}`;
    }
    if (live()) this.#write(encodeFrame({ type: 'call_end', id: cur.id, call, ...(error ? { error } : {}) }));
  }

  #addConsole(cur: Current, line: ConsoleLine): void {
    if (cur.consoleCut) return;
    const size = line.message.length + 16;
    if (cur.consoleBytes + size > LIMITS.consoleMaxBytes) {
      cur.consoleCut = true;
      cur.console.push({ level: 'warn', message: `[console output cut at ${LIMITS.consoleMaxBytes / 1024} KB]` });
      return;
    }
    cur.consoleBytes += size;
    cur.console.push(line);
  }

  #finish(cur: Current, failure: RunOutcome['failure']): void {
    clearTimeout(cur.timer);
    if (!this.#requests.delete(cur.id)) return;
    this.#cpu.earn(cur, performance.now());
    this.#used = Math.max(0, this.#used - 1);
    // A sink that applied backpressure paused the shared channel; a finished request no longer holds it.
    this.#child.stdout.resume();
    if (this.state === 'busy' && this.#used === 0) this.state = 'idle';
    this.lastUsed = Date.now();
    const status = failure ? (failure.kind === 'timeout' ? 504 : failure.kind === 'aborted' ? 502 : 500) : cur.status;
    cur.resolve({
      status,
      ...(failure ? { failure } : {}),
      headSent: cur.headSent,
      console: cur.console,
      durationMs: Math.round(performance.now() - cur.startedMs),
      memoryMb: cur.peakKb ? Math.max(1, Math.round(cur.peakKb / 1024)) : null,
    });
  }

  #onExit(): void {
    const wasStarting = this.state === 'starting';
    this.state = 'dead';
    clearInterval(this.#sampler);
    this.#procStatus.close();
    this.#procStat.close();
    const inFlight = [...this.#requests.values()];
    const processKind = this.#failureKind();
    const limit = this.spec.memoryLimitMb;
    const others = (n: number) => (n > 1 ? ` (shared by ${n} concurrent invocations)` : '');
    for (const cur of inFlight) {
      // A timeout names its request; the others in flight on the process lost it through no fault of their own.
      const kind: FailureKind = processKind === 'timeout' ? (this.#timedOut.has(cur.id) ? 'timeout' : 'aborted') : processKind;
      if (kind === 'memory') cur.peakKb = Math.max(cur.peakKb, limit * 1024);
      const message =
        kind === 'timeout'
          ? 'timed out: the process was stopped'
          : kind === 'aborted'
            ? 'aborted: the function process was stopped because another invocation on it exceeded its limits; retry'
            : kind === 'memory'
              ? `out of memory: the process${others(inFlight.length)} exceeded its ${limit} MB limit and was stopped`
              : kind === 'cpu'
                ? this.#cpuReason
                : this.#exitMessage('the process exited during the request');
      this.#finish(cur, { kind, message });
    }
    if (!wasStarting && inFlight.length === 0 && this.#killReason === undefined) {
      this.#opts.log.warn({ function_id: this.spec.functionId, stderr: this.#stderr.slice(-500) }, 'idle function process exited');
    }
    for (const listener of this.#exitListeners.splice(0)) listener();
  }

  #failureKind(): FailureKind {
    if (this.#killReason === 'timeout') return 'timeout';
    if (this.#killReason === 'memory') return 'memory';
    if (this.#killReason === 'cpu') return 'cpu';
    const { signalCode } = this.#child;
    if (OOM.test(this.#stderr) || signalCode === 'SIGTRAP' || signalCode === 'SIGABRT') return 'memory';
    return 'error';
  }

  #exitMessage(what: string): string {
    const { exitCode, signalCode } = this.#child;
    if (OOM.test(this.#stderr)) return `${what}: out of memory (limit ${this.spec.memoryLimitMb} MB)`;
    const how = signalCode ? `signal ${signalCode}` : `exit code ${exitCode}`;
    const tail = cleanStderr(this.#stderr);
    return `${what} (${how})${tail ? `: ${tail}` : ''}`;
  }

  /** Resident set from /proc (Linux): the watchdog for memory the V8 heap flag does not bound; CPU on slow ticks. */
  #sample(force = false): void {
    if (this.state === 'dead' || this.state === 'starting' || !this.#child.pid) return;
    const slow = force || ++this.#sampleTick % SLOW_EVERY === 0;
    if (slow) this.#checkCpu();
    else if (this.state === 'idle') return;
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(this.#procStatus.read() ?? '');
    if (!m) return; // not Linux, or the process is gone
    const kb = Number(m[1]);
    this.#lastKb = kb;
    for (const cur of this.#requests.values()) cur.peakKb = Math.max(cur.peakKb, kb);
    if (kb > (this.spec.memoryLimitMb + this.#opts.rssHeadroomMb) * 1024) this.kill('memory');
  }

  /** On slow ticks: books the process's CPU time and stops it once it used more than its credit (cpu-watchdog.ts). */
  #checkCpu(): void {
    const text = this.#procStat.read();
    const cpuMs = text === undefined ? undefined : parseStatCpuMs(text);
    if (cpuMs === undefined) return;
    const overrun = this.#cpu.book(cpuMs, performance.now(), this.#requests.values());
    if (overrun) this.#stopForCpu(overrun);
  }

  #stopForCpu(overrun: CpuOverrun): void {
    const n = this.#requests.size;
    const { usedMs, wallMs } = overrun;
    this.#cpuReason = cpuStopReason(this.pid, n, overrun, this.#opts);
    this.#opts.log.warn({ function_id: this.spec.functionId, pid: this.pid, in_flight: n, cpu_ms: usedMs, wall_ms: wallMs }, 'function process stopped for its CPU use');
    if (!n) this.#opts.onStopped(this.spec, this.#cpuReason);
    this.kill('cpu');
  }
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > 2000 ? line.slice(0, 2000) + '…' : line;
}

function cleanStderr(text: string): string {
  return text
    .replace(/\x1b\[[0-9;]*m/g, '')
    .replace(/data:application\/typescript;base64,[A-Za-z0-9+/=]+/g, 'function.ts')
    .trim()
    .slice(-1000);
}
