// The console's runtime tabs (issue 30) in Debian's Chromium against the platform started as `npm start` starts it:
// the owner deploys a function in the browser, invokes it with a body and reads the response, reads its log lines
// (with the console.log it printed) filtered by level, its metrics and their chart; uploads a site zip built here, waits for READY
// and opens the live site, deploys a second version and rolls back to the first, which is served again, and sets the site's variables; uploads a
// file, downloads it (same bytes) and deletes it. A viewer sees none of the buttons that change anything, and the API
// refuses those calls anyway (403 FORBIDDEN_ROLE).
import { readFileSync } from 'node:fs';
import pg from 'pg';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { databaseUrl } from '../helpers/db.ts';
import { callFrom, startConsole, tab, type ConsoleHarness } from '../helpers/console.ts';
import { zipOf } from '../integration/frontend-helpers.ts';

const GREET = `export default async (req: Request) => {
  const url = new URL(req.url);
  const body = (await req.json()) as { name: string };
  console.log('greeting', body.name, 'at', url.pathname, url.searchParams.get('lang'), req.headers.get('x-tone'));
  return Response.json({ hello: body.name, lang: url.searchParams.get('lang') }, { headers: { 'x-served-by': 'greet' } });
};`;

const site = (title: string) => zipOf({ 'index.html': `<!doctype html><html><head><title>${title}</title></head><body><h1>${title}</h1></body></html>` });

let h: ConsoleHarness;
let appId: string;
let viewer: Page;

beforeAll(async () => {
  h = await startConsole();
  // Rolling back needs the earlier deployment's files: only the pro plan keeps those of deployments that are not live.
  const control = new pg.Client({ connectionString: databaseUrl(h.server.controlDb) });
  await control.connect();
  await control.query(`update accounts set plan = 'pro'`);
  await control.end();
  ({ appId } = await h.createApp('Runtime'));
  viewer = await h.personAs('viewer', 'vera@example.com');
}, 90_000);
afterEach(async (t) => {
  if (t.task.result?.state === 'fail') await h?.owner.screenshot({ path: `/tmp/console-runtime-${t.task.name.slice(0, 24).replace(/\W+/g, '-')}.png` }).catch(() => {});
});
afterAll(async () => {
  await h?.close();
});

/** Opens a tab of the app's page at `rest` (a function's name), waiting for its heading. */
const openTab = async (page: Page, name: string, rest = '') => {
  await page.goto(`${h.consoleUrl}#/apps/${appId}/${name.toLowerCase()}${rest && `/${rest}`}`);
  await page.getByRole('heading', { name: rest || name, level: 2, exact: true }).waitFor();
};
/** The value of a term of a facts list (dl) named `list`. */
const fact = (page: Page, list: string, term: string) =>
  page.locator(`dl[aria-label="${list}"] > div`).filter({ has: page.locator('dt').getByText(term, { exact: true }) }).locator('dd').textContent();

