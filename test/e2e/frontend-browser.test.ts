// A hosted site seen in a real browser: the server is started as `npm start` would, a schema and two rows are
// made over HTTP, a small built site (index.html + a hashed JS asset that reads window.__ENV__ and fetches the
// app's data API anonymously) is zipped, uploaded, built by the worker and opened in headless Chromium. Last, a
// site knows its API (issue 26): one deployed from files, whose page reads only window.__ENV__, signs an end user up,
// writes and reads their row with postgrest-js (shipped in the site), logs in and refreshes.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { deployStaticSite, startAppSite, type AppSiteHarness } from '../helpers/browser.ts';
import type { SpawnedServer } from '../helpers/server.ts';
import type { AnyTool, HttpBinding } from '../../src/core/define.ts';
import { authLogin, authRefresh, authSignup } from '../../tools/auth/auth.ts';
import { zipOf } from '../integration/frontend-helpers.ts';
import { callTool, connectMcp, request, resultJson } from './e2e-helpers.ts';

let harness: AppSiteHarness;
let server: SpawnedServer;
let browser: Browser;
let appId: string;
let serviceKey: string;
let publishableKey: string;
let deploymentId: string;
/** base_url's origin (http://localhost:<port>): the API the pages call, from their own origin. */
let origin: string;
/** The app's own host, where its site is served: http://{subdomain}.localhost:<port>/. */
let site: string;

const APP_JS = `
const env = window.__ENV__;
document.getElementById('greeting').textContent = env.GREETING;
document.getElementById('app').textContent = env.SVC_APP_ID;
document.getElementById('route').textContent = location.pathname;
const res = await fetch(env.SVC_API_URL + '/messages?select=text&order=text');
const rows = await res.json();
const list = document.getElementById('messages');
for (const row of rows) {
  const li = document.createElement('li');
  li.textContent = row.text;
  list.appendChild(li);
}
document.getElementById('status').textContent = 'loaded ' + rows.length;
`;

function indexHtml(): string {
  // The site is at the root of the app's host (a Vite build's base: '/'); <base> makes deep links load the same files.
  return `<!doctype html>
<html>
  <head>
    <meta charset="utf-8" />
    <base href="/" />
    <title>Messages</title>
    <script src="__env.js"></script>
    <script type="module" src="assets/app-0123abcd.js"></script>
  </head>
  <body>
    <h1 id="greeting"></h1>
    <p>app <span id="app"></span> at <span id="route"></span></p>
    <ul id="messages"></ul>
    <p id="status">loading</p>
  </body>
</html>`;
}

beforeAll(async () => {
  harness = await startAppSite('Browser site');
  ({ server, browser, appId, serviceKey, publishableKey, site } = harness);
  origin = `http://localhost:${server.port}`;
}, 90_000);

afterAll(() => harness?.close());

