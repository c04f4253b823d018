// OAuth for MCP clients, end to end against `node src/main.ts`: discovery from a 401 on /mcp, dynamic registration and
// client metadata documents (served over https by the test), the platform's sign-in and consent pages driven as a
// browser would, PKCE, the issuer on every authorization response, resource indicators and token audiences, and the
// official SDK client connecting with the tokens; roles, refresh (rotated, reuse detected), revocation, single-use
// codes and forged consent answers.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { generateKey, hashKey } from '../../src/core/crypto.ts';
import { MAX_CLIENT_DOCUMENT_BYTES } from '../../src/transports/raw/oauth-client-documents.ts';
import { MAX_REDIRECT_URIS, MAX_REGISTRATION_BYTES } from '../../src/transports/raw/oauth-provider.ts';
import { databaseUrl } from '../helpers/db.ts';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { startHttpsHost, type HttpsHost } from '../helpers/tls.ts';
import { callTool, consentValueOf, INIT_BODY, MCP_HEADERS, request, resultJson, type RawResponse } from './e2e-helpers.ts';

let server: SpawnedServer;
/** Where the test's clients publish their metadata documents; the platform may fetch from loopback here. */
let documents: HttpsHost;
let dataDir: string;
/** SVC_BASE_URL's default: the issuer, and the origin the platform's pages are served from. */
let base: string;
let control: pg.Pool;

interface Person {
  email: string;
  password: string;
}

const OWNER: Person = { email: 'olga@example.com', password: 'correct horse battery' };
const VIEWER: Person = { email: 'vera@example.com', password: 'long enough pw' };
/** A native client's loopback redirect; nothing listens there: the test reads the code from the redirect itself. */
const REDIRECT_URI = 'http://127.0.0.1:53682/callback';

/** A browser: keeps its cookies, sends its origin with every POST (as browsers do), follows no redirect. */
class Browser {
  readonly #cookies = new Map<string, string>();

  async get(url: string | URL): Promise<RawResponse> {
    return this.#send(url, {});
  }

  async post(url: string | URL, body: string, contentType: string, origin = base): Promise<RawResponse> {
    return this.#send(url, { method: 'POST', body, headers: { 'content-type': contentType, origin } });
  }

  async signIn(person: Person): Promise<void> {
    const res = await this.post('/dashboard/signin', JSON.stringify(person), 'application/json');
    expect(res.status).toBe(200);
  }

