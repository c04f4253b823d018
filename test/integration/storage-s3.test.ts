// File storage on the S3 backend against a real S3-compatible server (s3rver) started here: the platform's SDK
// client presigns, the test PUTs and GETs the bytes at the bucket with fetch.
//
// s3rver checks expiry but not SigV4 signatures ("Signature version 4 calculation is unimplemented"), so the
// bucket is reached through a small gateway that verifies presigned (query) signatures exactly as S3 does
// (canonical request, string to sign, derived key) before forwarding. That is what proves that the content type
// and length are bound into the URL: a PUT with others is refused by the signature, as on AWS, MinIO and R2.
import { createHash, createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createClient } from '@supabase/supabase-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
type S3rverCtor = new (opts: { address: string; port: number; silent: boolean; directory: string; configureBuckets: { name: string }[] }) => S3rverInstance;
const S3rver = createRequire(import.meta.url)('s3rver') as S3rverCtor;

const BUCKET = 'svc-test-bucket';
const ACCESS_KEY = 'S3RVER';
const SECRET_KEY = 'S3RVER';
const PASSWORD = 'correct horse battery';

interface App {
  app_id: string;
  service_key: { key: string };
  publishable_key: string;
}

let s3: S3rverInstance;
let s3Dir: string;
let s3Url: string;
let gateway: http.Server;
let gatewayUrl: string;
let p: TestPlatform;
let app: App;
let alice: { token: string; id: string };
let bob: { token: string; id: string };

beforeAll(async () => {
  s3Dir = mkdtempSync(path.join(tmpdir(), 'svc-s3rver-'));
  s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: s3Dir, configureBuckets: [{ name: BUCKET }] });
  s3Url = `http://127.0.0.1:${(await s3.run()).port}`;
  gateway = await startSigV4Gateway(new URL(s3Url));
  gatewayUrl = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
  p = await startTestPlatform({
    SVC_STORAGE_BACKEND: 's3',
    SVC_S3_ENDPOINT: gatewayUrl,
    SVC_S3_REGION: 'us-east-1',
    SVC_S3_BUCKET: BUCKET,
    SVC_S3_ACCESS_KEY_ID: ACCESS_KEY,
    SVC_S3_SECRET_ACCESS_KEY: SECRET_KEY,
    SVC_S3_FORCE_PATH_STYLE: 'true',
    SVC_AUTH_RATE_LIMIT_PER_MINUTE: '1000',
  });
  app = (await p.api('POST', '/init', { body: { name: 'S3 App' } })).body;
  alice = await signup('alice@example.com');
  bob = await signup('bob@example.com');
});

afterAll(async () => {
  await p?.close();
  await new Promise((r) => gateway?.close(r));
  await s3?.close();
  if (s3Dir) rmSync(s3Dir, { recursive: true, force: true });
});

async function signup(email: string) {
  const r = await p.api('POST', `/v1/${app.app_id}/auth/signup`, { key: null, body: { email, password: PASSWORD } });
  expect(r.status).toBe(201);
  return { token: r.body.access_token as string, id: r.body.user.id as string };
}

const upload = (body: unknown, key: string = app.service_key.key, appId = app.app_id) => p.api('POST', `/storage/${appId}/upload`, { key, body });
const list = (key: string = app.service_key.key, appId = app.app_id) => p.api('GET', `/storage/${appId}/objects`, { key });
const download = (id: string, key: string = app.service_key.key) => p.api('GET', `/storage/${app.app_id}/download/${id}`, { key });
const remove = (id: string, key: string = app.service_key.key, appId = app.app_id) => p.api('DELETE', `/storage/${appId}/${id}`, { key });
const rowOf = async (id: string) => (await p.sql('select * from storage_objects where id = $1', [id]))[0];
const meter = async (appId: string) =>
  Number((await p.sql(`select coalesce(sum(quantity), 0)::text as q from usage_daily where app_id = $1 and meter = 'storage_bytes'`, [appId]))[0].q);

/** Keys in the bucket under a prefix, straight from s3rver (anonymous ListObjectsV2). */
async function bucketKeys(prefix: string): Promise<string[]> {
  const xml = await (await fetch(`${s3Url}/${BUCKET}?list-type=2&prefix=${encodeURIComponent(prefix)}`)).text();
  return [...xml.matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => decodeXml(m[1]!)).sort();
}
const decodeXml = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');

