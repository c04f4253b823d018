// Scenario `fairness`: one app's functions flooded (the reliability review's 297 concurrent requests to one app's
// slow functions), another app's hello-world function timed meanwhile, against the same function alone in the same
// run. The figure is the ratio of app B's latency (p50, p99) flooded / alone: the per-app share of the function pool
// (SVC_FUNCTIONS_MAX_PROCESSES_PER_APP, SVC_FUNCTIONS_MAX_WAITING_PER_APP) should keep it near 1.
//
// Each round: B alone for BENCH_DURATION s; then A's flood starts, gets BENCH_WARMUP s to fill A's processes and
// queue, and B is timed again for BENCH_DURATION s while the flood goes on. B sends NEIGHBOUR_RATE requests a second
// whatever the answers (open loop), each timed with performance.now(): its latency, not its throughput, and below
// the millisecond resolution of autocannon's histogram. The flood keeps FLOOD_CONNECTIONS requests in flight; one
// refused beyond A's waiting cap (503 FUNCTION_BUSY) waits its Retry-After before it is sent again, as a client
// following the hint does (a client that resends at once costs the platform CPU instead, which this does not
// measure). The flood runs in a worker thread (bench/flood.ts), B's timer on this event loop, which does nothing else
// meanwhile: the flood's own bursts of answers never delay B's timing. Prints its own table and writes
// bench/results/fairness.json; it adds no platform/baseline pair.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import type { FloodSpec } from './flood.ts';
import { DURATION, ROUNDS, WARMUP, type BenchContext, type Pair, median, percentile } from './harness.ts';

const FLOOD_CONNECTIONS = Number(process.env.BENCH_FLOOD_CONNECTIONS || 297);
/** App A's functions: with SVC_FUNCTIONS_MAX_WARM_PER_FUNCTION (2) each, enough to reach A's share of the pool. */
const FLOOD_FUNCTIONS = 8;
const SLOW_MS = 1000;
/** App B's requests per second. */
const NEIGHBOUR_RATE = 50;
const BODY = 'Hello, world';

async function createApp(ctx: BenchContext, name: string): Promise<string> {
  const res = await fetch(`${ctx.platformUrl}/init`, { method: 'POST', headers: { Authorization: ctx.authorization, 'Content-Type': 'application/json' }, body: JSON.stringify({ name }) });
  const app = (await res.json()) as { app_id?: string };
  if (res.status !== 201 || !app.app_id) throw new Error(`POST /init answered ${res.status}: ${JSON.stringify(app)}`);
  return app.app_id;
}

async function deploy(ctx: BenchContext, appId: string, name: string, code: string): Promise<void> {
  const res = await fetch(`${ctx.platformUrl}/v1/${appId}/functions`, { method: 'POST', headers: { Authorization: ctx.authorization, 'Content-Type': 'application/json' }, body: JSON.stringify({ name, code }) });
  if (res.status !== 201) throw new Error(`deploy ${name} answered ${res.status}: ${await res.text()}`);
}

interface Timings {
  ms: number[];
  failed: number;
}

/** NEIGHBOUR_RATE requests a second for `seconds`, each timed; a failure is anything but 200 with the body. */
async function timeRequests(url: string, seconds: number): Promise<Timings> {
  const out: Timings = { ms: [], failed: 0 };
  const sent: Array<Promise<void>> = [];
  const end = performance.now() + seconds * 1000;
  for (let next = performance.now(); next < end; next += 1000 / NEIGHBOUR_RATE) {
    await sleep(Math.max(0, next - performance.now()));
    sent.push(
      (async () => {
        const started = performance.now();
        try {
          const res = await fetch(url);
          if (res.status === 200 && (await res.text()) === BODY) out.ms.push(performance.now() - started);
          else out.failed++;
        } catch {
          out.failed++;
        }
      })(),
    );
  }
  await Promise.all(sent);
  return out;
}

