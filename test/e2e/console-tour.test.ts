// The console's main pages, each loaded afresh in Debian's Chromium against the platform spawned as `npm start` runs
// it, with real data behind them: an app with a schema, 500 rows, a function called once, an agent's proposal waiting,
// the shipped templates. Each load is timed in the page from the navigation's start until its own content has arrived
// (its heading shown and no section still loading: the HTML, the script and its chunks, the session, then the page's
// calls), without the browser's cache (the console is served no-store), and the script fetched for it is counted.
//
// CONSOLE_SCREENSHOTS=1 also saves each page at 1280x800 to docs/screenshots/console-<page>.png (docs/console.md shows them).
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callFrom, startConsole, type ConsoleHarness } from '../helpers/console.ts';
import { callTool, connectMcp, resultJson } from './e2e-helpers.ts';
import { waitFor } from '../integration/frontend-helpers.ts';

const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS === '1';
const SHOTS_DIR = path.resolve(import.meta.dirname, '../../docs/screenshots');
/** Generous: a page is a few small requests on loopback; a load this slow means something is wrong. */
const LOAD_BUDGET_MS = 3_000;
const LOADS_PER_PAGE = 3;

const SCHEMA = {
  tables: {
    authors: { columns: { id: { type: 'integer', primary: true, identity: true }, name: { type: 'text', nullable: false } }, access: 'public' },
    books: {
      columns: {
        id: { type: 'integer', primary: true, identity: true },
        title: { type: 'text', nullable: false },
        author_id: { type: 'integer', references: { table: 'authors', column: 'id' } },
        published: { type: 'date' },
      },
    },
  },
};
const GREET = `export default async (req: Request) => {
  console.log('greeting', new URL(req.url).searchParams.get('name'));
  return Response.json({ hello: new URL(req.url).searchParams.get('name') });
};`;

let h: ConsoleHarness;
let appId: string;

beforeAll(async () => {
  h = await startConsole({ SVC_TEMPLATES_INSTALL: 'true' });
  const { owner } = h;
  ({ appId } = await h.createApp('Library'));
  const ok = (res: { status: number; json: unknown }, what: string) => {
    if (res.status >= 300) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.json)}`);
  };
  ok(await callFrom(owner, 'POST', `/v1/${appId}/schema/apply`, { schema: SCHEMA }), 'schema');
  ok(await callFrom(owner, 'POST', `/v1/${appId}/authors`, [{ name: 'Ursula' }, { name: 'Italo' }]), 'authors');
  const books = Array.from({ length: 500 }, (_, i) => ({ title: `Book ${i + 1}`, author_id: (i % 2) + 1, published: `20${String(10 + (i % 15))}-01-0${(i % 9) + 1}` }));
  ok(await callFrom(owner, 'POST', `/v1/${appId}/books`, books), 'books');
  ok(await callFrom(owner, 'POST', `/v1/${appId}/functions`, { name: 'greet', code: GREET }), 'function');
  ok(await callFrom(owner, 'POST', `/v1/${appId}/functions/greet/invoke`, { method: 'GET', query: { name: 'Ada' } }), 'invoke');
  // An agent's principle waits for the owner's approval.
  const agent = await connectMcp(h.server.url, h.server.platformKey);
  try {
    const proposed = resultJson(await callTool(agent.client, 'substrate_propose', { capability: 'record_principle', payload: { title: 'Never email customers on Sundays', applies_to: {}, constraint_spec: { logic: { '==': [1, 1] } } } }));
    expect(proposed.requires_approval).toBe(true);
  } finally {
    await agent.close();
  }
  // The templates install in the background at start: the pages are timed once that work is done, not beside it.
  await waitFor(async () => ((await callFrom(owner, 'GET', '/v1/templates')).json?.templates?.length === 2 ? true : undefined), 120_000, 'the shipped templates installed');
}, 240_000);
afterAll(async () => {
  await h?.close();
});

/**
 * Milliseconds from the navigation's start until the page shows `heading` and nothing on it is still loading, read in
 * the page itself at the first animation frame that shows it (so the test driver's own round trips are not counted).
 */
async function contentShown(page: Page, heading: string): Promise<number> {
  const shown = await page.waitForFunction((text) => {
    const headings = [...document.querySelectorAll('h1, h2, h3')].some((h) => h.textContent?.trim() === text);
    return headings && !document.querySelector('[aria-busy="true"]') ? performance.now() : false;
  }, heading);
  return Math.round((await shown.jsonValue()) as number);
}

/** One fresh load of `route` in a new tab of the owner's browser: milliseconds to content, and script bytes fetched. */
async function load(route: string, heading: string): Promise<{ ms: number; scriptBytes: number; page: Page }> {
  const page = await h.owner.context().newPage();
  let scriptBytes = 0;
  page.on('response', (res) => {
    if (res.url().endsWith('.js')) void res.body().then((b) => (scriptBytes += b.length), () => {});
  });
  await page.goto(`${h.consoleUrl}${route}`);
  const ms = await contentShown(page, heading);
  await page.waitForLoadState('networkidle');
  return { ms, scriptBytes, page };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

describe('the console, page by page', () => {
  it(`loads each main page with its data in under ${LOAD_BUDGET_MS} ms`, async () => {
    const pages: Array<[name: string, route: string, heading: string]> = [
      ['apps', '#/apps', 'Apps'],
      ['app-overview', `#/apps/${appId}`, 'Service keys'],
      ['schema', `#/apps/${appId}/schema`, 'Schema'],
      ['table-editor', `#/apps/${appId}/data/books`, 'Table editor'],
      ['functions', `#/apps/${appId}/functions/greet`, 'greet'],
      ['sites', `#/apps/${appId}/sites`, 'Sites'],
      ['templates', '#/templates', 'Templates'],
      ['approvals', '#/approvals', 'Approvals'],
      ['ledger', '#/substrate/ledger', 'Ledger'],
      ['billing', '#/billing', 'Billing'],
    ];
    const rows: string[] = [];
    for (const [name, route, heading] of pages) {
      const runs: number[] = [];
      let script = 0;
      for (let i = 0; i < LOADS_PER_PAGE; i++) {
        const { ms, scriptBytes, page } = await load(route, heading);
        runs.push(ms);
        script = scriptBytes;
        if (SCREENSHOTS && i === 0) await page.screenshot({ path: path.join(SHOTS_DIR, `console-${name}.png`) });
        await page.close();
      }
      rows.push(`${name.padEnd(13)} median ${String(median(runs)).padStart(4)} ms (${runs.join(', ')}), script ${(script / 1024).toFixed(1)} KB`);
      expect(median(runs), name).toBeLessThan(LOAD_BUDGET_MS);
    }
    console.log(`console: page loads, from navigation to the page's data shown (${LOADS_PER_PAGE} loads each):\n${rows.join('\n')}`);
    expect(h.problems).toEqual([]);
  }, 120_000);
});
