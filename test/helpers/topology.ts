// The platform as a team that outgrew one machine runs it: two api processes (`npm run start:api`, SVC_ROLE=api)
// behind a round-robin load balancer, one worker process (SVC_ROLE=worker), the control database on the local
// PostgreSQL, app databases on two clusters (the second initialized here: region `eu`), files on an S3 server, the AI
// upstream faked in a process of its own. Every process can be killed with SIGKILL (with its function sandboxes, as
// when a container dies) and started again on the same port; the S3 server can be stopped and started again.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { generateKey } from '../../src/core/crypto.ts';
import { cloneControlDatabase, databaseUrl, dropDatabase, dropDatabasesWithPrefix, uniqueSuffix } from './db.ts';
import { startFakeOpenAIProcess, type FakeOpenAIProcess } from './fake-openai-process.ts';
import { startRoundRobinProxy, type RoundRobinProxy } from './round-robin-proxy.ts';
import { startSecondCluster, type SecondCluster } from './second-cluster.ts';
import { freePort } from './server.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
export const S3_BUCKET = 'svc-topology';
/** The region of the second cluster; the control cluster is the default region, `local`. */
export const SECOND_REGION = 'eu';
/** Seconds without a heartbeat after which a killed worker's jobs are released (the default is 60). */
const STALE_AFTER_SECONDS = 2;
/** How long a stopped process may take to drain before it is killed. */
const STOP_TIMEOUT_MS = 15_000;

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  httpServer?: import('node:http').Server;
}
type S3rverCtor = new (opts: { address: string; port: number; silent: boolean; directory: string; configureBuckets: { name: string }[] }) => S3rverInstance;
const S3rver = createRequire(import.meta.url)('s3rver') as S3rverCtor;

/** One platform process: its role, its port (api), and how to kill and start it again. */
export interface PlatformProcess {
  readonly name: string;
  readonly role: 'api' | 'worker';
  /** The api's own port (the proxy's backend); none for the worker. */
  readonly port?: number;
  readonly child: ChildProcess;
  /** Everything the process (and its earlier incarnations) wrote. */
  output(): string;
  /** SIGKILL the process and its sandboxes, and wait until it is gone. */
  kill9(): Promise<void>;
  /** Start it again (same port, same settings) and wait until it serves. */
  restart(): Promise<void>;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<void>;
}

export interface S3Server {
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and deletes what it stored. */
  remove(): Promise<void>;
}

export interface Topology {
  /** The load balancer's URL: every client of the test talks to it (SVC_BASE_URL too). */
  url: string;
  platformKey: string;
  controlDb: string;
  appDbPrefix: string;
  proxy: RoundRobinProxy;
  apis: [PlatformProcess, PlatformProcess];
  worker: PlatformProcess;
  cluster2: SecondCluster;
  s3: S3Server;
  ai: FakeOpenAIProcess;
  /** A client of the control database. */
  control: pg.Client;
  close(): Promise<void>;
}

export async function startTopology(extraEnv: Record<string, string> = {}): Promise<Topology> {
  const cleanup: Array<() => Promise<unknown>> = [];
  try {
    const controlDb = await cloneControlDatabase();
    const appDbPrefix = `svc_t${uniqueSuffix()}_`;
    cleanup.push(() => dropDatabase(controlDb), () => dropDatabasesWithPrefix(appDbPrefix));
    const cluster2 = await startSecondCluster();
    cleanup.push(() => cluster2.stop());
    const s3 = await startS3();
    cleanup.push(() => s3.remove());
    const ai = await startFakeOpenAIProcess();
    cleanup.push(() => ai.close());
    const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-topology-'));
    cleanup.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const control = new pg.Client({ connectionString: databaseUrl(controlDb) });
    await control.connect();
    cleanup.push(() => control.end());

    const ports = [await freePort(), await freePort()];
    const proxy = await startRoundRobinProxy(ports);
    cleanup.push(() => proxy.close());
    const platformKey = generateKey('svc_pk_');
    const env: Record<string, string> = {
      PATH: process.env.PATH!,
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl(controlDb),
      SVC_APP_DB_PREFIX: appDbPrefix,
      SVC_REGIONS: `${SECOND_REGION}=${cluster2.url}`,
      SVC_PLATFORM_API_KEY: platformKey,
      SVC_MASTER_KEY: randomBytes(32).toString('hex'),
      SVC_BASE_URL: proxy.url,
      // Sites and function bundles: one folder every process mounts (a volume in the chart).
      SVC_DATA_DIR: dataDir,
      SVC_STORAGE_BACKEND: 's3',
      SVC_S3_ENDPOINT: s3.url,
      SVC_S3_BUCKET: S3_BUCKET,
      SVC_S3_ACCESS_KEY_ID: 'S3RVER',
      SVC_S3_SECRET_ACCESS_KEY: 'S3RVER',
      SVC_S3_FORCE_PATH_STYLE: 'true',
      SVC_AI_BASE_URL: ai.url,
      SVC_AI_API_KEY: 'sk-fake-upstream',
      SVC_OUTBOUND_ALLOW_PRIVATE: 'true',
      SVC_TRUST_PROXY: '1',
      SVC_WORKER_STALE_AFTER_SECONDS: String(STALE_AFTER_SECONDS),
      // Each process may hold this many connections on the app clusters: three of them stay under the second
      // cluster's max_connections (60), as the scaling notes of docs/operations.md ask of a deployment.
      SVC_APP_POOL_BUDGET: '15',
      SVC_TEMPLATES_INSTALL: 'false',
      LOG_LEVEL: 'warn',
      ...extraEnv,
    };
    // Each is stopped by the cleanup as soon as it exists, so a later one failing to start leaves none behind.
    const started = async (name: string, role: 'api' | 'worker', port?: number) => {
      const proc = await startProcess(name, role, env, control, port);
      cleanup.push(() => proc.stop());
      return proc;
    };
    const apis: [PlatformProcess, PlatformProcess] = [await started('api-1', 'api', ports[0]), await started('api-2', 'api', ports[1])];
    const worker = await started('worker', 'worker');
    return {
      url: proxy.url,
      platformKey,
      controlDb,
      appDbPrefix,
      proxy,
      apis,
      worker,
      cluster2,
      s3,
      ai,
      control,
      close: () => runCleanup(cleanup),
    };
  } catch (err) {
    await runCleanup(cleanup);
    throw err;
  }
}

