import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { callTool, connectMcp, request, resultJson } from '../e2e/e2e-helpers.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const REFRESH = /^[A-Za-z0-9_-]{43}$/;
const PASSWORD = 'correct horse battery';

interface App {
  app_id: string;
  subdomain: string;
  service_key: { key: string };
}

let p: TestPlatform;
let appA: App;
let appB: App;

beforeAll(async () => {
  // Limits high enough that this file's many calls from one address never trip them (auth-rate-limit.test.ts covers them).
  p = await startTestPlatform({ SVC_AUTH_RATE_LIMIT_PER_MINUTE: '1000', SVC_AUTH_REFRESH_RATE_LIMIT_PER_MINUTE: '1000', SVC_BASE_DOMAIN: 'apps.test' });
  appA = (await p.api('POST', '/init', { body: { name: 'Auth A' } })).body;
  appB = (await p.api('POST', '/init', { body: { name: 'Auth B' } })).body;
});
afterAll(async () => {
  await p?.close();
});

const url = (app: App, path: string) => `/v1/${app.app_id}${path}`;
const anon = (method: string, path: string, body?: unknown) => p.api(method, path, { key: null, body });
const withToken = (method: string, path: string, token: string, body?: unknown) => p.api(method, path, { key: token, body });
const appSql = async (app: App, text: string, params: unknown[] = []) => (await p.services.databases.pool(app.app_id).query(text, params)).rows;

async function signup(app: App, email: string, password = PASSWORD) {
  const r = await anon('POST', url(app, '/auth/signup'), { email, password });
  expect(r.status).toBe(201);
  return r.body;
}

function expectSession(body: any, email: string) {
  expect(body).toEqual({
    access_token: expect.stringMatching(JWT),
    token_type: 'bearer',
    expires_in: 900,
    refresh_token: expect.stringMatching(REFRESH),
    user: { id: expect.stringMatching(UUID), email, created_at: expect.stringMatching(ISO) },
  });
}

