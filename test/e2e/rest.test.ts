// End to end over plain HTTP against a server started like `npm start`.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { databasesWithPrefix } from '../helpers/db.ts';
import { toolAreas, tools } from '../../tools/index.ts';
import { appMigrations } from '../../src/apps/app-migrations.ts';
import { APP_ID, ISO_DATE, UUID, request, signUpOwner, type RawResponse } from './e2e-helpers.ts';

interface CreatedApp {
  app_id: string;
  name: string;
  subdomain: string;
  url: string;
  created_at: string;
  service_key: { id: string; name: string; hint: string; created_at: string; key: string };
  publishable_key: string;
}

const viewOf = ({ service_key: _key, publishable_key: _publishable, ...view }: CreatedApp) => view;
/** apps_get adds the version of the app database: the latest app migration of this release. */
const LATEST_APP_VERSION = (await appMigrations()).length;
const detailsOf = (app: CreatedApp) => ({ ...viewOf(app), migration_version: LATEST_APP_VERSION });

/** The standard envelope; documentationUrl is the guide section of the route's area, or the guide (see SpawnedServer.docsUrl). */
function expectError(res: RawResponse, status: number, code: string, documentationUrl: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.json, res.text).toEqual({
    error: {
      code,
      message: expect.any(String),
      remediation: expect.any(String),
      documentation_url: documentationUrl,
      ...(res.json?.error?.details !== undefined ? { details: expect.any(Array) } : {}),
    },
  });
}

let server: SpawnedServer;
let appA: CreatedApp;
let appB: CreatedApp;

async function createApp(base: string, key: string, name: string): Promise<CreatedApp> {
  const res = await request(base, '/init', { method: 'POST', key, body: { name } });
  expect(res.status, res.text).toBe(201);
  return res.json as CreatedApp;
}

beforeAll(async () => {
  server = await spawnServer();
  appA = await createApp(server.url, server.platformKey, 'Alpha App');
  appB = await createApp(server.url, server.platformKey, 'Beta App');
});

afterAll(async () => {
  await server?.close();
});

