// Jobs locked by a worker that is gone (its process was killed) run again: frontend sync releases them, every
// worker process releases them on its own, and the build they belong to is safe to run twice, even at once.
// A "gone" worker here is a job row locked by a made-up worker id with no heartbeat; test/e2e/crash-recovery.test.ts
// does the same with a real kill -9.
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, startWorkerFor, type TestPlatform } from '../helpers/platform.ts';
import type { Platform } from '../../src/composition.ts';
import { pathOf, siteZip, waitFor } from './frontend-helpers.ts';

const STALE_AFTER_SECONDS = '1';

// No worker in this platform: the jobs stay where the test puts them.
let api: TestPlatform;
let appId: string;

beforeAll(async () => {
  api = await startTestPlatform({ SVC_ROLE: 'api', SVC_WORKER_STALE_AFTER_SECONDS: STALE_AFTER_SECONDS });
  appId = (await api.api('POST', '/init', { body: { name: 'Recovery' } })).body.app_id;
});
afterAll(async () => {
  await api?.close();
});

/** A deployment moved to BUILDING, its build job queued (and not run: there is no worker yet). */
async function building(): Promise<string> {
  const created = (await api.api('POST', `/v1/${appId}/frontend/deployments`, { body: { framework: 'static' } })).body;
  const put = await fetch(api.url + pathOf(created.uploadUrl), { method: 'PUT', headers: { 'content-type': 'application/zip' }, body: new Uint8Array(await siteZip()) });
  expect(put.status).toBe(200);
  expect((await api.api('POST', `/v1/${appId}/frontend/deployments/${created.id}/start`)).status).toBe(202);
  return created.id;
}

/** What a worker does when it takes the job (graphile-worker's get_job), as the worker `workerId` a minute ago. */
async function lockBuild(id: string, workerId: string, attempts = 1): Promise<void> {
  const rows = await api.sql(
    `update graphile_worker._private_jobs set locked_by = $2, locked_at = now() - interval '1 minute', attempts = $3 where key = $1 returning id`,
    [`frontend_build:${id}`, workerId, attempts],
  );
  expect(rows).toHaveLength(1);
}

async function buildJob(id: string): Promise<{ locked_by: string | null; attempts: number } | undefined> {
  return (await api.sql('select locked_by, attempts from graphile_worker.jobs where key = $1', [`frontend_build:${id}`]))[0];
}

const sync = async (id: string) => (await api.api('POST', `/v1/${appId}/frontend/deployments/${id}/sync`)).body;

describe('frontend sync', () => {
  it('leaves a build alone while the worker holding it beats', async () => {
    const id = await building();
    await lockBuild(id, 'worker-alive');
    await api.sql(`insert into worker_heartbeats (worker_id, last_seen) values ('worker-alive', now())`);
    expect(await sync(id)).toMatchObject({ action: 'none', status: 'BUILDING' });
    expect(await buildJob(id)).toEqual({ locked_by: 'worker-alive', attempts: 1 });
  });

  it('releases a build held by a worker with no heartbeat, so it runs again', async () => {
    const id = await building();
    await lockBuild(id, 'worker-killed');
    expect(await sync(id)).toMatchObject({ action: 'requeued', status: 'BUILDING' });
    expect(await buildJob(id)).toEqual({ locked_by: null, attempts: 1 });
    expect(await sync(id)).toMatchObject({ action: 'none', status: 'BUILDING' });
  });

  it('fails a build whose worker died during its last attempt', async () => {
    const id = await building();
    await lockBuild(id, 'worker-killed-again', 3);
    expect(await sync(id)).toMatchObject({ action: 'failed', status: 'ERROR', error: 'The build failed: the worker running its last attempt stopped' });
    expect(await buildJob(id)).toBeUndefined();
  });
});

