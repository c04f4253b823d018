import { existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { deriveKey, UploadSigner } from '../../src/frontend/signing.ts';
import { callTool, connectMcp, resultJson } from '../e2e/e2e-helpers.ts';
import { appSiteUrl, declareSize, pathOf, rawRequest, renameEntry, SITE_INDEX, siteZip, waitFor, zipOf } from './frontend-helpers.ts';

const MASTER_KEY = randomBytes(32).toString('hex');
const MAX_ZIP = 256 * 1024;
const MAX_UNZIPPED = 1024 * 1024;
const MAX_FILES = 20;

let p: TestPlatform;
let appId: string;
let serviceKey: string;
let dataDir: string;

beforeAll(async () => {
  p = await startTestPlatform({
    SVC_MASTER_KEY: MASTER_KEY,
    SVC_FRONTEND_MAX_ZIP_BYTES: String(MAX_ZIP),
    SVC_FRONTEND_MAX_UNZIPPED_BYTES: String(MAX_UNZIPPED),
    SVC_FRONTEND_MAX_FILES: String(MAX_FILES),
    SVC_FRONTEND_MAX_COMPRESSION_RATIO: '100',
  });
  dataDir = p.services.config.dataDir;
  const app = await p.api('POST', '/init', { body: { name: 'Sites' } });
  expect(app.status).toBe(201);
  appId = app.body.app_id;
  serviceKey = app.body.service_key.key;
});
afterAll(async () => {
  await p?.close();
});

const base = () => `/v1/${appId}/frontend/deployments`;

async function create(framework = 'static', app = appId, key: string | null = serviceKey) {
  const res = await p.api('POST', `/v1/${app}/frontend/deployments`, { body: { framework }, key });
  expect(res.status).toBe(201);
  return res.body as { id: string; uploadUrl: string; expiresIn: number; maxSizeBytes: number; status: string };
}

async function put(uploadUrl: string, body: Buffer, contentType = 'application/zip') {
  const res = await fetch(p.url + pathOf(uploadUrl), { method: 'PUT', headers: { 'content-type': contentType }, body: new Uint8Array(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function get(id: string, app = appId) {
  return (await p.api('GET', `/v1/${app}/frontend/deployments/${id}`, { key: serviceKey })).body;
}

async function settled(id: string, app = appId) {
  return waitFor(async () => {
    const d = await get(id, app);
    return d.status === 'READY' || d.status === 'ERROR' || d.status === 'CANCELED' ? d : undefined;
  });
}

/** create -> PUT -> start -> wait: the deployment once the build job has finished. */
async function deploy(zip: Buffer, framework = 'static', app = appId) {
  const created = await create(framework, app);
  expect((await put(created.uploadUrl, zip)).status).toBe(200);
  const started = await p.api('POST', `/v1/${app}/frontend/deployments/${created.id}/start`, { key: serviceKey });
  expect(started.status).toBe(202);
  return settled(created.id, app);
}

/** The SVC_ values every site of an app gets in window.__ENV__: its API, the end-user auth routes, its publishable key. */
async function platformEnv(app: string): Promise<Record<string, string>> {
  const api = `${p.services.config.baseUrl}/v1/${app}`;
  const auth = (route: string) => `${api}/auth/${route}`;
  const [publishable] = await p.services.keys.listPublishable(app);
  return {
    SVC_APP_ID: app,
    SVC_API_URL: api,
    SVC_DATA_URL: api,
    SVC_AUTH_SIGNUP_URL: auth('signup'),
    SVC_AUTH_LOGIN_URL: auth('login'),
    SVC_AUTH_REFRESH_URL: auth('refresh'),
    SVC_PUBLISHABLE_KEY: publishable!.key,
  };
}

function deploymentDir(id: string, app = appId) {
  return path.join(dataDir, 'frontend', app, id);
}

/** Every file under a folder, relative; for "nothing was written outside" checks. */
function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => !e.isDirectory())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

describe('deployment lifecycle', () => {
  it('create answers 201 with a signed upload URL and a WAITING deployment', async () => {
    const created = await create('react-vite');
    expect(created).toMatchObject({ expiresIn: 900, maxSizeBytes: MAX_ZIP, status: 'WAITING' });
    expect(created.id).toMatch(/^[0-9a-f-]{36}$/);
    const url = new URL(created.uploadUrl);
    expect(url.pathname).toBe(`/v1/${appId}/frontend/deployments/${created.id}/upload`);
    expect(url.searchParams.get('expires')).toMatch(/^\d+$/);
    expect(Number(url.searchParams.get('expires')) - Date.now() / 1000).toBeGreaterThan(890);
    expect(url.searchParams.get('signature')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const d = await get(created.id);
    expect(d).toMatchObject({ id: created.id, app_id: appId, framework: 'react-vite', status: 'WAITING', error: null, size_bytes: null, live: false, url: null });
  });

  it('WAITING -> UPLOADING -> BUILDING -> READY, served live; start and upload refuse the second time', async () => {
    const created = await create('static');
    const early = await p.api('POST', `${base()}/${created.id}/start`, { key: serviceKey });
    expect(early.status).toBe(409);
    expect(early.body.error.code).toBe('INVALID_DEPLOYMENT_STATE');
    expect(early.body.error.message).toMatch(/no zip yet/);

    const zip = await siteZip();
    const uploaded = await put(created.uploadUrl, zip);
    expect(uploaded.status).toBe(200);
    expect(uploaded.body).toMatchObject({ id: created.id, status: 'UPLOADING', size_bytes: zip.length });
    expect(existsSync(path.join(deploymentDir(created.id), 'upload.zip'))).toBe(true);
    const again = await put(created.uploadUrl, zip);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('INVALID_DEPLOYMENT_STATE');

    const started = await p.api('POST', `${base()}/${created.id}/start`, { key: serviceKey });
    expect(started.status).toBe(202);
    expect(started.body.status).toBe('BUILDING');
    const twice = await p.api('POST', `${base()}/${created.id}/start`, { key: serviceKey });
    expect(twice.status).toBe(409);
    expect(twice.body.error.code).toBe('INVALID_DEPLOYMENT_STATE');

    const done = await settled(created.id);
    expect(done).toMatchObject({ status: 'READY', live: true, error: null, file_count: 3, url: await appSiteUrl(p, appId) });
    expect(done.ready_at).toBeTruthy();
    // The zip is removed once the site is live (right after READY is committed, so that a rerun could still build).
    const files = await waitFor(async () => {
      const now = walk(deploymentDir(created.id)).sort();
      return now.includes('upload.zip') ? undefined : now;
    });
    expect(files).toEqual(['site/assets/app-0123abcd.js', 'site/index.html', 'site/robots.txt']);

    const page = await fetch(`${p.url}/sites/${appId}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toBe(SITE_INDEX);

    const startReady = await p.api('POST', `${base()}/${created.id}/start`, { key: serviceKey });
    expect(startReady.status).toBe(409);
    const cancelReady = await p.api('POST', `${base()}/${created.id}/cancel`, { key: serviceKey });
    expect(cancelReady.status).toBe(409);
    expect(cancelReady.body.error).toMatchObject({ code: 'INVALID_DEPLOYMENT_STATE' });
  });

  it('lists the history newest first', async () => {
    const a = await create();
    const b = await create();
    const list = await p.api('GET', base(), { key: serviceKey });
    expect(list.status).toBe(200);
    const ids = list.body.deployments.map((d: { id: string }) => d.id);
    expect(ids.indexOf(b.id)).toBeLessThan(ids.indexOf(a.id));
    const times = list.body.deployments.map((d: { created_at: string }) => Date.parse(d.created_at));
    expect([...times].sort((x, y) => y - x)).toEqual(times);
    const newest = await p.api('GET', `${base()}?limit=1`, { key: serviceKey });
    expect(newest.body.deployments.map((d: { id: string }) => d.id)).toEqual([b.id]);
    expect((await p.api('GET', `${base()}?limit=0`, { key: serviceKey })).status).toBe(400);
  });

  it('cancel: WAITING, UPLOADING and BUILDING become CANCELED; finished ones answer 409', async () => {
    const waiting = await create();
    const c1 = await p.api('POST', `${base()}/${waiting.id}/cancel`, { key: serviceKey });
    expect(c1).toMatchObject({ status: 200, body: { status: 'CANCELED' } });
    expect((await p.api('POST', `${base()}/${waiting.id}/cancel`, { key: serviceKey })).body.error.code).toBe('INVALID_DEPLOYMENT_STATE');
    expect((await p.api('POST', `${base()}/${waiting.id}/start`, { key: serviceKey })).status).toBe(409);
    expect((await put(waiting.uploadUrl, await siteZip())).status).toBe(409);

    const uploading = await create();
    expect((await put(uploading.uploadUrl, await siteZip())).status).toBe(200);
    const c2 = await p.api('POST', `${base()}/${uploading.id}/cancel`, { key: serviceKey });
    expect(c2.body.status).toBe('CANCELED');
    expect(existsSync(deploymentDir(uploading.id))).toBe(false);

    // BUILDING with its job not yet run: the job must then leave it alone.
    const building = await create();
    expect((await put(building.uploadUrl, await siteZip())).status).toBe(200);
    await p.sql(`update frontend_deployments set status = 'BUILDING' where id = $1`, [building.id]);
    const c3 = await p.api('POST', `${base()}/${building.id}/cancel`, { key: serviceKey });
    expect(c3.body.status).toBe('CANCELED');
    await p.services.frontend.build(building.id, { finalAttempt: false });
    expect((await get(building.id)).status).toBe('CANCELED');
    expect(existsSync(deploymentDir(building.id))).toBe(false);

    const errored = await deploy(await zipOf({ 'readme.txt': 'no index' }));
    expect(errored.status).toBe('ERROR');
    expect((await p.api('POST', `${base()}/${errored.id}/cancel`, { key: serviceKey })).status).toBe(409);
  });

  it('sync: expires a stale WAITING upload, re-enqueues a lost build, fails a dead one, else changes nothing', async () => {
    const stale = await create();
    await p.sql(`update frontend_deployments set upload_expires_at = now() - interval '1 second' where id = $1`, [stale.id]);
    const s1 = await p.api('POST', `${base()}/${stale.id}/sync`, { key: serviceKey });
    expect(s1.status).toBe(200);
    expect(s1.body).toMatchObject({ action: 'expired', status: 'ERROR', error: expect.stringMatching(/upload URL expired/) });

    // A BUILDING deployment whose job vanished (e.g. the queue was wiped).
    const lost = await create();
    expect((await put(lost.uploadUrl, await siteZip())).status).toBe(200);
    await p.sql(`update frontend_deployments set status = 'BUILDING' where id = $1`, [lost.id]);
    const s2 = await p.api('POST', `${base()}/${lost.id}/sync`, { key: serviceKey });
    expect(s2.body).toMatchObject({ action: 'requeued', status: 'BUILDING' });
    expect((await settled(lost.id)).status).toBe('READY');
    const s3 = await p.api('POST', `${base()}/${lost.id}/sync`, { key: serviceKey });
    expect(s3.body).toMatchObject({ action: 'none', status: 'READY' });

    // A build job that used up its attempts.
    const dead = await create();
    expect((await put(dead.uploadUrl, await siteZip())).status).toBe(200);
    await p.sql(`update frontend_deployments set status = 'BUILDING' where id = $1`, [dead.id]);
    await p.sql(`select graphile_worker.add_job('frontend_build', json_build_object('deployment_id', $1::text), run_at => now() + interval '1 hour',
      max_attempts => 1, job_key => 'frontend_build:' || $1)`, [dead.id]);
    await p.sql(`update graphile_worker._private_jobs set attempts = 1, last_error = 'Error: disk on fire' where key = 'frontend_build:' || $1`, [dead.id]);
    const s4 = await p.api('POST', `${base()}/${dead.id}/sync`, { key: serviceKey });
    expect(s4.body).toMatchObject({ action: 'failed', status: 'ERROR', error: 'The build failed: Error: disk on fire' });
    expect(await p.sql(`select 1 from graphile_worker.jobs where key = 'frontend_build:' || $1`, [dead.id])).toEqual([]);
  });

  it('delete removes the record and its files; deleting the live deployment takes the site down', async () => {
    const d = await deploy(await siteZip({}, '<!doctype html><p>to be deleted</p>'));
    expect(d.live).toBe(true);
    expect((await fetch(`${p.url}/sites/${appId}/`)).status).toBe(200);
    const del = await p.api('DELETE', `${base()}/${d.id}`, { key: serviceKey });
    expect(del).toMatchObject({ status: 200, body: { deleted: true, id: d.id, was_live: true } });
    expect(existsSync(deploymentDir(d.id))).toBe(false);
    const gone = await fetch(`${p.url}/sites/${appId}/`);
    expect(gone.status).toBe(404);
    expect((await gone.json()).error.code).toBe('RESOURCE_NOT_FOUND');
    expect((await p.api('GET', `${base()}/${d.id}`, { key: serviceKey })).status).toBe(404);
    expect((await p.api('DELETE', `${base()}/${d.id}`, { key: serviceKey })).body.error.code).toBe('RESOURCE_NOT_FOUND');
  });

  it('a site zipped with its build folder (dist/) is served from inside that folder', async () => {
    const d = await deploy(await zipOf({ 'dist/index.html': '<p>from dist</p>', 'dist/assets/x-0123abcd.css': 'p{}' }));
    expect(d).toMatchObject({ status: 'READY', file_count: 2 });
    expect(await (await fetch(`${p.url}/sites/${appId}/`)).text()).toBe('<p>from dist</p>');
    expect((await fetch(`${p.url}/sites/${appId}/assets/x-0123abcd.css`)).status).toBe(200);
  });
});

describe('upload refusals', () => {
  it('tampered and expired URLs answer 403 before any byte is read', async () => {
    const created = await create();
    const url = new URL(created.uploadUrl);
    const zip = await siteZip();

    const tampered = new URL(url);
    tampered.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600));
    let res = await put(tampered.toString(), zip);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('UPLOAD_URL_INVALID');

    const badSig = new URL(url);
    const sig = badSig.searchParams.get('signature')!;
    badSig.searchParams.set('signature', (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1));
    expect((await put(badSig.toString(), zip)).body.error.code).toBe('UPLOAD_URL_INVALID');

    const noSig = new URL(url);
    noSig.searchParams.delete('signature');
    expect((await put(noSig.toString(), zip)).status).toBe(403);

    // Another deployment's signature does not fit this one.
    const other = await create();
    const swapped = new URL(other.uploadUrl);
    swapped.searchParams.set('signature', url.searchParams.get('signature')!);
    swapped.searchParams.set('expires', url.searchParams.get('expires')!);
    expect((await put(swapped.toString(), zip)).body.error.code).toBe('UPLOAD_URL_INVALID');

    // Correctly signed, but in the past.
    const signer = new UploadSigner(deriveKey(Buffer.from(MASTER_KEY, 'hex'), 'frontend-upload-url'));
    const past = Math.floor(Date.now() / 1000) - 1;
    res = await put(`/v1/${appId}/frontend/deployments/${created.id}/upload?expires=${past}&signature=${signer.sign(appId, created.id, past)}`, zip);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('UPLOAD_URL_EXPIRED');

    expect((await get(created.id)).status).toBe('WAITING');
    expect(walk(deploymentDir(created.id))).toEqual([]);
  });

  it('wrong content type 415, not a zip 400, empty 400; nothing stays stored', async () => {
    const created = await create();
    const zip = await siteZip();
    let res = await put(created.uploadUrl, zip, 'application/octet-stream');
    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    res = await put(created.uploadUrl, zip, 'application/json');
    expect(res.status).toBe(415);
    res = await put(created.uploadUrl, Buffer.from('<html>not a zip</html>'));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('INVALID_ZIP');
    res = await put(created.uploadUrl, Buffer.alloc(0));
    expect(res.status).toBe(400);
    expect((await get(created.id)).status).toBe('WAITING');
    expect(walk(deploymentDir(created.id))).toEqual([]);
    // The same URL still works for a proper upload.
    expect((await put(created.uploadUrl, zip, 'Application/Zip; charset=binary')).status).toBe(200);
  });

  it('over maxSizeBytes: 413 from Content-Length, and 413 while streaming (reading stops at the limit)', async () => {
    const created = await create();
    const big = Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), randomBytes(MAX_ZIP)]);
    const res = await put(created.uploadUrl, big);
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('PAYLOAD_TOO_LARGE');

    // Chunked, no Content-Length: the server counts and stops.
    const chunks = [Buffer.from('PK\x03\x04', 'latin1'), ...Array.from({ length: 40 }, () => randomBytes(16 * 1024))];
    const streamed = await rawRequest(p.url, pathOf(created.uploadUrl), {
      method: 'PUT',
      headers: { 'content-type': 'application/zip', 'transfer-encoding': 'chunked' },
      body: chunks,
    });
    expect(streamed.status).toBe(413);
    expect(JSON.parse(streamed.text).error.code).toBe('PAYLOAD_TOO_LARGE');
    expect((await get(created.id)).status).toBe('WAITING');
    expect(walk(deploymentDir(created.id))).toEqual([]);
  });

  it('the upload route needs no credential but an unknown deployment is 404', async () => {
    const created = await create();
    const url = new URL(created.uploadUrl);
    await p.api('DELETE', `${base()}/${created.id}`, { key: serviceKey });
    const res = await put(url.toString(), await siteZip());
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('RESOURCE_NOT_FOUND');
  });
});

describe('hostile zips end in ERROR and write nothing outside their deployment', () => {
  const outside = path.join(tmpdir(), `svc-evil-${randomBytes(4).toString('hex')}.txt`);

  const cases: [string, () => Promise<Buffer>, RegExp][] = [
    ['path traversal (../evil.txt)', async () => renameEntry(await siteZip({ 'AB/evil.txt': 'pwned' }), 'AB/evil.txt', '../evil.txt'), /leaves the site folder: '\.\.\/evil\.txt'/],
    ['deep traversal (assets/../../evil.txt)', async () => renameEntry(await siteZip({ 'assets/XY/ZW/evil.txt': 'pwned' }), 'assets/XY/ZW/evil.txt', 'assets/../../evil.txt'), /path traversal/],
    ['an absolute path', async () => renameEntry(await siteZip({ ['X' + outside.slice(1)]: 'pwned' }), 'X' + outside.slice(1), outside), /absolute path/],
    ['a symbolic link', async () => zipOf({ 'index.html': '<p>x</p>', 'passwd': '/etc/passwd' }, { modes: { passwd: 0o120777 } }), /symbolic link: 'passwd'/],
    ['a zip bomb over the uncompressed cap', async () => zipOf({ 'index.html': '<p>x</p>', 'zeros.bin': Buffer.alloc(MAX_UNZIPPED + 1) }), /expands to more than 1048576 bytes/],
    ['a header that lies about the size', async () => declareSize(await zipOf({ 'index.html': '<p>x</p>', 'zeros.bin': Buffer.alloc(512 * 1024) }), 'zeros.bin', 100), /does not match its header|expands to more than/],
    ['too many files', async () => zipOf(Object.fromEntries([['index.html', 'x'], ...Array.from({ length: MAX_FILES }, (_, i) => [`f${i}.txt`, 'x'])])), /at most 20 files and folders/],
    ['a corrupt zip', async () => (await siteZip()).subarray(0, 60), /not a readable zip archive/],
    ['no index.html', async () => zipOf({ 'app.js': 'x', 'style.css': 'y' }), /no index\.html/],
  ];

  it.each(cases)('%s', async (_name, build, message) => {
    const before = walk(dataDir).filter((f) => f.endsWith('evil.txt'));
    const d = await deploy(await build());
    expect(d.status).toBe('ERROR');
    expect(d.error).toMatch(message);
    expect(d.live).toBe(false);
    expect(d.url).toBeNull();
    expect(existsSync(deploymentDir(d.id))).toBe(false);
    expect(walk(dataDir).filter((f) => f.endsWith('evil.txt'))).toEqual(before);
    expect(existsSync(path.join(dataDir, 'frontend', 'evil.txt'))).toBe(false);
    expect(existsSync(path.join(dataDir, 'frontend', appId, 'evil.txt'))).toBe(false);
    expect(existsSync(outside)).toBe(false);
  });
});

describe('serving', () => {
  let staticId: string;
  beforeAll(async () => {
    const d = await deploy(
      await zipOf({
        'index.html': '<!doctype html><h1>static</h1>',
        '404.html': '<h1>custom not found</h1>',
        'docs/index.html': '<h1>docs</h1>',
        'assets/app-0123abcd.js': 'console.log(1)',
        'assets/index-BzK3j1sx.css': 'body{}',
        'assets/logo.svg': '<svg xmlns="http://www.w3.org/2000/svg"/>',
        'data.json': '{"a":1}',
        'font.woff2': Buffer.from([1, 2, 3]),
        'blob.weird': Buffer.from([0]),
      }),
    );
    expect(d.status).toBe('READY');
    staticId = d.id;
  });

  it('content types and caching: index.html no-cache, hashed assets immutable for a year', async () => {
    const index = await fetch(`${p.url}/sites/${appId}/`);
    expect(index.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const explicit = await fetch(`${p.url}/sites/${appId}/index.html`);
    expect(explicit.headers.get('cache-control')).toBe('no-cache');
    const js = await fetch(`${p.url}/sites/${appId}/assets/app-0123abcd.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(js.headers.get('x-content-type-options')).toBe('nosniff');
    const css = await fetch(`${p.url}/sites/${appId}/assets/index-BzK3j1sx.css`);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(css.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const svg = await fetch(`${p.url}/sites/${appId}/assets/logo.svg`);
    expect(svg.headers.get('content-type')).toBe('image/svg+xml');
    expect(svg.headers.get('cache-control')).toBe('no-cache');
    expect((await fetch(`${p.url}/sites/${appId}/data.json`)).headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect((await fetch(`${p.url}/sites/${appId}/font.woff2`)).headers.get('content-type')).toBe('font/woff2');
    expect((await fetch(`${p.url}/sites/${appId}/blob.weird`)).headers.get('content-type')).toBe('application/octet-stream');
  });

  it('ETag revalidation answers 304; HEAD has no body', async () => {
    const first = await fetch(`${p.url}/sites/${appId}/assets/logo.svg`);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^W\/"/);
    const again = await fetch(`${p.url}/sites/${appId}/assets/logo.svg`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    const head = await fetch(`${p.url}/sites/${appId}/data.json`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('7');
    expect(await head.text()).toBe('');
  });

  it('folders serve their index.html (redirecting to the trailing slash); the site root redirects too', async () => {
    const folder = await fetch(`${p.url}/sites/${appId}/docs`, { redirect: 'manual' });
    expect(folder.status).toBe(301);
    expect(folder.headers.get('location')).toBe(`/sites/${appId}/docs/`);
    expect(await (await fetch(`${p.url}/sites/${appId}/docs/`)).text()).toBe('<h1>docs</h1>');
    const root = await fetch(`${p.url}/sites/${appId}?x=1`, { redirect: 'manual' });
    expect(root.status).toBe(301);
    expect(root.headers.get('location')).toBe(`/sites/${appId}/?x=1`);
  });

  it('static: a missing file gets the site\'s 404.html with status 404', async () => {
    const res = await fetch(`${p.url}/sites/${appId}/nope/here`);
    expect(res.status).toBe(404);
    expect(await res.text()).toBe('<h1>custom not found</h1>');
  });

  it('no live site, unknown app or an unknown pinned deployment: 404 in the envelope', async () => {
    const other = await p.api('POST', '/init', { body: { name: 'No site' } });
    for (const url of [`/sites/${other.body.app_id}/`, '/sites/zzzzzzzzzzzzzzzz/', `/sites/${appId}/d/00000000-0000-4000-8000-000000000000/`]) {
      const res = await fetch(p.url + url);
      expect(res.status, url).toBe(404);
      expect((await res.json()).error.code).toBe('RESOURCE_NOT_FOUND');
    }
  });

  it('path traversal on serving never leaves the site folder', async () => {
    const attempts = [
      `/sites/${appId}/../../etc/passwd`,
      `/sites/${appId}/../../../../../../etc/passwd`,
      `/sites/${appId}/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd`,
      `/sites/${appId}/%2E%2E%2F%2E%2E%2F%2E%2E%2Fetc%2Fpasswd`,
      `/sites/${appId}/..%2f..%2f..%2f..%2fetc%2fpasswd`,
      `/sites/${appId}/..%5c..%5c..%5cetc%5cpasswd`,
      `/sites/${appId}/assets/..%2f..%2fupload.zip`,
      `/sites/${appId}/..%2fupload.zip`,
      `/sites/${appId}/%252e%252e/%252e%252e/etc/passwd`,
      `/sites/${appId}/.%2e/.%2e/etc/passwd`,
      `/sites/${appId}/%00/etc/passwd`,
      `/sites/${appId}/d/${staticId}/../../../../etc/passwd`,
      `/sites/${appId}/%c0%ae%c0%ae/%c0%ae%c0%ae/etc/passwd`,
    ];
    for (const attempt of attempts) {
      const res = await rawRequest(p.url, attempt);
      expect(res.text, attempt).not.toMatch(/root:/);
      expect([404, 400], attempt).toContain(res.status);
    }
  });
});

describe('frameworks', () => {
  it('react-vite: client routes get index.html, a missing asset is a 404', async () => {
    const d = await deploy(await zipOf({ 'index.html': '<div id="root">spa</div>', 'assets/index-0123abcd.js': 'x' }), 'react-vite');
    expect(d.status).toBe('READY');
    for (const route of ['some/route', 'users/42/edit', 'deep/link.html']) {
      const res = await fetch(`${p.url}/sites/${appId}/${route}`);
      expect(res.status, route).toBe(200);
      expect(await res.text()).toBe('<div id="root">spa</div>');
      expect(res.headers.get('cache-control')).toBe('no-cache');
    }
    const missing = await fetch(`${p.url}/sites/${appId}/assets/missing-0123abcd.js`);
    expect(missing.status).toBe(404);
    expect((await missing.json()).error.code).toBe('RESOURCE_NOT_FOUND');
  });

  it('nextjs-static: /about serves about.html, misses get 404.html', async () => {
    const d = await deploy(
      await zipOf({ 'index.html': 'home', 'about.html': 'about page', 'blog/post.html': 'post', '404.html': 'next 404', '_next/static/chunks/main.js': 'x' }),
      'nextjs-static',
    );
    expect(d.status).toBe('READY');
    expect(await (await fetch(`${p.url}/sites/${appId}/about`)).text()).toBe('about page');
    expect(await (await fetch(`${p.url}/sites/${appId}/blog/post`)).text()).toBe('post');
    const missing = await fetch(`${p.url}/sites/${appId}/nothing`);
    expect(missing.status).toBe(404);
    expect(await missing.text()).toBe('next 404');
    expect((await fetch(`${p.url}/sites/${appId}/_next/static/chunks/main.js`)).headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  });

  it('static without 404.html: a missing file is a 404 envelope', async () => {
    await deploy(await zipOf({ 'index.html': 'plain' }), 'other');
    const res = await fetch(`${p.url}/sites/${appId}/missing.html`);
    expect(res.status).toBe(404);
    expect((await res.json()).error.code).toBe('RESOURCE_NOT_FOUND');
  });
});

describe('frontend environment', () => {
  it('PUT replaces the map, GET lists keys only, values are sealed at rest and reach the page through __env.js', async () => {
    const set = await p.api('PUT', `/v1/${appId}/frontend/env`, { body: { GREETING: 'Hello <script>', API_BASE: 'https://api.example.com', _X1: '' }, key: serviceKey });
    expect(set.status).toBe(200);
    expect(set.body.keys).toEqual(['API_BASE', 'GREETING', '_X1']);
    const got = await p.api('GET', `/v1/${appId}/frontend/env`, { key: serviceKey });
    expect(got.body).toEqual({ keys: ['API_BASE', 'GREETING', '_X1'] });
    expect(JSON.stringify(got.body)).not.toContain('Hello');

    const rows = await p.sql(`select name, value_sealed from frontend_env where app_id = $1 order by name`, [appId]);
    expect(rows.map((r) => r.name)).toEqual(['API_BASE', 'GREETING', '_X1']);
    for (const r of rows) {
      expect(r.value_sealed).toMatch(/^v1\./);
      expect(r.value_sealed).not.toContain('Hello');
      expect(r.value_sealed).not.toContain('api.example.com');
    }

    await deploy(await siteZip());
    for (const at of [`/sites/${appId}/__env.js`, `/sites/${appId}/some/deep/__env.js`]) {
      const env = await fetch(p.url + at);
      expect(env.status).toBe(200);
      expect(env.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect(env.headers.get('cache-control')).toBe('no-store');
      const text = await env.text();
      expect(text).not.toContain('<script>');
      const window: { __ENV__?: Record<string, string> } = {};
      new Function('window', text)(window);
      expect(window.__ENV__).toEqual({
        API_BASE: 'https://api.example.com',
        GREETING: 'Hello <script>',
        _X1: '',
        ...(await platformEnv(appId)),
      });
    }

    const replaced = await p.api('PUT', `/v1/${appId}/frontend/env`, { body: { ONLY: '1' }, key: serviceKey });
    expect(replaced.body.keys).toEqual(['ONLY']);
    expect(await (await fetch(`${p.url}/sites/${appId}/__env.js`)).text()).not.toContain('GREETING');
    expect((await p.api('PUT', `/v1/${appId}/frontend/env`, { body: {}, key: serviceKey })).body.keys).toEqual([]);
  });

  it('refuses bad names, long values, too many variables and the reserved SVC_ prefix with 400', async () => {
    const bad = [
      { lower: 'x' },
      { '1ABC': 'x' },
      { 'A-B': 'x' },
      { ['A'.repeat(65)]: 'x' },
      { LONG: 'x'.repeat(4097) },
      { NUM: 5 },
      Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`V${i}`, 'x'])),
      { SVC_API_URL: 'https://evil.example' },
      ['A'],
    ];
    for (const body of bad) {
      const res = await p.api('PUT', `/v1/${appId}/frontend/env`, { body, key: serviceKey });
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_FAILED');
    }
    const ok = await p.api('PUT', `/v1/${appId}/frontend/env`, { body: { ['A'.repeat(64)]: 'x'.repeat(4096) }, key: serviceKey });
    expect(ok.status).toBe(200);
  });
});

describe('access', () => {
  it('needs a credential of the app', async () => {
    expect((await p.api('GET', base(), { key: null })).status).toBe(401);
    const other = await p.api('POST', '/init', { body: { name: 'Other' } });
    const otherKey = other.body.service_key.key;
    const res = await p.api('GET', base(), { key: otherKey });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
    expect((await p.api('PUT', `/v1/${appId}/frontend/env`, { body: { A: 'b' }, key: otherKey })).status).toBe(403);
    // The platform key of the owner works too.
    expect((await p.api('GET', base())).status).toBe(200);
    // Another app's deployment id is not found through this app.
    const mine = await create();
    expect((await p.api('GET', `/v1/${other.body.app_id}/frontend/deployments/${mine.id}`)).status).toBe(404);
    expect((await p.api('GET', `${base()}/not-a-uuid`)).status).toBe(400);
    expect((await p.api('POST', base(), { body: { framework: 'angular' }, key: serviceKey })).status).toBe(400);
  });
});

describe('deploying from a map of files (MCP-only clients)', () => {
  let filesApp: string;
  let filesKey: string;
  const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5f1e7a90000000049454e44ae426082', 'hex');

  beforeAll(async () => {
    const app = await p.api('POST', '/init', { body: { name: 'Files site' } });
    expect(app.status).toBe(201);
    filesApp = app.body.app_id;
    filesKey = app.body.service_key.key;
  });

  const deployFiles = (body: Record<string, unknown>) => p.api('POST', `/v1/${filesApp}/frontend/deployments/files`, { key: filesKey, body });
  /** The deployment once its build finished (the file's settled() reads with the other app's key). */
  const built = (id: string) =>
    waitFor(async () => {
      const d = (await p.api('GET', `/v1/${filesApp}/frontend/deployments/${id}`, { key: filesKey })).body;
      return ['READY', 'ERROR', 'CANCELED'].includes(d.status) ? d : undefined;
    });
  const deploymentCount = async () => (await p.sql('select count(*)::int as n from frontend_deployments where app_id = $1', [filesApp]))[0].n as number;

  it('REST: text and base64 files become a deployment that builds to READY and is served', async () => {
    const index = '<!doctype html><h1>From files</h1>';
    const r = await deployFiles({
      framework: 'static',
      files: {
        'index.html': index,
        'assets/app-0123abcd.js': 'console.log("files")',
        'img/dot.png': { content: PNG.toString('base64'), encoding: 'base64' },
        'text.txt': { content: 'plain', encoding: 'utf8' },
      },
    });
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ app_id: filesApp, framework: 'static', status: 'BUILDING', error: null, live: false, file_count: null });
    expect(r.body.size_bytes).toBeGreaterThan(0);
    const done = await built(r.body.id);
    expect(done).toMatchObject({ status: 'READY', live: true, error: null, file_count: 4, url: await appSiteUrl(p, filesApp) });
    expect(done.unzipped_bytes).toBe(Buffer.byteLength(index) + Buffer.byteLength('console.log("files")') + PNG.length + 5);
    expect(walk(deploymentDir(r.body.id, filesApp)).sort()).toEqual(['site/assets/app-0123abcd.js', 'site/img/dot.png', 'site/index.html', 'site/text.txt']);

    const page = await fetch(`${p.url}/sites/${filesApp}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toBe(index);
    const png = await fetch(`${p.url}/sites/${filesApp}/img/dot.png`);
    expect(png.status).toBe(200);
    expect(png.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await png.arrayBuffer())).toEqual(PNG);
  });

  it('MCP: a site inside a single folder (dist/) deploys and is served', async () => {
    const mcp = await connectMcp(p.url, p.platformKey);
    try {
      const r = await callTool(mcp.client, 'frontend_deploy_files', {
        app_id: filesApp,
        framework: 'react-vite',
        files: { 'dist/index.html': '<p>spa</p>', 'dist/assets/main.js': 'export {}' },
      });
      expect(r.isError).toBeFalsy();
      const d = resultJson(r) as { id: string; status: string; framework: string; platform_env: unknown };
      expect(d).toMatchObject({ status: 'BUILDING', framework: 'react-vite' });
      expect(d.platform_env).toEqual(await platformEnv(filesApp));
      const done = await built(d.id);
      expect(done).toMatchObject({ status: 'READY', live: true, file_count: 2 });
      // react-vite: an unknown route gets index.html.
      expect(await (await fetch(`${p.url}/sites/${filesApp}/some/route`)).text()).toBe('<p>spa</p>');
    } finally {
      await mcp.close();
    }
  });

  it('paths that leave the site, absolute or duplicate paths are 400 VALIDATION_FAILED and create nothing', async () => {
    const before = await deploymentCount();
    const cases: [string, Record<string, string>, string][] = [
      ['../evil.html', { 'index.html': 'x', '../evil.html': 'owned' }, "files contains a path that leaves the site folder: '../evil.html' (path traversal)."],
      ['assets/../../evil.html', { 'index.html': 'x', 'assets/../../evil.html': 'owned' }, "files contains a path that leaves the site folder: 'assets/../../evil.html' (path traversal)."],
      ['/etc/evil.html', { 'index.html': 'x', '/etc/evil.html': 'owned' }, "files contains an absolute path: '/etc/evil.html'. Entries must be relative to the site root."],
      ['C:/evil.html', { 'index.html': 'x', 'C:/evil.html': 'owned' }, "files contains an absolute path: 'C:/evil.html'. Entries must be relative to the site root."],
      ['./index.html', { 'index.html': 'x', './index.html': 'y' }, "files names 'index.html' twice (paths are compared after removing '.' and empty segments)."],
    ];
    for (const [field, files, message] of cases) {
      const r = await deployFiles({ framework: 'static', files });
      expect(r.status, field).toBe(400);
      expect(r.body).toEqual({
        error: {
          code: 'VALIDATION_FAILED',
          message,
          remediation: 'Fix the named field and send the request again.',
          documentation_url: p.docsUrl('frontend'),
          details: [{ path: `files.${field}`, message }],
        },
      });
    }
    expect(await deploymentCount()).toBe(before);
    expect(existsSync(path.join(dataDir, 'frontend', 'evil.html'))).toBe(false);
    expect(existsSync(path.join(dataDir, 'evil.html'))).toBe(false);
  });

  it('file count, unzipped size and zip size follow the zip limits; bad base64 is named', async () => {
    const before = await deploymentCount();
    const many = Object.fromEntries(Array.from({ length: MAX_FILES + 1 }, (_, i) => [`f${i}.html`, 'x']));
    const tooMany = await deployFiles({ framework: 'static', files: many });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error).toMatchObject({ code: 'VALIDATION_FAILED', message: `files has ${MAX_FILES + 1} entries; at most ${MAX_FILES} are allowed (SVC_FRONTEND_MAX_FILES).` });

    const oversized = await p.api('POST', `/v1/${filesApp}/frontend/deployments/files`, {
      key: filesKey,
      body: { framework: 'static', files: { 'index.html': 'x', 'big.txt': 'a'.repeat(MAX_ZIP + 1) } },
    });
    expect(oversized.status).toBe(413);
    expect(oversized.body.error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', message: `The zip exceeds the ${MAX_ZIP}-byte limit (maxSizeBytes).` });

    // The REST body may reach 4 MB as over MCP (SVC_BODY_LIMIT is 1 MB): 1.5 MB of files reach the site limits, 4 MB do not.
    const midBody = await deployFiles({ framework: 'static', files: { 'index.html': 'x', 'big.txt': 'a'.repeat(1.5 * 1024 * 1024) } });
    expect(midBody.status).toBe(400);
    expect(midBody.body.error.message).toMatch(/^The files add up to 1572865 bytes; a site may hold at most \d+ \(SVC_FRONTEND_MAX_UNZIPPED_BYTES\)\.$/);
    const overBody = await deployFiles({ framework: 'static', files: { 'index.html': 'x', 'big.txt': 'a'.repeat(4 * 1024 * 1024) } });
    expect(overBody.status).toBe(413);
    expect(overBody.body.error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', message: 'The request body exceeds the 4mb limit.' });

    const badBase64 = await deployFiles({ framework: 'static', files: { 'index.html': { content: '***', encoding: 'base64' } } });
    expect(badBase64.status).toBe(400);
    expect(badBase64.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'files.index.html.content', message: 'not valid base64' }] });

    const none = await deployFiles({ framework: 'static', files: {} });
    expect(none.status).toBe(400);
    expect(none.body.error.message).toBe('files is empty; a site needs at least index.html.');
    expect(await deploymentCount()).toBe(before);
  });

  it('without index.html the build ends in ERROR exactly as for a zip', async () => {
    const r = await deployFiles({ framework: 'static', files: { 'about.html': '<p>no index</p>' } });
    expect(r.status).toBe(202);
    const done = await built(r.body.id);
    expect(done).toMatchObject({ status: 'ERROR', live: false });
    expect(done.error).toMatch(/no index\.html at its root/);
    expect(existsSync(deploymentDir(r.body.id, filesApp))).toBe(false);
  });
});