describe('apps', () => {
  it('POST /init returns 201 with the app and its first service key', async () => {
    const res = await request(server.url, '/init', { method: 'POST', key: server.platformKey, body: { name: '  Gamma Shop!  ' } });
    expect(res.status).toBe(201);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json).toEqual({
      app_id: expect.stringMatching(APP_ID),
      name: 'Gamma Shop!',
      subdomain: expect.stringMatching(/^gamma-shop-[a-z0-9]{6}$/),
      // The app's own host: subdomain routing is on by default for a localhost base URL.
      url: `http://${res.json.subdomain}.localhost:${server.port}`,
      region: 'local',
      created_at: expect.stringMatching(ISO_DATE),
      paused_at: null,
      service_key: {
        id: expect.stringMatching(UUID),
        name: 'default',
        hint: expect.any(String),
        created_at: expect.stringMatching(ISO_DATE),
        key: expect.stringMatching(/^svc_sk_[A-Za-z0-9_-]{43}$/),
      },
      publishable_key: expect.stringMatching(/^svc_pub_[0-9a-f]{64}$/),
    });
    expect(res.json.service_key.key.startsWith(res.json.service_key.hint.replace(/…$/, ''))).toBe(true);
    const dbName = server.appDbPrefix + res.json.app_id;
    expect(await databasesWithPrefix(dbName)).toEqual([dbName]);
  });

  it('GET /apps lists the apps oldest first', async () => {
    const res = await request(server.url, '/apps', { key: server.platformKey });
    expect(res.status).toBe(200);
    expect(Object.keys(res.json)).toEqual(['apps']);
    const ids = res.json.apps.map((a: { app_id: string }) => a.app_id);
    expect(ids.indexOf(appA.app_id)).toBeGreaterThanOrEqual(0);
    expect(ids.indexOf(appB.app_id)).toBeGreaterThan(ids.indexOf(appA.app_id));
    expect(res.json.apps).toContainEqual(viewOf(appA));
    for (const app of res.json.apps) expect(app).not.toHaveProperty('service_key');
  });

  it('GET /apps/{id} returns the app with the platform key and with its own service key', async () => {
    const res = await request(server.url, `/apps/${appA.app_id}`, { key: server.platformKey });
    expect(res.status).toBe(200);
    expect(res.json).toEqual(detailsOf(appA));
    const own = await request(server.url, `/apps/${appA.app_id}`, { key: appA.service_key.key });
    expect(own.status).toBe(200);
    expect(own.json).toEqual(detailsOf(appA));
  });

  it('GET /apps/{id} of an unknown app is 404 RESOURCE_NOT_FOUND; a malformed id is 400', async () => {
    expectError(await request(server.url, '/apps/zzzzzzzzzzzzzzzz', { key: server.platformKey }), 404, 'RESOURCE_NOT_FOUND', server.docsUrl('apps'));
    const bad = await request(server.url, '/apps/NOPE', { key: server.platformKey });
    expectError(bad, 400, 'VALIDATION_FAILED', server.docsUrl('apps'));
    expect(bad.json.error.message).toContain('app_id');
  });

  it('DELETE /apps/{id} is 200, drops the database, then GET is 404 RESOURCE_NOT_FOUND', async () => {
    const app = await createApp(server.url, server.platformKey, 'Doomed');
    const dbName = server.appDbPrefix + app.app_id;
    expect(await databasesWithPrefix(dbName)).toEqual([dbName]);

    const del = await request(server.url, `/apps/${app.app_id}`, { method: 'DELETE', key: server.platformKey });
    expect(del.status).toBe(200);
    expect(del.json).toEqual({ deleted: true, app_id: app.app_id });
    expect(await databasesWithPrefix(dbName)).toEqual([]);

    expectError(await request(server.url, `/apps/${app.app_id}`, { key: server.platformKey }), 404, 'RESOURCE_NOT_FOUND', server.docsUrl('apps'));
    expectError(await request(server.url, `/apps/${app.app_id}`, { key: app.service_key.key }), 401, 'AUTH_INVALID_TOKEN', server.docsUrl('apps'));
    expectError(await request(server.url, `/apps/${app.app_id}`, { method: 'DELETE', key: server.platformKey }), 404, 'RESOURCE_NOT_FOUND', server.docsUrl('apps'));
    const list = await request(server.url, '/apps', { key: server.platformKey });
    expect(list.json.apps.map((a: { app_id: string }) => a.app_id)).not.toContain(app.app_id);
  });

  it('a service key cannot delete its own app (platform key only)', async () => {
    expectError(await request(server.url, `/apps/${appA.app_id}`, { method: 'DELETE', key: appA.service_key.key }), 403, 'FORBIDDEN', server.docsUrl('apps'));
    expect((await request(server.url, `/apps/${appA.app_id}`, { key: server.platformKey })).status).toBe(200);
  });
});

describe('authentication and authorization', () => {
  it('a missing Authorization is 401 AUTH_REQUIRED with WWW-Authenticate: Bearer', async () => {
    const res = await request(server.url, '/apps');
    expectError(res, 401, 'AUTH_REQUIRED', server.docsUrl('apps'));
    expect(res.headers['www-authenticate']).toBe('Bearer');
    const init = await request(server.url, '/init', { method: 'POST', body: { name: 'no key' } });
    expectError(init, 401, 'AUTH_REQUIRED', server.docsUrl('apps'));
    expect(init.headers['www-authenticate']).toBe('Bearer');
  });

  it('a garbage token is 401 AUTH_INVALID_TOKEN', async () => {
    for (const authorization of ['Bearer garbage', 'Bearer svc_pk_not-a-real-key-at-all', 'Bearer svc_sk_nope', 'Bearer a.b.c', 'Basic dXNlcjpwYXNz']) {
      const res = await request(server.url, '/apps', { headers: { authorization } });
      expectError(res, 401, 'AUTH_INVALID_TOKEN', server.docsUrl('apps'));
      expect(res.headers['www-authenticate']).toBe('Bearer');
    }
  });

  it("app A's service key gets 403 FORBIDDEN on app B and on B's keys", async () => {
    expectError(await request(server.url, `/apps/${appB.app_id}`, { key: appA.service_key.key }), 403, 'FORBIDDEN', server.docsUrl('apps'));
    expectError(await request(server.url, `/apps/${appB.app_id}/keys`, { key: appA.service_key.key }), 403, 'FORBIDDEN', server.docsUrl('keys'));
  });

  it('a service key gets 403 FORBIDDEN on GET /apps and POST /init', async () => {
    expectError(await request(server.url, '/apps', { key: appA.service_key.key }), 403, 'FORBIDDEN', server.docsUrl('apps'));
    expectError(await request(server.url, '/init', { method: 'POST', key: appA.service_key.key, body: { name: 'x' } }), 403, 'FORBIDDEN', server.docsUrl('apps'));
  });
});