  async #send(url: string | URL, opts: { method?: string; body?: string; headers?: Record<string, string> }): Promise<RawResponse> {
    const target = new URL(url, base);
    const cookie = [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const res = await request(server.url, target.pathname + target.search, { ...opts, headers: { ...opts.headers, ...(cookie ? { cookie } : {}) } });
    for (const set of res.headers['set-cookie'] ?? []) {
      const [pair] = set.split(';');
      const eq = pair!.indexOf('=');
      this.#cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    return res;
  }
}

let signedInOwner: Browser | undefined;
/** One browser where the owner is signed in, for the tests that need no session of their own (sign-ins are rate-limited). */
async function ownerBrowser(): Promise<Browser> {
  if (!signedInOwner) {
    signedInOwner = new Browser();
    await signedInOwner.signIn(OWNER);
  }
  return signedInOwner;
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const FORM = 'application/x-www-form-urlencoded';

/** What the person does in the browser their client opened: sign in when asked, then answer the consent page. */
async function answerInBrowser(browser: Browser, authorizationUrl: URL, person: Person, decision: 'approve' | 'deny' = 'approve'): Promise<URL> {
  let page = await browser.get(authorizationUrl);
  if (page.text.includes('id="signin"')) {
    await browser.signIn(person);
    page = await browser.get(authorizationUrl);
  }
  expect(page.status).toBe(200);
  const answer = await browser.post('/oauth/consent', form({ consent: consentValueOf(page), decision }), FORM);
  expect(answer.status).toBe(303);
  return new URL(answer.headers.location!);
}

/**
 * The test's desktop MCP client: registers itself (or names its metadata document's URL, which the SDK prefers when
 * the server supports it), keeps what the SDK hands it, and has its person approve.
 */
class DesktopClient implements OAuthClientProvider {
  readonly redirectUrl = REDIRECT_URI;
  readonly clientMetadataUrl: string | undefined;
  readonly clientMetadata: OAuthClientMetadata = {
    client_name: 'Desk <Client>',
    redirect_uris: [REDIRECT_URI],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
  /** The code the last authorization sent back. */
  code: string | undefined;
  #client: OAuthClientInformationMixed | undefined;
  #tokens: OAuthTokens | undefined;
  #verifier = '';
  #state = '';

  readonly #browser: Browser;
  readonly #person: Person;

  constructor(browser: Browser, person: Person, clientMetadataUrl?: string) {
    this.#browser = browser;
    this.#person = person;
    this.clientMetadataUrl = clientMetadataUrl;
  }

  state(): string {
    this.#state = randomBytes(16).toString('base64url');
    return this.#state;
  }
  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.#client;
  }
  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.#client = info;
  }
  tokens(): OAuthTokens | undefined {
    return this.#tokens;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.#tokens = tokens;
  }
  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }
  codeVerifier(): string {
    return this.#verifier;
  }
  async redirectToAuthorization(url: URL): Promise<void> {
    expect(url.origin + url.pathname).toBe(`${base}/authorize`);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('resource')).toBe(`${base}/mcp`);
    const back = await answerInBrowser(this.#browser, url, this.#person);
    expect(back.origin + back.pathname).toBe(REDIRECT_URI);
    expect(back.searchParams.get('state')).toBe(this.#state);
    expect(back.searchParams.get('iss')).toBe(base);
    this.code = back.searchParams.get('code') ?? undefined;
  }
}

/** As a desktop client does knowing only {base}/mcp: refused, authorized through the browser, then connected. */
async function connectWithOAuth(desk: DesktopClient): Promise<Client> {
  const url = new URL('/mcp?toolsets=all', base);
  const refused = new Client({ name: 'desk', version: '0.0.0' });
  await expect(refused.connect(new StreamableHTTPClientTransport(url, { authProvider: desk }))).rejects.toBeInstanceOf(UnauthorizedError);
  const transport = new StreamableHTTPClientTransport(url, { authProvider: desk });
  await transport.finishAuth(desk.code!);
  const client = new Client({ name: 'desk', version: '0.0.0' });
  await client.connect(transport);
  return client;
}

function mcpInit(token: string): Promise<RawResponse> {
  return request(server.url, '/mcp', { method: 'POST', key: token, body: INIT_BODY, headers: MCP_HEADERS });
}

function tokenRequest(fields: Record<string, string>): Promise<RawResponse> {
  return request(server.url, '/token', { method: 'POST', body: form(fields), headers: { 'content-type': FORM } });
}

/** A client registered over POST /register, and a PKCE pair for one authorization. */
async function registerRaw(redirectUri = REDIRECT_URI): Promise<RawResponse> {
  return request(server.url, '/register', { method: 'POST', body: { client_name: 'raw client', redirect_uris: [redirectUri], token_endpoint_auth_method: 'client_secret_post' } });
}

function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

function authorizationUrl(clientId: string, challenge: string, extra: Record<string, string> = {}): URL {
  const url = new URL('/authorize', base);
  const params = { response_type: 'code', client_id: clientId, redirect_uri: REDIRECT_URI, code_challenge: challenge, code_challenge_method: 'S256', state: 'st-1', resource: `${base}/mcp`, ...extra };
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  return url;
}

/** A whole authorization without the SDK: register, consent, exchange; the tokens and what made them. */
async function rawGrant(browser: Browser, person: Person): Promise<{ clientId: string; tokens: { access_token: string; refresh_token: string }; code: string; verifier: string }> {
  const clientId = (await registerRaw()).json.client_id as string;
  const { verifier, challenge } = pkce();
  const back = await answerInBrowser(browser, authorizationUrl(clientId, challenge), person);
  const code = back.searchParams.get('code')!;
  const exchanged = await tokenRequest({ grant_type: 'authorization_code', client_id: clientId, code, code_verifier: verifier, redirect_uri: REDIRECT_URI });
  expect(exchanged.status).toBe(200);
  return { clientId, tokens: exchanged.json, code, verifier };
}

const errorCode = (res: RawResponse) => (res.json as { error: { code: string } }).error.code;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'svc-oauth-'));
  documents = await startHttpsHost();
  server = await spawnServer({ SVC_DATA_DIR: dataDir, SVC_OUTBOUND_ALLOW_PRIVATE: 'true', ...documents.trustEnv });
  base = `http://localhost:${server.port}`;
  control = new pg.Pool({ connectionString: databaseUrl(server.controlDb), max: 2 });
  const claim = readFileSync(path.join(dataDir, 'owner-invitation'), 'utf8').trim();
  const owner = await request(server.url, '/dashboard/signup', { method: 'POST', body: { ...OWNER, name: 'Olga', invitation_token: claim }, headers: { origin: base } });
  expect(owner.status).toBe(201);
}, 60_000);

