// npm run bench: the platform (started as `npm start` starts it) against the physical limits measured in the
// same run; each scenario on a platform of its own, on a fresh control database dropped when the scenario ends. See
// bench/README.md.
//
// Scenarios: `apps` (GET /apps and MCP apps_list), `data` (the data API as an end user), `functions` (a
// hello-world function against `deno serve`), `fairness` (one app's function while another app's functions are
// flooded, against the same function alone) and `ai` (the AI gateway's chat completions against the same request
// sent straight to a fake OpenAI-compatible upstream: added latency, time to first byte, throughput) and `rag` (RAG
// queries against node:http + the same embedding call and SQL; ingestion against the bare embed + insert loop) and
// `substrate` (proposals of record_learning against node:http + pg running the same transaction) and `stream` (the
// substrate change stream's commit-to-frame latency at 200 sockets against raw pg LISTEN -> ws; outbox deliveries per
// second to a loopback receiver) and `realtime` (postgres_changes on an app's tables to 10, 100 and 500 end users under
// row-level security, change-to-delivery latency and deliveries/s, against raw pg LISTEN -> ws). All run by
// default; pick some with `npm run bench -- data` or BENCH_SCENARIOS=apps,data.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { aiScenario } from './ai.ts';
import { appsScenario } from './apps.ts';
import { DATA_USERS, dataScenario, SEED_ROWS } from './data.ts';
import { fairnessScenario } from './fairness.ts';
import { functionsScenario } from './functions.ts';
import { INGEST_DOCS, ragScenario, SEED_CHUNKS, sharedAiUpstream } from './rag.ts';
import { realtimeScenario } from './realtime.ts';
import { streamPlatformEnv, streamScenario } from './stream.ts';
import { substrateScenario } from './substrate.ts';
import {
  CLUSTER_URL,
  CONNECTIONS,
  DURATION,
  LOAD_WORKERS,
  ROOT,
  ROUNDS,
  WARMUP,
  admin,
  dropDatabases,
  freePort,
  measure,
  printTable,
  startChild,
  stopLoading,
  waitFor,
  type BenchContext,
  type Pair,
  type PairResult,
} from './harness.ts';

/** In the order they run; each on a platform of its own (`apps` expects to find only its own three apps). */
const SCENARIOS: Record<string, (ctx: BenchContext) => Promise<Pair[]>> = {
  apps: appsScenario,
  data: dataScenario,
  functions: functionsScenario,
  fairness: fairnessScenario,
  ai: aiScenario,
  rag: ragScenario,
  substrate: substrateScenario,
  stream: streamScenario,
  realtime: realtimeScenario,
};

/**
 * What a scenario needs running before the platform starts; returns the platform environment it adds. `ai` and `rag`
 * share one fake OpenAI-compatible upstream (bench/ai.ts as its own process), started once; `stream` needs
 * SVC_OUTBOUND_ALLOW_PRIVATE=true for its loopback webhook receiver.
 */
const BEFORE_PLATFORM: Record<string, (cleanups: Array<() => Promise<void>>) => Promise<Record<string, string>>> = {
  ai: sharedAiUpstream,
  rag: sharedAiUpstream,
  stream: streamPlatformEnv,
};

function selectedScenarios(): string[] {
  const asked = [...process.argv.slice(2), ...(process.env.BENCH_SCENARIOS ?? '').split(',')].map((s) => s.trim()).filter(Boolean);
  const unknown = asked.filter((s) => !(s in SCENARIOS));
  if (unknown.length) throw new Error(`unknown scenario ${unknown.join(', ')}; choose from ${Object.keys(SCENARIOS).join(', ')}`);
  return Object.keys(SCENARIOS).filter((s) => asked.length === 0 || asked.includes(s));
}

/** Connections per app pool, the platform's SVC_APP_POOL_SIZE; the data baseline gets the same. */
const APP_POOL_SIZE = process.env.BENCH_APP_POOL_SIZE || '5';
/** SVC_FUNCTIONS_MAX_WARM_PER_FUNCTION of the platform: processes one function may keep (one request each at a time). */
const FN_MAX_WARM = process.env.BENCH_FN_MAX_WARM || '2';
/** A directory for `node --cpu-prof` profiles of the platform process (written when it stops). */
const CPU_PROF_DIR = process.env.BENCH_CPU_PROF;
/** BENCH_PAIRS=<text>[,<text>]: only the pairs whose label or baseline's name contains one of them (e.g. `GET /apps`), for profiling one path. */
const PAIR_FILTER = (process.env.BENCH_PAIRS ?? '').split(',').map((s) => s.trim()).filter(Boolean);
const picked = (pair: { label: string; baselineName: string }): boolean => PAIR_FILTER.length === 0 || PAIR_FILTER.some((text) => `${pair.label} ${pair.baselineName}`.includes(text));

interface Failure {
  scenario: string;
  error: unknown;
}

