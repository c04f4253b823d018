// What every scenario of `npm run bench` shares: settings, child processes, the load generator, the control
// cluster, interleaved measuring and the table. See bench/README.md.
import { spawn, type ChildProcess } from 'node:child_process';
import type http from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { saturated, SATURATED_CPU, type LoadResult, type LoadSpec } from './load.ts';
import { cpuSince } from './proc-cpu.ts';

export const ROOT = path.resolve(import.meta.dirname, '..');
export const CLUSTER_URL = process.env.BENCH_DATABASE_CLUSTER ?? 'postgres://postgres@127.0.0.1:5432';

/** A positive integer setting of the environment, or the fallback. */
export function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got '${raw}'`);
  return n;
}

export const DURATION = envInt('BENCH_DURATION', 10);
export const CONNECTIONS = envInt('BENCH_CONNECTIONS', 50);
export const ROUNDS = envInt('BENCH_ROUNDS', 3);
export const WARMUP = envInt('BENCH_WARMUP', 3);
/**
 * autocannon worker threads for a side whose generator saturated a core during its warm-up (or, set to a number with
 * BENCH_LOAD_WORKERS, for every run). A Target's own `workers` wins over both.
 */
export const LOAD_WORKERS = process.env.BENCH_LOAD_WORKERS ? envInt('BENCH_LOAD_WORKERS', 1) : undefined;
const AUTO_WORKERS = 2;
/** A warm-up's generator at this % of a core or more gets AUTO_WORKERS (a margin below SATURATED_CPU: a warm-up is short and starts cold). */
const WARMUP_SATURATED_CPU = SATURATED_CPU - 10;

// ---------------------------------------------------------------------------------------------- processes

export interface Child {
  proc: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/** `ipc`: the child gets an IPC channel (process.send / 'message'), for a driver that asks it things. */
export function startChild(script: string, env: Record<string, string>, nodeArgs: string[] = [], ipc = false): Child {
  const proc = spawn(process.execPath, [...nodeArgs, script], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe', ...(ipc ? (['ipc'] as const) : [])],
  });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return {
    proc,
    output: () => out,
    stop: async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export async function waitFor<T>(what: string, child: Child, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.proc.exitCode !== null) throw new Error(`${what} exited with ${child.proc.exitCode}:\n${child.output()}`);
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not become ready:\n${child.output()}`);
}

/** The baselines listen on an ephemeral port and print `ready <port>`. */
export async function startBaseline(script: string, env: Record<string, string>): Promise<{ child: Child; url: string }> {
  const child = startChild(script, env);
  const port = await waitFor(script, child, async () => /^ready (\d+)$/m.exec(child.output())?.[1]);
  return { child, url: `http://127.0.0.1:${port}` };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** The load generator that is running, so an interrupted bench can stop it too. */
let loading: ChildProcess | undefined;

export function stopLoading(): void {
  loading?.kill('SIGTERM');
}

/** One autocannon run in its own process; the spec goes on its stdin. */
export function load(spec: LoadSpec): Promise<LoadResult> {
  const child = (loading = spawn(process.execPath, [path.join('bench', 'load.ts')], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] }));
  child.stdin.end(JSON.stringify(spec));
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`load generator exited with ${code}: ${out}`));
      resolve(JSON.parse(out) as LoadResult);
    });
  });
}

// ---------------------------------------------------------------------------------------------- databases

export async function admin(sql: string, params: unknown[] = [], database = 'postgres'): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: `${CLUSTER_URL}/${database}` });
  await client.connect();
  try {
    return await client.query(sql, params);
  } finally {
    await client.end();
  }
}

export async function dropDatabases(controlDb: string, appPrefix: string): Promise<void> {
  const { rows } = await admin('select datname from pg_database where datname = $1 or starts_with(datname, $2)', [controlDb, appPrefix]);
  for (const { datname } of rows as Array<{ datname: string }>) {
    await admin(`drop database if exists ${pg.escapeIdentifier(datname)} with (force)`);
  }
}

// ---------------------------------------------------------------------------------------------- scenarios