describe('auth_signup', () => {
  it('creates the user, lower-cases the email and returns a session', async () => {
    const r = await anon('POST', url(appA, '/auth/signup'), { email: '  Alice@Example.COM ', password: PASSWORD });
    expect(r.status).toBe(201);
    expectSession(r.body, 'alice@example.com');
    const claims = decodeJwt(r.body.access_token);
    expect(claims).toMatchObject({ sub: r.body.user.id, email: 'alice@example.com', role: 'authenticated', aud: appA.app_id, iss: p.services.config.baseUrl });
    expect(claims.exp! - claims.iat!).toBe(900);
    expect(decodeProtectedHeader(r.body.access_token)).toMatchObject({ alg: 'ES256', typ: 'JWT' });
  });

  it('stores an argon2id hash and only a sha256 of the refresh token', async () => {
    const s = await signup(appA, 'hash-check@example.com');
    const [user] = await appSql(appA, 'select password_hash, last_sign_in_at from svc_auth.users where id = $1', [s.user.id]);
    expect(user.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(user.password_hash).not.toContain(PASSWORD);
    expect(user.last_sign_in_at).toBeInstanceOf(Date);
    const tokens = await appSql(appA, 'select token_hash, expires_at, revoked_at from svc_auth.refresh_tokens where user_id = $1', [s.user.id]);
    expect(tokens).toHaveLength(1);
    expect(tokens[0].token_hash).toBe(createHash('sha256').update(s.refresh_token).digest('hex'));
    expect(tokens[0].revoked_at).toBeNull();
    const days = (tokens[0].expires_at.getTime() - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThanOrEqual(30);
  });

  it('refreshing deletes the session\'s expired refresh tokens (revoked ones stay until they expire; other sessions are left alone)', async () => {
    const s = await signup(appA, 'prune-check@example.com');
    const [{ family }] = await appSql(appA, 'select family from svc_auth.refresh_tokens where user_id = $1', [s.user.id]);
    const old = (hash: string, fam: string | null) =>
      appSql(appA, `insert into svc_auth.refresh_tokens (user_id, token_hash, family, expires_at) values ($1, $2, coalesce($3::uuid, gen_random_uuid()), now() - interval '1 day')`, [
        s.user.id,
        hash,
        fam,
      ]);
    await old('expired-same-session', family);
    await old('expired-other-session', null);
    expect((await anon('POST', url(appA, '/auth/refresh'), { refresh_token: s.refresh_token })).status).toBe(200);
    const hashes = (await appSql(appA, 'select token_hash from svc_auth.refresh_tokens where user_id = $1', [s.user.id])).map((r) => r.token_hash);
    expect(hashes).toHaveLength(3);
    expect(hashes).toContain('expired-other-session');
    expect(hashes).not.toContain('expired-same-session');
  });

  it('refuses a taken email, in any case, with 409 CONFLICT', async () => {
    await signup(appA, 'dup@example.com');
    const r = await anon('POST', url(appA, '/auth/signup'), { email: 'DUP@example.com', password: 'another password' });
    expect(r.status).toBe(409);
    expect(r.body).toEqual({
      error: {
        code: 'CONFLICT',
        message: 'An account with this email already exists in this app.',
        remediation: 'Log in with auth_login instead, or sign up with a different email.',
        documentation_url: p.docsUrl('auth'),
      },
    });
  });

  it('keeps apps apart: the same email signs up separately in another app', async () => {
    await signup(appA, 'both@example.com');
    const b = await signup(appB, 'both@example.com');
    expect(decodeJwt(b.access_token).aud).toBe(appB.app_id);
  });

  it.each([
    [{ email: 'short@example.com', password: 'seven77' }, 'password', "Invalid 'password': password must be at least 8 characters."],
    [{ email: 'long@example.com', password: 'x'.repeat(201) }, 'password', "Invalid 'password': password must be at most 200 characters."],
    [{ email: 'not-an-email', password: PASSWORD }, 'email', "Invalid 'email': email must be a valid email address."],
    [{ password: PASSWORD }, 'email', undefined],
    [{ email: 'x@example.com' }, 'password', undefined],
    [{ email: 42, password: PASSWORD }, 'email', undefined],
  ])('400 VALIDATION_FAILED for %o naming %s', async (body, field, message) => {
    const r = await anon('POST', url(appA, '/auth/signup'), body);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('VALIDATION_FAILED');
    expect(r.body.error.message).toContain(`'${field}'`);
    if (message) expect(r.body.error.message).toBe(message);
    expect(r.body.error.details[0].path).toBe(field);
  });

  it('accepts exactly 8 and 200 characters', async () => {
    await signup(appA, 'eight@example.com', '12345678');
    await signup(appA, 'twohundred@example.com', 'y'.repeat(200));
  });

  it('400 for a malformed app_id, 404 for an unknown one', async () => {
    const bad = await anon('POST', '/v1/NOT-AN-APP/auth/signup', { email: 'a@example.com', password: PASSWORD });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('VALIDATION_FAILED');
    expect(bad.body.error.message).toContain("'app_id'");
    const missing = await anon('POST', '/v1/zzzzzzzzzzzzzzzz/auth/signup', { email: 'a@example.com', password: PASSWORD });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('RESOURCE_NOT_FOUND');
  });

  it('400 INVALID_JSON for a broken body, never a 500', async () => {
    const r = await anon('POST', url(appA, '/auth/signup'), '{"email":');
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('INVALID_JSON');
  });
});

describe('auth_login', () => {
  it('returns a session and records last_sign_in_at', async () => {
    const s = await signup(appA, 'bob@example.com');
    await appSql(appA, `update svc_auth.users set last_sign_in_at = now() - interval '1 day' where id = $1`, [s.user.id]);
    const r = await anon('POST', url(appA, '/auth/login'), { email: 'BOB@example.com', password: PASSWORD });
    expect(r.status).toBe(200);
    expectSession(r.body, 'bob@example.com');
    expect(r.body.user).toEqual(s.user);
    expect(r.body.refresh_token).not.toBe(s.refresh_token);
    const me = await withToken('GET', url(appA, '/auth/user'), r.body.access_token);
    expect(Date.now() - Date.parse(me.body.last_sign_in_at)).toBeLessThan(60_000);
  });

  it('answers a wrong password and an unknown email identically: 401 AUTH_INVALID_CREDENTIALS', async () => {
    await signup(appA, 'carol@example.com');
    const wrong = await anon('POST', url(appA, '/auth/login'), { email: 'carol@example.com', password: 'wrong password' });
    const unknown = await anon('POST', url(appA, '/auth/login'), { email: 'nobody@example.com', password: 'wrong password' });
    const expected = {
      error: {
        code: 'AUTH_INVALID_CREDENTIALS',
        message: 'Invalid email or password.',
        remediation: 'Check the email and password and try again; an account must first be created with auth_signup.',
        documentation_url: p.docsUrl('auth'),
      },
    };
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(expected);
    expect(unknown.body).toEqual(expected);
    expect(wrong.headers.get('www-authenticate')).toBe(unknown.headers.get('www-authenticate'));
  });

  it('a user of app A cannot log in to app B', async () => {
    await signup(appA, 'only-a@example.com');
    const r = await anon('POST', url(appB, '/auth/login'), { email: 'only-a@example.com', password: PASSWORD });
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe('AUTH_INVALID_CREDENTIALS');
  });
});

describe('auth_refresh', () => {
  it('rotates: a new pair, the used token is revoked', async () => {
    const s = await signup(appA, 'dave@example.com');
    const r = await anon('POST', url(appA, '/auth/refresh'), { refresh_token: s.refresh_token });
    expect(r.status).toBe(200);
    expectSession(r.body, 'dave@example.com');
    expect(r.body.user).toEqual(s.user);
    expect(r.body.refresh_token).not.toBe(s.refresh_token);
    expect(decodeJwt(r.body.access_token).sub).toBe(s.user.id);
    const rows = await appSql(appA, 'select family, revoked_at is not null as revoked from svc_auth.refresh_tokens where user_id = $1 order by id', [s.user.id]);
    expect(rows.map((t) => t.revoked)).toEqual([true, false]);
    expect(rows[0].family).toBe(rows[1].family);
    // The newest token keeps working.
    const again = await anon('POST', url(appA, '/auth/refresh'), { refresh_token: r.body.refresh_token });
    expect(again.status).toBe(200);
  });

  it('reuse of a rotated token revokes the whole family, the newest token included; other sessions survive', async () => {
    const s = await signup(appA, 'erin@example.com');
    const other = (await anon('POST', url(appA, '/auth/login'), { email: 'erin@example.com', password: PASSWORD })).body;
    const rotated = (await anon('POST', url(appA, '/auth/refresh'), { refresh_token: s.refresh_token })).body;
    const reuse = await anon('POST', url(appA, '/auth/refresh'), { refresh_token: s.refresh_token });
    expect(reuse.status).toBe(401);
    expect(reuse.body).toEqual({
      error: {
        code: 'AUTH_INVALID_TOKEN',
        message: 'The refresh token is invalid, expired or revoked.',
        remediation: 'Sign in again with auth_login to start a new session.',
        documentation_url: p.docsUrl('auth'),
      },
    });
    const newest = await anon('POST', url(appA, '/auth/refresh'), { refresh_token: rotated.refresh_token });
    expect(newest.status).toBe(401);
    expect(newest.body.error.code).toBe('AUTH_INVALID_TOKEN');
    const live = await appSql(appA, 'select count(*)::int as n from svc_auth.refresh_tokens where user_id = $1 and revoked_at is null', [s.user.id]);
    expect(live[0].n).toBe(1);
    expect((await anon('POST', url(appA, '/auth/refresh'), { refresh_token: other.refresh_token })).status).toBe(200);
  });

  it('of two concurrent uses of one token exactly one succeeds', async () => {
    const s = await signup(appA, 'race@example.com');
    const results = await Promise.all([1, 2].map(() => anon('POST', url(appA, '/auth/refresh'), { refresh_token: s.refresh_token })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 401]);
  });

  it('expired, unknown, garbage and other-app tokens are 401 AUTH_INVALID_TOKEN', async () => {
    const s = await signup(appA, 'frank@example.com');
    const fresh = (await anon('POST', url(appA, '/auth/login'), { email: 'frank@example.com', password: PASSWORD })).body;
    await appSql(appA, `update svc_auth.refresh_tokens set expires_at = now() - interval '1 second' where token_hash = $1`, [
      createHash('sha256').update(s.refresh_token).digest('hex'),
    ]);
    for (const [app, token] of [
      [appA, s.refresh_token],
      [appA, 'A'.repeat(43)],
      [appA, 'garbage'],
      [appB, fresh.refresh_token],
    ] as const) {
      const r = await anon('POST', url(app, '/auth/refresh'), { refresh_token: token });
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe('AUTH_INVALID_TOKEN');
    }
    // An expired token is not a reuse: the user's other session is untouched.
    expect((await anon('POST', url(appA, '/auth/refresh'), { refresh_token: fresh.refresh_token })).status).toBe(200);
  });

  it('400 for a missing or non-string refresh_token', async () => {
    for (const body of [{}, { refresh_token: 12 }, { refresh_token: '' }]) {
      const r = await anon('POST', url(appA, '/auth/refresh'), body);
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('VALIDATION_FAILED');
      expect(r.body.error.message).toContain("'refresh_token'");
    }
  });
});

describe('auth_logout', () => {
  it('with a refresh token ends that session only; 204 with no body', async () => {
    const s1 = await signup(appA, 'gina@example.com');
    const s2 = (await anon('POST', url(appA, '/auth/login'), { email: 'gina@example.com', password: PASSWORD })).body;
    const rotated = (await anon('POST', url(appA, '/auth/refresh'), { refresh_token: s1.refresh_token })).body;
    const r = await withToken('POST', url(appA, '/auth/logout'), s1.access_token, { refresh_token: rotated.refresh_token });
    expect(r.status).toBe(204);
    expect(r.body).toBeUndefined();
    expect((await anon('POST', url(appA, '/auth/refresh'), { refresh_token: rotated.refresh_token })).status).toBe(401);
    expect((await anon('POST', url(appA, '/auth/refresh'), { refresh_token: s2.refresh_token })).status).toBe(200);
    // Access tokens are stateless: the one used to log out still works until it expires.
    expect((await withToken('GET', url(appA, '/auth/user'), s1.access_token)).status).toBe(200);
  });

  it('without a body ends every session of the user, and is idempotent', async () => {
    const s1 = await signup(appA, 'hank@example.com');
    const s2 = (await anon('POST', url(appA, '/auth/login'), { email: 'hank@example.com', password: PASSWORD })).body;
    expect((await withToken('POST', url(appA, '/auth/logout'), s1.access_token)).status).toBe(204);
    for (const t of [s1.refresh_token, s2.refresh_token]) {
      expect((await anon('POST', url(appA, '/auth/refresh'), { refresh_token: t })).status).toBe(401);
    }
    expect((await withToken('POST', url(appA, '/auth/logout'), s1.access_token, {})).status).toBe(204);
  });

  it("cannot end another user's session", async () => {
    const victim = await signup(appA, 'ivy@example.com');
    const attacker = await signup(appA, 'mallory@example.com');
    const r = await withToken('POST', url(appA, '/auth/logout'), attacker.access_token, { refresh_token: victim.refresh_token });
    expect(r.status).toBe(204);
    expect((await anon('POST', url(appA, '/auth/refresh'), { refresh_token: victim.refresh_token })).status).toBe(200);
  });

  it('needs an end user: 401 without a credential, 400 naming user_token for a platform or service key without one', async () => {
    const none = await anon('POST', url(appA, '/auth/logout'));
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe('AUTH_REQUIRED');
    for (const key of [p.platformKey, appA.service_key.key]) {
      const r = await p.api('POST', url(appA, '/auth/logout'), { key });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ error: endUserRequired() });
    }
  });

  it('a platform or service key logs an end user out with user_token', async () => {
    for (const key of [p.platformKey, appA.service_key.key]) {
      const s = await signup(appA, `logout-${key.slice(0, 8)}@example.com`);
      const r = await p.api('POST', url(appA, '/auth/logout'), { key, body: { user_token: s.access_token } });
      expect(r.status).toBe(204);
      expect(r.body).toBeUndefined();
      const refreshed = await anon('POST', url(appA, '/auth/refresh'), { refresh_token: s.refresh_token });
      expect(refreshed.status).toBe(401);
      expect(refreshed.body.error.code).toBe('AUTH_INVALID_TOKEN');
    }
  });
});

