// supabase-js unchanged against the platform (issue 41): createClient('{base}/v1/{app_id}', key) with the app's
// publishable key, as a page would, and with its service key, as a server would; no custom fetch, no adapters.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '@supabase/supabase-js';
import { connect } from 'node:net';
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
  // Its auth tests sign in more often than the default limit (10 a minute per client and app) allows.
  // Storage's stalled-upload test waits for the idle limit, so it is short here.
  server = await spawnServer({ SVC_AUTH_RATE_LIMIT_PER_MINUTE: '100', SVC_STORAGE_UPLOAD_IDLE_SECONDS: '2' });
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
    // 401 without a signed-in user, as PostgREST answers a 42501 to a request without a JWT.
    expect(write.status).toBe(401);
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

  it("refuses an access token whose session was signed out (session_not_found), and keeps the others' working", async () => {
    const one = authClient();
    const two = authClient();
    const first = (await one.auth.signInWithPassword({ email, password: 'difference engine' })).data.session!.access_token;
    const second = (await two.auth.signInWithPassword({ email, password: 'difference engine' })).data.session!.access_token;
    expect((await one.auth.signOut({ scope: 'local' })).error).toBeNull();
    // auth-js turns GoTrue's session_not_found into AuthSessionMissingError (and drops its session).
    expect((await authClient().auth.getUser(first)).error?.name).toBe('AuthSessionMissingError');
    const raw = await fetch(`${server.url}/v1/${app.id}/auth/v1/user`, { headers: { apikey: app.publishableKey, Authorization: `Bearer ${first}` } });
    expect(raw.status).toBe(403);
    expect(await raw.json()).toEqual({ code: 'session_not_found', error_code: 'session_not_found', msg: expect.any(String), message: expect.any(String) });
    expect((await authClient().auth.getUser(second)).data.user?.email).toBe(email);
  });

  it("serves the app's keys at auth-js's JWKS URL, so getClaims verifies a session's token", async () => {
    const jwks = await fetch(`${server.url}/v1/${app.id}/auth/v1/.well-known/jwks.json`);
    expect(jwks.status).toBe(200);
    expect(await jwks.json()).toEqual((await request(server.url, `/v1/${app.id}/.well-known/jwks.json`)).json);
    const sb = authClient();
    const { data } = await sb.auth.signInWithPassword({ email, password: 'difference engine' });
    const claims = await sb.auth.getClaims();
    expect(claims).toMatchObject({ error: null, data: { claims: { sub: data.user!.id, email, session_id: expect.any(String) } } });
  });
});