/** What a scenario gets from run.ts: the running platform and a place to register its own cleanups. */
export interface BenchContext {
  platformUrl: string;
  /** Port the platform listens on; its default SVC_BASE_URL is http://localhost:<port>. */
  port: number;
  /** The platform process's pid (scenario `realtime` reads its CPU time from /proc). */
  platformPid: number;
  /** Bearer <platform key> of the account every app belongs to. */
  authorization: string;
  controlDatabaseUrl: string;
  appPrefix: string;
  /** SVC_APP_POOL_SIZE the platform was started with. */
  appPoolSize: number;
  /**
   * One more process of the same platform with SVC_ROLE=api (same control database, keys, app prefix, data directory
   * and public URL, the first process's), ready; stopped with the run.
   */
  startApi(name: string): Promise<{ url: string; port: number; pid: number }>;
  cleanups: Array<() => Promise<void>>;
}

/**
 * A substrate key, as only a person signed in may mint one: the platform key invites a new owner, who signs up (the
 * session cookie, sent with the platform's own Origin) and mints the key. Answers `Bearer <key>`.
 */
export async function personSubstrateKey(ctx: BenchContext, name: string): Promise<string> {
  const origin = `http://localhost:${ctx.port}`;
  const post = (path: string, body: unknown, headers: Record<string, string>) =>
    fetch(`${ctx.platformUrl}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const invited = await post('/dashboard/invitations', { role: 'owner' }, { Authorization: ctx.authorization });
  if (invited.status !== 201) throw new Error(`POST /dashboard/invitations answered ${invited.status}: ${await invited.text()}`);
  const { token } = (await invited.json()) as { token: string };
  const signedUp = await post('/dashboard/signup', { email: `${name}@bench.example`, password: 'bench password 1', invitation_token: token }, { Origin: origin });
  const cookie = signedUp.headers.getSetCookie().find((c) => /^(__Host-)?svc_session=/.test(c))?.split(';')[0];
  if (signedUp.status !== 201 || !cookie) throw new Error(`POST /dashboard/signup answered ${signedUp.status}: ${await signedUp.text()}`);
  const minted = await post('/substrate-keys', { name }, { Origin: origin, Cookie: cookie });
  if (minted.status !== 201) throw new Error(`POST /substrate-keys answered ${minted.status}: ${await minted.text()}`);
  return `Bearer ${((await minted.json()) as { key: string }).key}`;
}

export type Target = Omit<LoadSpec, 'connections' | 'duration'>;

/** A ratio for the table; a baseline latency that rounds to 0 ms (autocannon's resolution) has none. */
const times = (ratio: number): string => (Number.isFinite(ratio) ? `${ratio.toFixed(2)}x` : 'n/a');

export interface Pair {
  label: string;
  baselineName: string;
  platform: Target;
  baseline: Target;
  /** Seconds of warm-up per side when this pair needs more than WARMUP to reach its steady state (WARMUP wins when larger). */
  warmup?: number;
  /** The platform's processes serving this pair, when not the scenario's one (ctx.platformPid): their CPU is counted. */
  platformPids?: number[];
  /** The baseline's server processes, when its CPU (and its child processes') is to be counted too. */
  baselinePids?: number[];
}

/** CPU per request (us): the server's processes, the processes they started (null: none, or not counted), PostgreSQL. */
export interface CpuUs {
  server: number | null;
  children: number | null;
  postgres: number;
}

export interface Summary {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  mismatches: number;
  /** The load generator's CPU, median over the rounds, % of one core. */
  cpu: number;
  /** autocannon threads of the rounds. */
  workers: number;
  /** Rounds in which the generator was saturated (its threads at SATURATED_CPU % of a core or more). */
  saturatedRuns: number;
  /**
   * CPU per request, median over the rounds, in microseconds: of the side's server processes (the platform's; a
   * baseline's when its pair names them) and those they started, and of every PostgreSQL process of the machine (the
   * side's work, and whatever else ran).
   */
  cpuUs: CpuUs;
  runs: Array<LoadResult & { cpuUs: CpuUs }>;
}

export interface PairResult {
  scenario: string;
  label: string;
  baselineName: string;
  platform: Summary;
  baseline: Summary;
  ratio: { rps: number; p50: number; p99: number };
}


function summarize(runs: Summary['runs']): Summary {
  const servers = runs.flatMap((r) => (r.cpuUs.server === null ? [] : [r.cpuUs.server]));
  const children = runs.flatMap((r) => (r.cpuUs.children === null ? [] : [r.cpuUs.children]));
  return {
    rps: median(runs.map((r) => r.rps)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    errors: runs.reduce((n, r) => n + r.errors, 0),
    mismatches: runs.reduce((n, r) => n + r.mismatches, 0),
    cpu: median(runs.map((r) => r.cpu)),
    workers: Math.max(...runs.map((r) => r.workers)),
    saturatedRuns: runs.filter(saturated).length,
    cpuUs: {
      server: servers.length ? median(servers) : null,
      children: children.length ? median(children) : null,
      postgres: median(runs.map((r) => r.cpuUs.postgres)),
    },
    runs,
  };
}

/**
 * A round's load with the CPU its server processes (`pids`), the processes they started (function runners; null
 * when they started none) and PostgreSQL used per request, in microseconds.
 */
async function loadCounted(spec: LoadSpec, pids: number[]): Promise<Summary['runs'][number]> {
  const used = cpuSince(pids);
  const result = await load(spec);
  const { servers, children, postgres } = used();
  const per = (seconds: number) => (result.requests > 0 ? (seconds * 1e6) / result.requests : 0);
  return { ...result, cpuUs: { server: pids.length ? per(servers) : null, children: pids.length && children > 0 ? per(children) : null, postgres: per(postgres) } };
}

const cpuUsNote = ({ cpuUs }: Summary['runs'][number]) =>
  `${cpuUs.server === null ? '' : `server ${cpuUs.server.toFixed(0)} us, `}${cpuUs.children === null ? '' : `its child processes ${cpuUs.children.toFixed(0)} us, `}` +
  `Postgres ${cpuUs.postgres.toFixed(0)} us of CPU a request`;

const cpuNote = (r: LoadResult) => `generator ${r.cpu.toFixed(0)}% cpu${r.workers > 1 ? ` on ${r.workers} threads` : ''}${saturated(r) ? ' SATURATED' : ''}`;

/**
 * A warm-up of each side (WARMUP seconds, or the pair's own), then ROUNDS runs interleaved (platform, baseline,
 * platform, ...). A side whose load generator (nearly) saturated a core in its warm-up gets AUTO_WORKERS autocannon
 * threads for its rounds (unless its Target or BENCH_LOAD_WORKERS says how many), so the generator is not what limits
 * it where the machine allows.
 */
export async function measure(scenario: string, pair: Pair, platformPids: number[]): Promise<PairResult> {
  const spec = (t: Target, duration: number, workers: number | undefined): LoadSpec => ({ ...t, connections: CONNECTIONS, duration, workers: t.workers ?? workers });
  const warmup = Math.max(WARMUP, pair.warmup ?? 0);
  process.stderr.write(`${pair.label}: warm-up ${warmup}s each\n`);
  const workersAfter = async (t: Target, name: string): Promise<number | undefined> => {
    const warm = await load(spec(t, warmup, LOAD_WORKERS));
    if (t.workers !== undefined || LOAD_WORKERS !== undefined || warm.cpu < WARMUP_SATURATED_CPU * warm.workers) return LOAD_WORKERS;
    process.stderr.write(`${pair.label}: ${name}: the load generator was at ${warm.cpu.toFixed(0)}% of a core in the warm-up: ${AUTO_WORKERS} autocannon threads for the rounds\n`);
    return AUTO_WORKERS;
  };
  const workers = { platform: await workersAfter(pair.platform, 'platform'), baseline: await workersAfter(pair.baseline, pair.baselineName) };
  // A warm-up starts cold and may stay under the threshold where a round then saturates its one thread: that round is
  // run again on AUTO_WORKERS threads, and so are the rounds after it.
  const round = async (side: 'platform' | 'baseline', name: string): Promise<Summary['runs'][number]> => {
    const t = pair[side];
    const pids = side === 'platform' ? platformPids : (pair.baselinePids ?? []);
    const result = await loadCounted(spec(t, DURATION, workers[side]), pids);
    if (!saturated(result) || t.workers !== undefined || LOAD_WORKERS !== undefined || result.workers >= AUTO_WORKERS) return result;
    process.stderr.write(`${pair.label}: ${name}: the load generator saturated its thread (${result.cpu.toFixed(0)}% cpu): the round again on ${AUTO_WORKERS} threads\n`);
    workers[side] = AUTO_WORKERS;
    return loadCounted(spec(t, DURATION, AUTO_WORKERS), pids);
  };
  const platform: Summary['runs'] = [];
  const baseline: Summary['runs'] = [];
  for (let n = 1; n <= ROUNDS; n++) {
    platform.push(await round('platform', 'platform'));
    baseline.push(await round('baseline', pair.baselineName));
    const [p, b] = [platform.at(-1)!, baseline.at(-1)!];
    process.stderr.write(
      `${pair.label}: round ${n}/${ROUNDS}: platform ${p.rps.toFixed(0)} req/s (${cpuNote(p)}; ${cpuUsNote(p)}), ${pair.baselineName} ${b.rps.toFixed(0)} req/s (${cpuNote(b)}; ${cpuUsNote(b)})\n`,
    );
  }
  const p = summarize(platform);
  const b = summarize(baseline);
  return { scenario, label: pair.label, baselineName: pair.baselineName, platform: p, baseline: b, ratio: { rps: p.rps / b.rps, p50: p.p50 / b.p50, p99: p.p99 / b.p99 } };
}

/** The generator's CPU cell: the median % of one core, `!` when it saturated in any round. */
function cpuCell(s: Pick<Summary, 'cpu' | 'saturatedRuns'>): string {
  return `${s.cpu.toFixed(0)}%${s.saturatedRuns > 0 ? '!' : ''}`;
}

export function printTable(results: PairResult[]): void {
  const head = ['scenario', 'server', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'bad body', 'gen cpu', 'gen threads', 'req/s per run'];
  const rows: string[][] = [];
  for (const r of results) {
    for (const [name, s] of [['platform', r.platform], [r.baselineName, r.baseline]] as const) {
      rows.push([r.label, name, s.rps.toFixed(0), s.p50.toFixed(1), s.p99.toFixed(1), String(s.errors), String(s.mismatches), cpuCell(s), String(s.workers), s.runs.map((x) => x.rps.toFixed(0)).join(' / ')]);
    }
    rows.push([r.label, 'ratio platform/baseline', times(r.ratio.rps), times(r.ratio.p50), times(r.ratio.p99), '', '', '', '', '']);
  }
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i >= 2 && i <= 8 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows) console.log(line(row));
  console.log(
    `(gen cpu: the load generator's CPU, user + system over the run, as a % of one core, median of the rounds; ` +
      `! marks a side whose generator was saturated (${SATURATED_CPU}% of a core per thread or more) in some round: ` +
      `there the figure is the generator's limit, not the server's. gen threads: autocannon's threads.)`,
  );
}

/**
 * A baseline process's server: listens on a loopback port, prints `ready <port>` for the driver (startBaseline), and
 * on SIGTERM closes its connections and pool, then exits.
 */
export function serveBaseline(server: http.Server, pool: { end(): Promise<void> }): void {
  server.listen(0, '127.0.0.1', () => process.stdout.write(`ready ${(server.address() as AddressInfo).port}\n`));
  process.on('SIGTERM', () => {
    server.close(() => void pool.end().then(() => process.exit(0)));
    server.closeAllConnections();
  });
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Nearest-rank percentile. */
export function percentile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.max(0, Math.ceil(q * s.length) - 1)] ?? NaN;
}

/** A setting a baseline process cannot run without (the driver passes it). */
export function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

