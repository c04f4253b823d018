// Plan limits of hosted sites (free: one active deployment; pro: every READY one stays reachable) and the
// purge of an app's sites when the app is deleted.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { appSiteUrl, pathOf, waitFor, zipOf } from './frontend-helpers.ts';

let p: TestPlatform;

beforeAll(async () => {
  p = await startTestPlatform();
});
afterAll(async () => {
  await p?.close();
});

async function newApp(name: string): Promise<string> {
  const res = await p.api('POST', '/init', { body: { name } });
  expect(res.status).toBe(201);
  return res.body.app_id;
}

async function deploy(appId: string, marker: string) {
  const created = await p.api('POST', `/v1/${appId}/frontend/deployments`, { body: { framework: 'static' } });
  expect(created.status).toBe(201);
  const zip = await zipOf({ 'index.html': `<p>${marker}</p>` });
  const put = await fetch(p.url + pathOf(created.body.uploadUrl), { method: 'PUT', headers: { 'content-type': 'application/zip' }, body: new Uint8Array(zip) });
  expect(put.status).toBe(200);
  expect((await p.api('POST', `/v1/${appId}/frontend/deployments/${created.body.id}/start`)).status).toBe(202);
  const ready = await waitFor(async () => {
    const d = (await p.api('GET', `/v1/${appId}/frontend/deployments/${created.body.id}`)).body;
    return d.status === 'READY' || d.status === 'ERROR' ? d : undefined;
  });
  expect(ready.status).toBe('READY');
  return ready as { id: string; live: boolean; url: string | null };
}

async function list(appId: string): Promise<Record<string, { live: boolean; url: string | null; status: string }>> {
  const res = await p.api('GET', `/v1/${appId}/frontend/deployments`);
  return Object.fromEntries(res.body.deployments.map((d: { id: string }) => [d.id, d]));
}

async function page(url: string): Promise<{ status: number; text: string }> {
  const res = await fetch(p.url + url);
  return { status: res.status, text: await res.text() };
}

const setPlan = (appId: string, plan: string) =>
  p.sql(`update accounts set plan = $2 where id = (select account_id from apps where id = $1)`, [appId, plan]);

const siteDir = (appId: string, id: string) => path.join(p.services.config.dataDir, 'frontend', appId, id, 'site');

describe('plan limits', () => {
  it('accounts start on the free plan', async () => {
    const rows = await p.sql(`select plan from accounts`);
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(r.plan).toBe('free');
    await expect(p.sql(`update accounts set plan = 'gold'`)).rejects.toThrow(/check constraint/);
  });

  it('free: a new READY deployment replaces the live one; the history stays, the old files go', async () => {
    const appId = await newApp('Free site');
    const a = await deploy(appId, 'A');
    expect(a).toMatchObject({ live: true, url: await appSiteUrl(p, appId) });
    const b = await deploy(appId, 'B');
    expect(b.live).toBe(true);

    const all = await list(appId);
    expect(Object.keys(all)).toHaveLength(2);
    expect(all[a.id]).toMatchObject({ status: 'READY', live: false, url: null });
    expect(all[b.id]).toMatchObject({ status: 'READY', live: true });
    // The old files go right after the publish commits.
    await waitFor(async () => (existsSync(siteDir(appId, a.id)) ? undefined : true));
    expect(await page(`/sites/${appId}/`)).toEqual({ status: 200, text: '<p>B</p>' });
    expect((await page(`/sites/${appId}/d/${a.id}/`)).status).toBe(404);
    // The live deployment is also reachable under its own id.
    expect(await page(`/sites/${appId}/d/${b.id}/`)).toEqual({ status: 200, text: '<p>B</p>' });
    const [{ n }] = await p.sql(`select count(*)::int as n from frontend_deployments where app_id = $1 and live`, [appId]);
    expect(n).toBe(1);
  });

  it('pro: every READY deployment stays reachable at /sites/{app_id}/d/{id}/ beside the live one; a downgrade prunes at the next publish', async () => {
    const appId = await newApp('Pro site');
    await setPlan(appId, 'pro');
    const a = await deploy(appId, 'A');
    const b = await deploy(appId, 'B');
    const c = await deploy(appId, 'C');

    const all = await list(appId);
    expect(all[c.id]).toMatchObject({ live: true, url: await appSiteUrl(p, appId) });
    expect(all[a.id]).toMatchObject({ live: false, url: `${p.services.config.baseUrl}/sites/${appId}/d/${a.id}/` });
    expect(all[b.id]).toMatchObject({ live: false, url: `${p.services.config.baseUrl}/sites/${appId}/d/${b.id}/` });
    expect(await page(`/sites/${appId}/`)).toEqual({ status: 200, text: '<p>C</p>' });
    expect(await page(pathOf(all[a.id]!.url!))).toEqual({ status: 200, text: '<p>A</p>' });
    expect(await page(pathOf(all[b.id]!.url!))).toEqual({ status: 200, text: '<p>B</p>' });
    const pinned = await fetch(`${p.url}/sites/${appId}/d/${a.id}`, { redirect: 'manual' });
    expect(pinned.status).toBe(301);
    expect(pinned.headers.get('location')).toBe(`/sites/${appId}/d/${a.id}/`);
    expect((await fetch(`${p.url}/sites/${appId}/d/${a.id}/__env.js`)).status).toBe(200);

    // Deleting a kept deployment removes it alone.
    const del = await p.api('DELETE', `/v1/${appId}/frontend/deployments/${a.id}`);
    expect(del.body).toEqual({ deleted: true, id: a.id, was_live: false });
    expect((await page(`/sites/${appId}/d/${a.id}/`)).status).toBe(404);
    expect(await page(`/sites/${appId}/`)).toEqual({ status: 200, text: '<p>C</p>' });

    await setPlan(appId, 'free');
    const d = await deploy(appId, 'D');
    const after = await list(appId);
    expect(after[d.id]!.live).toBe(true);
    for (const old of [b.id, c.id]) {
      expect(after[old]).toMatchObject({ status: 'READY', live: false, url: null });
      // Pruned files go right after the publish commits (READY is visible a moment before they are gone).
      await waitFor(async () => (existsSync(siteDir(appId, old)) ? undefined : true));
    }
  });
});

