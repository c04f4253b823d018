// File storage on the local backend: tools over REST, the signed blob routes, limits, access rules, app deletion.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { callTool, connectMcp, request, resultJson } from '../e2e/e2e-helpers.ts';
import { UrlSigner } from '../../src/storage/signing.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const MASTER_KEY = randomBytes(32);
const PASSWORD = 'correct horse battery';

interface App {
  app_id: string;
  subdomain: string;
  service_key: { key: string };
}

let p: TestPlatform;
let appA: App;
let appB: App;
let alice: { token: string; id: string };
let bob: { token: string; id: string };
let signer: UrlSigner;

beforeAll(async () => {
  p = await startTestPlatform({ SVC_MASTER_KEY: MASTER_KEY.toString('hex'), SVC_AUTH_RATE_LIMIT_PER_MINUTE: '1000', SVC_BASE_DOMAIN: 'apps.test' });
  signer = new UrlSigner(MASTER_KEY);
  appA = (await p.api('POST', '/init', { body: { name: 'Storage A' } })).body;
  appB = (await p.api('POST', '/init', { body: { name: 'Storage B' } })).body;
  alice = await signup(appA, 'alice@example.com');
  bob = await signup(appA, 'bob@example.com');
});
afterAll(async () => {
  await p?.close();
});

async function signup(app: App, email: string) {
  const r = await p.api('POST', `/v1/${app.app_id}/auth/signup`, { key: null, body: { email, password: PASSWORD } });
  expect(r.status).toBe(201);
  return { token: r.body.access_token as string, id: r.body.user.id as string };
}

const storageDir = (appId: string) => path.join(p.services.config.dataDir, 'storage', appId);
const filesOnDisk = (appId: string) => (existsSync(storageDir(appId)) ? readdirSync(storageDir(appId)).sort() : []);
/** The platform signs URLs with SVC_BASE_URL; the test server listens on a random port, so keep path and query. */
const local = (url: string) => {
  const u = new URL(url);
  return p.url + u.pathname + u.search;
};

async function upload(app: App, body: unknown, key: string = app.service_key.key) {
  return p.api('POST', `/storage/${app.app_id}/upload`, { key, body });
}

