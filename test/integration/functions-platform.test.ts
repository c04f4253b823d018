// A function reaches its own platform on a loopback deployment (SVC_BASE_URL http://127.0.0.1:PORT, as a
// self-hosted platform is): through ctx.data (as the end user under row-level security, or as the app) and through
// fetch() under ctx.env.SVC_API_URL, which the runner forwards over its stdio channel. The database and other
// loopback services stay closed, with an error naming the setting, and no function reaches another app's data.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { freePort } from '../helpers/server.ts';

let p: TestPlatform;
let appId: string;
let serviceKey: string;
let other: { app_id: string; service_key: { key: string } };
const tokens: Record<string, string> = {};
const userIds: Record<string, string> = {};

/** Reads and writes the app's notes through ctx.data, as whoever invoked it. */
const NOTES = `
export default async (req: Request, ctx: any) => {
  const body = await req.json().catch(() => ({}));
  const inserted = body.note ? await ctx.data.from('notes').insert({ body: body.note }) : null;
  const all = await ctx.data.from('notes').select('body,user_id', { query: 'order=body', count: true });
  const missing = await ctx.data.from('nope').select();
  let updated = null, deleted = null;
  if (body.rename) updated = await ctx.data.from('notes').update({ body: body.rename.to }, 'body=eq.' + encodeURIComponent(body.rename.from));
  if (body.remove) deleted = await ctx.data.from('notes').delete('body=eq.' + encodeURIComponent(body.remove));
  return Response.json({ user: ctx.user?.id ?? null, inserted, all, missing, updated, deleted });
};`;

/** Fetches the app's data API with the Authorization it received (or none). */
const VIA_FETCH = `
export default async (req: Request, ctx: any) => {
  const headers: Record<string, string> = {};
  const auth = req.headers.get('authorization');
  if (auth) headers.authorization = auth;
  const res = await fetch(ctx.env.SVC_API_URL + '/notes?select=body&order=body', { headers });
  return Response.json({ url: ctx.env.SVC_API_URL, status: res.status, body: await res.json() });
};`;

const DATABASE = `
export default async (req: Request) => {
  const target = new URL(req.url).searchParams.get('to')!;
  try {
    await fetch(target);
    return Response.json({ reached: true });
  } catch (err) {
    return Response.json({ reached: false, error: String(err) });
  }
};`;

async function deploy(app: string, key: string, name: string, code: string) {
  const r = await p.api('POST', `/v1/${app}/functions`, { body: { name, code }, key });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}

async function call(app: string, name: string, opts: { token?: string; body?: unknown; search?: string } = {}) {
  const res = await fetch(`${p.url}/v1/${app}/fn/${name}${opts.search ?? ''}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}) },
    body: JSON.stringify(opts.body ?? {}),
  });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return JSON.parse(text);
}

beforeAll(async () => {
  const port = await freePort();
  p = await startTestPlatform({ PORT: String(port), SVC_BASE_URL: `http://127.0.0.1:${port}` });
  const notesSchema = { schema: { tables: { notes: { columns: { body: { type: 'text' }, user_id: { type: 'uuid' } }, access: 'user' } } } };
  for (const name of ['fnplat', 'fnother']) {
    const app = (await p.api('POST', '/init', { body: { name } })).body;
    const applied = await p.api('POST', `/v1/${app.app_id}/schema/apply`, { body: notesSchema, key: app.service_key.key });
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    if (name === 'fnplat') {
      appId = app.app_id;
      serviceKey = app.service_key.key;
    } else {
      other = app;
    }
  }
  for (const who of ['ann', 'bob']) {
    const signup = await p.api('POST', `/v1/${appId}/auth/signup`, { body: { email: `${who}@example.com`, password: 'correct horse battery' }, key: null });
    expect(signup.status).toBe(201);
    tokens[who] = signup.body.access_token;
    userIds[who] = signup.body.user.id;
  }
  // The other app holds a secret row in a table of the same name.
  const secret = await p.api('POST', `/v1/${other.app_id}/notes`, { body: { body: 'other-app-secret' }, key: other.service_key.key });
  expect(secret.status).toBe(201);
  await deploy(appId, serviceKey, 'notes', NOTES);
  await deploy(appId, serviceKey, 'viafetch', VIA_FETCH);
  await deploy(appId, serviceKey, 'database', DATABASE);
  await deploy(other.app_id, other.service_key.key, 'notes', NOTES);
}, 120_000);