describe('request errors', () => {
  it('an unknown route is 404 ROUTE_NOT_FOUND in the standard envelope', async () => {
    const res = await request(server.url, '/no/such/route', { key: server.platformKey });
    expect(res.status).toBe(404);
    expect(res.json).toEqual({
      error: { code: 'ROUTE_NOT_FOUND', message: 'No route GET /no/such/route.', remediation: expect.any(String), documentation_url: server.docsUrl() },
    });
    expect(Object.keys(res.json.error)).toEqual(['code', 'message', 'remediation', 'documentation_url']);
    const unauthenticated = await request(server.url, '/nope', { method: 'POST' });
    expect(unauthenticated.status).toBe(404);
    expect(unauthenticated.json.error.code).toBe('ROUTE_NOT_FOUND');
  });

  it('malformed JSON is 400 INVALID_JSON', async () => {
    expectError(await request(server.url, '/init', { method: 'POST', key: server.platformKey, body: '{"name": ' }), 400, 'INVALID_JSON', server.docsUrl());
  });

  it('a JSON array body is 400 VALIDATION_FAILED', async () => {
    expectError(await request(server.url, '/init', { method: 'POST', key: server.platformKey, body: '[{"name":"x"}]' }), 400, 'VALIDATION_FAILED', server.docsUrl('apps'));
  });

  it('a name longer than 100 characters is 400 VALIDATION_FAILED naming the field', async () => {
    const res = await request(server.url, '/init', { method: 'POST', key: server.platformKey, body: { name: 'n'.repeat(101) } });
    expectError(res, 400, 'VALIDATION_FAILED', server.docsUrl('apps'));
    expect(res.json.error.message).toContain('name');
    expect(res.json.error.details).toEqual([{ path: 'name', message: expect.any(String) }]);
  });

  it('a body over the 1mb default limit is 413 PAYLOAD_TOO_LARGE', async () => {
    const res = await request(server.url, '/init', {
      method: 'POST',
      key: server.platformKey,
      body: { name: 'x'.repeat(1024 * 1024 + 10) },
    });
    expectError(res, 413, 'PAYLOAD_TOO_LARGE', server.docsUrl());
  });

  it('a failed /init leaves no new database and no new app', async () => {
    const dbsBefore = await databasesWithPrefix(server.appDbPrefix);
    const appsBefore = (await request(server.url, '/apps', { key: server.platformKey })).json;
    for (const body of [{}, { name: '' }, { name: '   ' }, { name: 42 }, { name: 'n'.repeat(101) }]) {
      expectError(await request(server.url, '/init', { method: 'POST', key: server.platformKey, body }), 400, 'VALIDATION_FAILED', server.docsUrl('apps'));
    }
    expect(await databasesWithPrefix(server.appDbPrefix)).toEqual(dbsBefore);
    expect((await request(server.url, '/apps', { key: server.platformKey })).json).toEqual(appsBefore);
  });
});