async function put(url: string, bytes: Buffer | string, contentType: string | undefined, extra: Record<string, string> = {}) {
  const headers: Record<string, string> = { ...extra };
  if (contentType !== undefined) headers['content-type'] = contentType;
  const res = await fetch(local(url), { method: 'PUT', headers, body: typeof bytes === 'string' ? bytes : new Uint8Array(bytes) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

/** PUT with chunked transfer encoding (no Content-Length), so only the bytes themselves tell the size. */
async function putChunked(url: string, bytes: Buffer, contentType: string) {
  const stream = new ReadableStream({
    start(controller) {
      controller.enqueue(new Uint8Array(bytes));
      controller.close();
    },
  });
  const res = await fetch(local(url), { method: 'PUT', headers: { 'content-type': contentType }, body: stream, duplex: 'half' } as RequestInit);
  return { status: res.status, body: await res.json() };
}

async function getBlob(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(local(url), { headers });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

/** Uploads `bytes` and PUTs them: a ready object. */
async function store(app: App, filename: string, bytes: Buffer | string, contentType = 'text/plain', key = app.service_key.key) {
  const size = Buffer.byteLength(bytes);
  const up = await upload(app, { filename, contentType, sizeBytes: size }, key);
  expect(up.status).toBe(200);
  const done = await put(up.body.uploadUrl, Buffer.from(bytes), contentType);
  expect(done.status).toBe(200);
  return up.body as { uploadUrl: string; objectKey: string; objectId: string; expiresIn: number };
}

const list = (app: App, key: string = app.service_key.key) => p.api('GET', `/storage/${app.app_id}/objects`, { key });
const download = (app: App, id: string, key: string = app.service_key.key) => p.api('GET', `/storage/${app.app_id}/download/${id}`, { key });
const remove = (app: App, id: string, key: string = app.service_key.key) => p.api('DELETE', `/storage/${app.app_id}/${id}`, { key });
const rowOf = async (id: string) => (await p.sql('select * from storage_objects where id = $1', [id]))[0];
const meter = async (appId: string) =>
  Number((await p.sql(`select coalesce(sum(quantity), 0)::text as q from usage_daily where app_id = $1 and meter = 'storage_bytes'`, [appId]))[0].q);

async function waitFor(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function expectPendingAndNothingStored(app: App, objectId: string) {
  expect((await rowOf(objectId)).status).toBe('pending');
  expect(filesOnDisk(app.app_id).filter((f) => f.includes(objectId))).toEqual([]);
  expect((await list(app)).body.map((o: { id: string }) => o.id)).not.toContain(objectId);
}

describe('service key: upload, list, download, delete', () => {
  it('runs the whole flow with the exact response shapes', async () => {
    const bytes = Buffer.from('hello, storage!\n');
    const up = await upload(appA, { filename: 'hello.txt', contentType: 'text/plain', sizeBytes: bytes.length });
    expect(up.status).toBe(200);
    expect(Object.keys(up.body).sort()).toEqual(['expiresIn', 'objectId', 'objectKey', 'uploadUrl']);
    const { objectId, objectKey, uploadUrl } = up.body;
    expect(objectId).toMatch(UUID);
    expect(up.body.expiresIn).toBe(300);
    expect(objectKey).toBe(`${appA.app_id}/service/${objectId}_hello.txt`);
    const u = new URL(uploadUrl);
    expect(u.origin).toBe(p.services.config.baseUrl);
    expect(u.pathname).toBe(`/blob/storage/${objectId}`);
    expect(u.searchParams.get('op')).toBe('put');
    expect(Number(u.searchParams.get('exp')) - Date.now() / 1000).toBeGreaterThan(295);
    expect(Number(u.searchParams.get('exp')) - Date.now() / 1000).toBeLessThanOrEqual(300);

    // Not listed before its bytes arrive; the row records no user.
    expect((await list(appA)).body).toEqual([]);
    expect(await rowOf(objectId)).toMatchObject({ status: 'pending', user_id: null, object_key: objectKey, size_bytes: String(bytes.length) });

    const done = await put(uploadUrl, bytes, 'text/plain');
    expect(done.status).toBe(200);
    expect(done.body).toEqual({ objectId, status: 'ready', size_bytes: bytes.length });
    // On disk the name is the object id alone, never the filename or key.
    expect(filesOnDisk(appA.app_id)).toEqual([objectId]);
    expect(readFileSync(path.join(storageDir(appA.app_id), objectId))).toEqual(bytes);

    const listed = await list(appA);
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([{ id: objectId, filename: 'hello.txt', content_type: 'text/plain', size_bytes: bytes.length, created_at: expect.stringMatching(ISO) }]);

    const dl = await download(appA, objectId);
    expect(dl.status).toBe(200);
    expect(dl.body).toEqual({ downloadUrl: expect.stringContaining(`/blob/storage/${objectId}?op=get&exp=`), filename: 'hello.txt', expiresIn: 3600 });
    const got = await getBlob(dl.body.downloadUrl);
    expect(got.status).toBe(200);
    expect(got.bytes).toEqual(bytes);
    expect(got.headers.get('content-type')).toBe('text/plain');
    expect(got.headers.get('content-length')).toBe(String(bytes.length));
    expect(got.headers.get('content-disposition')).toBe(`attachment; filename="hello.txt"; filename*=UTF-8''hello.txt`);
    expect(got.headers.get('accept-ranges')).toBe('bytes');
    expect(got.headers.get('x-content-type-options')).toBe('nosniff');

    const del = await remove(appA, objectId);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ deleted: true, id: objectId });
    expect((await list(appA)).body).toEqual([]);
    expect(filesOnDisk(appA.app_id)).toEqual([]);
    expect(await rowOf(objectId)).toBeUndefined();
    expect((await download(appA, objectId)).status).toBe(404);
    const stale = await getBlob(dl.body.downloadUrl);
    expect(stale.status).toBe(404);
    expect(JSON.parse(stale.bytes.toString()).error.code).toBe('RESOURCE_NOT_FOUND');
    const again = await remove(appA, objectId);
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('RESOURCE_NOT_FOUND');
  });

  it('lists newest first and sanitises filenames (the key is metadata, never a path)', async () => {
    const first = await store(appA, 'first.txt', 'one');
    // NUL never gets this far (every input is screened: 400); other control characters are dropped.
    const second = await store(appA, '../../etc/pass\u0001wd', 'two');
    const third = await store(appA, 'Résumé <final>.pdf', 'three', 'application/pdf');
    expect(second.objectKey).toBe(`${appA.app_id}/service/${second.objectId}_passwd`);
    expect(third.objectKey).toBe(`${appA.app_id}/service/${third.objectId}_Résumé _final_.pdf`);
    const listed = (await list(appA)).body as { id: string; filename: string }[];
    expect(listed.map((o) => o.id)).toEqual([third.objectId, second.objectId, first.objectId]);
    expect(listed.map((o) => o.filename)).toEqual(['Résumé _final_.pdf', 'passwd', 'first.txt']);
    expect(filesOnDisk(appA.app_id)).toEqual([first.objectId, second.objectId, third.objectId].sort());
    const dl = await download(appA, third.objectId);
    const got = await getBlob(dl.body.downloadUrl);
    expect(got.headers.get('content-disposition')).toBe(`attachment; filename="R_sum_ _final_.pdf"; filename*=UTF-8''R%C3%A9sum%C3%A9%20_final_.pdf`);
    for (const o of [first, second, third]) expect((await remove(appA, o.objectId)).status).toBe(200);
  });

  it('records stored bytes on the storage_bytes meter: +size on arrival, -size on delete', async () => {
    const before = await meter(appA.app_id);
    const a = await store(appA, 'a.bin', Buffer.alloc(1000, 1), 'application/octet-stream');
    const b = await store(appA, 'b.bin', Buffer.alloc(500, 2), 'application/octet-stream');
    // A pending upload is not metered.
    expect((await upload(appA, { filename: 'c.bin', contentType: 'application/octet-stream', sizeBytes: 700 })).status).toBe(200);
    expect(await meter(appA.app_id)).toBe(before + 1500);
    const [today] = await p.sql(`select to_char(day, 'YYYY-MM-DD') as day from usage_daily where app_id = $1 and meter = 'storage_bytes'`, [appA.app_id]);
    expect(today.day).toBe(new Date().toISOString().slice(0, 10));
    await remove(appA, a.objectId);
    expect(await meter(appA.app_id)).toBe(before + 500);
    await remove(appA, b.objectId);
    expect(await meter(appA.app_id)).toBe(before);
  });
});

describe('end users see and manage only their own files', () => {
  it('associates uploads with the user; keys see everything; other users get 404', async () => {
    const mine = await store(appA, 'alice.txt', 'alice data', 'text/plain', alice.token);
    expect(mine.objectKey).toBe(`${appA.app_id}/${alice.id}/${mine.objectId}_alice.txt`);
    expect((await rowOf(mine.objectId)).user_id).toBe(alice.id);
    const bobs = await store(appA, 'bob.txt', 'bob data', 'text/plain', bob.token);
    const svc = await store(appA, 'svc.txt', 'service data');

    expect((await list(appA, alice.token)).body.map((o: { id: string }) => o.id)).toEqual([mine.objectId]);
    expect((await list(appA, bob.token)).body.map((o: { id: string }) => o.id)).toEqual([bobs.objectId]);
    expect((await list(appA)).body.map((o: { id: string }) => o.id)).toEqual([svc.objectId, bobs.objectId, mine.objectId]);
    // The owner's platform key sees every file too.
    expect((await list(appA, p.platformKey)).body).toHaveLength(3);

    const aliceDl = await download(appA, mine.objectId, alice.token);
    expect(aliceDl.status).toBe(200);
    expect((await getBlob(aliceDl.body.downloadUrl)).bytes.toString()).toBe('alice data');

    for (const [id, token] of [
      [mine.objectId, bob.token],
      [bobs.objectId, alice.token],
      [svc.objectId, alice.token],
    ] as const) {
      const dl = await download(appA, id, token);
      expect(dl.status).toBe(404);
      expect(dl.body.error.code).toBe('RESOURCE_NOT_FOUND');
      const del = await remove(appA, id, token);
      expect(del.status).toBe(404);
      expect(del.body.error.code).toBe('RESOURCE_NOT_FOUND');
    }
    expect(filesOnDisk(appA.app_id)).toHaveLength(3);

    // A service key manages a user's file; a user deletes their own.
    expect((await download(appA, bobs.objectId)).status).toBe(200);
    expect((await remove(appA, bobs.objectId)).body).toEqual({ deleted: true, id: bobs.objectId });
    expect((await remove(appA, mine.objectId, alice.token)).body).toEqual({ deleted: true, id: mine.objectId });
    expect((await remove(appA, svc.objectId, p.platformKey)).status).toBe(200);
    expect(filesOnDisk(appA.app_id)).toEqual([]);
  });

  it('nobody reaches another app: its service key, its users and a foreign platform key get 403', async () => {
    const obj = await store(appA, 'private.txt', 'secret');
    const outsider = await signup(appB, 'eve@example.com');
    for (const key of [appB.service_key.key, outsider.token]) {
      const calls = [
        await upload(appA, { filename: 'x.txt', contentType: 'text/plain', sizeBytes: 1 }, key),
        await list(appA, key),
        await download(appA, obj.objectId, key),
        await remove(appA, obj.objectId, key),
      ];
      for (const r of calls) {
        expect(r.status).toBe(403);
        expect(r.body.error.code).toBe('FORBIDDEN');
      }
    }
    // appB's own key cannot reach appA's object through appB's routes either.
    expect((await download(appB, obj.objectId)).status).toBe(404);
    expect((await remove(appB, obj.objectId)).status).toBe(404);
    const anon = await list(appA, null as unknown as string);
    expect(anon.status).toBe(401);
    expect(anon.body.error.code).toBe('AUTH_REQUIRED');
    expect((await remove(appA, obj.objectId)).status).toBe(200);
  });

  it('a malformed object id is a 404, not a 500', async () => {
    expect((await download(appA, 'not-a-uuid')).status).toBe(404);
    expect((await remove(appA, 'not-a-uuid')).body.error.code).toBe('RESOURCE_NOT_FOUND');
  });
});

describe('upload request validation and limits', () => {
  it.each([
    [{ contentType: 'text/plain', sizeBytes: 1 }, 'filename'],
    [{ filename: '', contentType: 'text/plain', sizeBytes: 1 }, 'filename'],
    [{ filename: 'a', sizeBytes: 1 }, 'contentType'],
    [{ filename: 'a', contentType: 'not a type', sizeBytes: 1 }, 'contentType'],
    [{ filename: 'a', contentType: 'text/plain\r\nX-Evil: 1', sizeBytes: 1 }, 'contentType'],
    [{ filename: 'a', contentType: 'text/plain' }, 'sizeBytes'],
    [{ filename: 'a', contentType: 'text/plain', sizeBytes: 0 }, 'sizeBytes'],
    [{ filename: 'a', contentType: 'text/plain', sizeBytes: -5 }, 'sizeBytes'],
    [{ filename: 'a', contentType: 'text/plain', sizeBytes: 1.5 }, 'sizeBytes'],
    [{ filename: 'a', contentType: 'text/plain', sizeBytes: '10' }, 'sizeBytes'],
  ])('%j -> 400 VALIDATION_FAILED on %s', async (body, field) => {
    const r = await upload(appA, body);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('VALIDATION_FAILED');
    expect(r.body.error.message).toContain(field);
  });

  it('10 MB per file: exactly 10 MB is accepted, one byte more is 400 FILE_TOO_LARGE naming the limit', async () => {
    const ok = await upload(appA, { filename: 'big.bin', contentType: 'application/octet-stream', sizeBytes: 10 * 1024 * 1024 });
    expect(ok.status).toBe(200);
    const tooBig = await upload(appA, { filename: 'big.bin', contentType: 'application/octet-stream', sizeBytes: 10 * 1024 * 1024 + 1 });
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.error).toMatchObject({ code: 'FILE_TOO_LARGE', details: { size_bytes: 10485761, max_file_bytes: 10485760 } });
    expect(tooBig.body.error.message).toContain('10485760 bytes (10 MB)');
    // The full 10 MB goes through the blob PUT and comes back intact.
    const big = randomBytes(10 * 1024 * 1024);
    expect((await put(ok.body.uploadUrl, big, 'application/octet-stream')).status).toBe(200);
    const got = await getBlob((await download(appA, ok.body.objectId)).body.downloadUrl);
    expect(got.headers.get('content-length')).toBe(String(big.length));
    expect(got.bytes.equals(big)).toBe(true);
    await remove(appA, ok.body.objectId);
  });

  it('storage_limits_get/set: platform key only, tighten-only, null resets', async () => {
    const app: App = (await p.api('POST', '/init', { body: { name: 'Limits' } })).body;
    const base = `/storage/${app.app_id}/limits`;
    const initial = await p.api('GET', base);
    expect(initial.status).toBe(200);
    expect(initial.body).toEqual({
      app_id: app.app_id,
      max_file_bytes: 10485760,
      max_app_bytes: 1073741824,
      allowed_content_types: [],
      max_user_pending_uploads: 20,
      max_user_pending_bytes: 107374183,
      overrides: { max_file_bytes: null, max_app_bytes: null, allowed_content_types: null },
      usage: { used_bytes: 0, pending_bytes: 0 },
    });
    for (const key of [app.service_key.key]) {
      expect((await p.api('GET', base, { key })).status).toBe(403);
      expect((await p.api('PUT', base, { key, body: { max_file_bytes: 5 } })).status).toBe(403);
    }
    const set = await p.api('PUT', base, { body: { max_file_bytes: 100, allowed_content_types: ['image/*', 'Application/PDF'] } });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({
      max_file_bytes: 100,
      max_app_bytes: 1073741824,
      allowed_content_types: ['image/*', 'application/pdf'],
      overrides: { max_file_bytes: 100, max_app_bytes: null, allowed_content_types: ['image/*', 'application/pdf'] },
    });
    // Omitted fields stay.
    const more = await p.api('PUT', base, { body: { max_app_bytes: 5000 } });
    expect(more.body.overrides).toEqual({ max_file_bytes: 100, max_app_bytes: 5000, allowed_content_types: ['image/*', 'application/pdf'] });

    const tooBig = await upload(app, { filename: 'a.png', contentType: 'image/png', sizeBytes: 101 });
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.error.code).toBe('FILE_TOO_LARGE');
    expect(tooBig.body.error.message).toContain('limit of 100 bytes');
    const wrongType = await upload(app, { filename: 'a.txt', contentType: 'text/plain', sizeBytes: 10 });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error).toMatchObject({ code: 'CONTENT_TYPE_NOT_ALLOWED', details: { content_type: 'text/plain', allowed_content_types: ['image/*', 'application/pdf'] } });
    expect((await upload(app, { filename: 'a.png', contentType: 'image/png', sizeBytes: 100 })).status).toBe(200);
    expect((await upload(app, { filename: 'a.pdf', contentType: 'application/pdf', sizeBytes: 10 })).status).toBe(200);
    expect((await p.api('GET', base)).body.usage).toEqual({ used_bytes: 0, pending_bytes: 110 });

    // Overrides cannot loosen the platform limits; malformed entries are refused.
    const above = await p.api('PUT', base, { body: { max_file_bytes: 10485761 } });
    expect(above.status).toBe(400);
    expect(above.body.error.code).toBe('VALIDATION_FAILED');
    expect(above.body.error.message).toContain('10485760');
    for (const body of [{ allowed_content_types: ['images'] }, { allowed_content_types: [] }, { max_app_bytes: 0 }, { max_file_bytes: 1.5 }]) {
      const r = await p.api('PUT', base, { body });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('VALIDATION_FAILED');
    }

    const reset = await p.api('PUT', base, { body: { max_file_bytes: null, max_app_bytes: null, allowed_content_types: null } });
    expect(reset.body).toMatchObject({ max_file_bytes: 10485760, max_app_bytes: 1073741824, allowed_content_types: [] });
    expect((await upload(app, { filename: 'a.txt', contentType: 'text/plain', sizeBytes: 1000 })).status).toBe(200);
    await p.api('DELETE', `/apps/${app.app_id}`);
  });

  it('per-app quota holds under parallel upload requests: exactly the ones that fit succeed', async () => {
    const app: App = (await p.api('POST', '/init', { body: { name: 'Quota' } })).body;
    const set = await p.api('PUT', `/storage/${app.app_id}/limits`, { body: { max_app_bytes: 1000 } });
    expect(set.status).toBe(200);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => upload(app, { filename: `f${i}.bin`, contentType: 'application/octet-stream', sizeBytes: 300 })),
    );
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status !== 200);
    expect(ok).toHaveLength(3);
    expect(refused).toHaveLength(7);
    for (const r of refused) {
      expect(r.status).toBe(409);
      expect(r.body.error.code).toBe('STORAGE_QUOTA_EXCEEDED');
      expect(r.body.error.details).toMatchObject({ size_bytes: 300, max_app_bytes: 1000 });
    }
    expect((await p.api('GET', `/storage/${app.app_id}/limits`)).body.usage).toEqual({ used_bytes: 0, pending_bytes: 900 });

    // Stored bytes count as well as pending ones; a 100-byte upload still fits, one more byte does not.
    const first = ok[0]!.body;
    expect((await put(first.uploadUrl, Buffer.alloc(300), 'application/octet-stream')).status).toBe(200);
    expect((await p.api('GET', `/storage/${app.app_id}/limits`)).body.usage).toEqual({ used_bytes: 300, pending_bytes: 600 });
    expect((await upload(app, { filename: 'x', contentType: 'text/plain', sizeBytes: 101 })).status).toBe(409);
    expect((await upload(app, { filename: 'x', contentType: 'text/plain', sizeBytes: 100 })).status).toBe(200);

    // Expired reservations stop counting (and the cron removes them); a deleted file frees its bytes.
    await p.sql(`update storage_objects set expires_at = now() - interval '1 second' where app_id = $1 and status = 'pending'`, [app.app_id]);
    expect((await p.api('GET', `/storage/${app.app_id}/limits`)).body.usage).toEqual({ used_bytes: 300, pending_bytes: 0 });
    expect(await p.services.storage.settleExpired()).toBe(3);
    expect((await p.sql(`select count(*)::int as n from storage_objects where app_id = $1`, [app.app_id]))[0].n).toBe(1);
    await remove(app, first.objectId);
    const parallel = await Promise.all(Array.from({ length: 4 }, () => upload(app, { filename: 'y', contentType: 'text/plain', sizeBytes: 500 })));
    expect(parallel.map((r) => r.status).sort()).toEqual([200, 200, 409, 409]);
    await p.api('DELETE', `/apps/${app.app_id}`);
  });
});