describe('rollback', () => {
  it('promote makes a kept READY deployment live at once and back; one without files, or not READY, is 409', async () => {
    const appId = await newApp('Rollback site');
    await setPlan(appId, 'pro');
    const a = await deploy(appId, 'A');
    const b = await deploy(appId, 'B');
    const back = await p.api('POST', `/v1/${appId}/frontend/deployments/${a.id}/promote`);
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({ id: a.id, status: 'READY', live: true, url: await appSiteUrl(p, appId) });
    expect(await page(`/sites/${appId}/`)).toEqual({ status: 200, text: '<p>A</p>' });
    expect((await list(appId))[b.id]).toMatchObject({ live: false, url: `${p.services.config.baseUrl}/sites/${appId}/d/${b.id}/` });
    const again = await p.api('POST', `/v1/${appId}/frontend/deployments/${a.id}/promote`);
    expect([again.status, again.body.live]).toEqual([200, true]);
    expect((await p.api('POST', `/v1/${appId}/frontend/deployments/${b.id}/promote`)).status).toBe(200);
    expect(await page(`/sites/${appId}/`)).toEqual({ status: 200, text: '<p>B</p>' });
    const [{ n }] = await p.sql(`select count(*)::int as n from frontend_deployments where app_id = $1 and live`, [appId]);
    expect(n).toBe(1);

    await setPlan(appId, 'free');
    const c = await deploy(appId, 'C');
    const pruned = await p.api('POST', `/v1/${appId}/frontend/deployments/${a.id}/promote`);
    expect([pruned.status, pruned.body.error.code, pruned.body.error.message]).toEqual([409, 'INVALID_DEPLOYMENT_STATE', `Deployment ${a.id} no longer has its files (the free plan keeps only the live deployment's).`]);
    const waiting = (await p.api('POST', `/v1/${appId}/frontend/deployments`, { body: { framework: 'static' } })).body;
    const early = await p.api('POST', `/v1/${appId}/frontend/deployments/${waiting.id}/promote`);
    expect([early.status, early.body.error.code]).toEqual([409, 'INVALID_DEPLOYMENT_STATE']);
    expect(await page(`/sites/${appId}/`)).toEqual({ status: 200, text: `<p>C</p>` });
    expect(c.live).toBe(true);
  });
});

describe('deleting an app', () => {
  it('removes its deployments, its files and its site (apps_delete, then the purge job)', async () => {
    const appId = await newApp('Doomed site');
    const d = await deploy(appId, 'doomed');
    await p.api('PUT', `/v1/${appId}/frontend/env`, { body: { A: 'b' } });
    const appDir = path.join(p.services.config.dataDir, 'frontend', appId);
    expect(existsSync(siteDir(appId, d.id))).toBe(true);

    const del = await p.api('DELETE', `/apps/${appId}`);
    expect(del.status).toBe(200);
    await waitFor(async () => (existsSync(appDir) ? undefined : true));
    expect(await p.sql(`select 1 from frontend_deployments where app_id = $1`, [appId])).toEqual([]);
    expect(await p.sql(`select 1 from frontend_env where app_id = $1`, [appId])).toEqual([]);
    await new Promise((r) => setTimeout(r, 1100)); // past the live-site cache
    expect((await page(`/sites/${appId}/`)).status).toBe(404);
  });
});