describe('service keys', () => {
  it('create (shown once), list without secrets, revoke; other keys keep working', async () => {
    const created = await request(server.url, `/apps/${appA.app_id}/keys`, { method: 'POST', key: server.platformKey, body: { name: 'deploy' } });
    expect(created.status).toBe(201);
    expect(created.json).toEqual({
      id: expect.stringMatching(UUID),
      name: 'deploy',
      hint: expect.any(String),
      created_at: expect.stringMatching(ISO_DATE),
      key: expect.stringMatching(/^svc_sk_/),
    });
    const secret: string = created.json.key;
    expect(secret).not.toBe(appA.service_key.key);
    expect((await request(server.url, `/apps/${appA.app_id}`, { key: secret })).status).toBe(200);

    const list = await request(server.url, `/apps/${appA.app_id}/keys`, { key: server.platformKey });
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(secret);
    expect(list.text).not.toContain(appA.service_key.key);
    expect(list.json.keys).toHaveLength(2);
    for (const k of list.json.keys) {
      expect(Object.keys(k).sort()).toEqual(['created_at', 'hint', 'id', 'name']);
    }
    expect(list.json.keys).toContainEqual({ id: created.json.id, name: 'deploy', hint: created.json.hint, created_at: created.json.created_at });

    const revoked = await request(server.url, `/apps/${appA.app_id}/keys/${created.json.id}`, { method: 'DELETE', key: server.platformKey });
    expect(revoked.status).toBe(200);
    expect(revoked.json).toEqual({ revoked: true, key_id: created.json.id });

    expectError(await request(server.url, `/apps/${appA.app_id}`, { key: secret }), 401, 'AUTH_INVALID_TOKEN', server.docsUrl('apps'));
    const original = await request(server.url, `/apps/${appA.app_id}`, { key: appA.service_key.key });
    expect(original.status).toBe(200);
    expect(original.json).toEqual(detailsOf(appA));
    const after = await request(server.url, `/apps/${appA.app_id}/keys`, { key: server.platformKey });
    expect(after.json.keys.map((k: { id: string }) => k.id)).toEqual([appA.service_key.id]);
  });

  it('a key without a name is named "default"', async () => {
    const created = await request(server.url, `/apps/${appB.app_id}/keys`, { method: 'POST', key: server.platformKey });
    expect(created.status).toBe(201);
    expect(created.json.name).toBe('default');
  });

  it('DELETE of a non-existent key id is 404 RESOURCE_NOT_FOUND; a malformed id is 400', async () => {
    expectError(
      await request(server.url, `/apps/${appA.app_id}/keys/${randomUUID()}`, { method: 'DELETE', key: server.platformKey }),
      404,
      'RESOURCE_NOT_FOUND',
      server.docsUrl('keys'),
    );
    expectError(await request(server.url, `/apps/${appA.app_id}/keys/not-a-uuid`, { method: 'DELETE', key: server.platformKey }), 400, 'VALIDATION_FAILED', server.docsUrl('keys'));
  });

  it("a key of app B cannot be revoked through app A's path", async () => {
    expectError(
      await request(server.url, `/apps/${appA.app_id}/keys/${appB.service_key.id}`, { method: 'DELETE', key: server.platformKey }),
      404,
      'RESOURCE_NOT_FOUND',
      server.docsUrl('keys'),
    );
    expect((await request(server.url, `/apps/${appB.app_id}`, { key: appB.service_key.key })).status).toBe(200);
  });
});

describe('substrate keys', () => {
  it('POST /substrate-keys with a platform key is 403 HUMAN_CONFIRMATION_REQUIRED: an agent never mints a key that approves', async () => {
    const refused = await request(server.url, '/substrate-keys', { method: 'POST', key: server.platformKey, body: { name: 'agent' } });
    expect(refused.status).toBe(403);
    expect(refused.json).toEqual({
      error: {
        code: 'HUMAN_CONFIRMATION_REQUIRED',
        message: 'Only a person signed in to the platform can mint a substrate key (it approves what agents propose); a key or an OAuth token cannot.',
        remediation: 'Sign in (POST /dashboard/signin, or the console) and call POST /substrate-keys from that browser session.',
        documentation_url: server.docsUrl('keys'),
      },
    });
    expect((await request(server.url, '/substrate-keys', { key: server.platformKey })).json.keys).toEqual([]);
  });

  it('POST /substrate-keys 201 mints svc_sub_ for a person signed in; the key is 403 FORBIDDEN on app routes', async () => {
    const created = await request(server.url, '/substrate-keys', { method: 'POST', headers: (await signUpOwner(server)).headers, body: { name: 'person' } });
    expect(created.status).toBe(201);
    expect(created.json).toEqual({
      id: expect.stringMatching(UUID),
      name: 'person',
      hint: expect.any(String),
      created_at: expect.stringMatching(ISO_DATE),
      key: expect.stringMatching(/^svc_sub_/),
    });
    const sub: string = created.json.key;
    expectError(await request(server.url, '/apps', { key: sub }), 403, 'FORBIDDEN', server.docsUrl('apps'));
    expectError(await request(server.url, `/apps/${appA.app_id}`, { key: sub }), 403, 'FORBIDDEN', server.docsUrl('apps'));

    const list = await request(server.url, '/substrate-keys', { key: server.platformKey });
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(sub);
    expect(list.json.keys).toContainEqual({ id: created.json.id, name: 'person', hint: created.json.hint, created_at: created.json.created_at });

    const revoked = await request(server.url, `/substrate-keys/${created.json.id}`, { method: 'DELETE', key: server.platformKey });
    expect(revoked.status).toBe(200);
    expect(revoked.json).toEqual({ revoked: true, key_id: created.json.id });
    expectError(await request(server.url, '/apps', { key: sub }), 401, 'AUTH_INVALID_TOKEN', server.docsUrl('apps'));
  });
});