describe('the console runtime tabs', () => {
  it('deploys a function, invokes it with a body, reads its logs by level and its metrics', async () => {
    const page = h.owner;
    await page.goto(`${h.consoleUrl}#/apps/${appId}`);
    await tab(page, 'App', 'Functions');
    await page.getByText('No functions yet.').waitFor();
    const form = page.getByRole('form', { name: 'Deploy a new function' });
    await form.getByLabel('Name', { exact: true }).fill('greet');
    await form.getByLabel('Code', { exact: true }).fill(GREET);
    await form.getByRole('button', { name: 'Deploy function' }).click();
    await page.getByRole('heading', { name: 'greet', level: 2 }).waitFor();
    expect(await page.getByLabel('Code of greet').textContent()).toBe(GREET);
    const got = await callFrom(page, 'GET', `/v1/${appId}/functions/greet`);
    expect([got.status, got.json.code, got.json.trigger]).toEqual([200, GREET, { type: 'http', config: {} }]);

    // A POST with a query, a header and a JSON body; then a GET without a body, which the function fails on.
    const invoke = page.getByRole('form', { name: 'Invoke greet' });
    await invoke.getByLabel('Path').fill('/hi');
    await invoke.getByLabel('Query').fill('lang=en');
    await invoke.getByLabel('Headers (one per line, Name: value)').fill('x-tone: warm');
    await invoke.getByLabel('Body', { exact: true }).fill('{ "name": "Ada" }');
    await invoke.getByRole('button', { name: 'Invoke' }).click();
    const response = page.getByRole('region', { name: 'Response' });
    await response.getByLabel('Response body').getByText('"hello": "Ada"').waitFor();
    expect(JSON.parse((await response.getByLabel('Response body').textContent())!)).toEqual({ hello: 'Ada', lang: 'en' });
    expect(await fact(page, 'Response status', 'Status')).toBe('200');
    expect(await response.getByRole('row').filter({ hasText: 'x-served-by' }).getByRole('cell').allTextContents()).toEqual(['x-served-by', 'greet']);
    expect(await response.getByLabel('Console output').textContent()).toBe('[log] greeting Ada at /hi en warm');

    await invoke.getByLabel('Method').selectOption('GET');
    await invoke.getByLabel('Body', { exact: true }).fill('');
    await invoke.getByRole('button', { name: 'Invoke' }).click();
    await page.waitForFunction(() => document.querySelector('[aria-label="Response status"] dd')?.textContent === '500');

    // Logs newest first, then by level: the failed GET alone, the POST alone with its console line.
    const logs = page.getByRole('table', { name: 'Logs of greet' });
    await logs.locator('tbody tr').nth(1).waitFor();
    expect(await logs.locator('tbody tr').count()).toBe(2);
    const filters = page.getByRole('form', { name: 'Log filters' });
    await filters.getByLabel('Level').selectOption('error');
    await filters.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForFunction(() => document.querySelector('[data-level="info"]') === null && document.querySelector('[data-level="error"]') !== null);
    const errorRows = await logs.locator('tbody tr').allTextContents();
    expect(errorRows).toHaveLength(1);
    expect(errorRows[0]).toContain('GET /hi');
    expect(errorRows[0]).toContain('500');
    await filters.getByLabel('Level').selectOption('info');
    await filters.getByRole('button', { name: 'Apply filters' }).click();
    await logs.locator('[data-level="info"]').waitFor();
    await page.waitForFunction(() => document.querySelector('[data-level="error"]') === null);
    expect(await logs.locator('tbody tr').count()).toBe(1);
    expect(await logs.getByLabel('Console output').textContent()).toBe('[log] greeting Ada at /hi en warm');
    const api = await callFrom(page, 'GET', `/v1/${appId}/functions/greet/logs?level=info`);
    expect([api.status, api.json.logs.length, api.json.logs[0].trigger, api.json.logs[0].console]).toEqual([200, 1, 'test', [{ level: 'log', message: 'greeting Ada at /hi en warm' }]]);

    await expect.poll(() => fact(page, 'Metrics', 'Invocations')).toBe('2');
    await expect.poll(() => fact(page, 'Metrics', 'Errors')).toBe('1 (50%)');
    // The chart of functions_metrics: the last day's hours, then the last 30 days.
    await page.getByRole('img', { name: /^Last 24 hours: 2 invocations, 1 errors;/ }).waitFor();
    expect(await page.locator('svg.bars g').count()).toBe(25);
    await page.getByLabel('Invocations over').selectOption('Last 30 days');
    await page.getByRole('img', { name: /^Last 30 days: 2 invocations, 1 errors;/ }).waitFor();
    const days = await callFrom(page, 'GET', `/v1/${appId}/functions/greet/metrics?bucket=day`);
    const totals = days.json.buckets.reduce((t: number[], b: { invocations: number; errors: number }) => [t[0]! + b.invocations, t[1]! + b.errors], [0, 0]);
    expect([days.status, days.json.buckets.length, totals]).toEqual([200, 31, [2, 1]]);
  });

  it('uploads a site zip, opens the live site, deploys a second version, rolls back to the first, sets its variables', async () => {
    const page = h.owner;
    await openTab(page, 'Sites');
    const deploy = async (title: string): Promise<string> => {
      await page.locator('input[name="zip"]').setInputFiles({ name: `${title}.zip`, mimeType: 'application/zip', buffer: await site(title) });
      const started = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/start'));
      await page.getByRole('button', { name: 'Deploy zip' }).click();
      const id = ((await (await started).json()) as { id: string }).id;
      await page.getByRole('status', { name: 'Deployment progress' }).filter({ hasText: id.slice(0, 8) }).getByText('READY', { exact: true }).waitFor();
      return id;
    };
    const first = await deploy('Version one');
    const liveUrl = await page.getByRole('link', { name: 'Open the live site' }).getAttribute('href');
    // The app's own host, never the console's origin.
    expect(liveUrl).toMatch(new RegExp(`^http://[a-z0-9-]+\\.localhost:${h.server.port}/$`));
    const visitor = await page.context().newPage();
    await visitor.goto(liveUrl!);
    expect(await visitor.locator('h1').textContent()).toBe('Version one');

    const second = await deploy('Version two');
    await page.locator(`tr[data-deployment="${second}"] .badge`).waitFor();
    await visitor.reload();
    expect(await visitor.locator('h1').textContent()).toBe('Version two');

    await page.locator(`tr[data-deployment="${first}"]`).getByRole('button', { name: /^Roll back to deployment/ }).click();
    await page.locator(`tr[data-deployment="${first}"] .badge`).waitFor();
    expect(await page.locator(`tr[data-deployment="${second}"]`).getByRole('button', { name: /^Roll back to deployment/ }).count()).toBe(1);
    await visitor.reload();
    expect(await visitor.locator('h1').textContent()).toBe('Version one');
    const list = await callFrom(page, 'GET', `/v1/${appId}/frontend/deployments`);
    expect(list.json.deployments.map((d: { id: string; status: string; live: boolean }) => [d.id, d.status, d.live])).toEqual([
      [second, 'READY', false],
      [first, 'READY', true],
    ]);

    // The site's public variables: replaced through the form, named on the page, served in __env.js.
    const env = page.getByRole('form', { name: "Replace the site's variables" });
    await env.getByLabel('Variables (one per line, NAME=value)').fill('GREETING=Hello there\nTHEME=dark');
    await env.getByRole('button', { name: 'Replace variables' }).click();
    await page.getByText('Variables in window.__ENV__:').waitFor();
    expect((await callFrom(page, 'GET', `/v1/${appId}/frontend/env`)).json).toEqual({ keys: ['GREETING', 'THEME'] });
    await visitor.goto(`${liveUrl}__env.js`);
    expect(await visitor.locator('body').textContent()).toContain('"GREETING":"Hello there","THEME":"dark"');
    await visitor.close();
  });

  it('uploads a file, downloads the same bytes and deletes it', async () => {
    const page = h.owner;
    await openTab(page, 'Files');
    const bytes = Buffer.from('hello files ✓\n');
    await page.locator('input[name="file"]').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: bytes });
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page.getByRole('cell', { name: 'notes.txt', exact: true }).waitFor();
    // The table and the limits reload one after the other: the cell can show before the bytes used do.
    await expect.poll(() => fact(page, 'Storage', 'Used')).toMatch(new RegExp(`^${bytes.length} B of `));
    const listed = await callFrom(page, 'GET', `/storage/${appId}/objects`);
    expect(listed.json).toEqual([{ id: expect.any(String), filename: 'notes.txt', content_type: 'text/plain', size_bytes: bytes.length, created_at: expect.any(String) }]);

    const downloading = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download notes.txt' }).click();
    const download = await downloading;
    expect(download.suggestedFilename()).toBe('notes.txt');
    expect(readFileSync((await download.path())!)).toEqual(bytes);

    await page.getByRole('button', { name: 'Delete notes.txt' }).click();
    await page.getByText('No files.').waitFor();
    expect((await callFrom(page, 'GET', `/storage/${appId}/objects`)).json).toEqual([]);
    // The viewer's refusals below need a file to aim at.
    await page.locator('input[name="file"]').setInputFiles({ name: 'kept.txt', mimeType: 'text/plain', buffer: bytes });
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page.getByRole('cell', { name: 'kept.txt', exact: true }).waitFor();
  });

  it('a viewer reads every tab without a button that changes anything, and the API refuses them', async () => {
    await openTab(viewer, 'Functions', 'greet');
    await viewer.getByLabel('Code of greet').waitFor();
    await viewer.getByRole('table', { name: 'Logs of greet' }).waitFor();
    await openTab(viewer, 'Sites');
    await viewer.getByRole('table', { name: 'Deployments' }).waitFor();
    await openTab(viewer, 'Files');
    await viewer.getByRole('cell', { name: 'kept.txt', exact: true }).waitFor();
    await viewer.getByRole('button', { name: 'Download kept.txt' }).waitFor();
    // Every button a viewer sees on these tabs only reads.
    for (const [name, rest] of [['Functions', 'greet'], ['Functions', ''], ['Sites', ''], ['Files', '']] as const) {
      await openTab(viewer, name, rest);
      await viewer.waitForFunction(() => !document.querySelector('[aria-busy="true"]'));
      const buttons = (await viewer.locator('main button').allTextContents()).filter((b) => !['Apply filters', 'Download'].includes(b));
      expect([name, rest, buttons]).toEqual([name, rest, []]);
      expect(await viewer.locator('main input[type="file"], main textarea').count()).toBe(0);
    }

    const owned = await callFrom(h.owner, 'GET', `/storage/${appId}/objects`);
    const deployments = (await callFrom(h.owner, 'GET', `/v1/${appId}/frontend/deployments`)).json.deployments as Array<{ id: string }>;
    const writes: Array<[string, string, unknown?]> = [
      ['POST', `/v1/${appId}/functions`, { name: 'sneaky', code: GREET }],
      ['POST', `/v1/${appId}/functions/greet/invoke`, { body: { name: 'Vera' } }],
      ['PATCH', `/v1/${appId}/functions/greet/env`, { A: 'b' }],
      ['DELETE', `/v1/${appId}/functions/greet`],
      ['POST', `/v1/${appId}/frontend/deployments`, { framework: 'static' }],
      ['POST', `/v1/${appId}/frontend/deployments/${deployments[0]!.id}/promote`],
      ['DELETE', `/v1/${appId}/frontend/deployments/${deployments[1]!.id}`],
      ['PUT', `/v1/${appId}/frontend/env`, {}],
      ['POST', `/storage/${appId}/upload`, { filename: 'x.txt', contentType: 'text/plain', sizeBytes: 3 }],
      ['DELETE', `/storage/${appId}/${owned.json[0].id}`],
    ];
    for (const [method, url, body] of writes) {
      const refused = await callFrom(viewer, method, url, body);
      expect([method, url, refused.status, refused.json.error.code]).toEqual([method, url, 403, 'FORBIDDEN_ROLE']);
    }
    expect(h.problems).toEqual([]);
  });
});
