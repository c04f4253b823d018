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

describe('auth: auth-js against /auth/v1', () => {
  const email = 'grace@example.com';
  const password = 'analytical engine';
  /** A client that keeps its session in memory, as supabase-js does without storage. */
  const authClient = () => createClient(`${server.url}/v1/${app.id}`, app.publishableKey, { auth: { persistSession: false, autoRefreshToken: false } });
  const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;

  it('signs up with user metadata and is signed in at once', async () => {
    const sb = authClient();
    const { data, error } = await sb.auth.signUp({ email, password, options: { data: { name: 'Grace' } } });
    expect(error).toBeNull();
    expect(data.session).toMatchObject({ token_type: 'bearer', expires_in: expect.any(Number), expires_at: expect.any(Number), refresh_token: expect.any(String) });
    expect(data.user).toMatchObject({ email, aud: 'authenticated', role: 'authenticated', user_metadata: { name: 'Grace' }, app_metadata: { provider: 'email', providers: ['email'] } });
    expect(claimsOf(data.session!.access_token)).toMatchObject({ sub: data.user!.id, email, role: 'authenticated', aud: app.id, user_metadata: { name: 'Grace' }, session_id: expect.any(String) });
    // The session is the client's own: the data API runs as this user.
    expect((await sb.from('notes').insert({ body: 'from grace' })).status).toBe(201);
    expect((await sb.from('notes').select('body')).data).toEqual([{ body: 'from grace' }]);
  });

  it("answers GoTrue's errors: a taken email, a weak password, an invalid address", async () => {
    const sb = authClient();
    const taken = await sb.auth.signUp({ email, password });
    expect(taken.error).toMatchObject({ status: 422, code: 'user_already_exists' });
    const weak = await sb.auth.signUp({ email: 'short@example.com', password: 'short' });
    expect(weak.error).toMatchObject({ name: 'AuthWeakPasswordError', status: 422, code: 'weak_password', reasons: ['length'] });
    const invalid = await sb.auth.signUp({ email: 'not-an-email', password });
    expect(invalid.error).toMatchObject({ status: 400, code: 'email_address_invalid' });
  });

  it('signs in with a password; a wrong one is invalid_credentials', async () => {
    const sb = authClient();
    const wrong = await sb.auth.signInWithPassword({ email, password: 'wrong password' });
    expect(wrong.error).toMatchObject({ status: 400, code: 'invalid_credentials' });
    const { data, error } = await sb.auth.signInWithPassword({ email: 'GRACE@example.com', password });
    expect(error).toBeNull();
    expect(data.user).toMatchObject({ email, user_metadata: { name: 'Grace' } });
  });

  it('reads and updates the user: metadata merged, a null removing its key, a new password', async () => {
    const sb = authClient();
    await sb.auth.signInWithPassword({ email, password });
    const got = await sb.auth.getUser();
    expect(got).toMatchObject({ error: null, data: { user: { email, user_metadata: { name: 'Grace' } } } });
    const merged = await sb.auth.updateUser({ data: { lang: 'en' } });
    expect(merged.data.user?.user_metadata).toEqual({ name: 'Grace', lang: 'en' });
    const removed = await sb.auth.updateUser({ data: { name: null } });
    expect(removed.data.user?.user_metadata).toEqual({ lang: 'en' });
    expect((await sb.auth.updateUser({ password: 'tiny' })).error).toMatchObject({ code: 'weak_password' });
    expect((await sb.auth.updateUser({ password: 'difference engine' })).error).toBeNull();
    expect((await authClient().auth.signInWithPassword({ email, password })).error).toMatchObject({ code: 'invalid_credentials' });
    expect((await authClient().auth.signInWithPassword({ email, password: 'difference engine' })).error).toBeNull();
    const anon = await client(app.id, app.publishableKey).auth.getUser('not.a.jwt');
    expect(anon.error).toMatchObject({ status: 403, code: 'bad_jwt' });
  });

  it('refreshes the session; the used refresh token is refresh_token_not_found', async () => {
    const sb = authClient();
    const signedIn = await sb.auth.signInWithPassword({ email, password: 'difference engine' });
    const first = signedIn.data.session!;
    const refreshed = await sb.auth.refreshSession();
    expect(refreshed.error).toBeNull();
    expect(refreshed.data.session!.refresh_token).not.toBe(first.refresh_token);
    expect(claimsOf(refreshed.data.session!.access_token).session_id).toBe(claimsOf(first.access_token).session_id);
    const replayed = await authClient().auth.refreshSession({ refresh_token: first.refresh_token });
    expect(replayed.error).toMatchObject({ status: 400, code: 'refresh_token_not_found' });
  });

  it('signs out by scope: local ends its own session, global every one', async () => {
    const one = authClient();
    const two = authClient();
    await one.auth.signInWithPassword({ email, password: 'difference engine' });
    await two.auth.signInWithPassword({ email, password: 'difference engine' });
    const twoRefresh = (await two.auth.getSession()).data.session!.refresh_token;
    expect((await one.auth.signOut({ scope: 'local' })).error).toBeNull();
    const stillTwo = await authClient().auth.refreshSession({ refresh_token: twoRefresh });
    expect(stillTwo.error).toBeNull();
    const three = authClient();
    await three.auth.signInWithPassword({ email, password: 'difference engine' });
    const threeRefresh = (await three.auth.getSession()).data.session!.refresh_token;
    expect((await three.auth.signOut()).error).toBeNull();
    expect((await authClient().auth.refreshSession({ refresh_token: stillTwo.data.session!.refresh_token })).error).toMatchObject({ code: 'refresh_token_not_found' });
    expect((await authClient().auth.refreshSession({ refresh_token: threeRefresh })).error).toMatchObject({ code: 'refresh_token_not_found' });
  });
});
