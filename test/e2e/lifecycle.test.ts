// Process lifecycle: graceful SIGTERM, concurrent first starts on one control database, and SVC_ROLE.
import { migrations as controlMigrations } from '../../db/migrations/index.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, spawnServer, type SpawnedServer } from '../helpers/server.ts';
import {
  adminQuery,
  cloneControlDatabase,
  databaseUrl,
  databasesWithPrefix,
  dropDatabase,
  dropDatabasesWithPrefix,
  uniqueSuffix,
} from '../helpers/db.ts';
import { generateKey, hashKey } from '../../src/core/crypto.ts';
import { APP_ID, connectMcp, isListening, readResponse, request, type RawResponse } from './e2e-helpers.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

async function withinMs<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A request whose headers and first body bytes are on the wire now, and whose body is completed by finish():
 * the server is certainly in the middle of it while we wait.
 */
function heldRequest(
  baseUrl: string,
  method: string,
  urlPath: string,
  key: string,
  body: string,
): { finish(): void; response: Promise<RawResponse> } {
  const url = new URL(urlPath, baseUrl);
  const payload = Buffer.from(body);
  let req!: http.ClientRequest;
  const response = new Promise<RawResponse>((resolve, reject) => {
    req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method,
        agent: false,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': String(payload.length) },
      },
      (res) => readResponse(res).then(resolve, reject),
    );
    req.on('error', reject);
  });
  req.flushHeaders();
  req.write(payload.subarray(0, 1));
  return { finish: () => req.end(payload.subarray(1)), response };
}

describe('SIGTERM', () => {
  let server: SpawnedServer;

  beforeAll(async () => {
    server = await spawnServer();
  });

  afterAll(async () => {
    await server?.close();
  });

  it('drains in-flight requests, stops accepting, and exits 0 within 10 s', async () => {
    const created = await request(server.url, '/init', { method: 'POST', key: server.platformKey, body: { name: 'Before Stop' } });
    expect(created.status).toBe(201);
    const appId: string = created.json.app_id;

    // An open MCP session and an idle keep-alive connection must not hold the shutdown up.
    const mcp = await connectMcp(server.url, server.platformKey);
    expect((await mcp.client.listTools()).tools.length).toBeGreaterThan(0);
    const keepAlive = await fetch(`${server.url}/health`);
    expect(keepAlive.status).toBe(200);
    await keepAlive.text();

    // Two requests the server is in the middle of when SIGTERM arrives.
    const del = heldRequest(server.url, 'DELETE', `/apps/${appId}`, server.platformKey, '{}');
    const init = heldRequest(server.url, 'POST', '/init', server.platformKey, JSON.stringify({ name: 'During Stop' }));
    await sleep(300);

    const started = Date.now();
    const exitCode = server.stop();
    // No new connections once shutting down; the process is still alive for the in-flight ones.
    await expect.poll(() => isListening(server.port), { timeout: 5_000 }).toBe(false);
    expect(server.child.exitCode).toBeNull();

    del.finish();
    init.finish();
    const [delRes, initRes] = await Promise.all([del.response, init.response]);
    expect(delRes.status, delRes.text).toBe(200);
    expect(delRes.json).toEqual({ deleted: true, app_id: appId });
    expect(initRes.status, initRes.text).toBe(201);
    expect(initRes.json.app_id).toMatch(APP_ID);
    expect(initRes.json.name).toBe('During Stop');

    expect(await withinMs(exitCode, 10_000, 'shutdown')).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
    await mcp.client.close().catch(() => {});

    // The work of the drained requests is complete: the deleted app's database is gone, the new one exists.
    expect(await databasesWithPrefix(server.appDbPrefix + appId)).toEqual([]);
    const newDb = server.appDbPrefix + initRes.json.app_id;
    expect(await databasesWithPrefix(newDb)).toEqual([newDb]);
  });
});

describe('two servers starting at once on one fresh, unmigrated control database', () => {
  const controlDb = `svc_test_${uniqueSuffix()}`;
  const platformKey = generateKey('svc_pk_');
  const servers: SpawnedServer[] = [];

  beforeAll(async () => {
    await adminQuery(`create database ${controlDb}`);
    // One deployment: the same control database and the same app databases (apps_get reads the app's migration version).
    const env = { SVC_PLATFORM_API_KEY: platformKey, SVC_APP_DB_PREFIX: `svc_t${uniqueSuffix()}_` };
    const started = await Promise.allSettled([spawnServer(env, { controlDb }), spawnServer(env, { controlDb })]);
    for (const s of started) if (s.status === 'fulfilled') servers.push(s.value);
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
  });

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await dropDatabase(controlDb);
  });

  it('both become ready and the owner key works on both', async () => {
    expect(servers).toHaveLength(2);
    const [a, b] = servers as [SpawnedServer, SpawnedServer];
    for (const s of servers) {
      expect((await request(s.url, '/health/ready')).status).toBe(200);
      const apps = await request(s.url, '/apps', { key: platformKey });
      expect(apps.status).toBe(200);
      expect(apps.json).toEqual({ apps: [] });
    }
    // They share the control plane: an app made through one is visible through the other.
    const created = await request(a.url, '/init', { method: 'POST', key: platformKey, body: { name: 'Shared' } });
    expect(created.status).toBe(201);
    const fromB = await request(b.url, `/apps/${created.json.app_id}`, { key: platformKey });
    expect(fromB.status).toBe(200);
    expect(fromB.json.app_id).toBe(created.json.app_id);
  });

  it('the control database has exactly one account, holding the key', async () => {
    const client = new pg.Client({ connectionString: databaseUrl(controlDb) });
    await client.connect();
    try {
      const accounts = await client.query<{ id: string }>('select id from accounts');
      expect(accounts.rows).toHaveLength(1);
      const keys = await client.query<{ account_id: string; key_hash: string }>('select account_id, key_hash from platform_keys');
      expect(keys.rows).toEqual([{ account_id: accounts.rows[0]!.id, key_hash: hashKey(platformKey) }]);
      const migrations = await client.query<{ name: string }>('select name from kysely_migration');
      expect(migrations.rows.map((r) => r.name)).toEqual(Object.keys(controlMigrations));
    } finally {
      await client.end();
    }
  });
});