const endUserRequired = () => ({
  code: 'VALIDATION_FAILED',
  message: "This tool acts for an end user: send that user's access token as the credential, or pass it as 'user_token' with a platform or service key.",
  remediation: 'Fix the named field and send the request again.',
  documentation_url: p.docsUrl('auth'),
  details: [{ path: 'user_token', message: 'required with a platform or service key' }],
});

describe('auth_user', () => {
  it('returns the signed-in user', async () => {
    const s = await signup(appA, 'jack@example.com');
    const r = await withToken('GET', url(appA, '/auth/user'), s.access_token);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ...s.user, last_sign_in_at: expect.stringMatching(ISO) });
  });

  it('404 when the user was deleted meanwhile', async () => {
    const s = await signup(appA, 'kate@example.com');
    await appSql(appA, 'delete from svc_auth.users where id = $1', [s.user.id]);
    const r = await withToken('GET', url(appA, '/auth/user'), s.access_token);
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('RESOURCE_NOT_FOUND');
    // Its refresh tokens went with it.
    expect((await anon('POST', url(appA, '/auth/refresh'), { refresh_token: s.refresh_token })).status).toBe(401);
  });

  it('a platform or service key reads the end user of user_token (REST query and MCP); without it 400; a user token with user_token 403', async () => {
    const s = await signup(appA, 'acting@example.com');
    const expected = { ...s.user, last_sign_in_at: expect.stringMatching(ISO) };
    for (const key of [p.platformKey, appA.service_key.key]) {
      const r = await p.api('GET', url(appA, `/auth/user?user_token=${encodeURIComponent(s.access_token)}`), { key });
      expect(r.status).toBe(200);
      expect(r.body).toEqual(expected);
      const without = await p.api('GET', url(appA, '/auth/user'), { key });
      expect(without.status).toBe(400);
      expect(without.body).toEqual({ error: endUserRequired() });
    }
    const other = await signup(appA, 'acting-other@example.com');
    const asUser = await withToken('GET', url(appA, `/auth/user?user_token=${encodeURIComponent(other.access_token)}`), s.access_token);
    expect(asUser.status).toBe(403);
    expect(asUser.body.error).toEqual({
      code: 'FORBIDDEN',
      message: 'This route does not accept this kind of credential; it accepts: platform key, service key.',
      remediation: 'Call it with one of the accepted credentials.',
      documentation_url: p.docsUrl('auth'),
    });
    // A token of app B does not act on app A; a garbage token is 401.
    const foreign = await signup(appB, 'acting-b@example.com');
    const cross = await p.api('GET', url(appA, `/auth/user?user_token=${encodeURIComponent(foreign.access_token)}`), { key: appA.service_key.key });
    expect(cross.status).toBe(403);
    expect(cross.body.error.code).toBe('FORBIDDEN');
    const garbage = await p.api('GET', url(appA, '/auth/user?user_token=a.b.c'), { key: appA.service_key.key });
    expect(garbage.status).toBe(401);
    expect(garbage.body.error.code).toBe('AUTH_INVALID_TOKEN');

    const mcp = await connectMcp(p.url, p.platformKey);
    try {
      const me = await callTool(mcp.client, 'auth_user', { app_id: appA.app_id, user_token: s.access_token });
      expect(me.isError).toBeFalsy();
      expect(resultJson(me)).toEqual(expected);
      const missing = await callTool(mcp.client, 'auth_user', { app_id: appA.app_id });
      expect(missing.isError).toBe(true);
      expect(resultJson(missing)).toEqual({ status: 400, error: endUserRequired() });
    } finally {
      await mcp.close();
    }
  });

  it("an access token of app A on app B's /auth/user is 403 FORBIDDEN", async () => {
    const s = await signup(appA, 'leo@example.com');
    const r = await withToken('GET', url(appB, '/auth/user'), s.access_token);
    expect(r.status).toBe(403);
    expect(r.body).toEqual({
      error: {
        code: 'FORBIDDEN',
        message: 'The credential does not grant access to this app.',
        remediation: 'Use a credential issued for this app, or the platform key of its owner.',
        documentation_url: p.docsUrl('auth'),
      },
    });
  });

  it('expired and garbage tokens are 401 AUTH_INVALID_TOKEN; no token is 401 AUTH_REQUIRED', async () => {
    const s = await signup(appA, 'mia@example.com');
    const expired = await p.services.endUserTokens.sign(appA.app_id, { sub: s.user.id, email: 'mia@example.com', role: 'authenticated' }, -10);
    for (const token of [expired, 'a.b.c', 'not-a-token', s.refresh_token]) {
      const r = await withToken('GET', url(appA, '/auth/user'), token);
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe('AUTH_INVALID_TOKEN');
    }
    const none = await anon('GET', url(appA, '/auth/user'));
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe('AUTH_REQUIRED');
  });
});

