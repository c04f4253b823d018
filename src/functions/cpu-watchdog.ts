// The CPU bound of a function process: time limits bound requests, not the process, and a Worker, interval or
// unawaited loop can keep burning after its response. Every request in flight earns the process `cpuCores` x its
// wall time; unused credit is kept up to `cpuGraceMs` plus what the requests in flight may use under their time
// limits (`cpuCores` x their timeouts), so with none in flight `cpuGraceMs` in all; the process is stopped once it
// used more than its credit. The instance (instance.ts) reads the CPU time and stops the process; this file keeps
// the books.
/** The unit of /proc/<pid>/stat's CPU times: USER_HZ, fixed at 100 by the Linux ABI whatever the kernel's HZ. */
const USER_HZ = 100;

export interface CpuLimits {
  /** Cores the process may use while it serves requests, per request in flight. */
  cpuCores: number;
  /** CPU time (ms) the process may use beyond that, and in all with no request in flight. */
  cpuGraceMs: number;
}

/** A request in flight as the books see it. */
export interface CpuDebtor {
  /** performance.now() up to which this request's wall time was added to the CPU budget. */
  creditedAt: number;
  timeoutMs: number;
}

/** What the process used since the previous reading, when that took it past its credit (rounded ms). */
export interface CpuOverrun {
  usedMs: number;
  wallMs: number;
}

/**
 * CPU time (user + system, ms) of a process from the text of /proc/<pid>/stat, which counts every thread of the
 * process, Workers included. utime and stime are the 14th and 15th fields; the name before them is in parentheses
 * and may hold spaces.
 */
export function parseStatCpuMs(text: string): number | undefined {
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const cpuMs = ((Number(fields[11]) + Number(fields[12])) * 1000) / USER_HZ;
  return Number.isFinite(cpuMs) ? cpuMs : undefined;
}

/** The credit account of one process. */
export class CpuCredit {
  readonly #limits: CpuLimits;
  /** CPU time of the process at the last reading (ms), and when it was read. */
  #cpuMs: number | undefined;
  #cpuAt = 0;
  /** CPU time (ms) the process may still use before it is stopped. */
  #budgetMs: number;

  constructor(limits: CpuLimits) {
    this.#limits = limits;
    this.#budgetMs = limits.cpuGraceMs;
  }

  /** Credits a request's wall time since it was last credited. */
  earn(req: CpuDebtor, now: number): void {
    this.#budgetMs += (now - req.creditedAt) * this.#limits.cpuCores;
    req.creditedAt = now;
  }

  /** Books a reading of the process's CPU time; returns the overrun when the process used more than its credit. */
  book(cpuMs: number, now: number, inFlight: Iterable<CpuDebtor>): CpuOverrun | undefined {
    const used = this.#cpuMs === undefined ? 0 : cpuMs - this.#cpuMs;
    const wall = now - this.#cpuAt;
    this.#cpuMs = cpuMs;
    this.#cpuAt = now;
    let cap = this.#limits.cpuGraceMs;
    for (const req of inFlight) {
      this.earn(req, now);
      cap += req.timeoutMs * this.#limits.cpuCores;
    }
    this.#budgetMs = Math.min(this.#budgetMs - used, cap);
    return this.#budgetMs < 0 ? { usedMs: Math.round(used), wallMs: Math.round(wall) } : undefined;
  }
}

/** Why a process was stopped for its CPU use, written for the developer reading the function's logs. */
export function cpuStopReason(pid: number | undefined, inFlight: number, overrun: CpuOverrun, limits: CpuLimits): string {
  const n = inFlight;
  const stopped = `the function process (pid ${pid}) was stopped: it used ${overrun.usedMs} ms of CPU in the last ${overrun.wallMs} ms`;
  return n
    ? `${stopped}, more CPU than its ${n} invocation${n > 1 ? 's' : ''} in flight allow${n > 1 ? '' : 's'} (${limits.cpuCores} cores each while it runs, SVC_FUNCTIONS_CPU_CORES); a Worker or loop was running beside ${n > 1 ? 'them' : 'it'}`
    : `${stopped} with no invocation in flight, beyond the ${limits.cpuGraceMs} ms allowed (SVC_FUNCTIONS_CPU_GRACE_MS): a Worker, setInterval or unawaited loop kept running after its response. Finish all work before returning the Response and terminate Workers you start`;
}
