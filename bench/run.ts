// npm run bench: the platform (started as `npm start` starts it) against the physical limits measured in the
// same run, on a fresh control database that is dropped at the end. See bench/README.md.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import pg from 'pg';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import type { LoadResult, LoadSpec } from './load.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const CLUSTER_URL = process.env.BENCH_DATABASE_CLUSTER ?? 'postgres://postgres@127.0.0.1:5432';

function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got '${raw}'`);
  return n;
}

const DURATION = envInt('BENCH_DURATION', 10);
const CONNECTIONS = envInt('BENCH_CONNECTIONS', 50);
const ROUNDS = envInt('BENCH_ROUNDS', 3);
const WARMUP = envInt('BENCH_WARMUP', 3);

// ---------------------------------------------------------------------------------------------- processes

interface Child {
  proc: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

function startChild(script: string, env: Record<string, string>): Child {
  const proc = spawn(process.execPath, [script], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
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

async function waitFor<T>(what: string, child: Child, probe: () => Promise<T | undefined>): Promise<T> {
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
async function startBaseline(script: string, env: Record<string, string>): Promise<{ child: Child; url: string }> {
  const child = startChild(script, env);
  const port = await waitFor(script, child, async () => /^ready (\d+)$/m.exec(child.output())?.[1]);
  return { child, url: `http://127.0.0.1:${port}` };
}

async function freePort(): Promise<number> {
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

/** One autocannon run in its own process. */
function load(spec: LoadSpec): Promise<LoadResult> {
  const child = (loading = spawn(process.execPath, [path.join('bench', 'load.ts'), JSON.stringify(spec)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] }));
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

async function admin(sql: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: `${CLUSTER_URL}/postgres` });
  await client.connect();
  try {
    return await client.query(sql, params);
  } finally {
    await client.end();
  }
}

async function dropDatabases(controlDb: string, appPrefix: string): Promise<void> {
  const { rows } = await admin('select datname from pg_database where datname = $1 or starts_with(datname, $2)', [controlDb, appPrefix]);
  for (const { datname } of rows as Array<{ datname: string }>) {
    await admin(`drop database if exists ${pg.escapeIdentifier(datname)} with (force)`);
  }
}

// ---------------------------------------------------------------------------------------------- MCP client bits

interface RpcReply {
  status: number;
  headers: Headers;
  message: { result?: Record<string, unknown>; error?: unknown } | undefined;
}