describe('suggestions', () => {
  const valid = {
    category: 'bug_report',
    description: 'The docs are missing an example.',
    severity: 'low',
    affected_tool: 'apps_create',
    proposed_solution: 'Add one.',
    source: 'agent',
  };

  it('a valid body is 201 {id, status: received, created_at}', async () => {
    const res = await request(server.url, '/suggestions', { method: 'POST', key: server.platformKey, body: valid });
    expect(res.status).toBe(201);
    expect(res.json).toEqual({ id: expect.stringMatching(UUID), status: 'received', created_at: expect.stringMatching(ISO_DATE) });
    const minimal = await request(server.url, '/suggestions', { method: 'POST', key: server.platformKey, body: { category: 'documentation', description: 'x' } });
    expect(minimal.status).toBe(201);
  });

  it.each([
    ['missing category', { ...valid, category: undefined }, 'category'],
    ["category 'nope'", { ...valid, category: 'nope' }, 'category'],
    ["severity 'urgent'", { ...valid, severity: 'urgent' }, 'severity'],
    ["source 'robot'", { ...valid, source: 'robot' }, 'source'],
    ['missing description', { ...valid, description: undefined }, 'description'],
  ])('%s is 400 VALIDATION_FAILED', async (_label, body, field) => {
    const res = await request(server.url, '/suggestions', { method: 'POST', key: server.platformKey, body });
    expectError(res, 400, 'VALIDATION_FAILED', server.docsUrl('platform'));
    expect(res.json.error.message).toContain(field);
  });

  it('no credential is 401 AUTH_REQUIRED', async () => {
    const res = await request(server.url, '/suggestions', { method: 'POST', body: valid });
    expectError(res, 401, 'AUTH_REQUIRED', server.docsUrl('platform'));
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });
});

