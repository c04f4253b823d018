// OpenID Connect sign-in end to end: a real OpenID provider (oidc-provider) on loopback with a client for the
// platform and accounts whose claims the test sets, the platform spawned as `npm start` runs it with that provider
// and SVC_SIGNUP=open (a second one with SVC_SIGNUP=invite), and a browser that keeps cookies and follows every
// redirect by hand. The provider's login is finished programmatically through its interaction API (as its login page
// would), and consent is granted up front.
import { decodeJwt, generateKeyPair, SignJWT } from 'jose';
import type { KoaContextWithOIDC } from 'oidc-provider';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey, hashKey } from '../../src/core/crypto.ts';
import { databaseUrl } from '../helpers/db.ts';
import { OIDC_CALLBACK_PATH as CALLBACK_PATH, OIDC_CLIENT_ID as CLIENT_ID, OIDC_CLIENT_SECRET as CLIENT_SECRET, OIDC_SIGNING_KEY_ID as SIGNING_KEY_ID, startOidcProvider, type OidcProvider } from '../helpers/oidc-provider.ts';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { request, type RawResponse } from './e2e-helpers.ts';

let idp: OidcProvider;
let issuer: string;
let server: SpawnedServer;
/** The same provider's client, on a platform where only an invitation lets a new person in. */
let inviteOnly: SpawnedServer;
let control: pg.Pool;
/** Every authorization code and state the provider handed out, to look for in the platform's log. */
const seen: string[] = [];

beforeAll(async () => {
  idp = await startOidcProvider();
  issuer = idp.issuer;
  const env = { ...idp.env, LOG_LEVEL: 'info' };
  server = await spawnServer({ ...env, SVC_SIGNUP: 'open' });
  inviteOnly = await spawnServer({ ...env, SVC_SIGNUP: 'invite' });
  // A platform's base URL is http://localhost:<port> (SVC_BASE_URL unset), so that is the redirect URI it sends.
  await idp.serve([server, inviteOnly].map((platform) => `http://localhost:${platform.port}`));
  control = new pg.Pool({ connectionString: databaseUrl(server.controlDb), max: 2 });
}, 60_000);

afterAll(async () => {
  await control?.end();
  await Promise.all([server?.close(), inviteOnly?.close()]);
  await idp?.close();
});

/** A whole sign-in while the token endpoint's answer is rewritten. */
async function signInWithTamperedToken(tamper: (ctx: KoaContextWithOIDC) => Promise<void>): Promise<RawResponse> {
  idp.tamperToken = tamper;
  try {
    return (await signIn(new Browser())).callback;
  } finally {
    idp.tamperToken = undefined;
  }
}

/**
 * A browser, enough for these servers: every request goes to loopback (the platform's redirect URI names localhost),
 * and cookies are kept per port (browsers share a host's cookies across ports; here the provider and the platform
 * share the host) and sent back whatever their path.
 */
class Browser {
  readonly #jars = new Map<string, Map<string, string>>();

  async get(url: string): Promise<RawResponse> {
    const target = new URL(url);
    const jar = this.#jar(target.port);
    const headers: Record<string, string> = { host: target.host };
    if (jar.size > 0) headers.cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
    const res = await request(`http://127.0.0.1:${target.port}`, target.pathname + target.search, { headers });
    for (const set of res.headers['set-cookie'] ?? []) {
      const [pair = ''] = set.split(';');
      const at = pair.indexOf('=');
      const [name, value] = [pair.slice(0, at), pair.slice(at + 1)];
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(set)) jar.delete(name);
      else jar.set(name, value);
    }
    return res;
  }

  cookie(url: string, name: string): string | undefined {
    return this.#jar(new URL(url).port).get(name);
  }

  #jar(port: string): Map<string, string> {
    if (!this.#jars.has(port)) this.#jars.set(port, new Map());
    return this.#jars.get(port)!;
  }
}