afterAll(async () => {
  await p?.close();
});

describe('ctx.data', () => {
  it('acts as the end user: inserts own rows and sees only them under row-level security', async () => {
    const ann = await call(appId, 'notes', { token: tokens.ann, body: { note: 'ann-1' } });
    expect(ann.user).toBe(userIds.ann);
    expect(ann.inserted).toMatchObject({ status: 201, error: null, data: [{ body: 'ann-1', user_id: userIds.ann }] });
    const bob = await call(appId, 'notes', { token: tokens.bob, body: { note: 'bob-1' } });
    expect(bob.all.data.map((r: { body: string }) => r.body)).toEqual(['bob-1']);
    expect(bob.all.count).toBe(1);
    const ann2 = await call(appId, 'notes', { token: tokens.ann, body: { rename: { from: 'ann-1', to: 'ann-one' } } });
    expect(ann2.all).toMatchObject({ status: 200, error: null, data: [{ body: 'ann-1', user_id: userIds.ann }] });
    expect(ann2.updated).toMatchObject({ status: 200, data: [{ body: 'ann-one' }] });
    // Bob cannot touch Ann's row.
    const bob2 = await call(appId, 'notes', { token: tokens.bob, body: { remove: 'ann-one' } });
    expect(bob2.deleted).toMatchObject({ status: 200, data: [] });
    // Errors come back as the platform's envelope with a status, never as a throw.
    expect(ann.missing).toMatchObject({ status: 404, data: null, error: { code: expect.any(String), message: expect.stringContaining('nope') } });
    expect(ann.missing.error.remediation).toEqual(expect.any(String));
  });

  it('acts as the app without an end user: sees every row of this app', async () => {
    const app = await call(appId, 'notes');
    expect(app.user).toBeNull();
    expect(app.all.data.map((r: { body: string }) => r.body).sort()).toEqual(['ann-one', 'bob-1']);
    expect(JSON.stringify(app)).not.toContain('other-app-secret');
  });

  it("never reaches another app's data", async () => {
    // The same function code in the other app sees that app's rows only, and this app's rows never.
    const there = await call(other.app_id, 'notes');
    expect(there.all.data.map((r: { body: string }) => r.body)).toEqual(['other-app-secret']);
    // An end-user token of this app does not open the other app's function data either (403 at the route).
    const res = await fetch(`${p.url}/v1/${other.app_id}/fn/notes`, { method: 'POST', headers: { authorization: `Bearer ${tokens.ann}` }, body: '{}' });
    expect(res.status).toBe(403);
  });
});

describe('fetch() to the platform', () => {
  it('reaches ctx.env.SVC_API_URL on a loopback deployment, with the Authorization the function received', async () => {
    const ann = await call(appId, 'viafetch', { token: tokens.ann });
    expect(ann.url).toBe(`${p.services.config.baseUrl}/v1/${appId}`);
    expect(new URL(ann.url).hostname).toBe('127.0.0.1');
    expect(ann.status).toBe(200);
    expect(ann.body).toEqual([{ body: 'ann-one' }]);
    // Without a credential the data API answers as anon: a user table shows nothing.
    const anon = await call(appId, 'viafetch');
    expect(anon.status).toBe(200);
    expect(anon.body).toEqual([]);
  });

  it('keeps the database and other loopback services closed, naming the setting rather than Deno flags', async () => {
    const db = new URL(process.env.DATABASE_URL ?? 'postgres://127.0.0.1:5432/x');
    for (const to of ['http://127.0.0.1:5432/', `http://${db.hostname}:${db.port || 5432}/`, 'http://localhost:6379/']) {
      const r = await call(appId, 'database', { search: `?to=${encodeURIComponent(to)}` });
      expect(r.reached, to).toBe(false);
      expect(r.error).toMatch(/is denied: loopback addresses are never reachable from functions|the host is closed to functions/);
      expect(r.error).toContain('ctx.data');
      expect(r.error).toContain('SVC_API_URL');
      expect(r.error).not.toContain('--allow-net');
    }
    const priv = await call(appId, 'database', { search: `?to=${encodeURIComponent('http://10.1.2.3:80/')}` });
    expect(priv.reached).toBe(false);
    expect(priv.error).toContain('SVC_FUNCTIONS_ALLOW_PRIVATE_NET=true');
    expect(priv.error).not.toContain('--allow-net');
  });
});
