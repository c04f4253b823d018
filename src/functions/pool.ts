// Warm Deno processes, grouped by function version. Up to `concurrency` requests in flight per process at a time
// (multiplexed by id over its stdio; a request goes to the least loaded process of its version); at most
// `maxPerFunction` processes per version and `maxProcesses` in all (the least recently used idle process of any
// function makes room); idle processes end after `idleMs`. A version's processes are never shared with another
// version, function or app.
//
// Fair share between apps: one app holds at most `maxPerApp` processes and queues at most `maxWaitingPerApp`
// requests (more are refused at once with 503 FUNCTION_BUSY), so a flood of one app's requests waits behind that
// app's own processes only. Processes are started for the least served app first. When the pool is full of busy
// processes and an app below its fair share (the pool split evenly between the apps using it) is waiting, the app
// furthest above its share gives one back: that process drains (takes no new request) and ends after its last one.
import type { Logger } from 'pino';
import { AppError } from '../core/errors.ts';
import { functionErrors } from './errors.ts';
import { InitError, Instance, type InstanceOptions, type InstanceSpec, type ResponseSink, type RunOutcome, type RunRequest } from './instance.ts';
import type { SandboxSpec } from './sandbox.ts';

export interface PoolOptions {
  sandbox: SandboxSpec;
  rssHeadroomMb: number;
  maxPerFunction: number;
  maxProcesses: number;
  /** Processes one app may hold. */
  maxPerApp: number;
  /** Requests of one app that may wait for a process; more get 503 FUNCTION_BUSY at once. */
  maxWaitingPerApp: number;
  /** Requests in flight on one process at once. */
  concurrency: number;
  /** The CPU bound of a process: see InstanceOptions. */
  cpuCores: number;
  cpuGraceMs: number;
  onStopped: InstanceOptions['onStopped'];
  idleMs: number;
  /** Loading a module (deploy validation and cold starts). */
  startTimeoutMs: number;
  /** How long a request may wait for a free process before 503 FUNCTION_BUSY. */
  queueTimeoutMs: number;
  log: Logger;
}

/** What the pool needs to find or start a process for a function version. */
export interface PoolTarget {
  key: string;
  functionId: string;
  appId: string;
  name: string;
  /** Reads the code and variables; called once per group (the spec is kept while the group lives). */
  load: () => Promise<InstanceSpec>;
}

interface Waiter {
  enqueuedMs: number;
  resolve: (instance: Instance) => void;
  reject: (err: Error) => void;
}

interface Group {
  key: string;
  functionId: string;
  appId: string;
  target: PoolTarget;
  spec: InstanceSpec | undefined;
  /** Counted processes of this group (starting, idle or busy). */
  members: Set<Instance>;
  /** Starts whose spec is still loading (no Instance yet). */
  loading: number;
  /** Processes with nothing in flight (the ones idle eviction and LRU eviction may end). */
  idle: Instance[];
  waiters: Waiter[];
  /** A newer version exists or the function is gone: idle processes are not kept. */
  retired: boolean;
  lastUsed: number;
}

/** What one app holds of the pool. */
interface AppUsage {
  /** Counted processes (starting, idle, busy or draining) and starts whose spec is loading. */
  processes: number;
  draining: number;
  waiting: number;
}

export class ClientGone extends Error {}

/** Concurrent deploy validations (each is a short-lived process outside the pool's count). */
const MAX_VALIDATIONS = 4;

export class FunctionPool {
  readonly #o: PoolOptions;
  readonly #groups = new Map<string, Group>();
  /** Processes that count toward maxProcesses: alive and not yet told to die. */
  readonly #counted = new Set<Instance>();
  /** Counted processes that take no new request and end after their last one: slots given back to a starved app. */
  readonly #draining = new Set<Instance>();
  #loading = 0;
  /** Requests waiting for a process, over all groups. */
  #waiting = 0;
  #stopped = false;
  #validations = 0;
  readonly #validationQueue: Array<() => void> = [];
  readonly #sweeper: NodeJS.Timeout;
  readonly #validating = new Set<Instance>();

  constructor(opts: PoolOptions) {
    this.#o = opts;
    this.#sweeper = setInterval(() => this.#sweep(), Math.max(50, Math.min(opts.idleMs / 2, 15_000)));
    this.#sweeper.unref();
  }

  get size(): number {
    return this.#counted.size + this.#loading;
  }