describe('a deployed site in headless Chromium', () => {
  it('deploys: schema and rows over HTTP, frontend env, zip upload, start, READY', async () => {
    const schema = {
      tables: {
        messages: {
          columns: { id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' }, text: { type: 'text' } },
          access: 'public',
        },
      },
    };
    const applied = await request(server.url, `/v1/${appId}/schema/apply`, { method: 'POST', key: serviceKey, body: { schema, name: 'messages' } });
    expect(applied.status).toBe(200);
    for (const text of ['second row from the API', 'first row from the API']) {
      const inserted = await request(server.url, `/v1/${appId}/messages`, { method: 'POST', key: serviceKey, body: { text } });
      expect(inserted.status).toBe(201);
    }
    const env = await request(server.url, `/v1/${appId}/frontend/env`, { method: 'PUT', key: serviceKey, body: { GREETING: 'Hello' } });
    expect(env.json).toMatchObject({ keys: ['GREETING'] });

    const zip = await zipOf({ 'index.html': indexHtml(), 'assets/app-0123abcd.js': APP_JS });
    const created = await request(server.url, `/v1/${appId}/frontend/deployments`, { method: 'POST', key: serviceKey, body: { framework: 'react-vite' } });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ expiresIn: 900, maxSizeBytes: 100 * 1024 * 1024, status: 'WAITING' });
    deploymentId = created.json.id;
    const uploadUrl = new URL(created.json.uploadUrl);
    expect(uploadUrl.origin).toBe(origin);
    const put = await fetch(uploadUrl, { method: 'PUT', headers: { 'content-type': 'application/zip' }, body: new Uint8Array(zip) });
    expect(put.status).toBe(200);
    const started = await request(server.url, `/v1/${appId}/frontend/deployments/${deploymentId}/start`, { method: 'POST', key: serviceKey });
    expect(started.status).toBe(202);
    expect(started.json.platform_env).toEqual(expectedPlatformEnv());

    const deadline = Date.now() + 20_000;
    let deployment: any;
    do {
      await new Promise((r) => setTimeout(r, 100));
      deployment = (await request(server.url, `/v1/${appId}/frontend/deployments/${deploymentId}`, { key: serviceKey })).json;
    } while (deployment.status === 'BUILDING' && Date.now() < deadline);
    expect(deployment).toMatchObject({ status: 'READY', live: true, file_count: 2, url: site });
  }, 60_000);

  it('shows the greeting and both rows the page fetched from the data API', async () => {
    const page = await browser.newPage();
    try {
      const response = await page.goto(site);
      expect(response?.status()).toBe(200);
      expect(response?.headers()['cache-control']).toBe('no-cache');
      await page.waitForFunction(() => document.getElementById('status')?.textContent === 'loaded 2', undefined, { timeout: 15_000 });
      expect(await page.textContent('#greeting')).toBe('Hello');
      expect(await page.textContent('#app')).toBe(appId);
      expect(await page.locator('#messages li').allTextContents()).toEqual(['first row from the API', 'second row from the API']);
    } finally {
      await page.close();
    }
  }, 60_000);

  it('renders index.html for an SPA deep link (react-vite) and the app sees its route', async () => {
    const page = await browser.newPage();
    try {
      const response = await page.goto(`${site}some/route`);
      expect(response?.status()).toBe(200);
      await page.waitForFunction(() => document.getElementById('status')?.textContent === 'loaded 2', undefined, { timeout: 15_000 });
      expect(await page.textContent('#route')).toBe('/some/route');
      expect(await page.textContent('#greeting')).toBe('Hello');
      expect(await page.locator('#messages li').count()).toBe(2);
    } finally {
      await page.close();
    }
  }, 60_000);

  it('an agent sees the same deployment over MCP', async () => {
    const mcp = await connectMcp(server.url, server.platformKey);
    try {
      const result = await callTool(mcp.client, 'frontend_deploy_get', { app_id: appId, id: deploymentId });
      expect(result.isError).toBeFalsy();
      const rest = await request(server.url, `/v1/${appId}/frontend/deployments/${deploymentId}`, { key: server.platformKey });
      expect(resultJson(result)).toEqual(rest.json);
      const env = await callTool(mcp.client, 'frontend_env_get', { app_id: appId });
      expect(resultJson(env)).toEqual({ keys: ['GREETING'] });
      const refused = await callTool(mcp.client, 'frontend_deploy_start', { app_id: appId, id: deploymentId });
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toContain('INVALID_DEPLOYMENT_STATE');
    } finally {
      await mcp.close();
    }
  });
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** postgrest-js's own ES module build (it imports nothing), served as one of the site's files. */
function postgrestModule(): string {
  const cjs = createRequire(import.meta.url).resolve('@supabase/postgrest-js');
  return readFileSync(path.join(path.dirname(cjs), 'index.mjs'), 'utf8');
}

/** The page's whole program: every URL comes from window.__ENV__; the outcome is written to #result as JSON. */
const API_APP_JS = `
import { PostgrestClient } from './postgrest-js.mjs';
const env = window.__ENV__;
const credentials = { email: 'reader@example.com', password: 'correct horse battery' };
async function post(url, body) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}
const data = (token) => new PostgrestClient(env.SVC_DATA_URL, { headers: { Authorization: 'Bearer ' + token } });
const signup = await post(env.SVC_AUTH_SIGNUP_URL, credentials);
const inserted = await data(signup.body.access_token).from('notes').insert({ text: 'written from the page' }).select('text,user_id');
const login = await post(env.SVC_AUTH_LOGIN_URL, credentials);
const refreshed = await post(env.SVC_AUTH_REFRESH_URL, { refresh_token: login.body.refresh_token });
const read = await data(refreshed.body.access_token).from('notes').select('text,user_id');
document.getElementById('result').textContent = JSON.stringify({
  user: signup.body.user.id,
  statuses: [signup.status, login.status, refreshed.status],
  inserted: { status: inserted.status, data: inserted.data, error: inserted.error },
  read: { status: read.status, data: read.data, error: read.error },
});
`;

const API_INDEX_HTML = `<!doctype html>
<html>
  <head>
    <meta charset="utf-8" />
    <script src="__env.js"></script>
    <script type="module" src="assets/app-0123abcd.js"></script>
  </head>
  <body><pre id="result"></pre></body>
</html>`;

/** What every site of the app must get: the same URLs the tool descriptors route. */
function expectedPlatformEnv(): Record<string, string> {
  const route = (tool: AnyTool) => origin + (tool.http as HttpBinding<unknown>).path.replace('{app_id}', appId);
  return {
    SVC_APP_ID: appId,
    SVC_API_URL: `${origin}/v1/${appId}`,
    SVC_DATA_URL: `${origin}/v1/${appId}`,
    SVC_AUTH_SIGNUP_URL: route(authSignup),
    SVC_AUTH_LOGIN_URL: route(authLogin),
    SVC_AUTH_REFRESH_URL: route(authRefresh),
    SVC_PUBLISHABLE_KEY: publishableKey,
  };
}

describe('a site knows its API', () => {
  it('the deploy result names the SVC_ values and __env.js serves exactly them beside the app variables', async () => {
    const schema = {
      tables: {
        notes: {
          columns: { id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' }, user_id: { type: 'uuid' }, text: { type: 'text' } },
          access: 'user',
        },
      },
    };
    const applied = await request(server.url, `/v1/${appId}/schema/apply`, { method: 'POST', key: serviceKey, body: { schema, name: 'notes' } });
    expect(applied.status).toBe(200);

    const files = { 'index.html': API_INDEX_HTML, 'assets/app-0123abcd.js': API_APP_JS, 'assets/postgrest-js.mjs': postgrestModule() };
    const { deployed, deployment } = await deployStaticSite(server.url, appId, serviceKey, files);
    expect(deployed.status).toBe(202);
    expect(deployed.json.platform_env).toEqual(expectedPlatformEnv());
    expect(deployment).toMatchObject({ status: 'READY', live: true, file_count: 3, url: site });

    const script = await request(site, '__env.js');
    expect(script.status).toBe(200);
    // GREETING is the app's own variable, set by the first deployment above.
    expect(script.text).toBe(`window.__ENV__ = ${JSON.stringify({ GREETING: 'Hello', ...expectedPlatformEnv() })};\n`);
  }, 60_000);

  it('in Chromium the page signs an end user up, writes and reads their row, logs in and refreshes, from window.__ENV__ alone', async () => {
    const page = await browser.newPage();
    try {
      expect((await page.goto(site))?.status()).toBe(200);
      await page.waitForFunction(() => document.getElementById('result')?.textContent !== '', undefined, { timeout: 15_000 });
      const result = JSON.parse((await page.textContent('#result'))!);
      expect(result.user).toMatch(UUID);
      const row = { text: 'written from the page', user_id: result.user };
      expect(result).toEqual({
        user: result.user,
        statuses: [201, 200, 200],
        inserted: { status: 201, data: [row], error: null },
        read: { status: 200, data: [row], error: null },
      });
      expect(await endUserId()).toBe(result.user);
      const stored = await request(server.url, `/v1/${appId}/notes?select=text,user_id`, { key: serviceKey });
      expect(stored.json).toEqual([row]);
    } finally {
      await page.close();
    }
  }, 60_000);
});

/** The one end user of the app, as the platform lists it (the page signed them up). */
async function endUserId(): Promise<string> {
  const users = await request(server.url, `/v1/${appId}/auth/users`, { key: serviceKey });
  expect(users.json.users).toHaveLength(1);
  return users.json.users[0].id;
}