async function putBytes(url: string, bytes: Buffer | string, contentType: string | undefined) {
  const headers: Record<string, string> = {};
  if (contentType !== undefined) headers['content-type'] = contentType;
  const res = await fetch(url, { method: 'PUT', headers, body: typeof bytes === 'string' ? bytes : new Uint8Array(bytes) });
  return { status: res.status, text: await res.text() };
}

async function store(filename: string, bytes: Buffer | string, contentType = 'text/plain', key = app.service_key.key) {
  const up = await upload({ filename, contentType, sizeBytes: Buffer.byteLength(bytes) }, key);
  expect(up.status).toBe(200);
  const put = await putBytes(up.body.uploadUrl, bytes, contentType);
  expect(put.status, put.text).toBe(200);
  return up.body as { uploadUrl: string; objectKey: string; objectId: string };
}

describe('S3 backend: presigned URLs against a real S3-compatible server', () => {
  it('upload, list, download, delete with a service key', async () => {
    const bytes = Buffer.from('bytes that went straight to the bucket\n');
    const up = await upload({ filename: 'report (final).txt', contentType: 'text/plain', sizeBytes: bytes.length });
    expect(up.status).toBe(200);
    expect(Object.keys(up.body).sort()).toEqual(['expiresIn', 'objectId', 'objectKey', 'uploadUrl']);
    expect(up.body.expiresIn).toBe(300);
    const { objectId, objectKey, uploadUrl } = up.body;
    expect(objectKey).toBe(`${app.app_id}/service/${objectId}_report (final).txt`);

    // A real presigned PUT at the bucket: path style, 300 s, content type and length signed, no checksum.
    const u = new URL(uploadUrl);
    expect(u.origin).toBe(gatewayUrl);
    expect(decodeURIComponent(u.pathname)).toBe(`/${BUCKET}/${objectKey}`);
    expect(u.searchParams.get('X-Amz-Expires')).toBe('300');
    expect(u.searchParams.get('X-Amz-SignedHeaders')).toBe('content-length;content-type;host');
    expect([...u.searchParams.keys()].filter((k) => k.toLowerCase().includes('checksum'))).toEqual([]);

    // Nothing arrived yet: not listed, no download.
    expect((await list()).body).toEqual([]);
    expect((await download(objectId)).status).toBe(404);

    const put = await putBytes(uploadUrl, bytes, 'text/plain');
    expect(put.status, put.text).toBe(200);
    expect(await bucketKeys(`${app.app_id}/`)).toEqual([objectKey]);
    const before = await meter(app.app_id);

    // Listing checks the pending upload with a HEAD and makes it ready.
    const listed = await list();
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([{ id: objectId, filename: 'report (final).txt', content_type: 'text/plain', size_bytes: bytes.length, created_at: expect.any(String) }]);
    expect((await rowOf(objectId)).status).toBe('ready');
    expect(await meter(app.app_id)).toBe(before + bytes.length);

    const dl = await download(objectId);
    expect(dl.status).toBe(200);
    expect(dl.body).toEqual({ downloadUrl: expect.any(String), filename: 'report (final).txt', expiresIn: 3600 });
    const d = new URL(dl.body.downloadUrl);
    expect(d.searchParams.get('X-Amz-Expires')).toBe('3600');
    const got = await fetch(dl.body.downloadUrl);
    expect(got.status).toBe(200);
    expect(Buffer.from(await got.arrayBuffer())).toEqual(bytes);
    expect(got.headers.get('content-type')).toBe('text/plain');
    expect(got.headers.get('content-length')).toBe(String(bytes.length));
    expect(got.headers.get('content-disposition')).toBe(`attachment; filename="report (final).txt"; filename*=UTF-8''report%20%28final%29.txt`);
    const range = await fetch(dl.body.downloadUrl, { headers: { range: 'bytes=0-4' } });
    expect(range.status).toBe(206);
    expect(await range.text()).toBe('bytes');
    expect(range.headers.get('content-range')).toBe(`bytes 0-4/${bytes.length}`);

    const del = await remove(objectId);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ deleted: true, id: objectId });
    expect(await bucketKeys(`${app.app_id}/`)).toEqual([]);
    expect((await list()).body).toEqual([]);
    expect((await fetch(dl.body.downloadUrl)).status).toBe(404);
    expect(await meter(app.app_id)).toBe(before);
  });

  it('end users: uploads carry the user in the key; others see 404; the service key sees all', async () => {
    const mine = await store('alice.txt', 'alice', 'text/plain', alice.token);
    expect(mine.objectKey).toBe(`${app.app_id}/${alice.id}/${mine.objectId}_alice.txt`);
    expect((await list(bob.token)).body).toEqual([]);
    expect((await list(alice.token)).body.map((o: { id: string }) => o.id)).toEqual([mine.objectId]);
    expect((await download(mine.objectId, bob.token)).status).toBe(404);
    expect((await remove(mine.objectId, bob.token)).status).toBe(404);
    expect((await list()).body.map((o: { id: string }) => o.id)).toEqual([mine.objectId]);
    const dl = await download(mine.objectId, alice.token);
    expect(await (await fetch(dl.body.downloadUrl)).text()).toBe('alice');
    expect((await remove(mine.objectId, alice.token)).status).toBe(200);
    expect(await bucketKeys(`${app.app_id}/`)).toEqual([]);
  });

  it('inline upload and read go through the presigned URLs: a key acting as an end user, visible only to that user, metered', async () => {
    const bytes = Buffer.from('inline bytes in the bucket\n');
    const before = await meter(app.app_id);
    const up = await p.api('POST', `/storage/${app.app_id}/upload/inline`, {
      key: app.service_key.key,
      body: { filename: 'inline.txt', contentType: 'text/plain', content: bytes.toString('base64'), user_token: alice.token },
    });
    expect(up.status).toBe(201);
    const id = up.body.objectId as string;
    expect(up.body).toMatchObject({ id, objectKey: `${app.app_id}/${alice.id}/${id}_inline.txt`, size_bytes: bytes.length, content_type: 'text/plain' });
    expect(await rowOf(id)).toMatchObject({ status: 'ready', user_id: alice.id });
    expect(await bucketKeys(`${app.app_id}/${alice.id}/${id}`)).toEqual([`${app.app_id}/${alice.id}/${id}_inline.txt`]);
    expect(await meter(app.app_id)).toBe(before + bytes.length);

    const read = await p.api('GET', `/storage/${app.app_id}/read/${id}?encoding=utf8`, { key: alice.token });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id, encoding: 'utf8', content: bytes.toString() });
    const hidden = await p.api('GET', `/storage/${app.app_id}/read/${id}`, { key: bob.token });
    expect(hidden.status).toBe(404);
    expect(hidden.body.error.code).toBe('RESOURCE_NOT_FOUND');
    expect((await remove(id, alice.token)).status).toBe(200);
  });

  it('the local blob routes do not exist on this backend: 404', async () => {
    const r = await p.api('GET', '/blob/storage/00000000-0000-4000-8000-000000000000?op=get&exp=9999999999&sig=x', { key: null });
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('RESOURCE_NOT_FOUND');
    expect(r.body.error.remediation).toContain('S3 bucket');
  });

  it('a download alone (without a list) finds the arrived bytes', async () => {
    const up = await upload({ filename: 'direct.bin', contentType: 'application/octet-stream', sizeBytes: 4 });
    expect((await putBytes(up.body.uploadUrl, Buffer.from([1, 2, 3, 4]), 'application/octet-stream')).status).toBe(200);
    const dl = await download(up.body.objectId);
    expect(dl.status).toBe(200);
    expect(Buffer.from(await (await fetch(dl.body.downloadUrl)).arrayBuffer())).toEqual(Buffer.from([1, 2, 3, 4]));
    await remove(up.body.objectId);
  });

  it('a list after more unconfirmed uploads than one probe batch (100) shows every one whose bytes arrived, even of one instant', async () => {
    const many: App = (await p.api('POST', '/init', { body: { name: 'S3 Many' } })).body;
    const uploads = [];
    for (let i = 0; i < 130; i++) uploads.push(await upload({ filename: `m${i}.txt`, contentType: 'text/plain', sizeBytes: 2 }, many.service_key.key, many.app_id));
    // The oldest one's bytes never arrive: it stays pending and unlisted, and the probe goes past it.
    for (const up of uploads.slice(1)) expect((await putBytes(up.body.uploadUrl, 'ok', 'text/plain')).status).toBe(200);
    // All made in one microsecond: the probe's batches must still go past each other (by id), not skip or repeat.
    await p.sql(`update storage_objects set created_at = '2026-01-01T00:00:00.123456Z' where app_id = $1`, [many.app_id]);
    const listed = await list(many.service_key.key, many.app_id);
    expect(listed.status).toBe(200);
    expect(listed.body.map((o: { id: string }) => o.id).sort()).toEqual(uploads.slice(1).map((u) => u.body.objectId).sort());
    expect((await p.sql(`select status, count(*)::int as n from storage_objects where app_id = $1 group by 1 order by 1`, [many.app_id]))).toEqual([
      { status: 'pending', n: 1 },
      { status: 'ready', n: 129 },
    ]);
    await p.api('DELETE', `/apps/${many.app_id}`);
  });

  it('the signature refuses another content type, another length and tampering; nothing is stored', async () => {
    const bytes = Buffer.from('exactly these bytes');
    const up = await upload({ filename: 'strict.txt', contentType: 'text/plain', sizeBytes: bytes.length });
    const url = up.body.uploadUrl as string;
    for (const [body, ct] of [
      [bytes, 'text/html'],
      [bytes, undefined],
      [Buffer.concat([bytes, Buffer.from('!')]), 'text/plain'],
      [bytes.subarray(1), 'text/plain'],
    ] as const) {
      const r = await putBytes(url, body, ct);
      expect(r.status).toBe(403);
      expect(r.text).toContain('SignatureDoesNotMatch');
    }
    const tampered = new URL(url);
    tampered.searchParams.set('X-Amz-Expires', '86400');
    expect((await putBytes(tampered.toString(), bytes, 'text/plain')).status).toBe(403);
    expect(await bucketKeys(`${app.app_id}/`)).toEqual([]);
    expect((await list()).body).toEqual([]);
    expect((await rowOf(up.body.objectId)).status).toBe('pending');
    // The genuine PUT still works.
    expect((await putBytes(url, bytes, 'text/plain')).status).toBe(200);
    expect((await list()).body.map((o: { id: string }) => o.id)).toEqual([up.body.objectId]);
    await remove(up.body.objectId);
  });

  it('bytes that reach the bucket unsigned but differ from the declaration are discarded, never listed', async () => {
    // Straight to s3rver, which does not check signatures: a server without SigV4 cannot stop this PUT.
    const up = await upload({ filename: 'liar.txt', contentType: 'text/plain', sizeBytes: 5 });
    const direct = up.body.uploadUrl.replace(gatewayUrl, s3Url);
    expect((await putBytes(direct, '<script>1</script>', 'text/html')).status).toBe(200);
    expect(await bucketKeys(`${app.app_id}/`)).toEqual([up.body.objectKey]);
    expect((await list()).body).toEqual([]);
    expect(await rowOf(up.body.objectId)).toBeUndefined();
    expect(await bucketKeys(`${app.app_id}/`)).toEqual([]);
  });

  it('expired pending uploads: arrived bytes become ready, missing ones go (the settle cron)', async () => {
    const arrived = await store('late.txt', 'late');
    const never = (await upload({ filename: 'never.txt', contentType: 'text/plain', sizeBytes: 7 })).body;
    await p.sql(`update storage_objects set expires_at = now() - interval '1 second' where id = any($1::uuid[])`, [[arrived.objectId, never.objectId]]);
    expect(await p.services.storage.settleExpired()).toBe(2);
    expect((await rowOf(arrived.objectId)).status).toBe('ready');
    expect(await rowOf(never.objectId)).toBeUndefined();
    expect((await list()).body.map((o: { id: string }) => o.id)).toEqual([arrived.objectId]);
    await remove(arrived.objectId);
  });

  it('quota counts pending uploads on S3 too', async () => {
    const q: App = (await p.api('POST', '/init', { body: { name: 'S3 Quota' } })).body;
    await p.api('PUT', `/storage/${q.app_id}/limits`, { body: { max_app_bytes: 100 } });
    const results = await Promise.all(Array.from({ length: 5 }, () => upload({ filename: 'q', contentType: 'text/plain', sizeBytes: 40 }, q.service_key.key, q.app_id)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 409, 409, 409]);
    await p.api('DELETE', `/apps/${q.app_id}`);
  });

  it('deleting the app removes every object under its prefix from the bucket', async () => {
    const doomed: App = (await p.api('POST', '/init', { body: { name: 'S3 Doomed' } })).body;
    const keys: string[] = [];
    for (const name of ['one.txt', 'two.txt']) {
      const up = await upload({ filename: name, contentType: 'text/plain', sizeBytes: 3 }, doomed.service_key.key, doomed.app_id);
      expect((await putBytes(up.body.uploadUrl, 'abc', 'text/plain')).status).toBe(200);
      keys.push(up.body.objectKey);
    }
    const survivor = await store('survivor.txt', 'stay');
    expect(await bucketKeys(`${doomed.app_id}/`)).toEqual(keys.sort());
    expect((await p.api('DELETE', `/apps/${doomed.app_id}`)).status).toBe(200);
    const deadline = Date.now() + 15_000;
    while ((await bucketKeys(`${doomed.app_id}/`)).length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await bucketKeys(`${doomed.app_id}/`)).toEqual([]);
    expect(await bucketKeys(`${app.app_id}/`)).toEqual([survivor.objectKey]);
    await remove(survivor.objectId);
  });
});