  /** Counts per state, for tests and diagnostics. */
  stats(): { processes: number; idle: number; busy: number; groups: number; waiting: number } {
    let idle = 0;
    let waiting = 0;
    for (const g of this.#groups.values()) {
      idle += g.idle.length;
      waiting += g.waiters.length;
    }
    const busy = [...this.#counted].filter((i) => i.state === 'busy').length;
    return { processes: this.size, idle, busy, groups: this.#groups.size, waiting };
  }

  /** Pids of the processes of a function (any version), for tests. */
  pids(functionId: string): number[] {
    const out: number[] = [];
    for (const g of this.#groups.values()) if (g.functionId === functionId) for (const i of g.members) if (i.pid) out.push(i.pid);
    return out;
  }

  /** Runs one request on a process of the target's version. Resolves with the outcome; rejects only when no process could be had. */
  async run(target: PoolTarget, req: RunRequest, sink: ResponseSink, signal?: AbortSignal): Promise<RunOutcome> {
    const group = this.#group(target);
    // The instance comes with a slot reserved for this request.
    const instance = await this.#acquire(group, signal);
    try {
      return await instance.run(req, sink);
    } finally {
      this.#release(group, instance);
    }
  }

  /**
   * Starts a process on new code without pooling it: deploy validation. Throws InitError when the module does
   * not load or has no default-exported function. On success the caller adopts it (or kills it).
   */
  async validate(spec: InstanceSpec): Promise<Instance> {
    if (this.#stopped) throw functionErrors.unavailable();
    if (this.#validations >= MAX_VALIDATIONS) await new Promise<void>((resolve) => this.#validationQueue.push(resolve));
    this.#validations++;
    const instance = new Instance(spec, this.#instanceOptions());
    this.#validating.add(instance);
    instance.onExit(() => this.#validating.delete(instance));
    try {
      await instance.start(this.#o.startTimeoutMs);
      return instance;
    } catch (err) {
      instance.kill('init');
      throw err;
    } finally {
      this.#validations--;
      this.#validationQueue.shift()?.();
    }
  }

  /** A validated process becomes the first warm process of its version (deploys warm the function). */
  adopt(target: PoolTarget, instance: Instance): void {
    this.#validating.delete(instance);
    if (this.#stopped || !instance.alive || instance.state !== 'idle') return instance.kill('evicted');
    const group = this.#group(target);
    group.spec ??= instance.spec;
    if (group.members.size + group.loading >= this.#o.maxPerFunction) return instance.kill('evicted');
    // The new version is likelier to be called than the app's least recently used idle process.
    const held = this.#usage().get(target.appId)?.processes ?? 0;
    if (held >= this.#o.maxPerApp && !this.#evictOne(group, target.appId)) return instance.kill('evicted');
    if (this.size >= this.#o.maxProcesses && !this.#evictOne(group)) return instance.kill('evicted');
    this.#admit(group, instance);
    this.#release(group, instance);
  }

  /** Older versions of a function keep serving requests already waiting for them, but keep no idle process. */
  retire(functionId: string, currentKey?: string): void {
    for (const g of this.#groups.values()) {
      if (g.functionId !== functionId || g.key === currentKey) continue;
      g.retired = true;
      for (const i of g.idle.splice(0)) this.#kill(i);
    }
  }

  /** The function is gone (deleted, or its app deleted): every process ends, waiting requests get 404. */
  killFunction(functionId: string, name: string): void {
    for (const g of this.#groups.values()) if (g.functionId === functionId) this.#killGroup(g, functionErrors.gone(name));
  }

  killApp(appId: string): void {
    for (const g of this.#groups.values()) if (g.appId === appId) this.#killGroup(g, functionErrors.gone(g.target.name));
  }

  /** Versions that have live processes here, so the owner can retire those no longer current. */
  liveVersions(): Array<{ functionId: string; key: string; name: string }> {
    return [...this.#groups.values()].filter((g) => !g.retired).map((g) => ({ functionId: g.functionId, key: g.key, name: g.target.name }));
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#sweeper);
    const all = [...this.#counted, ...this.#validating];
    for (const g of this.#groups.values()) this.#killGroup(g, functionErrors.unavailable());
    for (const i of this.#validating) i.kill('evicted');
    await Promise.all(all.map((i) => i.exited()));
  }

  #instanceOptions() {
    const { sandbox, rssHeadroomMb, concurrency, cpuCores, cpuGraceMs, onStopped, log } = this.#o;
    return { sandbox, rssHeadroomMb, concurrency, cpuCores, cpuGraceMs, onStopped, log };
  }

  /** The least loaded process of the group with a free slot, with a slot reserved; undefined when all are full. */
  #pick(group: Group): Instance | undefined {
    let best: Instance | undefined;
    for (const i of group.members) {
      if (!i.alive || (i.state !== 'idle' && i.state !== 'busy') || i.load >= i.concurrency || this.#draining.has(i)) continue;
      if (!best || i.load < best.load) best = i;
    }
    if (!best || !best.reserve()) return undefined;
    const at = group.idle.indexOf(best);
    if (at >= 0) group.idle.splice(at, 1);
    return best;
  }

  #group(target: PoolTarget): Group {
    let g = this.#groups.get(target.key);
    if (!g) {
      g = { key: target.key, functionId: target.functionId, appId: target.appId, target, spec: undefined, members: new Set(), loading: 0, idle: [], waiters: [], retired: false, lastUsed: Date.now() };
      this.#groups.set(target.key, g);
    }
    g.lastUsed = Date.now();
    return g;
  }

  #acquire(group: Group, signal: AbortSignal | undefined): Promise<Instance> {
    if (this.#stopped) return Promise.reject(functionErrors.unavailable());
    const instance = group.waiters.length ? undefined : this.#pick(group);
    if (instance) return Promise.resolve(instance);
    const waiting = this.#usage().get(group.appId)?.waiting ?? 0;
    if (waiting >= this.#o.maxWaitingPerApp) {
      return Promise.reject(functionErrors.busy(`this app already has ${waiting} requests waiting for a function process (SVC_FUNCTIONS_MAX_WAITING_PER_APP)`));
    }
    return new Promise<Instance>((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const at = group.waiters.indexOf(waiter);
        if (at >= 0) {
          group.waiters.splice(at, 1);
          this.#waiting--;
        }
      };
      const waiter: Waiter = {
        enqueuedMs: Date.now(),
        resolve: (instance) => {
          done();
          resolve(instance);
        },
        reject: (err) => {
          done();
          reject(err);
        },
      };
      const timer = setTimeout(() => waiter.reject(functionErrors.busy(`every process of the function stayed busy for ${this.#o.queueTimeoutMs} ms (SVC_FUNCTIONS_QUEUE_TIMEOUT_MS)`)), this.#o.queueTimeoutMs);
      const onAbort = () => waiter.reject(new ClientGone('the client went away'));
      signal?.addEventListener('abort', onAbort, { once: true });
      group.waiters.push(waiter);
      this.#waiting++;
      this.#pump();
    });
  }

  #release(group: Group, instance: Instance): void {
    if (!instance.alive || !this.#counted.has(instance)) return this.#pump();
    if (this.#draining.has(instance)) {
      if (instance.load === 0) this.#kill(instance);
      return this.#pump();
    }
    while (group.waiters.length && instance.reserve()) group.waiters[0]!.resolve(instance);
    if (instance.state === 'idle') {
      if (group.retired || this.#stopped) return this.#kill(instance);
      instance.lastUsed = Date.now();
      if (!group.idle.includes(instance)) group.idle.push(instance);
    }
    this.#pump();
  }

  /**
   * Hands idle processes to waiters and starts processes where the caps allow: the least served app first (fewest
   * processes), then the oldest waiter. A group that cannot start one does not hold up the groups after it.
   */
  #pump(): void {
    // Nobody waits (the common case): nothing to hand out or start, and no need to add up every app's usage.
    if (this.#stopped || this.#waiting === 0) return;
    const usage = this.#usage();
    const share = this.#fairShare(usage.size);
    const held = (g: Group) => usage.get(g.appId)!.processes;
    const waiting = [...this.#groups.values()].filter((g) => g.waiters.length).sort((a, b) => held(a) - held(b) || a.waiters[0]!.enqueuedMs - b.waiters[0]!.enqueuedMs);
    // Slots already on their way back (draining processes) that no starved app of this pass has counted on yet.
    let returning = this.#draining.size;
    for (const g of waiting) {
      for (let instance = g.waiters.length ? this.#pick(g) : undefined; instance; instance = g.waiters.length ? this.#pick(g) : undefined) {
        g.waiters[0]!.resolve(instance);
      }
      const app = usage.get(g.appId)!;
      // A process being started will take `concurrency` of the waiters.
      let starting = [...g.members].filter((i) => i.state === 'starting').length + g.loading;
      while (g.waiters.length > starting * this.#o.concurrency && g.members.size + g.loading < this.#o.maxPerFunction) {
        // At its share, the app makes room among its own idle processes only.
        if (app.processes >= this.#o.maxPerApp) {
          if (!this.#evictOne(g, g.appId)) break;
          app.processes--;
        }
        if (this.size >= this.#o.maxProcesses) {
          const evicted = this.#evictOne(g);
          if (evicted === undefined) {
            if (app.processes < share) {
              if (returning > 0) returning--;
              else this.#drainOne(usage, share);
            }
            break;
          }
          usage.get(evicted)!.processes--;
        }
        this.#spawn(g);
        starting++;
        app.processes++;
      }
    }
  }

  /** What each app holds of the pool; apps with nothing running, starting or waiting are absent. */
  #usage(): Map<string, AppUsage> {
    const out = new Map<string, AppUsage>();
    for (const g of this.#groups.values()) {
      const processes = g.members.size + g.loading;
      if (!processes && !g.waiters.length) continue;
      const u = out.get(g.appId) ?? { processes: 0, draining: 0, waiting: 0 };
      u.processes += processes;
      u.waiting += g.waiters.length;
      for (const i of g.members) if (this.#draining.has(i)) u.draining++;
      out.set(g.appId, u);
    }
    return out;
  }

  /** The pool split evenly between the apps using it, at least one process and at most maxPerApp. */
  #fairShare(apps: number): number {
    return Math.min(this.#o.maxPerApp, Math.max(1, Math.floor(this.#o.maxProcesses / Math.max(1, apps))));
  }

  /** Drains the least loaded busy process of the app furthest above its fair share (none: nobody is above it). */
  #drainOne(usage: Map<string, AppUsage>, share: number): void {
    let victimApp: string | undefined;
    let most = share;
    for (const [appId, u] of usage) {
      if (u.processes - u.draining > most) {
        most = u.processes - u.draining;
        victimApp = appId;
      }
    }
    let victim: Instance | undefined;
    for (const g of this.#groups.values()) {
      if (g.appId !== victimApp) continue;
      for (const i of g.members) if (i.state === 'busy' && !this.#draining.has(i) && (!victim || i.load < victim.load)) victim = i;
    }
    if (!victim) return;
    this.#draining.add(victim);
    usage.get(victimApp!)!.draining++;
  }

  /**
   * Ends the least recently used idle process of another group than `except` (of app `appId` only, when given).
   * Returns the app whose process ended, undefined when there was none.
   */
  #evictOne(except: Group, appId?: string): string | undefined {
    let victim: Instance | undefined;
    let victimGroup: Group | undefined;
    for (const g of this.#groups.values()) {
      if (g === except || (appId !== undefined && g.appId !== appId)) continue;
      for (const i of g.idle) {
        if (!victim || i.lastUsed < victim.lastUsed) {
          victim = i;
          victimGroup = g;
        }
      }
    }
    if (!victim || !victimGroup) return undefined;
    victimGroup.idle.splice(victimGroup.idle.indexOf(victim), 1);
    this.#kill(victim);
    return victimGroup.appId;
  }

  #spawn(group: Group): void {
    group.loading++;
    this.#loading++;
    const loaded = group.spec ? Promise.resolve(group.spec) : group.target.load();
    let instance: Instance | undefined;
    let counted = true;
    const uncount = () => {
      if (!counted) return;
      counted = false;
      group.loading--;
      this.#loading--;
    };
    loaded
      .then((spec) => {
        group.spec ??= spec;
        uncount();
        if (this.#stopped || (group.retired && group.waiters.length === 0)) throw functionErrors.unavailable();
        instance = new Instance(group.spec, this.#instanceOptions());
        this.#admit(group, instance);
        return instance.start(this.#o.startTimeoutMs);
      })
      .then(
        () => this.#release(group, instance!),
        (err: unknown) => {
          uncount();
          if (instance) this.#kill(instance);
          const waiter = group.waiters[0];
          if (waiter) waiter.reject(startError(err));
          else this.#o.log.warn({ err, function_id: group.functionId }, 'function process failed to start');
          this.#pump();
        },
      );
  }

  #admit(group: Group, instance: Instance): void {
    group.members.add(instance);
    this.#counted.add(instance);
    instance.onExit(() => {
      group.members.delete(instance);
      this.#counted.delete(instance);
      this.#draining.delete(instance);
      const at = group.idle.indexOf(instance);
      if (at >= 0) group.idle.splice(at, 1);
      this.#pump();
    });
  }

  /** Stops counting the process at once (so its slot is free) and kills it. */
  #kill(instance: Instance): void {
    this.#counted.delete(instance);
    this.#draining.delete(instance);
    for (const g of this.#groups.values()) {
      if (!g.members.delete(instance)) continue;
      const at = g.idle.indexOf(instance);
      if (at >= 0) g.idle.splice(at, 1);
    }
    instance.kill('evicted');
  }

  #killGroup(group: Group, err: AppError): void {
    group.retired = true;
    for (const w of [...group.waiters]) w.reject(err);
    for (const i of [...group.members]) this.#kill(i);
    group.idle = [];
  }

  #sweep(): void {
    const now = Date.now();
    for (const g of this.#groups.values()) {
      for (const i of [...g.idle]) if (now - i.lastUsed >= this.#o.idleMs) this.#kill(i);
      const empty = g.members.size === 0 && g.loading === 0 && g.waiters.length === 0;
      if (empty && (g.retired || now - g.lastUsed >= this.#o.idleMs)) this.#groups.delete(g.key);
    }
  }
}

function startError(err: unknown): Error {
  if (err instanceof AppError) return err;
  if (err instanceof InitError) return functionErrors.failed(`The function failed to start: ${err.message}`);
  return err instanceof Error ? err : new Error(String(err));
}