/** The environment every platform of the run starts with (the scenarios' own additions over it). */
function platformEnvironment(scenarioEnv: Record<string, string>): Record<string, string> {
  return {
    HOST: '127.0.0.1',
    SVC_APP_POOL_SIZE: APP_POOL_SIZE,
    // End-user tokens must outlive the whole run (default 900 s).
    SVC_ACCESS_TOKEN_TTL_SECONDS: '3600',
    // Warm processes per function (scenario `functions`); the platform default is 2.
    SVC_FUNCTIONS_MAX_WARM_PER_FUNCTION: FN_MAX_WARM,
    // Scenario `data` signs up its end users from one client, more than the default 10 a minute.
    SVC_AUTH_RATE_LIMIT_PER_MINUTE: '1000',
    LOG_LEVEL: 'warn',
    // The scenarios measure requests, not a start: no shipped template is deployed beside them.
    SVC_TEMPLATES_INSTALL: 'false',
    // Scenarios `ai` and `rag`: the fake upstream's SVC_AI_BASE_URL and SVC_AI_API_KEY; `stream`: SVC_OUTBOUND_ALLOW_PRIVATE.
    ...scenarioEnv,
  };
}

/**
 * A platform of its own for one scenario, on a fresh control database, with its own data directory and keys: each
 * scenario starts from a quiet platform (nothing an earlier scenario flooded, spawned or filled weighs on it).
 */
async function startScenarioPlatform(baseEnv: Record<string, string>, cleanups: Array<() => Promise<void>>): Promise<BenchContext> {
  const suffix = randomBytes(5).toString('hex');
  const controlDb = `svc_bench_${suffix}`;
  const appPrefix = `svc_b${suffix}_`;
  const databaseUrl = `${CLUSTER_URL}/${controlDb}`;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-bench-'));
  const platformKey = 'svc_pk_' + randomBytes(32).toString('base64url');
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  cleanups.push(() => dropDatabases(controlDb, appPrefix));
  await admin(`create database ${pg.escapeIdentifier(controlDb)}`);
  const nodeArgs = CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(CPU_PROF_DIR)}`] : [];
  const platformEnv: Record<string, string> = {
    ...baseEnv,
    DATABASE_URL: databaseUrl,
    SVC_APP_DB_PREFIX: appPrefix,
    SVC_PLATFORM_API_KEY: platformKey,
    // One key for every process of the platform (scenario `apps` adds api processes), as a deployment must have.
    SVC_MASTER_KEY: randomBytes(32).toString('hex'),
    SVC_DATA_DIR: dataDir,
  };
  /** A platform process (`npm start`) with the scenario's environment and `env` over it, ready. */
  const startPlatform = async (what: string, env: Record<string, string>): Promise<{ url: string; port: number; pid: number }> => {
    const port = await freePort();
    const child = startChild('src/main.ts', { ...platformEnv, PORT: String(port), ...env }, nodeArgs);
    cleanups.push(child.stop);
    const url = `http://127.0.0.1:${port}`;
    await waitFor(what, child, async () => ((await fetch(`${url}/health/ready`)).status === 200 ? true : undefined));
    return { url, port, pid: child.proc.pid! };
  };
  const { url: platformUrl, port, pid: platformPid } = await startPlatform('platform', {});
  // The account the platform key belongs to (the platform created it at start) runs on the enterprise plan: no
  // allowance to soft-lock it (scenario `functions` alone makes ~156,000 invocations, the free plan's monthly
  // allowance is 50,000). Before the scenario, so nothing has cached the plan yet. Scenarios `ai` and `rag` then set
  // BENCH_AI_PLAN (default pro: no soft lock either) to measure credit reservations.
  await admin(`update accounts set plan = 'enterprise' where id in (select account_id from platform_keys)`, [], controlDb);
  return {
    platformUrl,
    port,
    platformPid,
    authorization: `Bearer ${platformKey}`,
    controlDatabaseUrl: databaseUrl,
    appPrefix,
    appPoolSize: Number(APP_POOL_SIZE),
    // The platform's public URL is the first process's (the default SVC_BASE_URL), as behind a load balancer.
    startApi: (name) => startPlatform(name, { SVC_ROLE: 'api', SVC_BASE_URL: `http://localhost:${port}` }),
    cleanups,
  };
}