describe('storage: storage-js', () => {
  const users = { sam: '', bo: '' };
  const service = () => client(app.id, app.serviceKey);
  const anon = () => client(app.id, app.publishableKey);
  const as = (who: keyof typeof users) => client(app.id, app.publishableKey, users[who]);
  const text = (s: string) => Buffer.from(s);

  beforeAll(async () => {
    for (const who of ['sam', 'bo'] as const) {
      const signup = await request(server.url, `/v1/${app.id}/auth/signup`, { method: 'POST', body: { email: `${who}@example.com`, password: 'correct horse battery' } });
      expect(signup.status).toBe(201);
      users[who] = signup.json.access_token;
    }
  });

  it('manages buckets with the service key: create, get, list, update; others are refused', async () => {
    const listed = await service().storage.listBuckets();
    expect(listed.error).toBeNull();
    expect(listed.data).toEqual([
      { id: 'files', name: 'files', owner: '', public: false, access: 'owner', type: 'STANDARD', file_size_limit: null, allowed_mime_types: null, created_at: expect.any(String), updated_at: expect.any(String) },
    ]);
    expect(await service().storage.createBucket('avatars', { public: true })).toEqual({ data: { name: 'avatars' }, error: null });
    expect(await service().storage.createBucket('docs', { public: false, fileSizeLimit: '1KB', allowedMimeTypes: ['text/plain', 'image/png'] })).toEqual({ data: { name: 'docs' }, error: null });
    const again = await service().storage.createBucket('docs');
    expect(again.error).toMatchObject({ name: 'StorageApiError', status: 409, statusCode: '409', message: 'The resource already exists' });

    const docs = await anon().storage.getBucket('docs');
    expect(docs).toEqual({
      data: { id: 'docs', name: 'docs', owner: '', public: false, access: 'owner', type: 'STANDARD', file_size_limit: 1024, allowed_mime_types: ['text/plain', 'image/png'], created_at: expect.any(String), updated_at: expect.any(String) },
      error: null,
    });
    expect((await as('sam').storage.listBuckets()).data?.map((b) => [b.id, b.public])).toEqual([['avatars', true], ['docs', false], ['files', false]]);
    expect(await service().storage.updateBucket('avatars', { public: true, fileSizeLimit: 2048 })).toEqual({ data: { message: 'Successfully updated' }, error: null });
    expect((await service().storage.getBucket('avatars')).data).toMatchObject({ public: true, access: 'public', file_size_limit: 2048 });

    const missing = await service().storage.getBucket('nope');
    expect(missing.error).toMatchObject({ status: 404, statusCode: '404', message: 'Bucket not found' });
    for (const sb of [as('sam'), anon()]) {
      const refused = await sb.storage.createBucket('mine');
      expect(refused.error).toMatchObject({ status: 403, statusCode: '403' });
      expect((await sb.storage.deleteBucket('docs')).error).toMatchObject({ status: 403 });
    }
    const files = await service().storage.deleteBucket('files');
    expect(files.error).toMatchObject({ status: 400, statusCode: '400' });
    const tooBig = await service().storage.createBucket('huge', { public: false, fileSizeLimit: '1TB' });
    expect(tooBig.error).toMatchObject({ status: 400 });

    // The error body exactly as Supabase Storage sends it.
    const raw = await request(server.url, `/v1/${app.id}/storage/v1/bucket/nope`, { key: app.serviceKey });
    expect(raw.status).toBe(404);
    expect(raw.json).toEqual({ statusCode: '404', code: 'NoSuchBucket', error: 'Bucket not found', message: 'Bucket not found' });
  });

  it("uploads an end user's files: duplicate 409, upsert and update replace, the bucket's size and type limits, anonymous writes refused", async () => {
    const sam = as('sam').storage.from('docs');
    const first = await sam.upload('sam/a.txt', text('first'), { contentType: 'text/plain' });
    expect(first).toEqual({ data: { path: 'sam/a.txt', id: expect.any(String), fullPath: 'docs/sam/a.txt' }, error: null });
    const dup = await sam.upload('sam/a.txt', text('again'), { contentType: 'text/plain' });
    expect(dup.error).toMatchObject({ status: 409, statusCode: '409', message: 'The resource already exists' });
    const upserted = await sam.upload('sam/a.txt', text('second'), { contentType: 'text/plain', upsert: true });
    expect(upserted.error).toBeNull();
    expect(upserted.data!.id).not.toBe(first.data!.id);
    expect((await sam.update('sam/a.txt', text('third!'), { contentType: 'text/plain' })).error).toBeNull();
    expect((await sam.upload('sam/sub/b.txt', text('deeper'), { contentType: 'text/plain' })).error).toBeNull();
    expect((await sam.update('sam/none.txt', text('x'), { contentType: 'text/plain' })).error).toMatchObject({ status: 404, statusCode: '404' });

    const large = await sam.upload('sam/large.txt', Buffer.alloc(1025, 97), { contentType: 'text/plain' });
    expect(large.error).toMatchObject({ status: 413, statusCode: '413', message: 'The object exceeded the maximum allowed size' });
    const gif = await sam.upload('sam/x.gif', text('GIF89a'), { contentType: 'image/gif' });
    expect(gif.error).toMatchObject({ status: 415, statusCode: '415', message: 'mime type image/gif is not supported' });
    const bad = await sam.upload('sam/bad{name}.txt', text('x'), { contentType: 'text/plain' });
    expect(bad.error).toMatchObject({ status: 400, statusCode: '400', message: 'Invalid key: sam/bad{name}.txt' });

    const anonymous = await anon().storage.from('docs').upload('anon.txt', text('x'), { contentType: 'text/plain' });
    expect(anonymous.error).toMatchObject({ status: 403, statusCode: '403', message: 'new row violates row-level security policy' });
    const stranger = await as('bo').storage.from('docs').upload('sam/a.txt', text('mine now'), { contentType: 'text/plain', upsert: true });
    expect(stranger.error).toMatchObject({ status: 403, statusCode: '403' });
    expect((await as('bo').storage.from('docs').update('sam/a.txt', text('x'), { contentType: 'text/plain' })).error).toMatchObject({ status: 404 });

    const raw = await request(server.url, `/v1/${app.id}/storage/v1/object/docs/sam/a.txt`, { method: 'POST', key: users.sam, headers: { 'content-type': 'text/plain' }, body: 'x' });
    expect(raw.status).toBe(409);
    expect(raw.json).toEqual({ statusCode: '409', code: 'Duplicate', error: 'Duplicate', message: 'The resource already exists' });
  });

  it("downloads and lists what the caller may see: the owner's files, nothing of them for another user or anonymously", async () => {
    const got = await as('sam').storage.from('docs').download('sam/a.txt');
    expect(got.error).toBeNull();
    expect(await got.data!.text()).toBe('third!');
    expect(got.data!.type).toBe('text/plain');
    for (const sb of [as('bo'), anon()]) {
      const hidden = await sb.storage.from('docs').download('sam/a.txt');
      expect(hidden.error).toMatchObject({ status: 404, statusCode: '404' });
      expect((await sb.storage.from('docs').exists('sam/a.txt')).data).toBe(false);
    }
    const info = await as('sam').storage.from('docs').info('sam/a.txt');
    expect(info).toEqual({
      data: {
        id: expect.any(String),
        name: 'sam/a.txt',
        version: null,
        bucketId: 'docs',
        size: 6,
        contentType: 'text/plain',
        cacheControl: 'max-age=3600',
        etag: `"${info.data?.id}"`,
        metadata: {},
        lastModified: expect.any(String),
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
      error: null,
    });
    expect((await as('sam').storage.from('docs').exists('sam/a.txt')).data).toBe(true);
    expect((await as('sam').storage.from('docs').exists('sam/none.txt')).data).toBe(false);

    const listed = await as('sam').storage.from('docs').list('sam');
    expect(listed.error).toBeNull();
    expect(listed.data).toEqual([
      {
        name: 'a.txt',
        id: expect.any(String),
        created_at: expect.any(String),
        updated_at: expect.any(String),
        last_accessed_at: expect.any(String),
        metadata: { eTag: expect.stringMatching(/^"/), size: 6, mimetype: 'text/plain', cacheControl: 'max-age=3600', lastModified: expect.any(String), contentLength: 6, httpStatusCode: 200 },
      },
      { name: 'sub', id: null, created_at: null, updated_at: null, last_accessed_at: null, metadata: null },
    ]);
    expect((await as('sam').storage.from('docs').list('sam', { search: 'su' })).data?.map((e) => e.name)).toEqual(['sub']);
    expect((await as('sam').storage.from('docs').list('sam', { limit: 1, offset: 1 })).data?.map((e) => e.name)).toEqual(['sub']);
    expect((await as('sam').storage.from('docs').list('sam', { sortBy: { column: 'name', order: 'desc' } })).data?.map((e) => e.name)).toEqual(['sub', 'a.txt']);
    expect((await service().storage.from('docs').list()).data?.map((e) => [e.name, e.id])).toEqual([['sam', null]]);
    expect((await as('bo').storage.from('docs').list('sam')).data).toEqual([]);
    expect((await anon().storage.from('docs').list('sam')).data).toEqual([]);
  });

  it('serves a public bucket to anyone (its public URL needs no credential) and a private one to no one anonymous', async () => {
    const png = Buffer.from('89504e470d0a1a0a', 'hex');
    const put = await as('sam').storage.from('avatars').upload('sam/me.png', png, { contentType: 'image/png' });
    expect(put.error).toBeNull();
    const { publicUrl } = anon().storage.from('avatars').getPublicUrl('sam/me.png').data;
    expect(publicUrl).toBe(`${server.url}/v1/${app.id}/storage/v1/object/public/avatars/sam/me.png`);
    const fetched = await fetch(publicUrl);
    expect(fetched.status).toBe(200);
    expect(fetched.headers.get('content-type')).toBe('image/png');
    expect(fetched.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await fetched.arrayBuffer())).toEqual(png);

    const privateUrl = anon().storage.from('docs').getPublicUrl('sam/a.txt').data.publicUrl;
    const refused = await fetch(privateUrl);
    expect(refused.status).toBe(404);
    expect(await refused.json()).toEqual({ statusCode: '404', code: 'NoSuchKey', error: 'not_found', message: 'Object not found' });

    expect(await (await anon().storage.from('avatars').download('sam/me.png')).data!.arrayBuffer()).toEqual(png.buffer.slice(png.byteOffset, png.byteOffset + png.length));
    expect((await as('bo').storage.from('avatars').list('sam')).data?.map((e) => e.name)).toEqual(['me.png']);
    expect((await anon().storage.from('avatars').upload('anon.png', png, { contentType: 'image/png' })).error).toMatchObject({ status: 403 });
    expect((await as('bo').storage.from('avatars').remove(['sam/me.png'])).data).toEqual([]);
    expect((await anon().storage.from('avatars').remove(['sam/me.png'])).data).toEqual([]);
  });

  it("moves an object the caller owns (within a bucket and to another, whose limits apply); another's is refused, a taken path 409", async () => {
    const docs = as('sam').storage.from('docs');
    expect((await docs.upload('sam/m.txt', text('move me'), { contentType: 'text/plain' })).error).toBeNull();
    expect(await docs.move('sam/m.txt', 'sam/moved.txt')).toEqual({ data: { message: 'Successfully moved' }, error: null });
    expect(await (await docs.download('sam/moved.txt')).data!.text()).toBe('move me');
    expect((await docs.download('sam/m.txt')).error).toMatchObject({ status: 404 });
    expect((await docs.move('sam/moved.txt', 'sam/a.txt')).error).toMatchObject({ status: 409, statusCode: '409' });
    expect((await as('bo').storage.from('docs').move('sam/moved.txt', 'bo/x.txt')).error).toMatchObject({ status: 404, statusCode: '404' });
    expect((await anon().storage.from('avatars').move('sam/me.png', 'x.png')).error).toMatchObject({ status: 403 });
    expect((await as('bo').storage.from('avatars').move('sam/me.png', 'bo/me.png')).error).toMatchObject({ status: 403, statusCode: '403' });
    // avatars takes 2 KB files of any type: a text file may go there, and back.
    expect(await docs.move('sam/moved.txt', 'sam/note.txt', { destinationBucket: 'avatars' })).toEqual({ data: { message: 'Successfully moved' }, error: null });
    expect(await (await anon().storage.from('avatars').download('sam/note.txt')).data!.text()).toBe('move me');
    expect((await as('sam').storage.from('avatars').remove(['sam/note.txt'])).data).toHaveLength(1);
  });

  it("copies what the caller may read into the caller's own object; limits and a taken path apply", async () => {
    // bo reads sam's public avatar and copies it: the copy is bo's, sam's stays.
    const copied = await as('bo').storage.from('avatars').copy('sam/me.png', 'bo/me.png');
    expect(copied).toEqual({ data: { path: 'avatars/bo/me.png' }, error: null });
    const png = Buffer.from('89504e470d0a1a0a', 'hex');
    expect(Buffer.from(await (await anon().storage.from('avatars').download('bo/me.png')).data!.arrayBuffer())).toEqual(png);
    expect((await as('bo').storage.from('avatars').remove(['bo/me.png'])).data).toHaveLength(1);
    expect((await as('sam').storage.from('avatars').copy('sam/me.png', 'sam/me.png')).error).toMatchObject({ status: 409 });
    expect((await as('bo').storage.from('docs').copy('sam/a.txt', 'bo/a.txt')).error).toMatchObject({ status: 404 });
    expect((await anon().storage.from('avatars').copy('sam/me.png', 'x.png')).error).toMatchObject({ status: 403 });
    // docs takes text/plain and image/png up to 1 KB: the copy of a text file in it goes to avatars and back.
    expect((await as('sam').storage.from('docs').copy('sam/a.txt', 'sam/a-copy.txt', { destinationBucket: 'avatars' })).data).toEqual({ path: 'avatars/sam/a-copy.txt' });
    expect(await (await anon().storage.from('avatars').download('sam/a-copy.txt')).data!.text()).toBe('third!');
    expect((await as('sam').storage.from('avatars').remove(['sam/a-copy.txt'])).data).toHaveLength(1);
  });

  it('signs URLs of what the caller may read: the bytes without credentials; tampered 400 InvalidSignature, expired 400 ExpiredToken', async () => {
    const docs = as('sam').storage.from('docs');
    const signed = await docs.createSignedUrl('sam/a.txt', 60);
    expect(signed.error).toBeNull();
    const url = signed.data!.signedUrl;
    expect(url).toMatch(new RegExp(`^${server.url}/v1/${app.id}/storage/v1/object/sign/docs/sam/a\\.txt\\?token=[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$`));
    const got = await fetch(url);
    expect(got.status).toBe(200);
    expect(await got.text()).toBe('third!');

    const tampered = await fetch(url.slice(0, -2) + (url.endsWith('AA') ? 'BB' : 'AA'));
    expect(tampered.status).toBe(400);
    expect(await tampered.json()).toEqual({ statusCode: '400', code: 'InvalidSignature', error: 'InvalidSignature', message: 'Invalid signature' });
    const otherPath = await fetch(url.replace('/sam/a.txt?', '/sam/sub/b.txt?'));
    expect(otherPath.status).toBe(400);
    expect((await as('bo').storage.from('docs').createSignedUrl('sam/a.txt', 60)).error).toMatchObject({ status: 404, statusCode: '404' });
    expect((await docs.createSignedUrl('sam/a.txt', 0)).error).toMatchObject({ status: 400 });

    const many = await docs.createSignedUrls(['sam/a.txt', 'missing.txt'], 60);
    expect(many.data).toEqual([
      { path: 'sam/a.txt', signedURL: expect.stringMatching(/^\/object\/sign\/docs\/sam\/a\.txt\?token=/), signedUrl: expect.stringContaining('/storage/v1/object/sign/docs/sam/a.txt?token='), error: null },
      { path: 'missing.txt', signedURL: null, signedUrl: null, error: 'Either the object does not exist or you do not have access to it' },
    ]);

    const short = (await docs.createSignedUrl('sam/a.txt', 1)).data!.signedUrl;
    let expired: Response | undefined;
    for (let i = 0; i < 100 && expired?.status !== 400; i++) {
      expired = await fetch(short);
      if (expired.status !== 400) await new Promise((r) => setTimeout(r, 100));
    }
    expect(await expired!.json()).toEqual({ statusCode: '400', code: 'ExpiredToken', error: 'ExpiredToken', message: 'The provided token has expired.' });
  });

  it("signs upload URLs: a client with no session uploads as the signer; without upsert a second upload is 409", async () => {
    const signed = await as('sam').storage.from('docs').createSignedUploadUrl('sam/signed.txt');
    expect(signed.error).toBeNull();
    expect(signed.data).toEqual({
      signedUrl: expect.stringMatching(new RegExp(`^${server.url}/v1/${app.id}/storage/v1/object/upload/sign/docs/sam/signed\\.txt\\?token=`)),
      path: 'sam/signed.txt',
      token: expect.any(String),
    });
    const token = signed.data!.token;
    const put = await anon().storage.from('docs').uploadToSignedUrl('sam/signed.txt', token, text('signed'), { contentType: 'text/plain' });
    expect(put).toEqual({ data: { path: 'sam/signed.txt', fullPath: 'docs/sam/signed.txt' }, error: null });
    expect(await (await as('sam').storage.from('docs').download('sam/signed.txt')).data!.text()).toBe('signed');
    expect((await as('bo').storage.from('docs').download('sam/signed.txt')).error).toMatchObject({ status: 404 });
    expect((await anon().storage.from('docs').uploadToSignedUrl('sam/signed.txt', token, text('again'), { contentType: 'text/plain' })).error).toMatchObject({ status: 409 });
    const elsewhere = await anon().storage.from('docs').uploadToSignedUrl('sam/other.txt', token, text('x'), { contentType: 'text/plain' });
    expect(elsewhere.error).toMatchObject({ status: 400, statusCode: '400', message: 'Invalid signature' });
    expect((await anon().storage.from('docs').createSignedUploadUrl('anon.txt')).error).toMatchObject({ status: 403 });
    const upsert = (await as('sam').storage.from('docs').createSignedUploadUrl('sam/signed.txt', { upsert: true })).data!.token;
    expect((await anon().storage.from('docs').uploadToSignedUrl('sam/signed.txt', upsert, text('replaced'), { contentType: 'text/plain', upsert: true })).error).toBeNull();
    expect(await (await as('sam').storage.from('docs').download('sam/signed.txt')).data!.text()).toBe('replaced');
  });

  it('removes what the caller owns (unknown paths skipped), and a bucket once empty', async () => {
    const removed = await as('sam').storage.from('docs').remove(['sam/a.txt', 'missing.txt']);
    expect(removed.error).toBeNull();
    expect(removed.data).toEqual([expect.objectContaining({ name: 'sam/a.txt', bucket_id: 'docs', id: expect.any(String), metadata: expect.objectContaining({ size: 6 }) })]);
    expect((await as('sam').storage.from('docs').download('sam/a.txt')).error).toMatchObject({ status: 404 });

    const notEmpty = await service().storage.deleteBucket('docs');
    expect(notEmpty.error).toMatchObject({ status: 409, statusCode: '409', message: 'The bucket you tried to delete is not empty' });
    expect(await service().storage.emptyBucket('docs')).toEqual({ data: { message: 'Successfully emptied' }, error: null });
    expect((await service().storage.from('docs').list()).data).toEqual([]);
    expect(await service().storage.deleteBucket('docs')).toEqual({ data: { message: 'Successfully deleted' }, error: null });
    expect((await service().storage.getBucket('docs')).error).toMatchObject({ status: 404 });

    // The app's usage counts what the buckets hold (the avatar's 8 bytes and nothing of the removed files).
    const limits = await request(server.url, `/storage/${app.id}/limits`, { key: server.platformKey });
    expect(limits.status).toBe(200);
    expect(limits.json.usage).toEqual({ used_bytes: 8, pending_bytes: 0 });
  });

  it("keeps the storage routes' files in the bucket 'files', shares an 'authenticated' bucket among signed-in users, answers on the app's host, refuses another app's key", async () => {
    const inline = await request(server.url, `/storage/${app.id}/upload/inline`, { method: 'POST', key: app.serviceKey, body: { filename: 'legacy.txt', contentType: 'text/plain', content: 'old', encoding: 'utf8' } });
    expect(inline.status).toBe(201);
    const legacyName = `${inline.json.objectId}_legacy.txt`;
    expect((await service().storage.from('files').list('service')).data?.map((e) => e.name)).toEqual([legacyName]);
    expect(await (await service().storage.from('files').download(`service/${legacyName}`)).data!.text()).toBe('old');

    // `access` is our field beside storage-js's `public`: every signed-in user reads, each changes only their own.
    const team = await request(server.url, `/v1/${app.id}/storage/v1/bucket`, { method: 'POST', key: app.serviceKey, body: { id: 'team', access: 'authenticated' } });
    expect(team).toMatchObject({ status: 200, json: { name: 'team' } });
    expect((await as('sam').storage.from('team').upload('plan.txt', text('plan'), { contentType: 'text/plain' })).error).toBeNull();
    expect(await (await as('bo').storage.from('team').download('plan.txt')).data!.text()).toBe('plan');
    expect((await as('bo').storage.from('team').update('plan.txt', text('mine'), { contentType: 'text/plain' })).error).toMatchObject({ status: 403 });
    expect((await anon().storage.from('team').download('plan.txt')).error).toMatchObject({ status: 404 });
    expect(await service().storage.updateBucket('team', { public: false })).toEqual({ data: { message: 'Successfully updated' }, error: null });
    expect((await service().storage.getBucket('team')).data).toMatchObject({ public: false, access: 'authenticated' });

    const apps = await request(server.url, `/apps/${app.id}`, { key: server.platformKey });
    const onHost = await request(`http://${apps.json.subdomain}.localhost:${server.port}`, '/storage/v1/object/public/avatars/sam/me.png');
    expect(onHost.status).toBe(200);
    expect(onHost.headers['content-type']).toBe('image/png');

    const crossed = await client(app.id, other.publishableKey).storage.listBuckets();
    expect(crossed.error).toMatchObject({ status: 403, statusCode: '403' });
  });

  it("lets a viewer's platform key read objects but not write them, as every writing tool needs developer", async () => {
    const made = await request(server.url, '/dashboard/keys', { method: 'POST', key: server.platformKey, body: { name: 'viewer', role: 'viewer' } });
    expect(made.status).toBe(201);
    const viewer = client(app.id, made.json.key);
    expect((await viewer.storage.listBuckets()).error).toBeNull();
    const refused = await viewer.storage.from('avatars').upload('viewer.txt', Buffer.from('no'), { contentType: 'text/plain' });
    expect(refused.error).toMatchObject({ status: 403 });
    expect((await service().storage.from('avatars').info('viewer.txt')).error).toMatchObject({ status: 404 });
  });

  it('refuses malformed requests with 4xx in the storage shape', async () => {
    const base = `/v1/${app.id}/storage/v1`;
    const cases: Array<[string, Parameters<typeof request>[2], number, string]> = [
      [`${base}/bucket?search=%00`, { key: app.serviceKey }, 400, 'InvalidRequest'],
      [`${base}/bucket`, { method: 'POST', key: app.serviceKey, body: '{"id":' }, 400, 'InvalidRequest'],
      [`${base}/bucket`, { method: 'POST', key: app.serviceKey, body: { id: 'list' } }, 400, 'InvalidBucketName'],
      [`${base}/bucket`, { method: 'POST', key: app.serviceKey, body: { id: 'x', extra: 1 } }, 400, 'InvalidRequest'],
      [`${base}/object/list/avatars`, { method: 'POST', key: app.serviceKey, body: { prefix: 'a\u0000' } }, 400, 'InvalidRequest'],
      [`${base}/object/list/avatars`, { method: 'POST', key: app.serviceKey, body: { sortBy: { column: 'size' } } }, 400, 'InvalidRequest'],
      [`${base}/object/avatars`, { method: 'DELETE', key: app.serviceKey, body: { prefixes: 'sam/me.png' } }, 400, 'InvalidRequest'],
      [`${base}/object/avatars/%E0%A4%A`, { key: app.serviceKey }, 400, 'InvalidRequest'],
      [`${base}/object/avatars/a.txt`, { method: 'POST', key: app.serviceKey, headers: { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' } }, 411, 'MissingContentLength'],
      [`${base}/nothing/here`, { key: app.serviceKey }, 404, 'NotFound'],
      [`${base}/bucket`, { key: 'svc_pub_not_a_key' }, 401, 'InvalidJWT'],
    ];
    for (const [path, opts, status, code] of cases) {
      const res = await request(server.url, path, opts);
      expect([path, res.status, res.json?.code, res.json?.statusCode], JSON.stringify(res.json)).toEqual([path, status, code, String(status)]);
    }
  });

  it('uploads a Blob or a File as multipart/form-data (upload, upsert, update, a signed upload URL): the type of its part, the cacheControl field, metered at its size', async () => {
    expect(await service().storage.createBucket('forms', { public: false, fileSizeLimit: 64 * 1024 })).toEqual({ data: { name: 'forms' }, error: null });
    const usage = async () => (await request(server.url, `/storage/${app.id}/limits`, { key: server.platformKey })).json.usage as { used_bytes: number; pending_bytes: number };
    const before = (await usage()).used_bytes;
    const sam = as('sam').storage.from('forms');
    const blob = new Blob(['hello from a blob'], { type: 'text/plain' });
    const up = await sam.upload('sam/blob.txt', blob, { cacheControl: '60', metadata: { album: 'x' }, contentEncoding: 'identity' });
    expect(up).toEqual({ data: { path: 'sam/blob.txt', id: expect.any(String), fullPath: 'forms/sam/blob.txt' }, error: null });
    expect((await sam.info('sam/blob.txt')).data).toMatchObject({ id: up.data!.id, size: 17, contentType: 'text/plain', cacheControl: 'max-age=60' });
    const got = await sam.download('sam/blob.txt');
    expect(await got.data!.text()).toBe('hello from a blob');
    expect(got.data!.type).toBe('text/plain');
    // Reserved at the body's length, stored and metered at the file's.
    expect(await usage()).toEqual({ used_bytes: before + 17, pending_bytes: 0 });

    expect((await sam.upload('sam/blob.txt', blob)).error).toMatchObject({ status: 409, statusCode: '409', message: 'The resource already exists' });
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
    const file = new File([png], 'me.png', { type: 'image/png' });
    const updated = await sam.update('sam/blob.txt', file);
    expect(updated.error).toBeNull();
    expect(updated.data!.id).not.toBe(up.data!.id);
    const now = await sam.download('sam/blob.txt');
    expect(now.data!.type).toBe('image/png');
    expect(Buffer.from(await now.data!.arrayBuffer())).toEqual(png);
    expect((await sam.info('sam/blob.txt')).data).toMatchObject({ size: png.length, contentType: 'image/png', cacheControl: 'max-age=3600' });
    const upserted = await sam.upload('sam/blob.txt', new Blob(['third'], { type: 'text/markdown' }), { upsert: true });
    expect(upserted.error).toBeNull();
    expect(await (await sam.download('sam/blob.txt')).data!.text()).toBe('third');
    expect((await sam.update('sam/none.txt', blob)).error).toMatchObject({ status: 404, statusCode: '404' });
    expect((await as('bo').storage.from('forms').upload('sam/blob.txt', blob, { upsert: true })).error).toMatchObject({ status: 403, statusCode: '403' });
    expect((await anon().storage.from('forms').upload('anon.txt', blob)).error).toMatchObject({ status: 403, statusCode: '403' });

    const large = await sam.upload('sam/large.bin', new Blob([Buffer.alloc(64 * 1024 + 1, 1)], { type: 'application/octet-stream' }));
    expect(large.error).toMatchObject({ status: 413, statusCode: '413', message: 'The object exceeded the maximum allowed size' });
    const token = (await sam.createSignedUploadUrl('sam/signed.txt')).data!.token;
    expect(await anon().storage.from('forms').uploadToSignedUrl('sam/signed.txt', token, new Blob(['signed blob'], { type: 'text/plain' }))).toEqual({
      data: { path: 'sam/signed.txt', fullPath: 'forms/sam/signed.txt' },
      error: null,
    });
    expect(await (await sam.download('sam/signed.txt')).data!.text()).toBe('signed blob');
    expect(await usage()).toEqual({ used_bytes: before + 'third'.length + 'signed blob'.length, pending_bytes: 0 });
  });

  it('refuses hostile multipart bodies (two files, no file, a huge or unknown field, a truncated body, too large) with 4xx in the storage shape, keeping nothing', async () => {
    const path = `/v1/${app.id}/storage/v1/object/forms/sam/hostile.txt`;
    const b = 'hostile-boundary';
    const field = (name: string, value: string) => `--${b}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    const file = (bytes: string) => `--${b}\r\nContent-Disposition: form-data; name=""; filename="blob"\r\nContent-Type: text/plain\r\n\r\n${bytes}\r\n`;
    const end = `--${b}--\r\n`;
    const post = (body: string, contentType = `multipart/form-data; boundary=${b}`) => request(server.url, path, { method: 'POST', key: users.sam, headers: { 'content-type': contentType }, body });
    const cases: Array<[string, string, string | undefined, number, string]> = [
      ['two files', field('cacheControl', '3600') + file('one') + file('two') + end, undefined, 400, 'InvalidRequest'],
      ['no file', field('cacheControl', '3600') + end, undefined, 400, 'InvalidRequest'],
      ['a huge field', field('metadata', 'x'.repeat(20_000)) + file('one') + end, undefined, 400, 'InvalidRequest'],
      ['an unknown field', field('owner', 'bo') + file('one') + end, undefined, 400, 'InvalidRequest'],
      ['metadata that is no JSON object', field('metadata', '[1, 2]') + file('one') + end, undefined, 400, 'InvalidRequest'],
      ['a cacheControl that is no number', field('cacheControl', 'no-store') + file('one') + end, undefined, 400, 'InvalidRequest'],
      ['parts that are neither field nor file', `--${b}\r\nX-Junk: 1\r\n\r\nzz\r\n`.repeat(4) + file('one') + end, undefined, 400, 'InvalidRequest'],
      ['a truncated body', field('cacheControl', '3600') + file('one').slice(0, -10), undefined, 400, 'InvalidRequest'],
      ['no boundary', file('one') + end, 'multipart/form-data', 400, 'InvalidRequest'],
      ['garbage', 'not a form at all', undefined, 400, 'InvalidRequest'],
      ['a file over the limit', file('y'.repeat(64 * 1024 + 1)) + end, undefined, 413, 'EntityTooLarge'],
      ['a body far over the limit', file('y'.repeat(200 * 1024)) + end, undefined, 413, 'EntityTooLarge'],
    ];
    for (const [what, body, contentType, status, code] of cases) {
      const res = await post(body, contentType);
      expect([what, res.status, res.json?.code, res.json?.statusCode], res.text).toEqual([what, status, code, String(status)]);
    }
    expect((await as('sam').storage.from('forms').info('sam/hostile.txt')).error).toMatchObject({ status: 404 });
    const limits = await request(server.url, `/storage/${app.id}/limits`, { key: server.platformKey });
    expect(limits.json.usage.pending_bytes).toBe(0);
  });

  it('answers an upload that stops sending 408 RequestTimeout after the idle limit, closes its connection and releases its reservation', async () => {
    const url = new URL(server.url);
    const b = 'stalled-boundary';
    for (const [contentType, start] of [
      ['text/plain', 'only the start of a raw body'],
      [`multipart/form-data; boundary=${b}`, `--${b}\r\nContent-Disposition: form-data; name=""; filename="blob"\r\nContent-Type: text/plain\r\n\r\nonly the start`],
    ] as const) {
      const socket = connect({ host: url.hostname, port: Number(url.port) });
      const answer = new Promise<string>((resolve, reject) => {
        let text = '';
        socket.on('data', (c: Buffer) => (text += c.toString('utf8')));
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
      socket.write(
        `POST /v1/${app.id}/storage/v1/object/forms/sam/stalled.txt HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${users.sam}\r\n` +
          `Content-Type: ${contentType}\r\nContent-Length: 1000\r\n\r\n${start}`,
      );
      // The server closes the connection after its answer: the socket's close is the condition waited for.
      const text = await answer;
      expect(text.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
      expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toEqual({ statusCode: '408', code: 'RequestTimeout', error: 'RequestTimeout', message: 'The upload sent nothing for too long.' });
    }
    const limits = await request(server.url, `/storage/${app.id}/limits`, { key: server.platformKey });
    expect(limits.json.usage.pending_bytes).toBe(0);
    expect((await as('sam').storage.from('forms').info('sam/stalled.txt')).error).toMatchObject({ status: 404 });
  });
});