afterAll(async () => {
  await control?.end();
  await server?.close();
  await documents?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('OAuth for MCP clients', () => {
  let ownerDesk: DesktopClient;
  let ownerClient: Client;
  let ownerAccount: string;

  it('a 401 on /mcp points at the resource metadata, which names the authorization server and its endpoints', async () => {
    const refused = await request(server.url, '/mcp', { method: 'POST', body: INIT_BODY, headers: MCP_HEADERS });
    expect(refused.status).toBe(401);
    expect(errorCode(refused)).toBe('AUTH_REQUIRED');
    expect(refused.headers['www-authenticate']).toBe(`Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`);

    // One issuer string everywhere, without the slash a URL object would add: clients compare it exactly.
    const resource = { resource: `${base}/mcp`, authorization_servers: [base], resource_name: 'svc-platform MCP' };
    for (const at of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const doc = await request(server.url, at);
      expect(doc.status, at).toBe(200);
      expect(doc.json, at).toEqual(resource);
    }
    const as = await request(server.url, '/.well-known/oauth-authorization-server');
    expect(as.status).toBe(200);
    expect(as.json).toEqual({
      issuer: base,
      authorization_endpoint: `${base}/authorize`,
      token_endpoint: `${base}/token`,
      registration_endpoint: `${base}/register`,
      revocation_endpoint: `${base}/revoke`,
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['none'],
      revocation_endpoint_auth_methods_supported: ['none'],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    });
  });

  it('registration makes every client public (no secret) and refuses plain http to another machine', async () => {
    const registered = await registerRaw();
    expect(registered.status).toBe(201);
    expect(registered.json).toMatchObject({ client_name: 'raw client', redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none' });
    expect(registered.json.client_secret).toBeUndefined();
    const plain = await registerRaw('http://client.example/callback');
    expect(plain.status).toBe(400);
    expect(plain.json.error).toBe('invalid_redirect_uri');
  });

  it('registration takes 1 to 10 bounded redirect URIs of https, loopback http or an app scheme, and stores nothing it refuses (RFC 7591 errors)', async () => {
    const clients = async () => (await control.query(`select count(*)::int as n from oauth_clients`)).rows[0].n as number;
    const before = await clients();
    const register = (body: Record<string, unknown>) => request(server.url, '/register', { method: 'POST', body: { client_name: 'probe', ...body } });

    const file = await register({ redirect_uris: ['file:///etc/passwd'] });
    expect(file.status).toBe(400);
    expect(file.json).toEqual({ error: 'invalid_redirect_uri', error_description: "file:///etc/passwd uses file:, which is not an app's own scheme." });
    const fragment = await register({ redirect_uris: ['https://client.example/cb#x'] });
    expect(fragment.status).toBe(400);
    expect(fragment.json.error).toBe('invalid_redirect_uri');
    const many = await register({ redirect_uris: Array.from({ length: 2000 }, (_, i) => `https://client.example/cb/${i}`) });
    expect(many.status).toBe(400);
    expect(many.json).toEqual({ error: 'invalid_redirect_uri', error_description: `Register 1 to ${MAX_REDIRECT_URIS} redirect URIs, not 2000.` });
    const large = await register({ redirect_uris: [REDIRECT_URI], client_name: 'x'.repeat(MAX_REGISTRATION_BYTES) });
    expect(large.status).toBe(400);
    expect(large.json.error).toBe('invalid_client_metadata');
    expect(await clients()).toBe(before);

    // A native app's own scheme, beside its loopback listener.
    const native = await register({ redirect_uris: ['cursor://anysphere.cursor-mcp/oauth/callback', REDIRECT_URI], token_endpoint_auth_method: 'none' });
    expect(native.status).toBe(201);
    expect(native.json.redirect_uris).toEqual(['cursor://anysphere.cursor-mcp/oauth/callback', REDIRECT_URI]);
  });

  it('the SDK client, knowing only /mcp, registers, has its person sign in and consent, and connects with their role', async () => {
    const browser = new Browser();
    // Without a session the authorization shows the platform's sign-in page, under a strict policy.
    const signInPage = await browser.get(authorizationUrl((await registerRaw()).json.client_id, pkce().challenge));
    expect(signInPage.status).toBe(200);
    expect(signInPage.headers['content-type']).toMatch(/^text\/html/);
    expect(signInPage.headers['content-security-policy']).toContain(`script-src ${new URL(server.docsUrl()).origin}/oauth/signin.js `);
    expect(signInPage.headers['x-frame-options']).toBe('DENY');
    expect(signInPage.text).toContain('<script src="/oauth/signin.js"></script>');
    expect((await browser.get('/oauth/signin.js')).text).toContain("fetch('/dashboard/signin'");

    ownerDesk = new DesktopClient(browser, OWNER);
    ownerClient = await connectWithOAuth(ownerDesk);
    const tokens = ownerDesk.tokens()!;
    expect(tokens.access_token).toMatch(/^svc_oat_/);
    expect(tokens.refresh_token).toMatch(/^svc_ort_/);
    expect(tokens.expires_in).toBe(3600);
    const { tools } = await ownerClient.listTools();
    expect(tools.map((t) => t.name)).toContain('apps_create');
    const created = await callTool(ownerClient, 'apps_create', { name: 'via-oauth' });
    expect(created.isError).toBeFalsy();
    ownerAccount = (await control.query(`select account_id from apps where id = $1`, [resultJson(created).app_id])).rows[0].account_id;
    // Stored as hashes only.
    const stored = await control.query(`select token_hash, kind from oauth_tokens where token_hash = any($1)`, [[hashKey(tokens.access_token), hashKey(tokens.refresh_token!)]]);
    expect(stored.rows.map((r) => r.kind).sort()).toEqual(['access', 'refresh']);
    const dump = JSON.stringify((await control.query(`select * from oauth_tokens`)).rows) + JSON.stringify((await control.query(`select * from oauth_codes`)).rows);
    expect(dump).not.toMatch(/svc_oat_|svc_ort_|svc_oac_|svc_ocf_/);
    // The token is for /mcp: REST does not take it.
    expect((await request(server.url, '/apps', { key: tokens.access_token })).status).toBe(401);
  });

  it('the consent page names the client (escaped), where it sends the person back, the account and the role', async () => {
    const browser = new Browser();
    await browser.signIn(OWNER);
    const page = await browser.get(authorizationUrl(ownerDesk.clientInformation()!.client_id, pkce().challenge));
    expect(page.status).toBe(200);
    expect(page.text).toContain('Allow Desk &lt;Client&gt; to act for you?');
    expect(page.text).toContain('<dd>http://127.0.0.1:53682</dd>');
    const account = (await control.query(`select name from accounts where id = $1`, [ownerAccount])).rows[0].name as string;
    expect(page.text).toContain(`<dd>${OWNER.email}</dd>`);
    expect(page.text).toContain(`<dd>${account}</dd>`);
    expect(page.text).toContain('<dd>owner</dd>');
    expect(page.headers['content-security-policy']).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self' http://127.0.0.1:53682; frame-ancestors 'none'",
    );
  });

  it('an expired access token is refreshed by the SDK client; the refresh token rotates', async () => {
    const before = ownerDesk.tokens()!;
    await control.query(`update oauth_tokens set expires_at = now() - interval '1 second' where token_hash = $1`, [hashKey(before.access_token)]);
    expect((await mcpInit(before.access_token)).status).toBe(401);
    const { tools } = await ownerClient.listTools();
    expect(tools.length).toBeGreaterThan(0);
    const after = ownerDesk.tokens()!;
    expect(after.access_token).not.toBe(before.access_token);
    expect(after.refresh_token).not.toBe(before.refresh_token);
    await ownerClient.close();
  });

  it("a viewer's client acts as a viewer: reads, and is refused writes with 403 FORBIDDEN_ROLE; without the membership the token stops", async () => {
    const invitation = generateKey('svc_inv_');
    await control.query(`insert into invitations (account_id, email, role, token_hash, expires_at) values ($1, $2, 'viewer', $3, now() + interval '1 day')`, [
      ownerAccount,
      VIEWER.email,
      hashKey(invitation),
    ]);
    const signup = await request(server.url, '/dashboard/signup', { method: 'POST', body: { ...VIEWER, invitation_token: invitation }, headers: { origin: base } });
    expect(signup.status).toBe(201);
    const desk = new DesktopClient(new Browser(), VIEWER);
    const client = await connectWithOAuth(desk);
    const listed = await callTool(client, 'apps_list');
    expect(resultJson(listed).apps.map((a: { name: string }) => a.name)).toContain('via-oauth');
    const write = await callTool(client, 'apps_create', { name: 'nope' });
    expect(write.isError).toBe(true);
    expect(resultJson(write)).toMatchObject({ status: 403, error: { code: 'FORBIDDEN_ROLE', details: { required_role: 'developer', role: 'viewer' } } });

    await control.query(`delete from account_members where account_id = $1 and person_id = (select id from persons where email = $2)`, [ownerAccount, VIEWER.email]);
    const gone = await mcpInit(desk.tokens()!.access_token);
    expect(gone.status).toBe(401);
    expect(errorCode(gone)).toBe('AUTH_INVALID_TOKEN');
    await client.close();
  });

  it("a member removed from the account: their client's refresh token mints nothing more (400 invalid_grant), the access token is refused", async () => {
    const rita: Person = { email: 'rita@example.com', password: 'rita long password' };
    const invitation = generateKey('svc_inv_');
    await control.query(`insert into invitations (account_id, email, role, token_hash, expires_at) values ($1, $2, 'developer', $3, now() + interval '1 day')`, [
      ownerAccount,
      rita.email,
      hashKey(invitation),
    ]);
    const signup = await request(server.url, '/dashboard/signup', { method: 'POST', body: { ...rita, invitation_token: invitation }, headers: { origin: base } });
    expect(signup.status).toBe(201);
    const grant = await rawGrant(new Browser(), rita);
    expect((await mcpInit(grant.tokens.access_token)).status).toBe(200);

    const removed = await request(server.url, `/dashboard/members/${(signup.json as { person: { id: string } }).person.id}`, { method: 'DELETE', key: server.platformKey });
    expect(removed.status).toBe(200);
    const refresh = await tokenRequest({ grant_type: 'refresh_token', client_id: grant.clientId, refresh_token: grant.tokens.refresh_token });
    expect([refresh.status, refresh.json.error]).toEqual([400, 'invalid_grant']);
    expect((await mcpInit(grant.tokens.access_token)).status).toBe(401);
  });

  it('revocation ends the grant at once: the access token is refused on /mcp (401) and the refresh token at /token', async () => {
    const { access_token, refresh_token } = ownerDesk.tokens()!;
    const clientId = ownerDesk.clientInformation()!.client_id;
    const revoked = await request(server.url, '/revoke', { method: 'POST', body: form({ client_id: clientId, token: access_token }), headers: { 'content-type': FORM } });
    expect(revoked.status).toBe(200);
    const refused = await mcpInit(access_token);
    expect(refused.status).toBe(401);
    expect(errorCode(refused)).toBe('AUTH_INVALID_TOKEN');
    expect(refused.headers['www-authenticate']).toBe(`Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", error="invalid_token"`);
    const refresh = await tokenRequest({ grant_type: 'refresh_token', client_id: clientId, refresh_token: refresh_token! });
    expect(refresh.status).toBe(400);
    expect(refresh.json.error).toBe('invalid_grant');
    // Platform keys keep working on /mcp.
    expect((await mcpInit(server.platformKey)).status).toBe(200);
  });

  it('a code is single-use (a replay revokes what it gave) and a rotated refresh token presented again revokes its grant', async () => {
    const browser = new Browser();
    const first = await rawGrant(browser, OWNER);
    expect((await mcpInit(first.tokens.access_token)).status).toBe(200);
    const replay = await tokenRequest({ grant_type: 'authorization_code', client_id: first.clientId, code: first.code, code_verifier: first.verifier, redirect_uri: REDIRECT_URI });
    expect(replay.status).toBe(400);
    expect(replay.json.error).toBe('invalid_grant');
    expect((await mcpInit(first.tokens.access_token)).status).toBe(401);

    const second = await rawGrant(browser, OWNER);
    const rotated = await tokenRequest({ grant_type: 'refresh_token', client_id: second.clientId, refresh_token: second.tokens.refresh_token });
    expect(rotated.status).toBe(200);
    expect(rotated.json).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    expect((await mcpInit(second.tokens.access_token)).status).toBe(401);
    expect((await mcpInit(rotated.json.access_token)).status).toBe(200);
    const reused = await tokenRequest({ grant_type: 'refresh_token', client_id: second.clientId, refresh_token: second.tokens.refresh_token });
    expect(reused.status).toBe(400);
    expect(reused.json.error).toBe('invalid_grant');
    expect((await mcpInit(rotated.json.access_token)).status).toBe(401);

    // A wrong verifier is refused before anything is issued.
    const third = (await registerRaw()).json.client_id as string;
    const { challenge } = pkce();
    const code = (await answerInBrowser(browser, authorizationUrl(third, challenge), OWNER)).searchParams.get('code')!;
    const wrong = await tokenRequest({ grant_type: 'authorization_code', client_id: third, code, code_verifier: pkce().verifier, redirect_uri: REDIRECT_URI });
    expect(wrong.status).toBe(400);
    expect(wrong.json.error).toBe('invalid_grant');
  });

  it('refuses a consent answer from another origin, with a forged or foreign anti-forgery value, or given twice; denial says access_denied', async () => {
    const browser = new Browser();
    await browser.signIn(OWNER);
    const clientId = (await registerRaw()).json.client_id as string;
    const url = authorizationUrl(clientId, pkce().challenge);
    const consent = consentValueOf(await browser.get(url));

    const foreign = await browser.post('/oauth/consent', form({ consent, decision: 'approve' }), FORM, 'https://evil.example');
    expect(foreign.status).toBe(403);
    expect(errorCode(foreign)).toBe('CROSS_SITE_REQUEST');
    const forged = await browser.post('/oauth/consent', form({ consent: generateKey('svc_ocf_'), decision: 'approve' }), FORM);
    expect(forged.status).toBe(400);
    expect(errorCode(forged)).toBe('OAUTH_CONSENT_INVALID');
    const otherSession = new Browser();
    await otherSession.signIn(OWNER);
    const stolen = await otherSession.post('/oauth/consent', form({ consent, decision: 'approve' }), FORM);
    expect(stolen.status).toBe(400);
    expect(errorCode(stolen)).toBe('OAUTH_CONSENT_INVALID');
    const noSession = await request(server.url, '/oauth/consent', { method: 'POST', body: form({ consent, decision: 'approve' }), headers: { 'content-type': FORM, origin: base } });
    expect(noSession.status).toBe(400);

    const denied = await browser.post('/oauth/consent', form({ consent, decision: 'deny' }), FORM);
    expect(denied.status).toBe(303);
    const back = new URL(denied.headers.location!);
    expect(back.origin + back.pathname).toBe(REDIRECT_URI);
    expect(Object.fromEntries(back.searchParams)).toEqual({ error: 'access_denied', error_description: 'The person denied the client access.', state: 'st-1', iss: base });
    const again = await browser.post('/oauth/consent', form({ consent, decision: 'approve' }), FORM);
    expect(again.status).toBe(400);
    expect(errorCode(again)).toBe('OAUTH_CONSENT_INVALID');

  });

  it('an authorization error names the issuer too (RFC 9207), and a resource other than {base}/mcp is refused with invalid_target', async () => {
    const browser = await ownerBrowser();
    const clientId = (await registerRaw()).json.client_id as string;
    // The SDK's own checks answer by redirect as well.
    const noChallenge = await browser.get(authorizationUrl(clientId, pkce().challenge, { code_challenge_method: 'plain' }));
    expect(noChallenge.status).toBe(302);
    expect(new URL(noChallenge.headers.location!).searchParams.get('iss')).toBe(base);

    const only = `This server issues tokens for ${base}/mcp only.`;
    // The bare base URL names the whole platform, not /mcp.
    for (const resource of ['https://other.example/mcp', base, `${base}/`, `${base}/mcp/`, `${base}/mcp?toolsets=all`]) {
      const refused = await browser.get(authorizationUrl(clientId, pkce().challenge, { resource }));
      expect(refused.status, resource).toBe(302);
      const back = new URL(refused.headers.location!);
      expect(back.origin + back.pathname).toBe(REDIRECT_URI);
      expect(Object.fromEntries(back.searchParams), resource).toEqual({ error: 'invalid_target', error_description: only, state: 'st-1', iss: base });
    }
    // Scheme and host compare without case (a canonical URI's), and a client naming no resource gets one for /mcp.
    const upper = new URL(base);
    for (const extra of [{ resource: `HTTP://${upper.host.toUpperCase()}/mcp` }, { resource: '' }]) {
      const url = authorizationUrl(clientId, pkce().challenge, extra);
      if (extra.resource === '') url.searchParams.delete('resource');
      const page = await browser.get(url);
      expect(page.status, url.href).toBe(200);
      expect(consentValueOf(page)).toMatch(/^svc_ocf_/);
    }
  });

  it('the token endpoint refuses another resource (400 invalid_target); the tokens record their audience, {base}/mcp', async () => {
    const browser = await ownerBrowser();
    const clientId = (await registerRaw()).json.client_id as string;
    const { verifier, challenge } = pkce();
    const code = (await answerInBrowser(browser, authorizationUrl(clientId, challenge), OWNER)).searchParams.get('code')!;
    const exchange = { grant_type: 'authorization_code', client_id: clientId, code, code_verifier: verifier, redirect_uri: REDIRECT_URI };
    const other = await tokenRequest({ ...exchange, resource: 'https://other.example/mcp' });
    expect(other.status).toBe(400);
    expect(other.json).toEqual({ error: 'invalid_target', error_description: `This server issues tokens for ${base}/mcp only.` });
    // Nothing was spent: the same code with the platform's resource gives the tokens.
    const issued = await tokenRequest({ ...exchange, resource: `${base}/mcp` });
    expect(issued.status).toBe(200);
    const { access_token, refresh_token } = issued.json as { access_token: string; refresh_token: string };
    const stored = await control.query(`select kind, resource from oauth_tokens where token_hash = any($1) order by kind`, [[hashKey(access_token), hashKey(refresh_token)]]);
    expect(stored.rows).toEqual([
      { kind: 'access', resource: `${base}/mcp` },
      { kind: 'refresh', resource: `${base}/mcp` },
    ]);
    const refresh = { grant_type: 'refresh_token', client_id: clientId, refresh_token };
    const otherRefresh = await tokenRequest({ ...refresh, resource: base });
    expect(otherRefresh.status).toBe(400);
    expect(otherRefresh.json.error).toBe('invalid_target');
    expect((await tokenRequest({ ...refresh, resource: `${base}/mcp` })).status).toBe(200);
  });

  it('/mcp takes only tokens issued for it: one for another audience is 401 invalid_token; one issued before audiences were recorded counts as /mcp', async () => {
    const grant = await rawGrant(await ownerBrowser(), OWNER);
    const token = grant.tokens.access_token;
    await control.query(`update oauth_tokens set resource = 'https://elsewhere.example/mcp' where token_hash = $1`, [hashKey(token)]);
    const refused = await mcpInit(token);
    expect(refused.status).toBe(401);
    expect(errorCode(refused)).toBe('AUTH_INVALID_TOKEN');
    expect(refused.headers['www-authenticate']).toBe(`Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", error="invalid_token"`);

    await control.query(`update oauth_tokens set resource = null where token_hash = $1`, [hashKey(token)]);
    expect((await mcpInit(token)).status).toBe(200);
    // Refreshing such a token records the audience on the new pair.
    const refreshed = await tokenRequest({ grant_type: 'refresh_token', client_id: grant.clientId, refresh_token: grant.tokens.refresh_token });
    expect(refreshed.status).toBe(200);
    const row = await control.query(`select resource from oauth_tokens where token_hash = $1`, [hashKey(refreshed.json.access_token)]);
    expect(row.rows).toEqual([{ resource: `${base}/mcp` }]);
  });

  describe('clients known by their metadata document (client_id is its https URL)', () => {
    const document = (pathname: string, fields: Record<string, unknown> = {}) => ({
      client_id: `${documents.origin}${pathname}`,
      client_name: 'Doc Client',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...fields,
    });
    const authorizeAs = (browser: Browser, clientId: string) => browser.get(authorizationUrl(clientId, pkce().challenge));
    const documentRow = async (clientId: string) =>
      (await control.query(`select metadata->>'client_name' as name, round(extract(epoch from document_expires_at - now())) as fresh from oauth_clients where client_id = $1`, [clientId])).rows;

    it('the SDK client names its document instead of registering; the platform fetches it once while fresh (max-age) and again after', async () => {
      documents.serve('/client.json', { body: JSON.stringify(document('/client.json')), headers: { 'cache-control': 'public, max-age=300' } });
      const clientId = `${documents.origin}/client.json`;
      const registered = Number((await control.query(`select count(*) from oauth_clients`)).rows[0].count);
      const browser = await ownerBrowser();
      const desk = new DesktopClient(browser, OWNER, clientId);
      const client = await connectWithOAuth(desk);
      expect(desk.clientInformation()!.client_id).toBe(clientId);
      expect((await client.listTools()).tools.length).toBeGreaterThan(0);
      await client.close();
      // Authorization and token exchange read the copy the first fetch kept, for the document's max-age.
      expect(documents.hits('/client.json')).toBe(1);
      expect(Number((await control.query(`select count(*) from oauth_clients`)).rows[0].count)).toBe(registered + 1);
      const [row] = await documentRow(clientId);
      expect(row.name).toBe('Doc Client');
      expect(Number(row.fresh)).toBeGreaterThan(290);

      // The consent page says who publishes it, and that its redirects all go to the person's own machine.
      const page = await authorizeAs(browser, clientId);
      expect(page.status).toBe(200);
      expect(page.text).toContain('Allow Doc Client to act for you?');
      expect(page.text).toContain(
        `<dd>${new URL(documents.origin).host}, which publishes its description at ${clientId}. It sends you back to a program on this computer only, and any program there could use this name.</dd>`,
      );
      expect(documents.hits('/client.json')).toBe(1);

      // Once stale it is fetched again, and its changes apply; without cache headers it is kept 10 minutes.
      documents.serve('/client.json', { body: JSON.stringify(document('/client.json', { client_name: 'Doc Client 2' })) });
      await control.query(`update oauth_clients set document_expires_at = now() - interval '1 second' where client_id = $1`, [clientId]);
      expect((await authorizeAs(browser, clientId)).text).toContain('Allow Doc Client 2 to act for you?');
      expect(documents.hits('/client.json')).toBe(2);
      const [after] = await documentRow(clientId);
      expect(Number(after.fresh)).toBeGreaterThan(590);
      expect(Number(after.fresh)).toBeLessThanOrEqual(600);
      // A registered client is vouched for by no one.
      expect((await authorizeAs(browser, (await registerRaw()).json.client_id)).text).toContain('<dd>No one: it registered itself, under a name of its own choosing.</dd>');

      // A redirect URI the document does not list is refused before anything is shown.
      const elsewhere = await browser.get(authorizationUrl(clientId, pkce().challenge, { redirect_uri: 'https://attacker.example/cb' }));
      expect(elsewhere.status).toBe(400);
      expect(elsewhere.json).toEqual({ error: 'invalid_request', error_description: 'Unregistered redirect_uri' });
    });

    it('refuses, with 400 invalid_client and nothing kept, a document that names another client_id, is too large, redirects, keeps a secret or lists a foreign redirect', async () => {
      const cases: { pathname: string; status?: number; headers?: Record<string, string>; body: string; problem: string }[] = [
        {
          pathname: '/mismatch.json',
          body: JSON.stringify(document('/other.json')),
          problem: `serves the metadata of client_id "${documents.origin}/other.json"; a document must name its own URL`,
        },
        {
          pathname: '/large.json',
          body: JSON.stringify(document('/large.json', { client_name: 'x'.repeat(MAX_CLIENT_DOCUMENT_BYTES) })),
          problem: `serves more than ${MAX_CLIENT_DOCUMENT_BYTES} bytes; a metadata document is at most that`,
        },
        {
          pathname: '/moved.json',
          status: 302,
          headers: { location: '/client.json' },
          body: '',
          problem: 'answered 302, not 200 with its metadata document (redirects are not followed)',
        },
        {
          pathname: '/secret.json',
          body: JSON.stringify(document('/secret.json', { token_endpoint_auth_method: 'client_secret_basic' })),
          problem: `serves a document asking for token_endpoint_auth_method "client_secret_basic"; this platform's clients are public ("none")`,
        },
        { pathname: '/nameless.json', body: JSON.stringify(document('/nameless.json', { client_name: undefined })), problem: 'serves a document without a client_name' },
        { pathname: '/text.json', body: 'client_id=me', problem: 'does not serve a JSON document' },
      ];
      const browser = await ownerBrowser();
      for (const { pathname, problem, ...answer } of cases) {
        documents.serve(pathname, answer);
        const clientId = `${documents.origin}${pathname}`;
        const refused = await authorizeAs(browser, clientId);
        expect(refused.status, pathname).toBe(400);
        expect(refused.json, pathname).toEqual({ error: 'invalid_client', error_description: `The client_id ${clientId} ${problem}.` });
        expect(documents.hits(pathname), pathname).toBe(1);
        expect(await documentRow(clientId), pathname).toEqual([]);
      }
      // The document's redirect URIs meet the rules of registration.
      documents.serve('/plain.json', { body: JSON.stringify(document('/plain.json', { redirect_uris: ['http://client.example/cb'] })) });
      const plain = await authorizeAs(browser, `${documents.origin}/plain.json`);
      expect(plain.status).toBe(400);
      expect(plain.json).toEqual({
        error: 'invalid_client',
        error_description: `The metadata document of client_id ${documents.origin}/plain.json: http://client.example/cb is plain http to another machine; use https, or http on localhost, 127.0.0.1 or [::1].`,
      });
      // A client_id URL that is not one a document may have is not fetched.
      for (const [clientId, problem] of [
        ['http://127.0.0.1:1/client.json', 'is a URL but not https; a metadata document is served over https'],
        [`${documents.origin}/`, 'has no path; a metadata document is served at one, such as /client.json'],
        [`${documents.origin}/a/../client.json`, 'has a . or .. path segment'],
        [`${documents.origin.toUpperCase()}/client.json`, `is not written as a URL in its normal form (${documents.origin}/client.json)`],
      ]) {
        const refused = await authorizeAs(browser, clientId!);
        expect(refused.json, clientId).toEqual({ error: 'invalid_client', error_description: `The client_id ${clientId} ${problem}.` });
      }
    });

    it('is not fetched from a loopback or private address unless SVC_OUTBOUND_ALLOW_PRIVATE=true', async () => {
      documents.serve('/guarded.json', { body: JSON.stringify(document('/guarded.json')) });
      const guarded = await spawnServer(documents.trustEnv);
      try {
        for (const clientId of [`${documents.origin}/guarded.json`, `https://localhost:${new URL(documents.origin).port}/guarded.json`]) {
          const refused = await request(guarded.url, `/authorize?${new URLSearchParams({ client_id: clientId, response_type: 'code', code_challenge: pkce().challenge, code_challenge_method: 'S256' })}`);
          expect(refused.status, clientId).toBe(400);
          expect(refused.json, clientId).toEqual({
            error: 'invalid_client',
            error_description: `The client_id ${clientId} is on a loopback, link-local or private address, which the platform does not fetch from.`,
          });
        }
        expect(documents.hits('/guarded.json')).toBe(0);
      } finally {
        await guarded.close();
      }
    }, 60_000);
  });

  it('no token, code or anti-forgery value reached the log', () => {
    expect(server.output()).not.toMatch(/svc_oat_|svc_ort_|svc_oac_|svc_ocf_/);
  });
});