/** The flood (bench/flood.ts) in a worker thread until stopped; `stop` answers its counts of answers by status. */
function startFlood(urls: string[], connections: number): { stop: () => Promise<Record<string, number>> } {
  const spec: FloodSpec = { urls, connections };
  const worker = new Worker(new URL('./flood.ts', import.meta.url), { workerData: spec });
  const ended = new Promise<Record<string, number>>((resolve, reject) => {
    worker.once('message', (statuses: Record<string, number>) => resolve(statuses));
    worker.once('error', reject);
  });
  return {
    stop: async () => {
      worker.postMessage('stop');
      const statuses = await ended;
      await worker.terminate();
      return statuses;
    },
  };
}

export async function fairnessScenario(ctx: BenchContext): Promise<Pair[]> {
  const flooder = await createApp(ctx, 'Bench Flooder');
  const neighbour = await createApp(ctx, 'Bench Neighbour');
  const slowNames = Array.from({ length: FLOOD_FUNCTIONS }, (_, i) => `slow-${i}`);
  for (const name of slowNames) await deploy(ctx, flooder, name, `export default async () => { await new Promise((r) => setTimeout(r, ${SLOW_MS})); return new Response('slow'); };`);
  await deploy(ctx, neighbour, 'hello', `export default () => new Response(${JSON.stringify(BODY)});`);
  const hello = `${ctx.platformUrl}/v1/${neighbour}/fn/hello`;
  const floodUrls = slowNames.map((n) => `${ctx.platformUrl}/v1/${flooder}/fn/${n}`);

  process.stderr.write(`fairness: warm-up ${WARMUP}s\n`);
  await timeRequests(hello, WARMUP);
  const alone: Timings[] = [];
  const flooded: Timings[] = [];
  const floodStatuses: Array<Record<string, number>> = [];
  for (let round = 1; round <= ROUNDS; round++) {
    alone.push(await timeRequests(hello, DURATION));
    const flood = startFlood(floodUrls, FLOOD_CONNECTIONS);
    await sleep(WARMUP * 1000);
    flooded.push(await timeRequests(hello, DURATION));
    floodStatuses.push(await flood.stop());
    const p99 = (t: Timings) => percentile(t.ms, 0.99).toFixed(1);
    process.stderr.write(`fairness: round ${round}/${ROUNDS}: B alone p99 ${p99(alone.at(-1)!)} ms, B while A is flooded p99 ${p99(flooded.at(-1)!)} ms\n`);
  }

  const summary = (label: string, rounds: Timings[]) => ({
    label,
    p50: median(rounds.map((t) => percentile(t.ms, 0.5))),
    p99: median(rounds.map((t) => percentile(t.ms, 0.99))),
    requests: rounds.reduce((n, t) => n + t.ms.length + t.failed, 0),
    failed: rounds.reduce((n, t) => n + t.failed, 0),
  });
  const a = summary('app B alone', alone);
  const b = summary(`app B, app A flooded (${FLOOD_CONNECTIONS} in flight)`, flooded);
  console.log('');
  console.log(`fairness, median of ${ROUNDS} (app B: ${NEIGHBOUR_RATE} req/s to a hello-world function; app A: ${FLOOD_FUNCTIONS} functions that sleep ${SLOW_MS} ms):`);
  for (const r of [a, b]) console.log(`  ${r.label.padEnd(44)} p50 ${r.p50.toFixed(2).padStart(7)} ms  p99 ${r.p99.toFixed(2).padStart(7)} ms  requests ${r.requests}  failed ${r.failed}`);
  console.log(`  ratio flooded/alone: p50 ${(b.p50 / a.p50).toFixed(2)}x, p99 ${(b.p99 / a.p99).toFixed(2)}x`);
  console.log(`  app A's flood, answers by status per round: ${floodStatuses.map((s) => JSON.stringify(s)).join(' ')}`);
  console.log('');
  mkdirSync(path.join(import.meta.dirname, 'results'), { recursive: true });
  writeFileSync(
    path.join(import.meta.dirname, 'results', 'fairness.json'),
    JSON.stringify({ date: new Date().toISOString(), flood_connections: FLOOD_CONNECTIONS, neighbour_rate: NEIGHBOUR_RATE, alone: a, flooded: b, flood_statuses: floodStatuses }, null, 2) + '\n',
  );
  if (b.failed > 0) {
    // Refused or failed requests of app B are exactly what the per-app share exists to prevent.
    console.error(`app B had ${b.failed} failed requests while app A was flooded`);
    process.exitCode = 1;
  }
  return [];
}
