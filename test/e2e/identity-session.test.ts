// People on the platform, end to end against `node src/main.ts`: the owner claim of a fresh platform, sign-up and
// sign-in setting the session cookie, the cookie used on REST, cross-site writes refused, roles enforced in the one
// pipeline for sessions and platform keys alike, sign-out.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey, hashKey } from '../../src/core/crypto.ts';
import { databaseUrl } from '../helpers/db.ts';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { request, type RawResponse } from './e2e-helpers.ts';

let server: SpawnedServer;
let dataDir: string;
let origin: string;
let control: pg.Pool;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'svc-identity-'));
  server = await spawnServer({ SVC_DATA_DIR: dataDir });
  origin = `http://localhost:${server.port}`;
  control = new pg.Pool({ connectionString: databaseUrl(server.controlDb), max: 2 });
}, 60_000);

afterAll(async () => {
  await control?.end();
  await server?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The session cookie a response set (name=value only), or undefined. */
function cookieOf(res: RawResponse): string | undefined {
  const set = res.headers['set-cookie']?.find((c) => c.startsWith('svc_session='));
  return set?.split(';')[0];
}

function asBrowser(cookie: string | undefined, from = origin): Record<string, string> {
  return { ...(cookie ? { cookie } : {}), origin: from };
}

/** An invitation of the account with that role, made as the invitation routes do (token shown once, stored hashed). */
async function invite(accountId: string, role: string, email: string | null = null): Promise<string> {
  const token = generateKey('svc_inv_');
  await control.query(`insert into invitations (account_id, email, role, token_hash, expires_at) values ($1, $2, $3, $4, now() + interval '1 day')`, [
    accountId,
    email,
    role,
    hashKey(token),
  ]);
  return token;
}

describe('people on the platform', () => {
  let ownerCookie: string;
  let ownerAccount: string;

  it('a fresh platform writes the owner invitation to a file; the first sign-up with it owns the account', async () => {
    const claim = readFileSync(path.join(dataDir, 'owner-invitation'), 'utf8').trim();
    expect(claim).toMatch(/^svc_inv_/);
    expect(server.output()).not.toContain(claim);

    const refused = await request(server.url, '/dashboard/signup', { method: 'POST', body: { email: 'eve@example.com', password: 'long enough pw' }, headers: asBrowser(undefined) });
    expect(refused.status).toBe(403);
    expect((refused.json as { error: { code: string } }).error.code).toBe('SIGNUP_INVITATION_REQUIRED');

    const res = await request(server.url, '/dashboard/signup', {
      method: 'POST',
      body: { email: 'Olga@Example.com', password: 'correct horse battery', name: 'Olga', invitation_token: claim },
      headers: asBrowser(undefined),
    });
    expect(res.status).toBe(201);
    const body = res.json as { person: { email: string; name: string; email_verified: boolean }; account_id: string; role: string };
    expect(body).toMatchObject({ person: { email: 'olga@example.com', name: 'Olga', email_verified: false }, role: 'owner' });
    expect(JSON.stringify(body)).not.toContain('svc_ses_');
    const setCookie = res.headers['set-cookie']!.find((c) => c.startsWith('svc_session='))!;
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Lax/);
    expect(setCookie).not.toMatch(/Secure/);
    ownerCookie = cookieOf(res)!;
    ownerAccount = body.account_id;

    // The claim is single-use.
    const again = await request(server.url, '/dashboard/signup', {
      method: 'POST',
      body: { email: 'mallory@example.com', password: 'long enough pw', invitation_token: claim },
      headers: asBrowser(undefined),
    });
    expect(again.status).toBe(400);
    expect((again.json as { error: { code: string } }).error.code).toBe('INVITATION_INVALID');
  });

  it('the session cookie is a credential wherever a platform key is, and it is the same account', async () => {
    const session = await request(server.url, '/dashboard/session', { headers: asBrowser(ownerCookie) });
    expect(session.status).toBe(200);
    expect(session.json).toMatchObject({ account_id: ownerAccount, role: 'owner', accounts: [{ account_id: ownerAccount, role: 'owner' }] });
    const created = await request(server.url, '/init', { method: 'POST', body: { name: 'from-browser' }, headers: asBrowser(ownerCookie) });
    expect(created.status).toBe(201);
    const byKey = await request(server.url, '/apps', { key: server.platformKey });
    expect((byKey.json as { apps: { name: string }[] }).apps.map((a) => a.name)).toContain('from-browser');
  });

  it('refuses a state-changing request with the cookie from a foreign origin, and a sign-in posted from one', async () => {
    const csrf = await request(server.url, '/init', { method: 'POST', body: { name: 'csrf' }, headers: asBrowser(ownerCookie, 'https://evil.example') });
    expect(csrf.status).toBe(403);
    expect((csrf.json as { error: { code: string } }).error.code).toBe('CROSS_SITE_REQUEST');
    const crossSite = await request(server.url, '/init', { method: 'POST', body: { name: 'csrf' }, headers: { cookie: ownerCookie, 'sec-fetch-site': 'cross-site' } });
    expect(crossSite.status).toBe(403);
    const loginCsrf = await request(server.url, '/dashboard/signin', {
      method: 'POST',
      body: { email: 'olga@example.com', password: 'correct horse battery' },
      headers: { origin: 'https://evil.example' },
    });
    expect(loginCsrf.status).toBe(403);
    // Reads carry no such risk.
    expect((await request(server.url, '/apps', { headers: asBrowser(ownerCookie, 'https://evil.example') })).status).toBe(200);
  });

  it('enforces roles for sessions and platform keys: a viewer reads and is refused writes with 403 FORBIDDEN_ROLE', async () => {
    const token = await invite(ownerAccount, 'viewer', 'vera@example.com');
    const other = await request(server.url, '/dashboard/signup', {
      method: 'POST',
      body: { email: 'victor@example.com', password: 'long enough pw', invitation_token: token },
      headers: asBrowser(undefined),
    });
    expect(other.status).toBe(403);
    expect((other.json as { error: { code: string } }).error.code).toBe('INVITATION_OTHER_EMAIL');
    expect((await control.query(`select count(*)::int as n from persons where email = 'victor@example.com'`)).rows[0].n).toBe(0);

    const vera = await request(server.url, '/dashboard/signup', {
      method: 'POST',
      body: { email: 'vera@example.com', password: 'long enough pw', invitation_token: token },
      headers: asBrowser(undefined),
    });
    expect(vera.status).toBe(201);
    expect(vera.json).toMatchObject({ account_id: ownerAccount, role: 'viewer' });
    const viewer = cookieOf(vera)!;
    expect((await request(server.url, '/apps', { headers: asBrowser(viewer) })).status).toBe(200);
    const write = await request(server.url, '/init', { method: 'POST', body: { name: 'nope' }, headers: asBrowser(viewer) });
    expect(write.status).toBe(403);
    expect(write.json).toEqual({
      error: {
        code: 'FORBIDDEN_ROLE',
        message: 'This call needs the role developer or higher in the account; the credential has viewer.',
        remediation: 'Ask an owner or admin of the account for a higher role, or use a credential of a member who has it.',
        documentation_url: server.docsUrl('apps'),
        details: { required_role: 'developer', role: 'viewer' },
      },
    });
    // Every member may file a suggestion.
    expect((await request(server.url, '/suggestions', { method: 'POST', body: { category: 'improvement', description: 'hi' }, headers: asBrowser(viewer) })).status).toBe(201);

    // A platform key carries a role too. Changed here behind the platform's back (SQL): each process caches resolved
    // keys and drops one when it hears the key table's notice, so the change applies once the server has heard it.
    await control.query(`update platform_keys set role = 'developer'`);
    await expect.poll(async () => (await request(server.url, '/dashboard/audit', { key: server.platformKey })).status).toBe(403);
    const keyWrite = await request(server.url, '/dashboard/keys', { method: 'POST', key: server.platformKey, body: { name: 'x' } });
    expect(keyWrite.status).toBe(403);
    expect((keyWrite.json as { error: { details: unknown } }).error.details).toEqual({ required_role: 'admin', role: 'developer' });
    await control.query(`update platform_keys set role = 'owner'`);
    await expect.poll(async () => (await request(server.url, '/dashboard/audit', { key: server.platformKey })).status).toBe(200);
  });

  it('signs out (the cookie stops working), signs in again, and signs out everywhere', async () => {
    const out = await request(server.url, '/dashboard/signout', { method: 'POST', headers: asBrowser(ownerCookie) });
    expect(out.status).toBe(204);
    expect(out.headers['set-cookie']!.find((c) => c.startsWith('svc_session='))).toMatch(/Expires=Thu, 01 Jan 1970/);
    const after = await request(server.url, '/apps', { headers: asBrowser(ownerCookie) });
    expect(after.status).toBe(401);

    const wrong = await request(server.url, '/dashboard/signin', { method: 'POST', body: { email: 'olga@example.com', password: 'wrong password' }, headers: asBrowser(undefined) });
    expect(wrong.status).toBe(401);
    expect((wrong.json as { error: { code: string } }).error.code).toBe('INVALID_CREDENTIALS');
    const unknown = await request(server.url, '/dashboard/signin', { method: 'POST', body: { email: 'nobody@example.com', password: 'wrong password' }, headers: asBrowser(undefined) });
    expect(unknown.json).toEqual(wrong.json);

    const first = cookieOf(await request(server.url, '/dashboard/signin', { method: 'POST', body: { email: 'olga@example.com', password: 'correct horse battery' }, headers: asBrowser(undefined) }))!;
    const second = cookieOf(await request(server.url, '/dashboard/signin', { method: 'POST', body: { email: 'OLGA@example.com', password: 'correct horse battery' }, headers: asBrowser(undefined) }))!;
    expect(first).not.toBe(second);
    const all = await request(server.url, '/dashboard/signout-all', { method: 'POST', headers: asBrowser(second) });
    expect(all.status).toBe(200);
    expect(all.json).toEqual({ ended: 2 });
    expect((await request(server.url, '/apps', { headers: asBrowser(first) })).status).toBe(401);
    // No session id, password or invitation token reached the log.
    expect(server.output()).not.toMatch(/svc_ses_|svc_inv_|correct horse/);
  });
});
