// How long a process's own work holds its event loop while something runs: the measure behind the tests that feed
// hostile input and require the process to stay responsive.
//
// A timer ticks every TICK_MS. A gap between two ticks longer than the tick is the loop being held; it counts as
// far as the event loop's own thread used CPU during it (process.threadCpuUsage), because on a 2-core machine shared
// with another test file, Postgres and the platform's child processes, a gap in which the thread was not scheduled
// is not its work, and neither is what the process's other threads (GC helpers, libuv's pool) did meanwhile. A
// synchronous block of N ms of the loop's own work still shows as about N ms.
import { setTimeout as sleep } from 'node:timers/promises';

const TICK_MS = 5;

export interface LoopWatch<T> {
  result: T;
  /** The longest hold of the event loop by its own thread's work (ms). */
  maxDelayMs: number;
}

/** Runs work (in its own macrotask, so a synchronous one is seen too) while the event loop is watched. */
export async function withEventLoopDelay<T>(work: () => Promise<T> | T): Promise<LoopWatch<T>> {
  let maxDelayMs = 0;
  let lastWall = performance.now();
  let lastCpu = cpuMs();
  const timer = setInterval(() => {
    const [wall, cpu] = [performance.now(), cpuMs()];
    const held = Math.min(wall - lastWall, cpu - lastCpu) - TICK_MS;
    if (held > maxDelayMs) maxDelayMs = held;
    [lastWall, lastCpu] = [wall, cpu];
  }, TICK_MS);
  try {
    await sleep(3 * TICK_MS);
    const result = await new Promise<T>((resolve, reject) => setImmediate(() => Promise.resolve().then(work).then(resolve, reject)));
    // The tick after work that ended with a synchronous stretch.
    await sleep(3 * TICK_MS);
    return { result, maxDelayMs };
  } finally {
    clearInterval(timer);
  }
}

function cpuMs(): number {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
}