describe('S3 backend: storage-js (bytes through the API) against a real S3-compatible server', () => {
  /** A supabase-js client of the app, with the service key or as an end user (the publishable key and their token). */
  const client = (accessToken?: string) =>
    createClient(`${p.url}/v1/${app.app_id}`, accessToken ? app.publishable_key : app.service_key.key, {
      auth: { persistSession: false, autoRefreshToken: false },
      ...(accessToken ? { global: { headers: { Authorization: `Bearer ${accessToken}` } } } : {}),
    });
  const keyOf = async (bucket: string, name: string) =>
    (await p.sql(`select object_key from storage_objects where app_id = $1 and bucket_id = $2 and name = $3 and status = 'ready'`, [app.app_id, bucket, name]))[0]?.object_key as string | undefined;

  it('uploads raw and multipart, updates, downloads (with a range), copies, moves and removes: the bytes in the bucket follow', async () => {
    const admin = client();
    expect((await admin.storage.createBucket('s3docs', { public: false, fileSizeLimit: 1024 })).error).toBeNull();
    expect((await admin.storage.createBucket('s3pics', { public: true })).error).toBeNull();
    const docs = client(alice.token).storage.from('s3docs');
    const before = await meter(app.app_id);

    const raw = await docs.upload('alice/raw (1)+a,b.txt', Buffer.from('raw bytes on S3'), { contentType: 'text/plain' });
    expect(raw.error).toBeNull();
    const rawKey = (await keyOf('s3docs', 'alice/raw (1)+a,b.txt'))!;
    expect(rawKey).toBe(`${app.app_id}/${alice.id}/${raw.data!.id}_raw (1)+a,b.txt`);
    expect(await bucketKeys(rawKey)).toEqual([rawKey]);
    expect(await (await docs.download('alice/raw (1)+a,b.txt')).data!.text()).toBe('raw bytes on S3');

    const form = await docs.upload('alice/form.txt', new Blob(['a Blob, sent as a form'], { type: 'text/plain' }));
    expect(form.error).toBeNull();
    const formKey = (await keyOf('s3docs', 'alice/form.txt'))!;
    expect(await bucketKeys(formKey)).toEqual([formKey]);
    const url = `${p.url}/v1/${app.app_id}/storage/v1/object/s3docs/alice/form.txt`;
    const ranged = await fetch(url, { headers: { authorization: `Bearer ${alice.token}`, apikey: app.publishable_key, range: 'bytes=2-5' } });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get('content-range')).toBe('bytes 2-5/22');
    expect(await ranged.text()).toBe('Blob');
    expect(await meter(app.app_id)).toBe(before + 15 + 22);

    // update: the new bytes under a new key, the old key gone from the bucket.
    const png = Buffer.from('89504e470d0a1a0a', 'hex');
    expect((await docs.update('alice/form.txt', new File([png], 'x.png', { type: 'image/png' }))).error).toBeNull();
    const newKey = (await keyOf('s3docs', 'alice/form.txt'))!;
    expect(newKey).not.toBe(formKey);
    expect(await bucketKeys(formKey)).toEqual([]);
    const updated = await docs.download('alice/form.txt');
    expect(updated.data!.type).toBe('image/png');
    expect(Buffer.from(await updated.data!.arrayBuffer())).toEqual(png);
    const tooLarge = await docs.upload('alice/large.bin', new Blob([Buffer.alloc(1025)], { type: 'application/octet-stream' }));
    expect(tooLarge.error).toMatchObject({ status: 413, statusCode: '413' });
    expect(await bucketKeys(`${app.app_id}/${alice.id}/`)).toEqual([rawKey, newKey].sort());

    // copy (inside the bucket, server side) to a public bucket; its public URL needs no credential.
    expect((await docs.copy('alice/raw (1)+a,b.txt', 'alice/copy.txt', { destinationBucket: 's3pics' })).error).toBeNull();
    const copyKey = (await keyOf('s3pics', 'alice/copy.txt'))!;
    expect(await bucketKeys(copyKey)).toEqual([copyKey]);
    const publicUrl = client().storage.from('s3pics').getPublicUrl('alice/copy.txt').data.publicUrl;
    const fetched = await fetch(publicUrl);
    expect(fetched.status).toBe(200);
    expect(fetched.headers.get('content-type')).toBe('text/plain');
    expect(await fetched.text()).toBe('raw bytes on S3');

    // move renames the row; the bytes stay under their key.
    expect((await client(alice.token).storage.from('s3pics').move('alice/copy.txt', 'alice/moved.txt')).error).toBeNull();
    expect(await keyOf('s3pics', 'alice/moved.txt')).toBe(copyKey);
    expect(await (await fetch(client().storage.from('s3pics').getPublicUrl('alice/moved.txt').data.publicUrl)).text()).toBe('raw bytes on S3');

    const removed = await client(alice.token).storage.from('s3pics').remove(['alice/moved.txt']);
    expect(removed.data).toHaveLength(1);
    expect(await bucketKeys(copyKey)).toEqual([]);
    expect((await docs.remove(['alice/raw (1)+a,b.txt', 'alice/form.txt'])).data).toHaveLength(2);
    expect(await bucketKeys(`${app.app_id}/${alice.id}/`)).toEqual([]);
    expect(await meter(app.app_id)).toBe(before);
  });

  it('signs download and upload URLs on S3: the bytes without a credential, an upload as the signer', async () => {
    const docs = client(bob.token).storage.from('s3docs');
    const token = (await docs.createSignedUploadUrl('bob/signed.txt')).data!.token;
    const put = await client().storage.from('s3docs').uploadToSignedUrl('bob/signed.txt', token, new Blob(['signed on S3'], { type: 'text/plain' }));
    expect(put).toEqual({ data: { path: 'bob/signed.txt', fullPath: 's3docs/bob/signed.txt' }, error: null });
    const key = (await keyOf('s3docs', 'bob/signed.txt'))!;
    expect(key.startsWith(`${app.app_id}/${bob.id}/`)).toBe(true);
    expect(await bucketKeys(key)).toEqual([key]);
    const signed = await docs.createSignedUrl('bob/signed.txt', 60);
    const got = await fetch(signed.data!.signedUrl);
    expect(got.status).toBe(200);
    expect(await got.text()).toBe('signed on S3');
    expect((await client(alice.token).storage.from('s3docs').download('bob/signed.txt')).error).toMatchObject({ status: 404 });
    expect((await docs.remove(['bob/signed.txt'])).data).toHaveLength(1);
    expect(await bucketKeys(key)).toEqual([]);
  });

  it("never probes a direct upload's pending row (its request settles it): a listing leaves it pending, its expiry removes it and its bytes", async () => {
    // What a process that stopped between putting the bytes and making the row ready leaves behind.
    const id = '7d1c6a52-55a4-4d0e-9f5e-3c3c0b5a0001';
    const key = `${app.app_id}/service/${id}_direct.txt`;
    await p.sql(
      `insert into storage_objects (id, app_id, filename, content_type, size_bytes, object_key, status, expires_at, bucket_id, name)
       values ($1, $2, 'direct.txt', 'text/plain', 5, $3, 'pending', now() + interval '1 hour', 'files', 'service/direct.txt')`,
      [id, app.app_id, key],
    );
    expect((await fetch(`${s3Url}/${BUCKET}/${key.split('/').map(encodeURIComponent).join('/')}`, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: 'bytes' })).status).toBe(200);
    // A presigned upload's row with these bytes would become ready here.
    expect((await list()).body).toEqual([]);
    expect((await rowOf(id)).status).toBe('pending');
    await p.sql(`update storage_objects set expires_at = now() - interval '1 second' where id = $1`, [id]);
    expect(await p.services.storage.settleExpired()).toBe(1);
    expect(await rowOf(id)).toBeUndefined();
    expect(await bucketKeys(key)).toEqual([]);
  });
});