/** Undoes in reverse order; every step runs even when an earlier one failed. */
async function runCleanup(steps: Array<() => Promise<unknown>>): Promise<void> {
  for (const step of steps.reverse()) await step().catch(() => undefined);
}

async function startS3(): Promise<S3Server> {
  const directory = mkdtempSync(path.join(tmpdir(), 'svc-topology-s3-'));
  const make = (port: number) => new S3rver({ address: '127.0.0.1', port, silent: true, directory, configureBuckets: [{ name: S3_BUCKET }] });
  let server: S3rverInstance | undefined = make(0);
  const { port } = await server.run();
  // Its open connections too (the platform's S3 client keeps them alive), as when the server goes away.
  const stop = async () => {
    server?.httpServer?.closeAllConnections();
    await server?.close();
    server = undefined;
  };
  return {
    url: `http://127.0.0.1:${port}`,
    // The objects stay in the directory: a restart serves what was stored before the stop.
    start: async () => {
      for (let attempt = 1; ; attempt++) {
        server = make(port);
        try {
          await server.run();
          return;
        } catch (err) {
          // The port may linger a moment after the stop.
          if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 20) throw err;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    },
    stop,
    remove: async () => {
      await stop();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

async function startProcess(name: string, role: 'api' | 'worker', env: Record<string, string>, control: pg.Client, port?: number): Promise<PlatformProcess> {
  let out = '';
  let child: ChildProcess;
  let exited: Promise<void>;
  const launch = async () => {
    const knownWorkers = role === 'worker' ? await workerIds(control) : [];
    // Its own process group: a SIGKILL of the group takes the function sandboxes too, as a container's death does.
    child = spawn(process.execPath, ['src/main.ts'], {
      cwd: ROOT,
      env: { ...env, SVC_ROLE: role, PORT: String(port ?? 0) },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    exited = new Promise((resolve) => child.once('exit', () => resolve()));
    const ready = role === 'api' ? () => apiReady(port!) : async () => (await workerIds(control)).some((id) => !knownWorkers.includes(id));
    if (!(await waitServing(() => child, ready))) {
      signalGroup('SIGKILL');
      throw new Error(`${name} did not become ready (exit ${child.exitCode ?? child.signalCode}):\n${out}`);
    }
  };
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // the group is gone already
    }
  };
  await launch();
  return {
    name,
    role,
    port,
    get child() {
      return child;
    },
    output: () => out,
    kill9: async () => {
      signalGroup('SIGKILL');
      await exited;
    },
    restart: launch,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        // A process that does not drain in time is killed: the test must not hang on it.
        await Promise.race([exited, new Promise((r) => setTimeout(r, STOP_TIMEOUT_MS))]);
      }
      // The process if it is still there, and sandboxes a stopped process did not reap.
      signalGroup('SIGKILL');
      await exited;
    },
  };
}

async function apiReady(port: number): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/health/ready`)).status === 200;
  } catch {
    return false;
  }
}

async function workerIds(control: pg.Client): Promise<string[]> {
  const { rows } = await control.query<{ worker_id: string }>('select worker_id from worker_heartbeats');
  return rows.map((r) => r.worker_id);
}

/** Whether the process became ready within 30 s (false as soon as it exits). */
async function waitServing(child: () => ChildProcess, ready: () => Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child().exitCode !== null || child().signalCode !== null) return false;
    if (await ready()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}
