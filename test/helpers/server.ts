import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generateKey } from '../../src/core/crypto.ts';
import { cloneControlDatabase, databaseUrl, dropDatabase, dropDatabasesWithPrefix, uniqueSuffix } from './db.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

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

/** The documentation_url of an error of `area` (none: the guide) on a platform whose SVC_BASE_URL is `baseUrl`. */
export function docsUrl(baseUrl: string, area?: string): string {
  return `${baseUrl}/llms.txt${area === undefined ? '' : `?area=${area}`}`;
}

export interface SpawnedServer {
  url: string;
  port: number;
  platformKey: string;
  /** An error envelope's documentation_url: the guide section of `area`, or the guide (SVC_BASE_URL as given, else localhost). */
  docsUrl(area?: string): string;
  appDbPrefix: string;
  controlDb: string;
  child: ChildProcess;
  output: () => string;
  /** SIGTERM and wait for the exit code. */
  stop(): Promise<number | null>;
  close(): Promise<void>;
}

/** Starts the server exactly as `npm start` does (node src/main.ts) on a cloned control database. */
export async function spawnServer(env: Record<string, string> = {}, opts: { controlDb?: string } = {}): Promise<SpawnedServer> {
  const controlDb = opts.controlDb ?? (await cloneControlDatabase());
  const appDbPrefix = env.SVC_APP_DB_PREFIX ?? `svc_t${uniqueSuffix()}_`;
  // A caller that must name the URL before the start (SVC_BASE_URL on another host name) picks the port itself.
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-e2e-'));
  const platformKey = env.SVC_PLATFORM_API_KEY ?? generateKey('svc_pk_');
  const child = spawn(process.execPath, ['src/main.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl(controlDb),
      SVC_APP_DB_PREFIX: appDbPrefix,
      SVC_PLATFORM_API_KEY: platformKey,
      SVC_DATA_DIR: dataDir,
      // Shipped templates are installed by the tests about them only: each start would otherwise deploy them.
      SVC_TEMPLATES_INSTALL: 'false',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stopped: Promise<number | null> | undefined;
  // A server that dies by itself says why in the test's output (vitest prints a file's stderr with its results).
  child.once('exit', (code, signal) => {
    if (!stopped) process.stderr.write(`server on port ${port} exited by itself (${signal ?? `code ${code}`}); its output:\n${out}\n`);
  });
  try {
    await waitReady(url, child, () => out);
  } catch (err) {
    if (!opts.controlDb) await dropDatabase(controlDb);
    await dropDatabasesWithPrefix(appDbPrefix);
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const stop = () => {
    stopped ??= (child.exitCode !== null ? Promise.resolve(child.exitCode) : (child.kill('SIGTERM'), exited));
    return stopped;
  };
  return {
    url,
    port,
    platformKey,
    docsUrl: (area) => docsUrl(env.SVC_BASE_URL ?? `http://localhost:${port}`, area),
    appDbPrefix,
    controlDb,
    child,
    output: () => out,
    stop,
    close: async () => {
      await stop();
      await dropDatabasesWithPrefix(appDbPrefix);
      if (!opts.controlDb) await dropDatabase(controlDb);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function waitReady(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${output()}`);
    try {
      const res = await fetch(`${url}/health/ready`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`server did not become ready:\n${output()}`);
}