describe("end users' pending uploads are capped per user", () => {
  const pendingRemediation = (seconds: number) =>
    'PUT the bytes of your pending uploads to their uploadUrl, or delete those you will not finish (storage_delete with their objectId); ' +
    `unfinished reservations are released when they expire, the next in ${seconds} seconds.`;
  const limitsOf = async (app: App) => (await p.api('GET', `/storage/${app.app_id}/limits`)).body;

  it("one user cannot reserve the app's quota: parallel requests stop at their byte cap, and other users and the service key still upload", async () => {
    const app: App = (await p.api('POST', '/init', { body: { name: 'Hoarder' } })).body;
    expect((await p.api('PUT', `/storage/${app.app_id}/limits`, { body: { max_app_bytes: 1000 } })).status).toBe(200);
    const mallory = await signup(app, 'mallory@example.com');
    const carol = await signup(app, 'carol@example.com');

    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => upload(app, { filename: `h${i}.bin`, contentType: 'application/octet-stream', sizeBytes: 40 }, mallory.token)),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 429, 429, 429, 429, 429, 429, 429, 429]);
    for (const r of results.filter((x) => x.status === 429)) {
      const seconds = r.body.error.details.retry_after_seconds;
      expect(seconds).toBeGreaterThan(400);
      expect(seconds).toBeLessThanOrEqual(420);
      expect(r.headers.get('retry-after')).toBe(String(seconds));
      expect(r.body).toEqual({
        error: {
          code: 'STORAGE_PENDING_LIMIT_EXCEEDED',
          message: 'Reserving 40 more bytes would exceed the 100 bytes an end user may hold in pending uploads at once: 80 bytes are reserved by your 2 pending uploads.',
          remediation: pendingRemediation(seconds),
          documentation_url: p.docsUrl('storage'),
          details: { size_bytes: 40, pending_uploads: 2, pending_bytes: 80, max_pending_uploads: 20, max_pending_bytes: 100, retry_after_seconds: seconds },
        },
      });
    }
    // One file larger than the cap could never be reserved: that is the end user's file size limit.
    const tooBig = await upload(app, { filename: 'big.bin', contentType: 'application/octet-stream', sizeBytes: 101 }, carol.token);
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.error).toMatchObject({ code: 'FILE_TOO_LARGE', details: { size_bytes: 101, max_file_bytes: 100 } });

    // Another user has their own cap; the service key and the platform key reach the rest of the quota.
    const carols = await upload(app, { filename: 'c.bin', contentType: 'application/octet-stream', sizeBytes: 100 }, carol.token);
    expect(carols.status).toBe(200);
    const svc = await upload(app, { filename: 's.bin', contentType: 'application/octet-stream', sizeBytes: 800 });
    expect(svc.status).toBe(200);
    expect((await upload(app, { filename: 'p.bin', contentType: 'application/octet-stream', sizeBytes: 20 }, p.platformKey)).status).toBe(200);
    const full = await upload(app, { filename: 's2.bin', contentType: 'application/octet-stream', sizeBytes: 1 });
    expect(full.status).toBe(409);
    expect(full.body.error.code).toBe('STORAGE_QUOTA_EXCEEDED');
    // 10% of the app's 1000 bytes: 100 bytes per end user.
    expect(await limitsOf(app)).toMatchObject({ max_app_bytes: 1000, max_user_pending_uploads: 20, max_user_pending_bytes: 100, usage: { used_bytes: 0, pending_bytes: 1000 } });

    // A finished upload no longer counts as pending: the user may reserve again.
    expect((await remove(app, svc.body.objectId)).status).toBe(200);
    const first = results.find((r) => r.status === 200)!.body;
    expect((await put(first.uploadUrl, Buffer.alloc(40), 'application/octet-stream')).status).toBe(200);
    expect((await upload(app, { filename: 'n.bin', contentType: 'application/octet-stream', sizeBytes: 60 }, mallory.token)).status).toBe(200);
    expect((await upload(app, { filename: 'o.bin', contentType: 'application/octet-stream', sizeBytes: 1 }, mallory.token)).status).toBe(429);

    // Expired reservations are released: not reported as pending, and the user may reserve again.
    await p.sql(`update storage_objects set expires_at = now() - interval '1 second' where app_id = $1 and user_id = $2 and status = 'pending'`, [app.app_id, mallory.id]);
    expect((await limitsOf(app)).usage).toEqual({ used_bytes: 40, pending_bytes: 120 });
    expect((await upload(app, { filename: 'q.bin', contentType: 'application/octet-stream', sizeBytes: 100 }, mallory.token)).status).toBe(200);
    await p.api('DELETE', `/apps/${app.app_id}`);
  });

  it('at most 20 pending uploads per user, however small; one more is released when one expires', async () => {
    const app: App = (await p.api('POST', '/init', { body: { name: 'Many' } })).body;
    const dave = await signup(app, 'dave@example.com');
    const one = (i: number) => upload(app, { filename: `m${i}.txt`, contentType: 'text/plain', sizeBytes: 1 }, dave.token);
    const results = await Promise.all(Array.from({ length: 25 }, (_, i) => one(i)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(20);
    const refused = results.filter((r) => r.status !== 200);
    expect(refused).toHaveLength(5);
    for (const r of refused) {
      expect(r.status).toBe(429);
      const seconds = r.body.error.details.retry_after_seconds;
      expect(r.body).toEqual({
        error: {
          code: 'STORAGE_PENDING_LIMIT_EXCEEDED',
          message: 'You already have 20 pending uploads, the most an end user may hold at once.',
          remediation: pendingRemediation(seconds),
          documentation_url: p.docsUrl('storage'),
          details: { size_bytes: 1, pending_uploads: 20, pending_bytes: 20, max_pending_uploads: 20, max_pending_bytes: 107374183, retry_after_seconds: seconds },
        },
      });
    }
    // The service key is not held back by the user's uploads.
    expect((await upload(app, { filename: 'svc.txt', contentType: 'text/plain', sizeBytes: 1 })).status).toBe(200);
    const oldest = results.find((r) => r.status === 200)!.body.objectId;
    await p.sql(`update storage_objects set expires_at = now() - interval '1 second' where id = $1`, [oldest]);
    expect((await one(100)).status).toBe(200);
    expect((await one(101)).status).toBe(429);
    await p.api('DELETE', `/apps/${app.app_id}`);
  });
});

