// Hosted sites on the app's own host (SVC_BASE_DOMAIN): served after every API route, so the platform's routes
// keep priority there.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { pathOf, rawRequest, waitFor, zipOf } from './frontend-helpers.ts';

let p: TestPlatform;
let appId: string;
let host: string;

beforeAll(async () => {
  p = await startTestPlatform({ SVC_BASE_DOMAIN: 'apps.test', SVC_BASE_URL: 'http://api.test' });
  const app = await p.api('POST', '/init', { body: { name: 'Sub Site' } });
  appId = app.body.app_id;
  host = `${app.body.subdomain}.apps.test`;
});
afterAll(async () => {
  await p?.close();
});

const onHost = (path: string, method = 'GET') => rawRequest(p.url, path, { method, headers: { host } });

describe('site on the app subdomain', () => {
  it('without a live site the app host answers the usual 404', async () => {
    const res = await onHost('/');
    expect(res.status).toBe(404);
    expect(JSON.parse(res.text).error.code).toBe('ROUTE_NOT_FOUND');
  });

  it('serves the live deployment at the root of the app host, with SPA fallback and __env.js', async () => {
    const created = await p.api('POST', `/v1/${appId}/frontend/deployments`, { body: { framework: 'react-vite' } });
    const zip = await zipOf({ 'index.html': '<script src="/__env.js"></script><div id="root"></div>', 'assets/main-deadbeef.js': 'x' });
    expect((await fetch(p.url + pathOf(created.body.uploadUrl), { method: 'PUT', headers: { 'content-type': 'application/zip' }, body: new Uint8Array(zip) })).status).toBe(200);
    await p.api('POST', `/v1/${appId}/frontend/deployments/${created.body.id}/start`);
    const ready = await waitFor(async () => {
      const d = (await p.api('GET', `/v1/${appId}/frontend/deployments/${created.body.id}`)).body;
      return d.status === 'READY' ? d : undefined;
    });
    expect(ready.url).toBe(`http://${host}/`);

    const index = await onHost('/');
    expect(index.status).toBe(200);
    expect(index.text).toContain('<div id="root">');
    expect(index.headers['cache-control']).toBe('no-cache');
    const asset = await onHost('/assets/main-deadbeef.js');
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect((await onHost('/dashboard/settings')).text).toContain('<div id="root">');
    const env = await onHost('/__env.js');
    expect(env.headers['cache-control']).toBe('no-store');
    expect(env.text).toContain(`"SVC_API_URL":"http://api.test/v1/${appId}"`);
    expect((await onHost('/../../etc/passwd')).text).not.toContain('root:');
    // HEAD works, other methods are not the site's business.
    expect((await onHost('/', 'HEAD')).status).toBe(200);
    expect((await onHost('/', 'POST')).status).toBe(404);
  });

  it('API routes of the app host keep priority over the site', async () => {
    const res = await rawRequest(p.url, '/app', { headers: { host, authorization: `Bearer ${p.platformKey}` } });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toMatchObject({ app_id: appId });
    // The path-based address works as well.
    expect((await fetch(`${p.url}/sites/${appId}/`)).status).toBe(200);
  });
});
