// supabase-js unchanged against the platform (issue 41): createClient('{base}/v1/{app_id}', key) with the app's
// publishable key, as a page would, and with its service key, as a server would; no custom fetch, no adapters.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '@supabase/supabase-js';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { request } from './e2e-helpers.ts';

let server: SpawnedServer;
const app = { id: '', serviceKey: '', publishableKey: '' };
const other = { id: '', publishableKey: '' };

const SCHEMA = {
  tables: {
    posts: { columns: { id: { type: 'bigint', primary: true, identity: true }, title: { type: 'text', nullable: false } }, access: 'public' },
    notes: { columns: { id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' }, user_id: { type: 'uuid' }, body: { type: 'text' } } },
  },
};

/** A supabase-js client of the app, as its README has one made: the app's base URL and a key. */
const client = (appId: string, key: string, accessToken?: string) =>
  createClient(`${server.url}/v1/${appId}`, key, {
    auth: { persistSession: false, autoRefreshToken: false },
    ...(accessToken ? { global: { headers: { Authorization: `Bearer ${accessToken}` } } } : {}),
  });

beforeAll(async () => {
  server = await spawnServer();
  for (const [target, name] of [
    [app, 'Supabase drop-in'],
    [other, 'Another app'],
  ] as const) {
    const init = await request(server.url, '/init', { method: 'POST', key: server.platformKey, body: { name } });
    expect(init.status).toBe(201);
    target.id = init.json.app_id;
    target.publishableKey = init.json.publishable_key;
    if (target === app) app.serviceKey = init.json.service_key.key;
  }
  const applied = await request(server.url, `/v1/${app.id}/schema/apply`, { method: 'POST', key: app.serviceKey, body: { schema: SCHEMA, name: 'init' } });
  expect(applied.status).toBe(200);
});
afterAll(async () => {
  await server?.close();
});

describe('keys: publishable and secret, as supabase-js sends them', () => {
  it('gives every app a publishable key at creation, listed with the key itself', async () => {
    expect(app.publishableKey).toMatch(/^svc_pub_[A-Za-z0-9_-]{43,}$/);
    const listed = await request(server.url, `/apps/${app.id}/publishable-keys`, { key: server.platformKey });
    expect(listed.status).toBe(200);
    expect(listed.json.keys).toEqual([{ id: expect.any(String), name: 'default', key: app.publishableKey, created_at: expect.any(String) }]);
    const asService = await request(server.url, `/apps/${app.id}/publishable-keys`, { key: app.serviceKey });
    expect(asService.json.keys[0].key).toBe(app.publishableKey);
  });

  it('reads a public table with the publishable key alone and refuses anonymous writes', async () => {
    const service = client(app.id, app.serviceKey);
    const inserted = await service.from('posts').insert([{ title: 'hello' }, { title: 'world' }]).select('title');
    expect(inserted).toMatchObject({ error: null, status: 201, data: [{ title: 'hello' }, { title: 'world' }] });

    const anon = client(app.id, app.publishableKey);
    const read = await anon.from('posts').select('title').order('id');
    expect(read).toMatchObject({ error: null, status: 200, data: [{ title: 'hello' }, { title: 'world' }] });
    const write = await anon.from('posts').insert({ title: 'spam' });
    expect(write.status).toBe(403);
    expect(write.error).toMatchObject({ code: '42501' });
    const privateRows = await anon.from('notes').select('*');
    expect(privateRows.data ?? []).toEqual([]);
  });

  it('runs as the signed-in end user when a user token comes in Authorization beside the publishable key', async () => {
    const signup = await request(server.url, `/v1/${app.id}/auth/signup`, { method: 'POST', body: { email: 'ada@example.com', password: 'correct horse battery' } });
    expect(signup.status).toBe(201);
    const ada = client(app.id, app.publishableKey, signup.json.access_token);
    expect((await ada.from('notes').insert({ body: 'mine' })).status).toBe(201);
    expect((await ada.from('notes').select('body')).data).toEqual([{ body: 'mine' }]);
    expect((await client(app.id, app.publishableKey).from('notes').select('body')).data).toEqual([]);
  });

  it("refuses a publishable key on another app's routes and on the platform's", async () => {
    const crossed = await client(app.id, other.publishableKey).from('posts').select('title');
    expect(crossed.status).toBe(403);
    const platform = await request(server.url, '/apps', { key: app.publishableKey });
    expect(platform.status).toBe(401);
    expect(platform.json.error.code).toBe('AUTH_REQUIRED');
  });

  it('takes the key from apikey alone, and refuses an apikey that is no app key', async () => {
    const viaApikey = await fetch(`${server.url}/v1/${app.id}/posts?select=title&order=id`, { headers: { apikey: app.publishableKey } });
    expect(viaApikey.status).toBe(200);
    expect(await viaApikey.json()).toEqual([{ title: 'hello' }, { title: 'world' }]);
    const asService = await fetch(`${server.url}/v1/${app.id}/notes?select=body`, { headers: { apikey: app.serviceKey } });
    expect(await asService.json()).toEqual([{ body: 'mine' }]);
    for (const apikey of ['svc_pub_unknown', server.platformKey, 'not-a-key']) {
      const refused = await fetch(`${server.url}/v1/${app.id}/posts`, { headers: { apikey } });
      expect(refused.status).toBe(401);
    }
  });

  it('rotates: a new publishable key works, the revoked one is refused at once', async () => {
    const made = await request(server.url, `/apps/${app.id}/publishable-keys`, { method: 'POST', key: server.platformKey, body: { name: 'rotated' } });
    expect(made.status).toBe(201);
    expect(made.json).toEqual({ id: expect.any(String), name: 'rotated', key: expect.stringMatching(/^svc_pub_/), created_at: expect.any(String) });
    expect((await client(app.id, made.json.key).from('posts').select('title')).status).toBe(200);
    const listed = await request(server.url, `/apps/${app.id}/publishable-keys`, { key: server.platformKey });
    const first = listed.json.keys.find((k: { key: string }) => k.key === app.publishableKey);
    const revoked = await request(server.url, `/apps/${app.id}/publishable-keys/${first.id}`, { method: 'DELETE', key: server.platformKey });
    expect(revoked.json).toEqual({ revoked: true, key_id: first.id });
    expect((await client(app.id, app.publishableKey).from('posts').select('title')).status).toBe(401);
    app.publishableKey = made.json.key;
  });
});

describe('functions: functions-js invoke', () => {
  const HELLO = `export default async (req: Request, ctx: { user: { id: string } | null }): Promise<Response> => {
  const body = req.method === 'POST' ? await req.json() : null;
  return Response.json({ method: req.method, path: new URL(req.url).pathname, body, user: ctx.user?.id ?? null });
};`;

  beforeAll(async () => {
    const deployed = await request(server.url, `/v1/${app.id}/functions`, { method: 'POST', key: app.serviceKey, body: { name: 'hello', code: HELLO } });
    expect(deployed.status).toBe(201);
  });

  it('reaches the same function as /fn/{name}, anonymous with the publishable key, as the user with a session', async () => {
    const anon = await client(app.id, app.publishableKey).functions.invoke('hello', { body: { name: 'Ada' } });
    expect(anon).toMatchObject({ error: null, data: { method: 'POST', path: '/', body: { name: 'Ada' }, user: null } });
    const signin = await request(server.url, `/v1/${app.id}/auth/login`, { method: 'POST', body: { email: 'ada@example.com', password: 'correct horse battery' } });
    const asUser = await client(app.id, app.publishableKey, signin.json.access_token).functions.invoke('hello', { method: 'GET' });
    expect(asUser).toMatchObject({ error: null, data: { method: 'GET', body: null, user: signin.json.user.id } });
  });

  it("refuses another app's publishable key, and leaves a function named v1 its management routes", async () => {
    const crossed = await client(app.id, other.publishableKey).functions.invoke('hello', { body: {} });
    expect(crossed.error?.name).toBe('FunctionsHttpError');
    expect((crossed.error as { context: Response }).context.status).toBe(403);
    const logs = await request(server.url, `/v1/${app.id}/functions/v1/logs`, { key: app.serviceKey });
    expect(logs.status).toBe(404);
    expect(logs.json.error.code).toBe('RESOURCE_NOT_FOUND');
  });
});