async function main(scenarios: string[], cleanups: Array<() => Promise<void>>, failures: Failure[]): Promise<PairResult[]> {
  const scenarioEnv: Record<string, string> = {};
  const runnable: string[] = [];
  for (const scenario of scenarios) {
    try {
      Object.assign(scenarioEnv, await BEFORE_PLATFORM[scenario]?.(cleanups));
      runnable.push(scenario);
    } catch (error) {
      console.error(`\nscenario ${scenario} failed before the platform started:`, error);
      failures.push({ scenario, error });
    }
  }
  const baseEnv = platformEnvironment(scenarioEnv);
  // Each scenario sets up, then measures, then stops its platform and everything it started before the next one
  // starts. A scenario that fails is reported at the end; the others still run.
  const results: PairResult[] = [];
  for (const scenario of runnable) {
    const mark = cleanups.length;
    try {
      const ctx = await startScenarioPlatform(baseEnv, cleanups);
      const pairs = await SCENARIOS[scenario]!(ctx);
      for (const pair of pairs.filter(picked)) results.push(await measure(scenario, pair, pair.platformPids ?? [ctx.platformPid]));
    } catch (error) {
      if (cleaning) throw error; // Ctrl-C: stop here
      console.error(`\nscenario ${scenario} failed:`, error);
      failures.push({ scenario, error });
      stopLoading();
    }
    if (!cleaning) await undo(cleanups.splice(mark));
  }
  return results;
}

/** Runs `fns` in reverse order, each once; one that fails is reported and the rest still run. */
async function undo(fns: Array<() => Promise<void>>): Promise<void> {
  for (const fn of fns.reverse()) await fn().catch((err: unknown) => console.error('cleanup failed:', err));
}

/** Undo in reverse order, once, even when Ctrl-C and a failing run both ask for it. */
let cleaning: Promise<void> | undefined;
function cleanup(cleanups: Array<() => Promise<void>>): Promise<void> {
  cleaning ??= (async () => {
    stopLoading();
    await undo(cleanups.splice(0));
  })();
  return cleaning;
}

const cleanups: Array<() => Promise<void>> = [];
process.once('SIGINT', () => void cleanup(cleanups).then(() => process.exit(130)));
try {
  const scenarios = selectedScenarios();
  console.error(
    `bench: ${scenarios.join(', ')}; ${CONNECTIONS} connections, ${DURATION}s per run, ${ROUNDS} rounds interleaved, ${WARMUP}s warm-up; ` +
      `${availableParallelism()} cores (${cpus()[0]?.model ?? '?'}), node ${process.version}`,
  );
  const failures: Failure[] = [];
  const results = await main(scenarios, cleanups, failures);
  await cleanup(cleanups);
  console.log('');
  if (results.length) {
    printTable(results);
    console.log('');
  }
  const us = (n: number | null) => (n === null ? 'not counted' : `${n.toFixed(0)} us`);
  const side = ({ cpuUs }: PairResult['platform']) => `${cpuUs.children === null ? '' : `, their child processes ${us(cpuUs.children)}`} and Postgres ${us(cpuUs.postgres)}`;
  for (const r of results) {
    const baselineOwn = r.baseline.cpuUs.server === null ? '' : `the ${r.baselineName}'s processes ${us(r.baseline.cpuUs.server)}`;
    console.log(
      `${r.label}: ${r.ratio.rps.toFixed(2)}x of ${r.baselineName} (median of ${ROUNDS}); CPU a request: the platform's processes ${us(r.platform.cpuUs.server)}${side(r.platform)}, ` +
        `against ${baselineOwn ? `${baselineOwn}${side(r.baseline)}` : `Postgres ${us(r.baseline.cpuUs.postgres)} beside the ${r.baselineName}`}`,
    );
  }
  for (const f of failures) {
    const message = f.error instanceof Error ? f.error.message : String(f.error);
    console.log(`FAILED scenario ${f.scenario}: ${message.split('\n').slice(0, 6).join('\n  ')}`);
  }
  const dir = path.join(import.meta.dirname, 'results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'latest.json');
  const settings = { scenarios, connections: CONNECTIONS, duration_s: DURATION, rounds: ROUNDS, warmup_s: WARMUP, app_pool_size: Number(APP_POOL_SIZE), load_workers: LOAD_WORKERS ?? 'auto', data_seed_rows: SEED_ROWS, data_users: DATA_USERS, rag_seed_chunks: SEED_CHUNKS, rag_ingest_docs: INGEST_DOCS };
  const failed = failures.map((f) => ({ scenario: f.scenario, error: f.error instanceof Error ? f.error.message : String(f.error) }));
  writeFileSync(file, JSON.stringify({ date: new Date().toISOString(), node: process.version, cores: availableParallelism(), settings, results, failed }, null, 2) + '\n');
  console.error(`\nwrote ${path.relative(ROOT, file)}`);
  if (failures.length) {
    console.error(`${failures.length} scenario(s) failed: ${failures.map((f) => f.scenario).join(', ')} (their errors are above and in the summary)`);
    process.exitCode = 1;
  }
  if (results.some((r) => r.platform.errors + r.platform.mismatches + r.baseline.errors + r.baseline.mismatches > 0)) {
    console.error('some requests failed (see the errors / bad body columns): the ratios are not trustworthy');
    process.exitCode = 1;
  }
} catch (err) {
  if (!cleaning) console.error(err); // else Ctrl-C killed a child and this is the echo of that
  await cleanup(cleanups);
  process.exitCode = 1;
}
