// Jobs survive a crash: `kill -9` of a server (started like `npm start`) in the middle of a frontend build and of a
// cron slot, then a new server on the same control database and data folder. The jobs the dead process held
// must run again within the stale-worker threshold, not after graphile-worker's own 4 hours.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { cloneControlDatabase, databaseUrl, dropDatabase, dropDatabasesWithPrefix, uniqueSuffix } from '../helpers/db.ts';
import { generateKey } from '../../src/core/crypto.ts';
import { siteZip, waitFor } from '../integration/frontend-helpers.ts';
import { request } from './e2e-helpers.ts';

const STALE_AFTER_SECONDS = 2;
/** The threshold, the new worker's job poll (2 s) and a margin for a loaded two-core machine. */
const RECOVERY_MS = STALE_AFTER_SECONDS * 1000 + 10_000;

// The slot sleeps, so the kill certainly lands while it runs; the run after recovery logs its slot.
const SLOW_CRON = `export default async (req: Request) => {
  const { scheduled_at } = await req.json();
  await new Promise((r) => setTimeout(r, 3000));
  console.log('ran', scheduled_at);
  return new Response('ok');
};`;
const SLOT = '2031-05-05T10:00:00.000Z';

let controlDb: string;
const appDbPrefix = `svc_t${uniqueSuffix()}_`;
const platformKey = generateKey('svc_pk_');
const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-crash-'));
const env = {
  SVC_APP_DB_PREFIX: appDbPrefix,
  SVC_PLATFORM_API_KEY: platformKey,
  SVC_DATA_DIR: dataDir,
  SVC_WORKER_STALE_AFTER_SECONDS: String(STALE_AFTER_SECONDS),
};
let control: pg.Client;
const servers: SpawnedServer[] = [];

async function start(): Promise<SpawnedServer> {
  const server = await spawnServer(env, { controlDb });
  servers.push(server);
  return server;
}

async function lockedBy(key: string): Promise<string | null | undefined> {
  const { rows } = await control.query<{ locked_by: string | null }>('select locked_by from graphile_worker.jobs where key = $1', [key]);
  return rows[0]?.locked_by;
}

/** The pids of the direct children of a process (the function sandboxes a killed server leaves behind). */
function childPids(pid: number): number[] {
  // ps exits 1 when there is none; its (empty) output says the same.
  const out = spawnSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' }).stdout.trim();
  return out ? out.split(/\s+/).map(Number) : [];
}

beforeAll(async () => {
  controlDb = await cloneControlDatabase();
  control = new pg.Client({ connectionString: databaseUrl(controlDb) });
  await control.connect();
});

afterAll(async () => {
  await control?.end();
  for (const s of servers) await s.stop();
  await dropDatabasesWithPrefix(appDbPrefix);
  if (controlDb) await dropDatabase(controlDb);
  rmSync(dataDir, { recursive: true, force: true });
});

describe('kill -9 during a frontend build and a cron slot', () => {
  it('both run again on the next start, within the stale-worker threshold', { timeout: 90_000 }, async () => {
    const first = await start();
    const call = (s: SpawnedServer, method: string, p: string, body?: unknown, key = platformKey) => request(s.url, p, { method, key, body });

    const app = (await call(first, 'POST', '/init', { name: 'Crash' })).json;
    const appId: string = app.app_id;
    const serviceKey: string = app.service_key.key;

    // The build: the uploaded zip is swapped for a named pipe, so the build blocks opening it until the kill.
    const deployment = (await call(first, 'POST', `/v1/${appId}/frontend/deployments`, { framework: 'static' })).json;
    const zip = await siteZip();
    const upload = new URL(deployment.uploadUrl);
    const put = await request(first.url, upload.pathname + upload.search, { method: 'PUT', body: zip, headers: { 'content-type': 'application/zip' } });
    expect(put.status).toBe(200);
    const zipFile = path.join(dataDir, 'frontend', appId, deployment.id, 'upload.zip');
    rmSync(zipFile);
    execFileSync('mkfifo', [zipFile]);
    expect((await call(first, 'POST', `/v1/${appId}/frontend/deployments/${deployment.id}/start`)).status).toBe(202);

    // The cron slot: enqueued as the dispatcher tick does, for a slow function.
    const fn = await call(first, 'POST', `/v1/${appId}/functions`, { name: 'slow', code: SLOW_CRON, trigger: { type: 'cron', config: { schedule: '0 0 29 2 *' } } }, serviceKey);
    expect(fn.status).toBe(201);
    const slotKey = `fncron:${fn.json.id}:${SLOT}`;
    await control.query(
      `select graphile_worker.add_job('functions_run_cron', json_build_object('function_id', $1::text, 'scheduled_at', $2::text), job_key => $3::text, max_attempts => 3)`,
      [fn.json.id, SLOT, slotKey],
    );

    const buildKey = `frontend_build:${deployment.id}`;
    await waitFor(async () => ((await lockedBy(buildKey)) && (await lockedBy(slotKey)) ? true : undefined));
    await new Promise((r) => setTimeout(r, 500));
    const sandboxes = childPids(first.child.pid!);
    first.child.kill('SIGKILL');
    expect(await first.stop()).toBeNull();
    // The sandboxes are the dead server's children; they would otherwise outlive the test.
    for (const pid of sandboxes) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone with its parent's pipes
      }
    }
    expect(await lockedBy(buildKey)).toBeTruthy();
    expect(await lockedBy(slotKey)).toBeTruthy();

    // The zip is back in place for the next attempt.
    rmSync(zipFile);
    writeFileSync(zipFile, zip);

    const second = await start();
    const restartedAt = Date.now();
    const ready = await waitFor(async () => {
      const d = (await call(second, 'GET', `/v1/${appId}/frontend/deployments/${deployment.id}`)).json;
      return d.status === 'READY' ? d : undefined;
    }, RECOVERY_MS);
    expect(ready.live).toBe(true);
    expect((await request(second.url, `/sites/${appId}/`)).status).toBe(200);

    const logs = await waitFor(async () => {
      const l = (await call(second, 'GET', `/v1/${appId}/functions/slow/logs`, undefined, serviceKey)).json.logs;
      return l.length ? l : undefined;
    }, RECOVERY_MS);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({ trigger: 'cron', status_code: 200 });
    expect(logs[0].console).toEqual([{ level: 'log', message: `ran ${SLOT}` }]);
    expect(Date.now() - restartedAt).toBeLessThan(RECOVERY_MS);
    expect(second.output()).toContain('released the jobs of workers whose heartbeat stopped');
  });
});
