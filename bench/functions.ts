// Scenario `functions`: a hello-world function through the public route (/v1/{app_id}/fn/hello) against the same
// handler served directly by `deno serve` in the same run, plus cold-start samples. See bench/README.md.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resolveDenoBinary } from '../src/functions/sandbox.ts';
import type { BenchContext, Pair, Target } from './harness.ts';
import { median, startBaseline } from './harness.ts';

const BODY = 'Hello, world';
const HANDLER = `const handler = (_req: Request): Response => new Response(${JSON.stringify(BODY)}, { headers: { 'content-type': 'text/plain' } });`;
/** The module deployed to the platform: the handler as its default export. */
const FUNCTION_CODE = `${HANDLER}\nexport default handler;\n`;
/** The same handler for `deno serve`, which wants `export default { fetch }`. */
const SERVE_CODE = `${HANDLER}\nexport default { fetch: handler };\n`;
/** Cold-start samples. */
const COLD_SAMPLES = Number(process.env.BENCH_COLD_SAMPLES || 5);
/** The platform's defaults (SVC_FUNCTIONS_MAX_WARM_PER_FUNCTION, SVC_FUNCTIONS_CONCURRENCY_PER_PROCESS), for the relay too. */
const FN_PROCESSES = process.env.BENCH_FN_MAX_WARM || '2';
const FN_CONCURRENCY = '16';

interface Timed {
  ms: number;
  status: number;
  text: string;
}

async function timed(url: string, init: RequestInit = {}): Promise<Timed> {
  const t0 = performance.now();
  const res = await fetch(url, init);
  const text = await res.text();
  return { ms: performance.now() - t0, status: res.status, text };
}

/** Starts `deno serve` on an ephemeral port; resolves with its URL once it printed where it listens. */
async function startDenoServe(file: string, cleanups: Array<() => Promise<void>>): Promise<{ url: string; startMs: number }> {
  const deno = resolveDenoBinary(process.env.SVC_DENO_PATH);
  const t0 = performance.now();
  const child = spawn(deno, ['serve', '--no-prompt', '--no-config', '--allow-net', '--host', '127.0.0.1', '--port', '0', '--v8-flags=--max-old-space-size=128', file], {
    env: { DENO_DIR: path.join(path.dirname(file), 'deno-dir'), NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  });
  let out = '';
  const port = await new Promise<string>((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /Listening on https?:\/\/[^:]+:(\d+)/.exec(out);
      if (m) resolve(m[1]!);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`deno serve exited with ${code}:\n${out}`)));
    setTimeout(() => reject(new Error(`deno serve did not start:\n${out}`)), 15_000).unref();
  });
  const url = `http://127.0.0.1:${port}`;
  // The first answer completes the baseline's own "cold start": process start, module load, first response.
  const first = await timed(url);
  if (first.status !== 200 || first.text !== BODY) throw new Error(`deno serve answered ${first.status}: ${first.text}`);
  return { url, startMs: performance.now() - t0 };
}

