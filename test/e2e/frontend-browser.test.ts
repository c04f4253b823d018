// A hosted site seen in a real browser: the server is started as `npm start` would, a schema and two rows are
// made over HTTP, a small built site (index.html + a hashed JS asset that reads window.__ENV__ and fetches the
// app's data API anonymously) is zipped, uploaded, built by the worker and opened in headless Chromium.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser } from 'playwright-core';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { zipOf } from '../integration/frontend-helpers.ts';
import { callTool, connectMcp, request } from './e2e-helpers.ts';

let server: SpawnedServer;
let browser: Browser;
let appId: string;
let serviceKey: string;
let deploymentId: string;
/** Same origin as base_url (http://localhost:<port>), so the page and the API it calls are one host. */
let origin: string;

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

function indexHtml(app: string): string {
  // A Vite build for a sub-path sets base: '/sites/<app_id>/'; <base> makes deep links load the same files.
  return `<!doctype html>
<html>
  <head>
    <meta charset="utf-8" />
    <base href="/sites/${app}/" />
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
  server = await spawnServer();
  origin = `http://localhost:${server.port}`;
  const init = await request(server.url, '/init', { method: 'POST', key: server.platformKey, body: { name: 'Browser site' } });
  expect(init.status).toBe(201);
  appId = init.json.app_id;
  serviceKey = init.json.service_key.key;
  // Playwright gives the browser a fresh temporary profile of its own.
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

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

    const zip = await zipOf({ 'index.html': indexHtml(appId), 'assets/app-0123abcd.js': APP_JS });
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

    const deadline = Date.now() + 20_000;
    let deployment: any;
    do {
      await new Promise((r) => setTimeout(r, 100));
      deployment = (await request(server.url, `/v1/${appId}/frontend/deployments/${deploymentId}`, { key: serviceKey })).json;
    } while (deployment.status === 'BUILDING' && Date.now() < deadline);
    expect(deployment).toMatchObject({ status: 'READY', live: true, file_count: 2, url: `${origin}/sites/${appId}/` });
  }, 60_000);

  it('shows the greeting and both rows the page fetched from the data API', async () => {
    const page = await browser.newPage();
    try {
      const response = await page.goto(`${origin}/sites/${appId}/`);
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
      const response = await page.goto(`${origin}/sites/${appId}/some/route`);
      expect(response?.status()).toBe(200);
      await page.waitForFunction(() => document.getElementById('status')?.textContent === 'loaded 2', undefined, { timeout: 15_000 });
      expect(await page.textContent('#route')).toBe(`/sites/${appId}/some/route`);
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
      expect(result.structuredContent).toEqual(rest.json);
      const env = await callTool(mcp.client, 'frontend_env_get', { app_id: appId });
      expect(env.structuredContent).toEqual({ keys: ['GREETING'] });
      const refused = await callTool(mcp.client, 'frontend_deploy_start', { app_id: appId, id: deploymentId });
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toContain('INVALID_DEPLOYMENT_STATE');
    } finally {
      await mcp.close();
    }
  });
});