/** POST one JSON-RPC message; the reply is JSON or a one-event SSE stream. */
async function rpc(url: string, headers: Record<string, string>, body: unknown): Promise<RpcReply> {
  const res = await fetch(`${url}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await res.text();
  const json = res.headers.get('content-type')?.includes('text/event-stream')
    ? text.split('\n').find((l) => l.startsWith('data: '))?.slice(6)
    : text;
  return { status: res.status, headers: res.headers, message: json ? JSON.parse(json) : undefined };
}

/** initialize + notifications/initialized; returns the headers every later request of the session carries. */
async function openSession(url: string, authorization: string): Promise<Record<string, string>> {
  const base = { Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json', Authorization: authorization };
  const init = await rpc(url, base, {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'svc-bench', version: '0.0.0' } },
  });
  const sessionId = init.headers.get('mcp-session-id');
  const version = init.message?.result?.protocolVersion;
  if (init.status !== 200 || !sessionId || typeof version !== 'string') throw new Error(`initialize at ${url} failed: ${init.status} ${JSON.stringify(init.message)}`);
  const headers = { ...base, 'Mcp-Session-Id': sessionId, 'mcp-protocol-version': version };
  const notified = await rpc(url, headers, { jsonrpc: '2.0', method: 'notifications/initialized' });
  if (notified.status !== 202) throw new Error(`notifications/initialized at ${url} answered ${notified.status}`);
  return headers;
}

const TOOLS_CALL = JSON.stringify({ jsonrpc: '2.0', id: '[<id>]', method: 'tools/call', params: { name: 'apps_list', arguments: {} } });

async function callAppsList(url: string, headers: Record<string, string>): Promise<unknown> {
  const reply = await rpc(url, headers, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'apps_list', arguments: {} } });
  const result = reply.message?.result;
  if (reply.status !== 200 || !result || result.isError) throw new Error(`tools/call at ${url} failed: ${reply.status} ${JSON.stringify(reply.message)}`);
  return result.structuredContent;
}

// ---------------------------------------------------------------------------------------------- measuring

type Target = Omit<LoadSpec, 'connections' | 'duration'>;

interface Pair {
  label: string;
  baselineName: string;
  platform: Target;
  baseline: Target;
}

interface Summary {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  mismatches: number;
  runs: LoadResult[];
}

interface PairResult {
  label: string;
  baselineName: string;
  platform: Summary;
  baseline: Summary;
  ratio: { rps: number; p50: number; p99: number };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function summarize(runs: LoadResult[]): Summary {
  return {
    rps: median(runs.map((r) => r.rps)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    errors: runs.reduce((n, r) => n + r.errors, 0),
    mismatches: runs.reduce((n, r) => n + r.mismatches, 0),
    runs,
  };
}

async function measure(pair: Pair): Promise<PairResult> {
  const spec = (t: Target, duration: number): LoadSpec => ({ ...t, connections: CONNECTIONS, duration });
  process.stderr.write(`${pair.label}: warm-up ${WARMUP}s each\n`);
  await load(spec(pair.platform, WARMUP));
  await load(spec(pair.baseline, WARMUP));
  const platform: LoadResult[] = [];
  const baseline: LoadResult[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    platform.push(await load(spec(pair.platform, DURATION)));
    baseline.push(await load(spec(pair.baseline, DURATION)));
    process.stderr.write(`${pair.label}: round ${round}/${ROUNDS}: platform ${platform.at(-1)!.rps.toFixed(0)} req/s, ${pair.baselineName} ${baseline.at(-1)!.rps.toFixed(0)} req/s\n`);
  }
  const p = summarize(platform);
  const b = summarize(baseline);
  return { label: pair.label, baselineName: pair.baselineName, platform: p, baseline: b, ratio: { rps: p.rps / b.rps, p50: p.p50 / b.p50, p99: p.p99 / b.p99 } };
}

function printTable(results: PairResult[]): void {
  const head = ['scenario', 'server', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'bad body', 'req/s per run'];
  const rows: string[][] = [];
  for (const r of results) {
    for (const [name, s] of [['platform', r.platform], [r.baselineName, r.baseline]] as const) {
      rows.push([r.label, name, s.rps.toFixed(0), s.p50.toFixed(1), s.p99.toFixed(1), String(s.errors), String(s.mismatches), s.runs.map((x) => x.rps.toFixed(0)).join(' / ')]);
    }
    rows.push([r.label, 'ratio platform/baseline', `${r.ratio.rps.toFixed(2)}x`, `${r.ratio.p50.toFixed(2)}x`, `${r.ratio.p99.toFixed(2)}x`, '', '', '']);
  }
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i >= 2 && i <= 6 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows) console.log(line(row));
}

// ---------------------------------------------------------------------------------------------- main

async function main(cleanups: Array<() => Promise<void>>): Promise<PairResult[]> {
  const suffix = randomBytes(5).toString('hex');
  const controlDb = `svc_bench_${suffix}`;
  const appPrefix = `svc_b${suffix}_`;
  const databaseUrl = `${CLUSTER_URL}/${controlDb}`;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-bench-'));
  const platformKey = 'svc_pk_' + randomBytes(32).toString('base64url');
  const authorization = `Bearer ${platformKey}`;
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  cleanups.push(() => dropDatabases(controlDb, appPrefix));

  await admin(`create database ${pg.escapeIdentifier(controlDb)}`);
  const port = await freePort();
  const platformUrl = `http://127.0.0.1:${port}`;
  const platform = startChild('src/main.ts', {
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl,
    SVC_APP_DB_PREFIX: appPrefix,
    SVC_PLATFORM_API_KEY: platformKey,
    SVC_DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
  });
  cleanups.push(platform.stop);
  await waitFor('platform', platform, async () => ((await fetch(`${platformUrl}/health/ready`)).status === 200 ? true : undefined));

  for (const name of ['Bench One', 'Bench Two', 'Bench Three']) {
    const res = await fetch(`${platformUrl}/init`, { method: 'POST', headers: { Authorization: authorization, 'Content-Type': 'application/json' }, body: JSON.stringify({ name }) });
    if (res.status !== 201) throw new Error(`POST /init answered ${res.status}: ${await res.text()}`);
  }

  // Same database, same base URL as the platform's default (SVC_BASE_URL unset), so the JSON is byte-for-byte the same.
  const baselineEnv = { DATABASE_URL: databaseUrl, BASE_URL: `http://localhost:${port}` };
  const raw = await startBaseline('bench/baseline-raw.ts', baselineEnv);
  cleanups.push(raw.child.stop);
  const sdk = await startBaseline('bench/baseline-mcp.ts', baselineEnv);
  cleanups.push(sdk.child.stop);

  // Pre-flight: every server answers the same apps, so both sides of a ratio do the same work.
  const getApps = async (url: string) => {
    const res = await fetch(`${url}/apps`, { headers: { Authorization: authorization } });
    if (res.status !== 200) throw new Error(`GET ${url}/apps answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as { apps: Array<{ app_id: string }> };
  };
  const expected = await getApps(platformUrl);
  if (expected.apps.length !== 3) throw new Error(`expected 3 apps, got ${JSON.stringify(expected)}`);
  const platformSession = await openSession(platformUrl, authorization);
  const sdkSession = await openSession(sdk.url, authorization);
  const answers = { raw: await getApps(raw.url), platformMcp: await callAppsList(platformUrl, platformSession), sdkMcp: await callAppsList(sdk.url, sdkSession) };
  for (const [who, got] of Object.entries(answers)) {
    if (!isDeepStrictEqual(got, expected)) throw new Error(`${who} answered differently:\n${JSON.stringify(got)}\nvs GET /apps:\n${JSON.stringify(expected)}`);
  }

  const lastApp = expected.apps.at(-1)!.app_id;
  const rest = (url: string): Target => ({ url: `${url}/apps`, method: 'GET', headers: { Authorization: authorization }, expect: [lastApp], forbid: [] });
  const mcp = (url: string, headers: Record<string, string>): Target => ({
    url: `${url}/mcp`,
    method: 'POST',
    headers,
    body: TOOLS_CALL,
    idReplacement: true,
    expect: [lastApp, '"structuredContent"'],
    forbid: ['"isError":true', '"error":'],
  });
  const pairs: Pair[] = [
    { label: 'GET /apps', baselineName: 'raw node:http+pg', platform: rest(platformUrl), baseline: rest(raw.url) },
    { label: 'MCP tools/call apps_list', baselineName: 'bare MCP SDK server', platform: mcp(platformUrl, platformSession), baseline: mcp(sdk.url, sdkSession) },
  ];
  const results: PairResult[] = [];
  for (const pair of pairs) results.push(await measure(pair));
  return results;
}

/** Undo in reverse order, once, even when Ctrl-C and a failing run both ask for it. */
let cleaning: Promise<void> | undefined;
function cleanup(cleanups: Array<() => Promise<void>>): Promise<void> {
  cleaning ??= (async () => {
    loading?.kill('SIGTERM');
    for (const fn of cleanups.splice(0).reverse()) await fn().catch((err: unknown) => console.error('cleanup failed:', err));
  })();
  return cleaning;
}

const cleanups: Array<() => Promise<void>> = [];
process.once('SIGINT', () => void cleanup(cleanups).then(() => process.exit(130)));
try {
  console.error(`bench: ${CONNECTIONS} connections, ${DURATION}s per run, ${ROUNDS} rounds interleaved, ${WARMUP}s warm-up; ${availableParallelism()} cores (${cpus()[0]?.model ?? '?'}), node ${process.version}`);
  const results = await main(cleanups);
  await cleanup(cleanups);
  console.log('');
  printTable(results);
  console.log('');
  for (const r of results) console.log(`${r.label}: ${r.ratio.rps.toFixed(2)}x of ${r.baselineName} (median of ${ROUNDS})`);
  const dir = path.join(import.meta.dirname, 'results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'latest.json');
  const settings = { connections: CONNECTIONS, duration_s: DURATION, rounds: ROUNDS, warmup_s: WARMUP };
  writeFileSync(file, JSON.stringify({ date: new Date().toISOString(), node: process.version, cores: availableParallelism(), settings, results }, null, 2) + '\n');
  console.error(`\nwrote ${path.relative(ROOT, file)}`);
  if (results.some((r) => r.platform.errors + r.platform.mismatches + r.baseline.errors + r.baseline.mismatches > 0)) {
    console.error('some requests failed (see the errors / bad body columns): the ratios are not trustworthy');
    process.exitCode = 1;
  }
} catch (err) {
  if (!cleaning) console.error(err); // else Ctrl-C killed a child and this is the echo of that
  await cleanup(cleanups);
  process.exitCode = 1;
}