describe('the blob PUT refuses and leaves nothing behind', () => {
  const body = Buffer.from('0123456789abcdef');
  let ticket: { uploadUrl: string; objectId: string };

  beforeAll(async () => {
    ticket = (await upload(appA, { filename: 'refusals.bin', contentType: 'application/octet-stream', sizeBytes: body.length })).body;
  });

  it('another Content-Type (or none): 415 CONTENT_TYPE_MISMATCH', async () => {
    for (const ct of ['text/plain', 'application/octet-stream; charset=x', undefined]) {
      const r = await put(ticket.uploadUrl, body, ct);
      expect(r.status).toBe(415);
      expect(r.body.error.code).toBe('CONTENT_TYPE_MISMATCH');
      expect(r.body.error.remediation).toContain('Content-Type: application/octet-stream');
    }
    await expectPendingAndNothingStored(appA, ticket.objectId);
  });

  it('more bytes than declared: 413 UPLOAD_TOO_LARGE (by Content-Length, and counted on a chunked body)', async () => {
    const more = Buffer.concat([body, Buffer.from('X')]);
    const r = await put(ticket.uploadUrl, more, 'application/octet-stream');
    expect(r.status).toBe(413);
    expect(r.body.error.code).toBe('UPLOAD_TOO_LARGE');
    const chunked = await putChunked(ticket.uploadUrl, Buffer.concat([body, Buffer.alloc(5000, 7)]), 'application/octet-stream');
    expect(chunked.status).toBe(413);
    expect(chunked.body.error.code).toBe('UPLOAD_TOO_LARGE');
    await expectPendingAndNothingStored(appA, ticket.objectId);
  });

  it('fewer bytes than declared: 400 UPLOAD_SIZE_MISMATCH', async () => {
    const r = await put(ticket.uploadUrl, body.subarray(0, 10), 'application/octet-stream');
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('UPLOAD_SIZE_MISMATCH');
    const chunked = await putChunked(ticket.uploadUrl, body.subarray(0, 3), 'application/octet-stream');
    expect(chunked.status).toBe(400);
    expect(chunked.body.error).toMatchObject({ code: 'UPLOAD_SIZE_MISMATCH', message: 'The body has 3 bytes but 16 were declared.' });
    await expectPendingAndNothingStored(appA, ticket.objectId);
  });

  it('a client that disconnects mid-body leaves no partial file', async () => {
    const u = new URL(local(ticket.uploadUrl));
    await new Promise<void>((resolve) => {
      const req = http.request({
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method: 'PUT',
        headers: { 'content-type': 'application/octet-stream', 'content-length': String(body.length) },
      });
      req.on('error', () => resolve());
      req.write(body.subarray(0, 8));
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 200);
    });
    await waitFor(async () => filesOnDisk(appA.app_id).every((f) => !f.includes(ticket.objectId)));
    await new Promise((r) => setTimeout(r, 200));
    await expectPendingAndNothingStored(appA, ticket.objectId);
  });

  it('tampered signature, expiry, op or id: 403', async () => {
    const u = new URL(local(ticket.uploadUrl));
    const sig = u.searchParams.get('sig')!;
    const variants: [string, (q: URLSearchParams) => void][] = [
      ['sig', (q) => q.set('sig', (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1))],
      ['exp', (q) => q.set('exp', String(Number(q.get('exp')) + 3600))],
      ['op', (q) => q.set('op', 'get')],
      ['missing sig', (q) => q.delete('sig')],
      ['garbage exp', (q) => q.set('exp', 'tomorrow')],
    ];
    for (const [, mutate] of variants) {
      const q = new URLSearchParams(u.search);
      mutate(q);
      const r = await put(`${u.origin}${u.pathname}?${q}`, body, 'application/octet-stream');
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe('INVALID_SIGNATURE');
    }
    const badId = await put(`${u.origin}/blob/storage/..%2F..%2Fetc?${u.searchParams}`, body, 'application/octet-stream');
    expect(badId.status).toBe(403);
    await expectPendingAndNothingStored(appA, ticket.objectId);
  });

  it('an expired (genuinely signed) URL: 403 URL_EXPIRED', async () => {
    const exp = Math.floor(Date.now() / 1000) - 1;
    const url = signer.url(p.url, { op: 'put', objectId: ticket.objectId, contentType: 'application/octet-stream', sizeBytes: body.length, exp });
    const r = await put(url, body, 'application/octet-stream');
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('URL_EXPIRED');
    await expectPendingAndNothingStored(appA, ticket.objectId);
  });

  it('after all that the URL still works once; a second PUT is 409 and changes nothing', async () => {
    const ok = await put(ticket.uploadUrl, body, 'application/octet-stream');
    expect(ok.status).toBe(200);
    const second = await put(ticket.uploadUrl, Buffer.alloc(body.length, 0), 'application/octet-stream');
    expect(second.status).toBe(409);
    expect(second.body.error.code).toBe('UPLOAD_ALREADY_COMPLETED');
    expect(readFileSync(path.join(storageDir(appA.app_id), ticket.objectId))).toEqual(body);
    expect(filesOnDisk(appA.app_id).filter((f) => f.includes(ticket.objectId))).toEqual([ticket.objectId]);
    await remove(appA, ticket.objectId);
  });

  it('concurrent PUTs to one URL: exactly one wins, the rest get 409, one file, metered once', async () => {
    const size = 256 * 1024;
    const t = (await upload(appA, { filename: 'race.bin', contentType: 'application/octet-stream', sizeBytes: size })).body;
    const before = await meter(appA.app_id);
    const bodies = Array.from({ length: 6 }, (_, i) => Buffer.alloc(size, i + 1));
    const results = await Promise.all(bodies.map((b) => put(t.uploadUrl, b, 'application/octet-stream')));
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.error.code).toBe('UPLOAD_ALREADY_COMPLETED');
    const winner = bodies[results.findIndex((r) => r.status === 200)]!;
    expect(filesOnDisk(appA.app_id).filter((f) => f.includes(t.objectId))).toEqual([t.objectId]);
    expect(readFileSync(path.join(storageDir(appA.app_id), t.objectId)).equals(winner)).toBe(true);
    expect(await meter(appA.app_id)).toBe(before + size);
    await remove(appA, t.objectId);
  });

  it('a PUT to a deleted upload: 404', async () => {
    const t = (await upload(appA, { filename: 'gone.txt', contentType: 'text/plain', sizeBytes: 4 })).body;
    expect((await remove(appA, t.objectId)).status).toBe(200);
    const r = await put(t.uploadUrl, 'gone', 'text/plain');
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('RESOURCE_NOT_FOUND');
    expect(filesOnDisk(appA.app_id).filter((f) => f.includes(t.objectId))).toEqual([]);
  });
});