describe('auth_users_list', () => {
  it('lists end users newest first for the owner and the service key', async () => {
    const fresh = await p.api('POST', '/init', { body: { name: 'List app' } });
    const app: App = fresh.body;
    const first = await signup(app, 'first@example.com');
    const second = await signup(app, 'second@example.com');
    await appSql(app, `update svc_auth.users set created_at = created_at - interval '1 minute' where id = $1`, [first.user.id]);
    const owner = await p.api('GET', url(app, '/auth/users'));
    expect(owner.status).toBe(200);
    expect(owner.body).toEqual({
      users: [
        { ...second.user, last_sign_in_at: expect.stringMatching(ISO) },
        { id: first.user.id, email: 'first@example.com', created_at: expect.stringMatching(ISO), last_sign_in_at: expect.stringMatching(ISO) },
      ],
      next_cursor: null,
    });
    const service = await p.api('GET', url(app, '/auth/users'), { key: app.service_key.key });
    expect(service.status).toBe(200);
    expect(service.body).toEqual(owner.body);
  });

  it('pages with limit and next_cursor without skipping rows of the same microsecond, and filters by e-mail', async () => {
    const app: App = (await p.api('POST', '/init', { body: { name: 'Paged users' } })).body;
    const emails = ['a1@x.io', 'b2@x.io', 'c3@y.io', 'd_4@x.io', 'e5@x.io'];
    for (const email of emails) await signup(app, email);
    // Three share one created_at to the microsecond: the cursor must order them by id.
    await appSql(app, `update svc_auth.users set created_at = '2030-01-01T00:00:00.123456Z' where email in ('b2@x.io', 'c3@y.io', 'd_4@x.io')`);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `/auth/users?limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const page: { status: number; body: { users: Array<{ email: string }>; next_cursor: string | null } } = await p.api('GET', url(app, query));
      expect(page.status).toBe(200);
      expect(page.body.users.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.users.map((u) => u.email));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect([...seen].sort()).toEqual([...emails].sort());
    expect(new Set(seen).size).toBe(5);
    const filtered = await p.api('GET', url(app, '/auth/users?q=_4'));
    expect(filtered.body.users.map((u: { email: string }) => u.email)).toEqual(['d_4@x.io']);
    const none = await p.api('GET', url(app, '/auth/users?q=%25'));
    expect(none.body).toEqual({ users: [], next_cursor: null });
    const bad = await p.api('GET', url(app, '/auth/users?cursor=nonsense'));
    expect([bad.status, bad.body.error.code, bad.body.error.details[0].path]).toEqual([400, 'VALIDATION_FAILED', 'cursor']);
  });

  it('refuses end users (403), anonymous callers (401) and other apps\' keys (403)', async () => {
    const s = await signup(appA, 'nina@example.com');
    expect((await withToken('GET', url(appA, '/auth/users'), s.access_token)).status).toBe(403);
    expect((await anon('GET', url(appA, '/auth/users'))).status).toBe(401);
    const other = await p.api('GET', url(appA, '/auth/users'), { key: appB.service_key.key });
    expect(other.status).toBe(403);
    expect(other.body.error.code).toBe('FORBIDDEN');
  });
});

describe('auth_jwks', () => {
  it('publishes public keys only, to anyone', async () => {
    const r = await anon('GET', url(appA, '/.well-known/jwks.json'));
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('public, max-age=300');
    expect(r.body).toEqual({
      keys: [{ kty: 'EC', crv: 'P-256', x: expect.any(String), y: expect.any(String), kid: expect.stringMatching(/^[0-9a-f]{16}$/), alg: 'ES256', use: 'sig' }],
    });
    expect(JSON.stringify(r.body)).not.toContain('"d"');
    const [row] = await p.sql('select kid from app_signing_keys where app_id = $1', [appA.app_id]);
    expect(r.body.keys[0].kid).toBe(row.kid);
  });

  it("verifies the app's tokens with jose createRemoteJWKSet, and refuses another app's", async () => {
    const s = await signup(appA, 'olga@example.com');
    const jwks = createRemoteJWKSet(new URL(`${p.url}${url(appA, '/.well-known/jwks.json')}`));
    const { payload } = await jwtVerify(s.access_token, jwks, { issuer: p.services.config.baseUrl, audience: appA.app_id });
    expect(payload).toMatchObject({ sub: s.user.id, email: 'olga@example.com', role: 'authenticated' });
    const b = await signup(appB, 'olga@example.com');
    await expect(jwtVerify(b.access_token, jwks, { issuer: p.services.config.baseUrl, audience: appA.app_id })).rejects.toThrow();
  });

  it('404 for an unknown app', async () => {
    const r = await anon('GET', '/v1/zzzzzzzzzzzzzzzz/.well-known/jwks.json');
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('RESOURCE_NOT_FOUND');
  });
});

describe('subdomain short paths', () => {
  const host = (app: App) => ({ host: `${app.subdomain}.apps.test` });

  it('serve signup, login, refresh, user, users, logout and jwks on the app host', async () => {
    const h = host(appA);
    const su = await request(p.url, '/auth/signup', { method: 'POST', headers: h, body: { email: 'sub@example.com', password: PASSWORD } });
    expect(su.status).toBe(201);
    expect(decodeJwt(su.json.access_token).aud).toBe(appA.app_id);
    const li = await request(p.url, '/auth/login', { method: 'POST', headers: h, body: { email: 'sub@example.com', password: PASSWORD } });
    expect(li.status).toBe(200);
    const rf = await request(p.url, '/auth/refresh', { method: 'POST', headers: h, body: { refresh_token: li.json.refresh_token } });
    expect(rf.status).toBe(200);
    const me = await request(p.url, '/auth/user', { headers: h, key: rf.json.access_token });
    expect(me.status).toBe(200);
    expect(me.json.email).toBe('sub@example.com');
    const users = await request(p.url, '/auth/users', { headers: h, key: p.platformKey });
    expect(users.status).toBe(200);
    expect(users.json.users.map((u: { email: string }) => u.email)).toContain('sub@example.com');
    const jwks = await request(p.url, '/.well-known/jwks.json', { headers: h });
    expect(jwks.status).toBe(200);
    expect(jwks.json).toEqual((await anon('GET', url(appA, '/.well-known/jwks.json'))).body);
    const lo = await request(p.url, '/auth/logout', { method: 'POST', headers: h, key: rf.json.access_token });
    expect(lo.status).toBe(204);
    expect((await request(p.url, '/auth/refresh', { method: 'POST', headers: h, body: { refresh_token: rf.json.refresh_token } })).status).toBe(401);
  });
});

describe('over MCP', () => {
  it('auth_signup, auth_login and auth_users_list are tools with the REST bodies', async () => {
    const mcp = await connectMcp(p.url, p.platformKey);
    try {
      const su = await callTool(mcp.client, 'auth_signup', { app_id: appB.app_id, email: 'Agent@Example.com', password: PASSWORD });
      expect(su.isError).toBeFalsy();
      expectSession(resultJson(su), 'agent@example.com');
      const bad = await callTool(mcp.client, 'auth_login', { app_id: appB.app_id, email: 'agent@example.com', password: 'wrong password' });
      expect(bad.isError).toBe(true);
      expect(resultJson(bad)).toMatchObject({ status: 401, error: { code: 'AUTH_INVALID_CREDENTIALS' } });
      const list = await callTool(mcp.client, 'auth_users_list', { app_id: appB.app_id });
      expect(resultJson(list)).toEqual((await p.api('GET', url(appB, '/auth/users'))).body);
    } finally {
      await mcp.close();
    }
  });
});