interface SignInRun {
  start: RawResponse;
  /** The provider's authorization URL the start sent the browser to. */
  authorize: URL;
  /** Where the provider sent the browser back (the platform's callback with code and state). */
  callbackUrl: URL;
}

/** GET /dashboard/oidc/start, then the provider's redirects up to (not into) the platform's callback. */
async function toCallback(browser: Browser, query = '', atProvider?: (authorize: URL) => Promise<void>, platform = server): Promise<SignInRun> {
  const start = await browser.get(`${platform.url}/dashboard/oidc/start${query}`);
  expect(start.status, start.text).toBe(302);
  const authorize = new URL(start.headers.location!);
  await atProvider?.(authorize);
  let url = authorize;
  for (let hop = 0; hop < 10; hop++) {
    const res = await browser.get(url.href);
    expect([302, 303], `${url.href}: ${res.text}`).toContain(res.status);
    url = new URL(res.headers.location!, url);
    if (url.pathname === CALLBACK_PATH) {
      seen.push(...['code', 'state'].map((p) => url.searchParams.get(p)).filter((v): v is string => !!v));
      return { start, authorize, callbackUrl: url };
    }
  }
  throw new Error('the provider never sent the browser back');
}

/** A whole sign-in: the callback's answer, and the run that led to it. */
async function signIn(
  browser: Browser,
  query = '',
  atProvider?: (authorize: URL) => Promise<void>,
  platform = server,
): Promise<SignInRun & { callback: RawResponse }> {
  const run = await toCallback(browser, query, atProvider, platform);
  return { ...run, callback: await browser.get(run.callbackUrl.href) };
}

/** The signed-in person of a browser, as GET /dashboard/session answers. */
async function sessionOf(browser: Browser): Promise<{ status: number; json: any }> {
  const cookie = browser.cookie(server.url, 'svc_session');
  return request(server.url, '/dashboard/session', { headers: cookie ? { cookie: `svc_session=${cookie}` } : {} });
}

function expectSigninError(res: RawResponse, code: string): void {
  expect(res.status).toBe(302);
  expect(res.headers.location).toBe(`/?signin_error=${code}`);
  expect(res.headers['set-cookie']?.some((c) => c.startsWith('svc_session='))).toBeFalsy();
}

async function identityRows(subject: string): Promise<number> {
  return (await control.query(`select count(*)::int as n from person_identities where issuer = $1 and subject = $2`, [issuer, subject])).rows[0].n;
}