describe('the blob GET', () => {
  const bytes = Buffer.from('The quick brown fox jumps over the lazy dog');
  let url: string;
  let id: string;

  beforeAll(async () => {
    id = (await store(appA, 'fox.txt', bytes, 'text/plain; charset=utf-8')).objectId;
    url = (await download(appA, id)).body.downloadUrl;
  });

  it('serves single byte ranges with 206 and Content-Range', async () => {
    const head = await getBlob(url, { range: 'bytes=0-8' });
    expect(head.status).toBe(206);
    expect(head.bytes.toString()).toBe('The quick');
    expect(head.headers.get('content-range')).toBe(`bytes 0-8/${bytes.length}`);
    expect(head.headers.get('content-length')).toBe('9');
    expect(head.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const tail = await getBlob(url, { range: 'bytes=-3' });
    expect(tail.status).toBe(206);
    expect(tail.bytes.toString()).toBe('dog');
    const open = await getBlob(url, { range: 'bytes=40-' });
    expect(open.bytes.toString()).toBe('dog');
    expect(open.headers.get('content-range')).toBe(`bytes 40-42/${bytes.length}`);
    const multi = await getBlob(url, { range: 'bytes=0-1,4-5' });
    expect(multi.status).toBe(200);
    expect(multi.bytes).toEqual(bytes);
  });

  it('an unsatisfiable range is 416 with Content-Range: bytes */size', async () => {
    const r = await getBlob(url, { range: `bytes=${bytes.length}-` });
    expect(r.status).toBe(416);
    expect(r.headers.get('content-range')).toBe(`bytes */${bytes.length}`);
    expect(JSON.parse(r.bytes.toString()).error.code).toBe('RANGE_NOT_SATISFIABLE');
  });

  it('HEAD answers the headers without a body', async () => {
    const res = await fetch(local(url), { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe(String(bytes.length));
    expect(await res.text()).toBe('');
  });

  it('refuses tampered and expired URLs with 403, and a PUT URL is no GET URL', async () => {
    const u = new URL(local(url));
    const sig = u.searchParams.get('sig')!;
    const tampered = new URLSearchParams(u.search);
    tampered.set('sig', sig.slice(0, -2) + (sig.endsWith('AA') ? 'BB' : 'AA'));
    const bad = await getBlob(`${u.origin}${u.pathname}?${tampered}`);
    expect(bad.status).toBe(403);
    expect(JSON.parse(bad.bytes.toString()).error.code).toBe('INVALID_SIGNATURE');
    const longer = new URLSearchParams(u.search);
    longer.set('exp', String(Number(longer.get('exp')) + 1));
    expect((await getBlob(`${u.origin}${u.pathname}?${longer}`)).status).toBe(403);

    const expired = signer.url(p.url, { op: 'get', objectId: id, contentType: '', sizeBytes: undefined, exp: Math.floor(Date.now() / 1000) - 1 });
    const old = await getBlob(expired);
    expect(old.status).toBe(403);
    expect(JSON.parse(old.bytes.toString()).error.code).toBe('URL_EXPIRED');

    const t = (await upload(appA, { filename: 'p.txt', contentType: 'text/plain', sizeBytes: 1 })).body;
    expect((await getBlob(t.uploadUrl)).status).toBe(403);
    await remove(appA, t.objectId);
  });

  it('a pending object has no download: 404', async () => {
    const t = (await upload(appA, { filename: 'later.txt', contentType: 'text/plain', sizeBytes: 5 })).body;
    const r = await download(appA, t.objectId);
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('RESOURCE_NOT_FOUND');
    expect(r.body.error.remediation).toContain('PUT the file bytes');
    await remove(appA, t.objectId);
  });
});

describe('subdomain routing', () => {
  it('serves /storage/upload, /storage/objects, /storage/download/{id} and DELETE /storage/{id} on the app host', async () => {
    const host = { host: `${appA.subdomain}.apps.test` };
    const key = appA.service_key.key;
    const up = await request(p.url, '/storage/upload', { method: 'POST', key, headers: host, body: { filename: 'sub.txt', contentType: 'text/plain', sizeBytes: 3 } });
    expect(up.status).toBe(200);
    expect(up.json.objectKey).toBe(`${appA.app_id}/service/${up.json.objectId}_sub.txt`);
    expect((await put(up.json.uploadUrl, 'sub', 'text/plain')).status).toBe(200);
    const listed = await request(p.url, '/storage/objects', { key, headers: host });
    expect(listed.status).toBe(200);
    expect(listed.json.map((o: { id: string }) => o.id)).toContain(up.json.objectId);
    const dl = await request(p.url, `/storage/download/${up.json.objectId}`, { key, headers: host });
    expect(dl.json).toMatchObject({ filename: 'sub.txt', expiresIn: 3600 });
    const del = await request(p.url, `/storage/${up.json.objectId}`, { method: 'DELETE', key, headers: host });
    expect(del.status).toBe(200);
    expect(del.json).toEqual({ deleted: true, id: up.json.objectId });
  });
});

describe('deleting an app', () => {
  it('removes its files through the apps_purge_files job, its rows by cascade, and zeroes its meter', async () => {
    const app: App = (await p.api('POST', '/init', { body: { name: 'Doomed' } })).body;
    const a = await store(app, 'a.txt', 'aaaa');
    await store(app, 'b.txt', 'bbbbbb');
    await upload(app, { filename: 'pending.txt', contentType: 'text/plain', sizeBytes: 9 });
    expect(filesOnDisk(app.app_id)).toHaveLength(2);
    expect(await meter(app.app_id)).toBe(10);
    const other = await store(appB, 'keep.txt', 'keep');

    const del = await p.api('DELETE', `/apps/${app.app_id}`);
    expect(del.status).toBe(200);
    expect((await p.sql('select count(*)::int as n from storage_objects where app_id = $1', [app.app_id]))[0].n).toBe(0);
    await waitFor(async () => !existsSync(storageDir(app.app_id)));
    await waitFor(async () => (await p.sql(`select count(*)::int as n from graphile_worker.jobs where key = $1`, ['purge:' + app.app_id]))[0].n === 0);
    expect(await meter(app.app_id)).toBe(0);
    expect(await rowOf(a.objectId)).toBeUndefined();
    // Another app's files are untouched.
    expect(filesOnDisk(appB.app_id)).toContain(other.objectId);
    await remove(appB, other.objectId);
  });
});

describe('inline bytes and acting as an end user (MCP-only clients)', () => {
  const INLINE_MAX = 2 * 1024 * 1024;
  let app: App;
  let carol: { token: string; id: string };
  let dave: { token: string; id: string };

  beforeAll(async () => {
    app = (await p.api('POST', '/init', { body: { name: 'Inline' } })).body;
    carol = await signup(app, 'carol@example.com');
    dave = await signup(app, 'dave@example.com');
  });

  const inline = (body: Record<string, unknown>, key: string = app.service_key.key) => p.api('POST', `/storage/${app.app_id}/upload/inline`, { key, body });
  const read = (id: string, query = '', key: string = app.service_key.key) => p.api('GET', `/storage/${app.app_id}/read/${id}${query}`, { key });
  const rowsOf = async (appId: string) => p.sql('select id, status, user_id from storage_objects where app_id = $1 order by created_at', [appId]);
  const usage = async (appId: string) => (await p.api('GET', `/storage/${appId}/limits`)).body.usage;
  const tokenQuery = (token: string, extra = '') => `?user_token=${encodeURIComponent(token)}${extra}`;

  it('a key with user_token uploads inline as that end user; the same user reads it back, another gets 404', async () => {
    const bytes = Buffer.from('carol\'s notes\n');
    const meterBefore = await meter(app.app_id);
    const up = await inline({ filename: 'notes.txt', contentType: 'text/plain', content: bytes.toString('base64'), user_token: carol.token });
    expect(up.status).toBe(201);
    const id = up.body.objectId;
    expect(up.body).toEqual({
      objectId: expect.stringMatching(UUID),
      objectKey: `${app.app_id}/${carol.id}/${id}_notes.txt`,
      id,
      filename: 'notes.txt',
      content_type: 'text/plain',
      size_bytes: bytes.length,
      created_at: expect.stringMatching(ISO),
    });
    // Stored through the PUT path: a ready row of carol's, the bytes on disk under the object id, metered.
    expect(await rowOf(id)).toMatchObject({ status: 'ready', user_id: carol.id, expires_at: null });
    expect(readFileSync(path.join(storageDir(app.app_id), id))).toEqual(bytes);
    expect(await meter(app.app_id)).toBe(meterBefore + bytes.length);
    expect(await usage(app.app_id)).toEqual({ used_bytes: bytes.length, pending_bytes: 0 });

    // Carol (with her own token, or a key acting as her) sees it; dave does not; the service key sees it.
    const listed = { id, filename: 'notes.txt', content_type: 'text/plain', size_bytes: bytes.length, created_at: up.body.created_at };
    expect((await list(app, carol.token)).body).toEqual([listed]);
    expect((await p.api('GET', `/storage/${app.app_id}/objects${tokenQuery(carol.token)}`, { key: app.service_key.key })).body).toEqual([listed]);
    expect((await p.api('GET', `/storage/${app.app_id}/objects${tokenQuery(dave.token)}`, { key: app.service_key.key })).body).toEqual([]);
    expect((await list(app, dave.token)).body).toEqual([]);

    const asCarol = await read(id, tokenQuery(carol.token));
    expect(asCarol.status).toBe(200);
    expect(asCarol.body).toEqual({ ...listed, encoding: 'base64', content: bytes.toString('base64') });
    const asCarolText = await read(id, '?encoding=utf8', carol.token);
    expect(asCarolText.status).toBe(200);
    expect(asCarolText.body).toEqual({ ...listed, encoding: 'utf8', content: "carol's notes\n" });
    for (const r of [await read(id, tokenQuery(dave.token)), await read(id, '', dave.token), await download(app, id, dave.token)]) {
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe('RESOURCE_NOT_FOUND');
    }
    const del = await p.api('DELETE', `/storage/${app.app_id}/${id}${tokenQuery(dave.token)}`, { key: app.service_key.key });
    expect(del.status).toBe(404);
    expect((await read(id)).status).toBe(200);

    // Over MCP the same, with the platform key: upload as dave, read as dave, invisible to carol.
    const mcp = await connectMcp(p.url, p.platformKey);
    try {
      const mine = await callTool(mcp.client, 'storage_upload_inline', {
        app_id: app.app_id, filename: 'dave.txt', contentType: 'text/plain', content: 'from dave', encoding: 'utf8', user_token: dave.token,
      });
      expect(mine.isError).toBeFalsy();
      const daveId = resultJson(mine).objectId;
      expect(resultJson(mine)).toMatchObject({ objectKey: `${app.app_id}/${dave.id}/${daveId}_dave.txt`, size_bytes: 9 });
      expect((await rowOf(daveId)).user_id).toBe(dave.id);
      const back = await callTool(mcp.client, 'storage_read', { app_id: app.app_id, object_id: daveId, encoding: 'utf8', user_token: dave.token });
      expect(resultJson(back)).toMatchObject({ id: daveId, encoding: 'utf8', content: 'from dave' });
      const hidden = await callTool(mcp.client, 'storage_read', { app_id: app.app_id, object_id: daveId, user_token: carol.token });
      expect(hidden.isError).toBe(true);
      expect(resultJson(hidden)).toMatchObject({ status: 404, error: { code: 'RESOURCE_NOT_FOUND' } });
      const carolsList = await callTool(mcp.client, 'storage_list', { app_id: app.app_id, user_token: carol.token });
      expect(resultJson(carolsList)).toEqual({ objects: [listed] });
      // The file is an ordinary end-user file: dave's own JWT reaches it over REST.
      expect((await list(app, dave.token)).body.map((o: { id: string }) => o.id)).toEqual([daveId]);
      expect((await remove(app, daveId, dave.token)).status).toBe(200);
    } finally {
      await mcp.close();
    }
    expect((await remove(app, id, carol.token)).status).toBe(200);
  });

  it('user_token: only with a key of this app and a valid token of this app', async () => {
    const body = { filename: 'x.txt', contentType: 'text/plain', content: 'eA==' };
    const asUser = await inline({ ...body, user_token: dave.token }, carol.token);
    expect(asUser.status).toBe(403);
    expect(asUser.body.error).toEqual({
      code: 'FORBIDDEN',
      message: 'This route does not accept this kind of credential; it accepts: platform key, service key.',
      remediation: 'Call it with one of the accepted credentials.',
      documentation_url: p.docsUrl('storage'),
    });
    const garbage = await inline({ ...body, user_token: 'a.b.c' });
    expect(garbage.status).toBe(401);
    expect(garbage.body.error.code).toBe('AUTH_INVALID_TOKEN');
    const foreign = await signup(appB, 'frank@example.com');
    const cross = await inline({ ...body, user_token: foreign.token });
    expect(cross.status).toBe(403);
    expect(cross.body.error.code).toBe('FORBIDDEN');
    const upload = await p.api('POST', `/storage/${app.app_id}/upload`, { key: app.service_key.key, body: { filename: 'y.txt', contentType: 'text/plain', sizeBytes: 1, user_token: foreign.token } });
    expect(upload.status).toBe(403);
    expect(await rowsOf(app.app_id)).toEqual([]);
  });

  it(`content above ${INLINE_MAX} bytes is 413 INLINE_CONTENT_TOO_LARGE over MCP, with nothing written or reserved`, async () => {
    const mcp = await connectMcp(p.url, p.platformKey);
    try {
      const big = Buffer.alloc(INLINE_MAX + 1, 7).toString('base64');
      const r = await callTool(mcp.client, 'storage_upload_inline', {
        app_id: app.app_id, filename: 'big.bin', contentType: 'application/octet-stream', content: big, user_token: carol.token,
      });
      expect(r.isError).toBe(true);
      expect(resultJson(r)).toEqual({
        status: 413,
        error: {
          code: 'INLINE_CONTENT_TOO_LARGE',
          message: `content is ${INLINE_MAX + 1} bytes once decoded; inline uploads take at most ${INLINE_MAX} bytes (2 MB).`,
          remediation: 'Upload larger files with storage_upload: it returns a presigned URL to PUT the bytes to.',
          documentation_url: p.docsUrl('storage'),
          details: { size_bytes: INLINE_MAX + 1, max_inline_bytes: INLINE_MAX },
        },
      });
      // Exactly the limit is accepted (the /mcp body has room for it once base64-encoded).
      const max = await callTool(mcp.client, 'storage_upload_inline', {
        app_id: app.app_id, filename: 'max.bin', contentType: 'application/octet-stream', content: Buffer.alloc(INLINE_MAX, 7).toString('base64'),
      });
      expect(max.isError).toBeFalsy();
      const maxId = resultJson(max).objectId;
      expect((await rowsOf(app.app_id)).map((r) => r.id)).toEqual([maxId]);
      const back = await callTool(mcp.client, 'storage_read', { app_id: app.app_id, object_id: maxId });
      expect(Buffer.from(resultJson(back).content, 'base64')).toEqual(Buffer.alloc(INLINE_MAX, 7));
      expect((await remove(app, maxId)).status).toBe(200);
    } finally {
      await mcp.close();
    }
    expect(await rowsOf(app.app_id)).toEqual([]);
    expect(filesOnDisk(app.app_id)).toEqual([]);
    expect(await usage(app.app_id)).toEqual({ used_bytes: 0, pending_bytes: 0 });
  });

  it('over REST the inline route takes the 4 MB body limit of /mcp, not SVC_BODY_LIMIT (1 MB): 1.5 MB is stored, a larger body is 413', async () => {
    const bytes = Buffer.alloc(1.5 * 1024 * 1024, 9);
    const up = await inline({ filename: 'mid.bin', contentType: 'application/octet-stream', content: bytes.toString('base64') });
    expect(up.status).toBe(201);
    expect(up.body.size_bytes).toBe(bytes.length);
    const back = await read(up.body.objectId);
    expect(Buffer.from(back.body.content, 'base64')).toEqual(bytes);
    expect((await remove(app, up.body.objectId)).status).toBe(200);

    const over = await inline({ filename: 'over.bin', contentType: 'application/octet-stream', content: 'A'.repeat(4 * 1024 * 1024) });
    expect(over.status).toBe(413);
    expect(over.body.error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', message: 'The request body exceeds the 4mb limit.' });
    // The other routes keep SVC_BODY_LIMIT.
    const presigned = await p.api('POST', `/storage/${app.app_id}/upload`, {
      key: app.service_key.key,
      body: { filename: 'x.bin', contentType: 'application/octet-stream', sizeBytes: 1, padding: 'A'.repeat(1.5 * 1024 * 1024) },
    });
    expect(presigned.status).toBe(413);
    expect(presigned.body.error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', message: 'The request body exceeds the 1mb limit.' });
    expect(await rowsOf(app.app_id)).toEqual([]);
  });

  it('the per-file limit, content types, quota and base64 are checked as for presigned uploads; refusals leave no pending row', async () => {
    const limited: App = (await p.api('POST', '/init', { body: { name: 'Inline quota' } })).body;
    const set = await p.api('PUT', `/storage/${limited.app_id}/limits`, { body: { max_file_bytes: 600, max_app_bytes: 1000, allowed_content_types: ['text/*'] } });
    expect(set.status).toBe(200);
    const post = (body: Record<string, unknown>) => p.api('POST', `/storage/${limited.app_id}/upload/inline`, { key: limited.service_key.key, body });
    const text = (n: number) => ({ filename: 'f.txt', contentType: 'text/plain', content: 'a'.repeat(n), encoding: 'utf8' });

    const tooBig = await post(text(601));
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.error).toMatchObject({ code: 'FILE_TOO_LARGE', details: { size_bytes: 601, max_file_bytes: 600 } });
    const wrongType = await post({ filename: 'f.png', contentType: 'image/png', content: 'iVBORw0KGgo=' });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error.code).toBe('CONTENT_TYPE_NOT_ALLOWED');
    const badBase64 = await post({ filename: 'f.txt', contentType: 'text/plain', content: 'not base64!' });
    expect(badBase64.status).toBe(400);
    expect(badBase64.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'content', message: 'not valid base64' }] });
    const empty = await post({ filename: 'f.txt', contentType: 'text/plain', content: '' });
    expect(empty.status).toBe(400);
    expect(empty.body.error.code).toBe('VALIDATION_FAILED');

    const first = await post(text(600));
    expect(first.status).toBe(201);
    const over = await post(text(401));
    expect(over.status).toBe(409);
    expect(over.body.error).toMatchObject({
      code: 'STORAGE_QUOTA_EXCEEDED',
      details: { size_bytes: 401, used_bytes: 600, pending_bytes: 0, max_app_bytes: 1000 },
    });
    const fits = await post(text(400));
    expect(fits.status).toBe(201);
    expect((await rowsOf(limited.app_id)).map((r) => [r.id, r.status])).toEqual([
      [first.body.objectId, 'ready'],
      [fits.body.objectId, 'ready'],
    ]);
    expect(await usage(limited.app_id)).toEqual({ used_bytes: 1000, pending_bytes: 0 });
    expect(await meter(limited.app_id)).toBe(1000);
  });

  it('reading inline: a file above the inline limit is 413 pointing at storage_download; utf8 of binary bytes is 400', async () => {
    const bytes = Buffer.alloc(INLINE_MAX + 1, 0xff);
    const big = await store(app, 'big.bin', bytes, 'application/octet-stream');
    const r = await read(big.objectId);
    expect(r.status).toBe(413);
    expect(r.body).toEqual({
      error: {
        code: 'INLINE_CONTENT_TOO_LARGE',
        message: `Object '${big.objectId}' has ${INLINE_MAX + 1} bytes; files are read inline up to ${INLINE_MAX} bytes (2 MB).`,
        remediation: 'Get a presigned URL with storage_download and GET the bytes from it.',
        documentation_url: p.docsUrl('storage'),
        details: { size_bytes: INLINE_MAX + 1, max_inline_bytes: INLINE_MAX },
      },
    });
    const small = await store(app, 'bin.bin', Buffer.from([0xff, 0xfe, 0x00]), 'application/octet-stream');
    const asText = await read(small.objectId, '?encoding=utf8');
    expect(asText.status).toBe(400);
    expect(asText.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'encoding', message: 'not UTF-8 text' }] });
    expect((await read(small.objectId)).body.content).toBe('//4A');
    const pending = await upload(app, { filename: 'p.txt', contentType: 'text/plain', sizeBytes: 3 });
    const notYet = await read(pending.body.objectId);
    expect(notYet.status).toBe(404);
    expect(notYet.body.error.code).toBe('RESOURCE_NOT_FOUND');
    for (const id of [big.objectId, small.objectId, pending.body.objectId]) expect((await remove(app, id)).status).toBe(200);
  });
});