// ---- a SigV4 query-signature check in front of s3rver -------------------------------------------------------

const rfc3986 = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const hmac = (key: Buffer | string, s: string) => createHmac('sha256', key).update(s).digest();

/** S3's check of a presigned request: recompute the signature from what actually arrived. */
function presignedSignatureValid(req: http.IncomingMessage): boolean {
  const [rawPath = '/', rawQuery = ''] = (req.url ?? '/').split('?', 2);
  const pairs = rawQuery
    .split('&')
    .filter(Boolean)
    .map((kv) => {
      const at = kv.indexOf('=');
      const k = decodeURIComponent(at < 0 ? kv : kv.slice(0, at));
      const v = at < 0 ? '' : decodeURIComponent(kv.slice(at + 1).replace(/\+/g, ' '));
      return [k, v] as [string, string];
    });
  const q = new Map(pairs);
  const signature = q.get('X-Amz-Signature');
  const credential = q.get('X-Amz-Credential');
  const amzDate = q.get('X-Amz-Date');
  const signed = q.get('X-Amz-SignedHeaders');
  if (!signature || !credential || !amzDate || !signed) return false;
  const [accessKey, date, region, service, terminator] = credential.split('/');
  if (accessKey !== ACCESS_KEY || !date || !region || !service || terminator !== 'aws4_request') return false;
  const canonicalQuery = pairs
    .filter(([k]) => k !== 'X-Amz-Signature')
    .map(([k, v]) => [rfc3986(k), rfc3986(v)] as const)
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const names = signed.split(';');
  const headerValue = (name: string) => {
    const v = req.headers[name];
    return (Array.isArray(v) ? v.join(',') : (v ?? '')).trim().replace(/\s+/g, ' ');
  };
  const canonicalHeaders = names.map((n) => `${n}:${headerValue(n)}\n`).join('');
  const canonicalRequest = [req.method, rawPath, canonicalQuery, canonicalHeaders, signed, q.get('X-Amz-Content-Sha256') ?? 'UNSIGNED-PAYLOAD'].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${SECRET_KEY}`, date), region), service), 'aws4_request');
  return hmac(key, stringToSign).toString('hex') === signature;
}

function startSigV4Gateway(upstream: URL): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    if ((req.url ?? '').includes('X-Amz-Signature=') && !presignedSignatureValid(req)) {
      req.resume();
      res.writeHead(403, { 'content-type': 'application/xml' });
      res.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>SignatureDoesNotMatch</Code></Error>');
      return;
    }
    // S3 decodes x-amz-copy-source fully; s3rver with decodeURI, which leaves %2B, %2C, %40 and the like encoded.
    const copySource = req.headers['x-amz-copy-source'];
    if (typeof copySource === 'string') req.headers['x-amz-copy-source'] = encodeURI(decodeURIComponent(copySource));
    const forward = http.request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}