describe('OpenID Connect sign-in', () => {
  let alice: { id: string; account: string };
  let aliceCallback: URL;

  it('lists the configured provider for the sign-in page', async () => {
    const res = await request(server.url, '/dashboard/oidc');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ providers: [{ name: 'Test IdP', start_url: '/dashboard/oidc/start' }] });
  });

  it('signs a new person in: code flow with PKCE, state and nonce; the callback sets svc_session and lands on the redirect', async () => {
    idp.accounts.set('alice-sub', { email: 'Alice@Example.com', email_verified: true, name: 'Alice' });
    idp.next.loginAs = 'alice-sub';
    const browser = new Browser();
    const run = await signIn(browser, '?redirect=/apps', async (authorize) => {
      // Server-side until the callback: the state and the browser's binding only as hashes.
      const stored = await control.query(`select binding_hash, redirect from oidc_signins where state_hash = $1`, [hashKey(authorize.searchParams.get('state')!)]);
      expect(stored.rows).toEqual([{ binding_hash: hashKey(browser.cookie(server.url, 'svc_oidc')!), redirect: '/apps' }]);
    });

    const binding = run.start.headers['set-cookie']!.find((c) => c.startsWith('svc_oidc='))!;
    expect(binding).toMatch(/HttpOnly/);
    expect(binding).toMatch(/SameSite=Lax/);
    expect(binding).toMatch(/Path=\/dashboard\/oidc/);
    expect(binding).toMatch(/Max-Age=600/);
    expect(run.start.headers['cache-control']).toBe('no-store');
    expect(`${run.authorize.origin}${run.authorize.pathname}`).toBe(`${issuer}/auth`);
    const params = Object.fromEntries(run.authorize.searchParams);
    expect(params).toMatchObject({
      client_id: CLIENT_ID,
      response_type: 'code',
      scope: 'openid email profile',
      redirect_uri: `http://localhost:${server.port}${CALLBACK_PATH}`,
      code_challenge_method: 'S256',
    });
    expect(params.code_challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(params.state).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(params.nonce).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The callback took the sign-in.
    expect((await control.query(`select count(*)::int as n from oidc_signins where state_hash = $1`, [hashKey(params.state!)])).rows[0].n).toBe(0);

    expect(run.callback.status).toBe(302);
    expect(run.callback.headers.location).toBe('/apps');
    const sessionCookie = run.callback.headers['set-cookie']!.find((c) => c.startsWith('svc_session='))!;
    expect(sessionCookie).toMatch(/HttpOnly/);
    expect(sessionCookie).toMatch(/SameSite=Lax/);

    const session = await sessionOf(browser);
    expect(session.status).toBe(200);
    expect(session.json).toMatchObject({ person: { email: 'alice@example.com', name: 'Alice', email_verified: true }, role: 'owner' });
    alice = { id: session.json.person.id, account: session.json.account_id };
    aliceCallback = run.callbackUrl;
    expect(await identityRows('alice-sub')).toBe(1);
  });

  it('a second sign-in of the same subject is the same person', async () => {
    const browser = new Browser();
    const { callback } = await signIn(browser);
    expect(callback.status).toBe(302);
    expect(callback.headers.location).toBe('/');
    const session = await sessionOf(browser);
    expect(session.json).toMatchObject({ person: { id: alice.id }, account_id: alice.account, role: 'owner' });
    expect((await control.query(`select count(*)::int as n from persons where email = 'alice@example.com'`)).rows[0].n).toBe(1);
    expect((await control.query(`select count(*)::int as n from account_members where person_id = $1`, [alice.id])).rows[0].n).toBe(1);

    // Signing in again in the same browser rotates its session (the provider remembers the person: no login page).
    const before = browser.cookie(server.url, 'svc_session')!;
    expect((await signIn(browser)).callback.headers.location).toBe('/');
    expect(browser.cookie(server.url, 'svc_session')).not.toBe(before);
    expect((await request(server.url, '/dashboard/session', { headers: { cookie: `svc_session=${before}` } })).status).toBe(401);
    expect((await sessionOf(browser)).json.person.id).toBe(alice.id);
  });

  it('refuses a forged state, a replayed callback, and a callback in a browser other than the one that started', async () => {
    const browser = new Browser();
    const forged = new URL(`${server.url}${CALLBACK_PATH}`);
    forged.search = new URLSearchParams({ code: 'forged-code', state: 'forged-state' }).toString();
    await browser.get(`${server.url}/dashboard/oidc/start`);
    expectSigninError(await browser.get(forged.href), 'OIDC_STATE_INVALID');
    // No state at all.
    expectSigninError(await browser.get(`${server.url}${CALLBACK_PATH}?code=forged-code`), 'OIDC_STATE_INVALID');

    // Alice's callback again, from her browser's cookie or none: the sign-in was taken once.
    expectSigninError(await new Browser().get(aliceCallback.href), 'OIDC_STATE_INVALID');

    // Login CSRF: a callback (an attacker's code and state) opened in another browser fails, and does not spoil the
    // sign-in of the browser that started it.
    const starter = new Browser();
    const run = await toCallback(starter);
    expectSigninError(await new Browser().get(run.callbackUrl.href), 'OIDC_STATE_INVALID');
    const own = await starter.get(run.callbackUrl.href);
    expect(own.status).toBe(302);
    expect(own.headers.location).toBe('/');
    expect((await sessionOf(starter)).json.person.id).toBe(alice.id);
  });

  it('refuses an ID token whose nonce is not the one the sign-in stored', async () => {
    const browser = new Browser();
    const { callback } = await signIn(browser, '', async (authorize) => {
      const updated = await control.query(`update oidc_signins set nonce = 'tampered-nonce' where state_hash = $1`, [hashKey(authorize.searchParams.get('state')!)]);
      expect(updated.rowCount).toBe(1);
    });
    expectSigninError(callback, 'OIDC_ID_TOKEN_INVALID');
    expect((await sessionOf(browser)).status).toBe(401);
  });

  it("refuses an ID token not signed by the issuer's published key", async () => {
    const otherKey = (await generateKeyPair('RS256')).privateKey;
    // The same claims under the same key id, with another key's signature.
    const forged = await signInWithTamperedToken(async (ctx) => {
      const body = ctx.body as { id_token: string };
      body.id_token = await new SignJWT(decodeJwt(body.id_token)).setProtectedHeader({ alg: 'RS256', kid: SIGNING_KEY_ID }).sign(otherKey);
    });
    expectSigninError(forged, 'OIDC_ID_TOKEN_INVALID');
  });

  it('sends a provider that fails the code exchange back as unavailable', async () => {
    const down = await signInWithTamperedToken(async (ctx) => {
      ctx.status = 503;
      ctx.body = 'temporarily down';
    });
    expectSigninError(down, 'OIDC_PROVIDER_UNAVAILABLE');
  });

  it('an address the provider did not verify does not link to the password person with it; one both verified does', async () => {
    const signup = await request(server.url, '/dashboard/signup', {
      method: 'POST',
      body: { email: 'bob@example.com', password: 'bob long password' },
      headers: { origin: `http://localhost:${server.port}` },
    });
    expect(signup.status).toBe(201);
    const bob = (signup.json as { person: { id: string } }).person.id;

    idp.accounts.set('bob-sub', { email: 'BOB@example.com', email_verified: false, name: 'Not Bob' });
    idp.next.loginAs = 'bob-sub';
    expectSigninError((await signIn(new Browser())).callback, 'OIDC_EMAIL_UNVERIFIED');
    expect(await identityRows('bob-sub')).toBe(0);
    expect((await control.query(`select count(*)::int as n from persons where email = 'bob@example.com'`)).rows[0].n).toBe(1);

    // The provider verified it, the platform has not: still not linked (see the pre-registration test below).
    idp.accounts.set('bob-sub', { email: 'bob@example.com', email_verified: true, name: 'Bob' });
    expectSigninError((await signIn(new Browser())).callback, 'OIDC_PERSON_UNVERIFIED');
    expect(await identityRows('bob-sub')).toBe(0);

    // Bob takes his verification link (this platform has no SMTP: the test writes what taking it writes).
    await control.query(`update persons set email_verified_at = now() where id = $1`, [bob]);
    const browser = new Browser();
    expect((await signIn(browser)).callback.headers.location).toBe('/');
    const session = await sessionOf(browser);
    expect(session.json).toMatchObject({ person: { id: bob, email: 'bob@example.com', email_verified: true } });
    expect(await identityRows('bob-sub')).toBe(1);
  });

  it("a person pre-registered with a password under someone's address is not linked to that address's OpenID identity", async () => {
    const origin = `http://localhost:${server.port}`;
    // The attacker signs up with the victim's address and a password of their own; nobody verifies the address.
    const attacker = await request(server.url, '/dashboard/signup', { method: 'POST', body: { email: 'victor@example.com', password: 'mallory password' }, headers: { origin } });
    expect(attacker.status).toBe(201);
    const { person: preRegistered, account_id: attackerAccount } = attacker.json as { person: { id: string }; account_id: string };

    // The victim signs in through the provider, which verified the address: refused, and nothing is linked.
    idp.accounts.set('victor-sub', { email: 'victor@example.com', email_verified: true, name: 'Victor' });
    idp.next.loginAs = 'victor-sub';
    const victim = new Browser();
    expectSigninError((await signIn(victim)).callback, 'OIDC_PERSON_UNVERIFIED');
    expect((await sessionOf(victim)).status).toBe(401);
    expect(await identityRows('victor-sub')).toBe(0);
    expect((await control.query(`select count(*)::int as n from person_identities where person_id = $1`, [preRegistered.id])).rows[0].n).toBe(0);

    // The attacker's person is as they left it: their password signs in to their own account, which nobody joined.
    const signin = await request(server.url, '/dashboard/signin', { method: 'POST', body: { email: 'victor@example.com', password: 'mallory password' }, headers: { origin } });
    expect(signin.status).toBe(200);
    expect(signin.json).toMatchObject({ person: { id: preRegistered.id, email_verified: false }, account_id: attackerAccount });
    expect((await control.query(`select person_id from account_members where account_id = $1`, [attackerAccount])).rows).toEqual([{ person_id: preRegistered.id }]);
    // The operator's log says why; the victim's page says which code.
    expect(server.output()).toContain('OpenID Connect sign-in not linked: a person has this address unverified');
  });

  it('a new person signs up into the account of an invitation carried through the start', async () => {
    const token = generateKey('svc_inv_');
    await control.query(`insert into invitations (account_id, email, role, token_hash, expires_at) values ($1, 'carol@example.com', 'developer', $2, now() + interval '1 day')`, [
      alice.account,
      hashKey(token),
    ]);
    idp.accounts.set('carol-sub', { email: 'carol@example.com', email_verified: true });
    idp.next.loginAs = 'carol-sub';
    const browser = new Browser();
    expect((await signIn(browser, `?invitation_token=${token}`)).callback.headers.location).toBe('/');
    expect((await sessionOf(browser)).json).toMatchObject({ person: { email: 'carol@example.com', name: '' }, account_id: alice.account, role: 'developer' });
  });

  it("sends the provider's refusal back to the sign-in page", async () => {
    idp.next.decline = true;
    const { callbackUrl, callback } = await signIn(new Browser());
    expect(callbackUrl.searchParams.get('error')).toBe('access_denied');
    expectSigninError(callback, 'OIDC_PROVIDER_REFUSED');
  });

  it('where sign-up needs an invitation, a new person without one is refused', async () => {
    idp.accounts.set('dave-sub', { email: 'dave@example.com', email_verified: true });
    idp.next.loginAs = 'dave-sub';
    expectSigninError((await signIn(new Browser(), '', undefined, inviteOnly)).callback, 'SIGNUP_INVITATION_REQUIRED');
    const invited = new pg.Pool({ connectionString: databaseUrl(inviteOnly.controlDb), max: 1 });
    try {
      expect((await invited.query(`select count(*)::int as n from persons where email = 'dave@example.com'`)).rows[0].n).toBe(0);
    } finally {
      await invited.end();
    }
  });

  it('refuses a start link whose redirect leaves the platform', async () => {
    for (const redirect of ['//evil.example/x', 'https://evil.example/', '/\\evil.example', '/apps\u2192', 'apps']) {
      const res = await request(server.url, `/dashboard/oidc/start?redirect=${encodeURIComponent(redirect)}`);
      expect(res.status, redirect).toBe(400);
      expect(res.json.error.code).toBe('VALIDATION_FAILED');
      expect(res.headers['set-cookie']).toBeUndefined();
    }
  });

  it('logs no code, state, session or client secret', () => {
    const output = server.output() + inviteOnly.output();
    expect(seen.length).toBeGreaterThan(10);
    for (const value of [CLIENT_SECRET, 'svc_ses_', 'svc_inv_', ...seen]) expect(output).not.toContain(value);
    // The failures were logged, in the platform's words.
    expect(output).toContain('OpenID Connect sign-in failed');
  });
});
