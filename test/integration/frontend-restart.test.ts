// The build job is enqueued in the same transaction as BUILDING, so it survives the process: an api-only
// instance starts the build, a worker started afterwards on the same control database finishes it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, startWorkerFor, type TestPlatform } from '../helpers/platform.ts';
import type { Platform } from '../../src/composition.ts';
import { pathOf, siteZip, waitFor } from './frontend-helpers.ts';

let api: TestPlatform;
let worker: Platform | undefined;

beforeAll(async () => {
  api = await startTestPlatform({ SVC_ROLE: 'api' });
});
afterAll(async () => {
  await worker?.stop();
  await api?.close();
});

describe('build job durability', () => {
  it('a build started with no worker running completes once a worker starts', async () => {
    const appId = (await api.api('POST', '/init', { body: { name: 'Durable' } })).body.app_id;
    const created = (await api.api('POST', `/v1/${appId}/frontend/deployments`, { body: { framework: 'static' } })).body;
    const put = await fetch(api.url + pathOf(created.uploadUrl), { method: 'PUT', headers: { 'content-type': 'application/zip' }, body: new Uint8Array(await siteZip()) });
    expect(put.status).toBe(200);
    expect((await api.api('POST', `/v1/${appId}/frontend/deployments/${created.id}/start`)).status).toBe(202);

    const jobs = await api.sql(`select t.identifier as task_identifier, j.key, j.payload #>> '{deployment_id}' as payload from graphile_worker._private_jobs j
      join graphile_worker._private_tasks t on t.id = j.task_id where j.key = $1`, [`frontend_build:${created.id}`]);
    expect(jobs).toEqual([{ task_identifier: 'frontend_build', key: `frontend_build:${created.id}`, payload: created.id }]);
    await new Promise((r) => setTimeout(r, 300));
    expect((await api.api('GET', `/v1/${appId}/frontend/deployments/${created.id}`)).body.status).toBe('BUILDING');

    worker = await startWorkerFor(api);
    const ready = await waitFor(async () => {
      const d = (await api.api('GET', `/v1/${appId}/frontend/deployments/${created.id}`)).body;
      return d.status === 'READY' ? d : undefined;
    });
    expect(ready.live).toBe(true);
    expect((await fetch(`${api.url}/sites/${appId}/`)).status).toBe(200);
  });
});