/** Deploys hello-world, measures cold starts, starts `deno serve` on the same handler, checks both answers. */
export async function functionsScenario(ctx: BenchContext): Promise<Pair[]> {
  const { platformUrl, authorization } = ctx;
  const json = { Authorization: authorization, 'Content-Type': 'application/json' };
  const init = await fetch(`${platformUrl}/init`, { method: 'POST', headers: json, body: JSON.stringify({ name: 'Bench Functions' }) });
  const app = (await init.json()) as { app_id?: string };
  if (init.status !== 201 || !app.app_id) throw new Error(`POST /init answered ${init.status}: ${JSON.stringify(app)}`);
  const appId = app.app_id;
  const fnUrl = (name: string) => `${platformUrl}/v1/${appId}/fn/${name}`;

  // Cold starts. deploy = the sandboxed validation run (a fresh Deno process loads the module) plus the row write;
  // that process stays as the first warm instance, so the first request after a deploy is warm. A true cold start
  // is forced by a variable update (a new version with no process yet): spawn + module load + the request.
  const samples: Array<{ deployMs: number; firstAfterDeployMs: number; coldMs: number; warmMs: number }> = [];
  for (let i = 0; i < COLD_SAMPLES; i++) {
    const name = `cold-${i}`;
    const deploy = await timed(`${platformUrl}/v1/${appId}/functions`, { method: 'POST', headers: json, body: JSON.stringify({ name, code: FUNCTION_CODE }) });
    if (deploy.status !== 201) throw new Error(`deploy answered ${deploy.status}: ${deploy.text}`);
    const firstAfterDeploy = await timed(fnUrl(name));
    const env = await fetch(`${platformUrl}/v1/${appId}/functions/${name}/env`, { method: 'PATCH', headers: json, body: JSON.stringify({ SAMPLE: String(i) }) });
    if (env.status !== 200) throw new Error(`env update answered ${env.status}`);
    const cold = await timed(fnUrl(name));
    const warm = await timed(fnUrl(name));
    for (const r of [firstAfterDeploy, cold, warm]) if (r.status !== 200 || r.text !== BODY) throw new Error(`cold-start sample answered ${r.status}: ${r.text}`);
    samples.push({ deployMs: deploy.ms, firstAfterDeployMs: firstAfterDeploy.ms, coldMs: cold.ms, warmMs: warm.ms });
  }

  const dir = mkdtempSync(path.join(tmpdir(), 'svc-bench-deno-'));
  ctx.cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(path.join(dir, 'deno-dir'));
  const file = path.join(dir, 'hello.ts');
  writeFileSync(file, SERVE_CODE);
  const serveStarts: number[] = [];
  let baselineUrl = '';
  for (let i = 0; i < COLD_SAMPLES; i++) {
    const cleanups: Array<() => Promise<void>> = [];
    const started = await startDenoServe(file, cleanups);
    serveStarts.push(started.startMs);
    if (i < COLD_SAMPLES - 1) for (const c of cleanups) await c();
    else {
      ctx.cleanups.push(...cleanups);
      baselineUrl = started.url;
    }
  }

  const fmt = (xs: number[]) => `${median(xs).toFixed(0)} ms (${xs.map((x) => x.toFixed(0)).join(' / ')})`;
  console.log('');
  console.log(`functions cold start, median of ${COLD_SAMPLES} (samples):`);
  console.log(`  deploy (validation in a fresh sandboxed process + write)  ${fmt(samples.map((s) => s.deployMs))}`);
  console.log(`  first request after deploy (validated process kept warm)  ${fmt(samples.map((s) => s.firstAfterDeployMs))}`);
  console.log(`  cold request (new version: spawn + load + request)        ${fmt(samples.map((s) => s.coldMs))}`);
  console.log(`  warm request right after                                  ${fmt(samples.map((s) => s.warmMs))}`);
  console.log(`  baseline: deno serve start to first response              ${fmt(serveStarts)}`);
  console.log(`  cold ratio platform/deno serve: ${(median(samples.map((s) => s.coldMs)) / median(serveStarts)).toFixed(2)}x`);
  console.log('');
  mkdirSync(path.join(import.meta.dirname, 'results'), { recursive: true });
  writeFileSync(
    path.join(import.meta.dirname, 'results', 'functions-cold.json'),
    JSON.stringify({ date: new Date().toISOString(), samples, deno_serve_start_ms: serveStarts }, null, 2) + '\n',
  );

  // Warm throughput: the function deployed once (its validated process is warm), the baseline already answered.
  const deploy = await timed(`${platformUrl}/v1/${appId}/functions`, { method: 'POST', headers: json, body: JSON.stringify({ name: 'hello', code: FUNCTION_CODE }) });
  if (deploy.status !== 201) throw new Error(`deploy answered ${deploy.status}: ${deploy.text}`);
  for (const url of [fnUrl('hello'), baselineUrl]) {
    const r = await timed(url);
    if (r.status !== 200 || r.text !== BODY) throw new Error(`${url} answered ${r.status}: ${r.text}`);
  }
  // The second limit: the platform's runner processes behind a bare node:http relay (bench/baseline-fn-relay.ts).
  const relay = await startBaseline('bench/baseline-fn-relay.ts', { CODE: FUNCTION_CODE, DATABASE_URL: ctx.controlDatabaseUrl, PROCESSES: FN_PROCESSES, CONCURRENCY: FN_CONCURRENCY });
  ctx.cleanups.push(relay.child.stop);
  const relayed = await timed(relay.url + '/');
  if (relayed.status !== 200 || relayed.text !== BODY) throw new Error(`the relay answered ${relayed.status}: ${relayed.text}`);

  const target = (url: string): Target => ({ url, method: 'GET', headers: {}, expect: [BODY], forbid: [] });
  return [
    { label: 'fn GET /v1/{app}/fn/hello', baselineName: 'deno serve', platform: target(fnUrl('hello')), baseline: target(baselineUrl) },
    {
      label: 'fn GET /v1/{app}/fn/hello vs relay',
      baselineName: 'bare relay',
      platform: target(fnUrl('hello')),
      baseline: target(relay.url + '/'),
      // The relay's CPU and its runners' are counted as the platform's are.
      baselinePids: [relay.child.proc.pid!],
    },
  ];
}