describe('platform routes', () => {
  it('GET /health is 200 {status: ok, uptime_seconds}', async () => {
    const res = await request(server.url, '/health');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: 'ok', uptime_seconds: expect.any(Number) });
    expect(res.json.uptime_seconds).toBeGreaterThanOrEqual(0);
  });

  it('GET /health/ready is 200 {status: ready, database: ok, latency_ms}', async () => {
    const res = await request(server.url, '/health/ready');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: 'ready', database: 'ok', latency_ms: expect.any(Number) });
    expect(res.json.latency_ms).toBeGreaterThanOrEqual(0);
  });

  it('GET /llms.txt is text/plain and names every tool an agent can call; REST-only routes are in their area\'s section', async () => {
    const res = await request(server.url, '/llms.txt');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    for (const tool of tools.filter((t) => t.mcp !== false)) expect(res.text).toContain(tool.name);
    for (const [area, list] of Object.entries(toolAreas)) {
      const restOnly = list.filter((t) => t.mcp === false);
      if (!restOnly.length) continue;
      const section = (await request(server.url, `/llms.txt?area=${area}`)).text;
      for (const tool of restOnly) expect(section, tool.name).toContain(`### ${tool.name}:`);
    }
  });

  it("GET /llms.txt?area=functions&tools=false is the area's notes without its tool reference", async () => {
    const whole = await request(server.url, '/llms.txt?area=functions');
    const notes = await request(server.url, '/llms.txt?area=functions&tools=false');
    expect(notes.status).toBe(200);
    expect(notes.text.trimEnd()).toBe(whole.text.slice(0, whole.text.indexOf('## Tools')).trimEnd());
    expect(notes.text).toContain('## Runtime contract');
    expect((await request(server.url, '/llms.txt?area=functions&tools=no')).status).toBe(400);
  });

  it('GET /openapi.json is OpenAPI 3.1.0 with an operation for every tool that has http', async () => {
    const res = await request(server.url, '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.json.openapi).toBe('3.1.0');
    const httpTools = tools.filter((t) => t.http);
    expect(httpTools.length).toBeGreaterThan(0);
    for (const tool of httpTools) {
      if (!tool.http) continue;
      const op = res.json.paths?.[tool.http.path]?.[tool.http.method.toLowerCase()];
      expect(op, `${tool.http.method} ${tool.http.path}`).toBeDefined();
      expect(op.operationId).toBe(tool.name);
    }
    const operations = Object.values(res.json.paths as Record<string, Record<string, { operationId: string }>>).flatMap((p) =>
      Object.values(p).map((o) => o.operationId),
    );
    expect(operations.sort()).toEqual(httpTools.map((t) => t.name).sort());
  });

  it('an OPTIONS preflight from another origin is allowed', async () => {
    const res = await request(server.url, '/apps', {
      method: 'OPTIONS',
      headers: {
        origin: 'https://example.com',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('https://example.com');
    expect(String(res.headers['access-control-allow-methods'])).toContain('GET');
    expect(String(res.headers['access-control-allow-headers']).toLowerCase()).toContain('authorization');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();

    const simple = await request(server.url, '/health', { headers: { origin: 'https://example.com' } });
    expect(simple.headers['access-control-allow-origin']).toBe('https://example.com');
    expect(String(simple.headers['access-control-expose-headers'])).toContain('X-Request-Id');
  });

  it('X-Request-Id is echoed when sent and generated when not', async () => {
    const echoed = await request(server.url, '/health', { headers: { 'x-request-id': 'e2e-req.123' } });
    expect(echoed.headers['x-request-id']).toBe('e2e-req.123');
    const generated = await request(server.url, '/health');
    expect(generated.headers['x-request-id']).toMatch(UUID);
    const other = await request(server.url, '/health');
    expect(other.headers['x-request-id']).not.toBe(generated.headers['x-request-id']);
    // An unsafe incoming id is replaced, never echoed.
    const unsafe = await request(server.url, '/health', { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(unsafe.headers['x-request-id']).toMatch(UUID);
    // Errors carry it too.
    const err = await request(server.url, '/nope', { headers: { 'x-request-id': 'err-1' } });
    expect(err.status).toBe(404);
    expect(err.headers['x-request-id']).toBe('err-1');
  });
});

describe('subdomain routing (SVC_BASE_DOMAIN=apps.test)', () => {
  let sub: SpawnedServer;
  let app: CreatedApp;
  let other: CreatedApp;

  beforeAll(async () => {
    sub = await spawnServer({ SVC_BASE_DOMAIN: 'apps.test' });
    app = await createApp(sub.url, sub.platformKey, 'Sub Routed');
    other = await createApp(sub.url, sub.platformKey, 'Other App');
  });

  afterAll(async () => {
    await sub?.close();
  });

  it("apps_create's url is http://<subdomain>.apps.test", () => {
    expect(app.subdomain).toMatch(/^sub-routed-[a-z0-9]{6}$/);
    expect(app.url).toBe(`http://${app.subdomain}.apps.test`);
  });

  it("GET /app on the app's host with its service key returns the app", async () => {
    const res = await request(sub.url, '/app', { key: app.service_key.key, headers: { host: `${app.subdomain}.apps.test` } });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual(detailsOf(app));
    expect(res.json).toEqual((await request(sub.url, `/apps/${app.app_id}`, { key: sub.platformKey })).json);
    // The host's port and letter case do not matter.
    const withPort = await request(sub.url, '/app', { key: app.service_key.key, headers: { host: `${app.subdomain.toUpperCase()}.APPS.TEST:8443` } });
    expect(withPort.status).toBe(200);
    expect(withPort.json.app_id).toBe(app.app_id);
  });

  it("another app's service key is 403 FORBIDDEN on the app's host", async () => {
    const res = await request(sub.url, '/app', { key: other.service_key.key, headers: { host: `${app.subdomain}.apps.test` } });
    expectError(res, 403, 'FORBIDDEN', sub.docsUrl('apps'));
  });

  it('an unknown subdomain is 404 RESOURCE_NOT_FOUND', async () => {
    const res = await request(sub.url, '/app', { key: app.service_key.key, headers: { host: 'no-such-app-zzzzzz.apps.test' } });
    expectError(res, 404, 'RESOURCE_NOT_FOUND', sub.docsUrl());
  });

  it('GET /app without an app host is 404 ROUTE_NOT_FOUND', async () => {
    expectError(await request(sub.url, '/app', { key: app.service_key.key }), 404, 'ROUTE_NOT_FOUND', sub.docsUrl());
  });
});
