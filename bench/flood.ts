// Scenario `fairness`'s flood as a worker thread: `connections` requests to `urls` (in turn) kept in flight until the
// parent posts 'stop'; then it posts the answers counted by status and ends. In a thread of its own so that its
// clients' work (hundreds of answers and sends at once after each Retry-After) never delays app B's timer, which runs
// on the parent's event loop: the timer measures the platform, not the generator.
import { setTimeout as sleep } from 'node:timers/promises';
import { parentPort, workerData } from 'node:worker_threads';

export interface FloodSpec {
  urls: string[];
  connections: number;
}

const { urls, connections } = workerData as FloodSpec;
const statuses: Record<string, number> = {};
let running = true;

/** One client: a request, its answer read whole; one refused with Retry-After waits it, as a client following the hint does. */
async function client(first: number): Promise<void> {
  for (let n = first; running; n += connections) {
    const res = await fetch(urls[n % urls.length]!).catch(() => undefined);
    await res?.arrayBuffer();
    const key = res ? String(res.status) : 'socket error';
    statuses[key] = (statuses[key] ?? 0) + 1;
    const retryAfter = Number(res?.headers.get('retry-after'));
    if (retryAfter > 0) await sleep(retryAfter * 1000);
  }
}

const done = Promise.all(Array.from({ length: connections }, (_, i) => client(i)));
parentPort!.once('message', () => {
  running = false;
  void done.then(() => parentPort!.postMessage(statuses));
});