describe('two servers starting at once when the control database does not exist yet', () => {
  it('both create-or-find it, become ready, and seed one account', async () => {
    const controlDb = `svc_test_${uniqueSuffix()}`;
    const platformKey = generateKey('svc_pk_');
    const servers: SpawnedServer[] = [];
    try {
      const started = await Promise.allSettled([
        spawnServer({ SVC_PLATFORM_API_KEY: platformKey }, { controlDb }),
        spawnServer({ SVC_PLATFORM_API_KEY: platformKey }, { controlDb }),
      ]);
      for (const s of started) if (s.status === 'fulfilled') servers.push(s.value);
      const failed = started.find((s) => s.status === 'rejected');
      if (failed) throw failed.reason;
      for (const s of servers) expect((await request(s.url, '/apps', { key: platformKey })).status).toBe(200);
      const client = new pg.Client({ connectionString: databaseUrl(controlDb) });
      await client.connect();
      try {
        expect((await client.query('select id from accounts')).rows).toHaveLength(1);
      } finally {
        await client.end();
      }
    } finally {
      await Promise.all(servers.map((s) => s.close()));
      await dropDatabase(controlDb);
    }
  });
});

describe('SVC_ROLE', () => {
  it('api serves HTTP and exits 0 on SIGTERM', async () => {
    const server = await spawnServer({ SVC_ROLE: 'api' });
    try {
      expect((await request(server.url, '/health')).status).toBe(200);
      const created = await request(server.url, '/init', { method: 'POST', key: server.platformKey, body: { name: 'Api Role' } });
      expect(created.status).toBe(201);
      expect(await withinMs(server.stop(), 10_000, 'shutdown')).toBe(0);
    } finally {
      await server.close();
    }
  });

  it('worker has no HTTP listener, runs jobs, stays up until SIGTERM and exits 0', async () => {
    const controlDb = await cloneControlDatabase();
    const appDbPrefix = `svc_t${uniqueSuffix()}_`;
    const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-e2e-'));
    const port = await freePort();
    let child: ChildProcess | undefined;
    let out = '';
    try {
      child = spawn(process.execPath, ['src/main.ts'], {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH,
          PORT: String(port),
          HOST: '127.0.0.1',
          DATABASE_URL: databaseUrl(controlDb),
          SVC_APP_DB_PREFIX: appDbPrefix,
          SVC_PLATFORM_API_KEY: generateKey('svc_pk_'),
          SVC_DATA_DIR: dataDir,
          SVC_ROLE: 'worker',
          LOG_LEVEL: 'info',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
      const proc = child;
      const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));

      const deadline = Date.now() + 30_000;
      while (!out.includes('worker running')) {
        if (proc.exitCode !== null) throw new Error(`worker exited with ${proc.exitCode}:\n${out}`);
        if (Date.now() > deadline) throw new Error(`worker did not start:\n${out}`);
        await sleep(100);
      }
      await sleep(2000);
      expect(proc.exitCode, out).toBeNull();
      expect(await isListening(port)).toBe(false);
      expect(out).not.toContain('http server listening');

      // It does work: a queued drop job removes a database carrying its prefix.
      const orphan = `${appDbPrefix}orphan`;
      await adminQuery(`create database ${orphan}`);
      const control = new pg.Client({ connectionString: databaseUrl(controlDb) });
      await control.connect();
      try {
        await control.query(`select graphile_worker.add_job('apps_drop_database', json_build_object('db_name', $1::text))`, [orphan]);
      } finally {
        await control.end();
      }
      const dropDeadline = Date.now() + 15_000;
      while ((await databasesWithPrefix(orphan)).length > 0) {
        if (Date.now() > dropDeadline) throw new Error(`the worker did not run the drop job:\n${out}`);
        await sleep(200);
      }
      expect(proc.exitCode).toBeNull();

      proc.kill('SIGTERM');
      expect(await withinMs(exited, 10_000, 'worker shutdown')).toBe(0);
    } finally {
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await dropDatabasesWithPrefix(appDbPrefix);
      await dropDatabase(controlDb);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