describe('the build job', () => {
  it('run twice at once publishes once, keeps the site and removes what a dead run left', async () => {
    const id = await building();
    const dir = path.join(api.services.config.dataDir, 'frontend', appId, id);
    mkdirSync(path.join(dir, 'build-of-a-killed-run'));
    writeFileSync(path.join(dir, 'build-of-a-killed-run', 'index.html'), 'partial');

    await Promise.all([api.services.frontend.build(id, { finalAttempt: false }), api.services.frontend.build(id, { finalAttempt: false })]);
    expect((await api.api('GET', `/v1/${appId}/frontend/deployments/${id}`)).body).toMatchObject({ status: 'READY', live: true });
    expect(readdirSync(dir)).toEqual(['site']);
    expect(await (await fetch(`${api.url}/sites/${appId}/`)).text()).toContain('Hello site');

    // A third run (its worker died after publishing, before the job was marked done) changes nothing.
    await api.services.frontend.build(id, { finalAttempt: true });
    expect(readdirSync(dir)).toEqual(['site']);
    expect((await fetch(`${api.url}/sites/${appId}/`)).status).toBe(200);
  });
});

describe('a worker process', () => {
  let worker: Platform | undefined;
  afterAll(async () => {
    await worker?.stop();
  });

  it('releases the jobs of gone workers on its own, and only theirs', async () => {
    const orphan = await building();
    await lockBuild(orphan, 'worker-gone');
    const held = await building();
    await lockBuild(held, 'worker-busy');
    await api.sql(`insert into worker_heartbeats (worker_id, last_seen) values ('worker-busy', now() + interval '1 hour')`);

    worker = await startWorkerFor(api, { SVC_WORKER_CONCURRENCY: '2', SVC_WORKER_STALE_AFTER_SECONDS: STALE_AFTER_SECONDS });
    await waitFor(async () => ((await api.api('GET', `/v1/${appId}/frontend/deployments/${orphan}`)).body.status === 'READY' ? true : undefined), 10_000);
    expect(await buildJob(held)).toEqual({ locked_by: 'worker-busy', attempts: 1 });

    // The worker's pool beats (its id locks the pool's jobs); a gone worker's row goes once its jobs are released.
    const beats = await api.sql(`select worker_id from worker_heartbeats where worker_id not in ('worker-alive', 'worker-busy')`);
    expect(beats).toHaveLength(1);
    expect(beats[0]!.worker_id).toMatch(/^pool-/);
    await worker.stop();
    worker = undefined;
    expect(await api.sql(`select worker_id from worker_heartbeats where worker_id = any($1)`, [beats.map((b) => b.worker_id)])).toEqual([]);
  });

  it('keeps its own job held past the threshold: the job runs once, not again beside itself', async () => {
    // A cron slot of a function that takes 4.5 s: more than four thresholds, during which the worker must keep it.
    const code = `export default async (req: Request) => { await new Promise((r) => setTimeout(r, 4500)); return new Response('ok'); };`;
    const fn = await api.api('POST', `/v1/${appId}/functions`, { body: { name: 'slow', code, trigger: { type: 'cron', config: { schedule: '0 0 29 2 *' } } } });
    expect(fn.status).toBe(201);
    const key = `fncron:${fn.body.id}:2031-05-05T10:00:00.000Z`;
    await api.sql(`select graphile_worker.add_job('functions_run_cron', json_build_object('function_id', $1::text, 'scheduled_at', '2031-05-05T10:00:00.000Z'), job_key => $2)`, [fn.body.id, key]);
    worker = await startWorkerFor(api, { SVC_WORKER_CONCURRENCY: '2', SVC_WORKER_STALE_AFTER_SECONDS: STALE_AFTER_SECONDS });
    const job = async () => (await api.sql('select locked_by, attempts from graphile_worker.jobs where key = $1', [key]))[0];
    const holder = await waitFor(async () => (await job())?.locked_by ?? undefined, 15_000);
    await new Promise((r) => setTimeout(r, 3000));
    expect(await job()).toEqual({ locked_by: holder, attempts: 1 });
    expect(await api.sql(`select 1 from worker_heartbeats where worker_id = $1`, [holder])).toHaveLength(1);
    await waitFor(async () => ((await job()) ? undefined : true), 15_000);
    await worker.stop();
    worker = undefined;
    expect(await api.sql(`select count(*)::int as n from function_logs where function_id = $1`, [fn.body.id])).toEqual([{ n: 1 }]);
  });
});
