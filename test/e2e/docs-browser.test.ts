// The manual at /docs in Chromium (issue 45): the navigation docs/index.md lists, every page and every link between
// pages (anchors included) resolving as served, and the search form finding a section and leading to it.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { launchChromium } from '../helpers/browser.ts';
import { request } from './e2e-helpers.ts';

let server: SpawnedServer;
let browser: Browser;
let page: Page;
let origin: string;
const problems: string[] = [];

/** The pages docs/index.md lists, in its order. */
const listed = [...readFileSync(path.resolve(import.meta.dirname, '../../docs/index.md'), 'utf8').matchAll(/^ *- \[([^\]]+)\]\(([^)]+)\.md\)/gm)].map((m) => ({ title: m[1]!, name: m[2]! }));

beforeAll(async () => {
  const port = await freePort();
  server = await spawnServer({ PORT: String(port) });
  origin = `http://localhost:${port}`;
  browser = await launchChromium();
  page = await (await browser.newContext()).newPage();
  page.setDefaultTimeout(15_000);
  page.on('pageerror', (e) => problems.push(e.message));
  // A failed load is named by its response (Chromium's console message names no address); the browser's own favicon
  // request is no page's.
  page.on('response', (r) => void (r.status() >= 400 && new URL(r.url()).pathname !== '/favicon.ico' && problems.push(`${r.status()} ${r.url()}`)));
  page.on('console', (m) => void (m.type() === 'error' && !m.text().startsWith('Failed to load resource') && problems.push(m.text())));
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const hrefs = (html: string) => [...html.matchAll(/href="(\/docs\/[^"]*)"/g)].map((m) => m[1]!.replaceAll('&#38;', '&'));

describe('/docs', () => {
  it('opens on the table of contents, its navigation the pages docs/index.md lists, each one page away', async () => {
    await page.goto(`${origin}/docs/`);
    await page.getByRole('heading', { name: 'Manual', level: 1 }).waitFor();
    const navLinks = page.getByRole('navigation', { name: 'Manual' }).getByRole('link');
    expect(await navLinks.allInnerTexts()).toEqual(listed.map((l) => l.title));
    await navLinks.filter({ hasText: /^Getting started$/ }).click();
    await page.getByRole('heading', { name: 'Getting started', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/docs/getting-started');
    expect(await page.getByRole('navigation', { name: 'Manual' }).locator('a[aria-current="page"]').innerText()).toBe('Getting started');
    expect(problems).toEqual([]);
  });

  it('serves every listed page, and every link between pages lands on a page and a heading that exist', async () => {
    const pages = new Map<string, string>();
    const fetchPage = async (pathname: string) => {
      if (!pages.has(pathname)) {
        const res = await request(origin, pathname);
        expect(res.status, pathname).toBe(200);
        pages.set(pathname, res.text);
      }
      return pages.get(pathname)!;
    };
    for (const l of listed) await fetchPage(`/docs/${l.name === 'index' ? '' : l.name}`);
    for (const [from, html] of [...pages]) {
      for (const href of hrefs(html)) {
        const [pathname, anchor] = href.split('#') as [string, string | undefined];
        if (pathname.startsWith('/docs/files/') || pathname.startsWith('/docs/search')) continue;
        const target = await fetchPage(pathname);
        if (anchor) expect(target.includes(`id="${anchor}"`), `${from} -> ${href}`).toBe(true);
      }
    }
  });

  it('searches the manual and leads to the section found', async () => {
    await page.goto(`${origin}/docs/`);
    await page.getByRole('searchbox', { name: 'Search the manual' }).fill('APP_PROTECTED remediation');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('heading', { name: 'Search', level: 1 }).waitFor();
    expect(await page.getByRole('status').innerText()).toMatch(/^\d+ sections? match “APP_PROTECTED remediation”\.$/);
    const first = page.getByRole('main').getByRole('listitem').first().getByRole('link');
    const href = (await first.getAttribute('href'))!;
    expect(href).toMatch(/^\/docs\/[a-z0-9/-]+#[a-z0-9-]+$/);
    await first.click();
    await page.waitForURL(`${origin}${href}`);
    expect(await page.locator(`[id="${href.split('#')[1]}"]`).count()).toBe(1);
    expect(await page.getByRole('main').innerText()).toContain('APP_PROTECTED');
    expect(problems).toEqual([]);
  });

  it('serves nothing outside docs/, escapes what a search echoes, and shows the manual on the platform host only', async () => {
    for (const hostile of ['/docs/files/..%2f..%2fpackage.json', '/docs/design/..%2F..%2F..%2Fetc%2Fpasswd', '/docs/files/screenshots/%2e%2e%2fpackage.json', '/docs/files/x.svg']) {
      expect((await request(origin, hostile)).status, hostile).toBe(404);
    }
    const echoed = await request(origin, `/docs/search?q=${encodeURIComponent('<script>alert(1)</script> bucket')}`);
    expect(echoed.text).not.toContain('<script>');
    expect(echoed.text).toContain('&#60;script&#62;alert(1)&#60;/script&#62; bucket');
    // Each snippet shows the word found.
    const hits = await request(origin, '/docs/search?q=bucket');
    const snippets = [...hits.text.matchAll(/<li class="hit"><a [^>]*>[^<]*<\/a><p>([^<]*)<\/p>/g)].map((m) => m[1]!.toLowerCase());
    expect(snippets.length).toBeGreaterThan(3);
    for (const snippet of snippets) expect(snippet).toContain('bucket');
    const head = await request(origin, '/docs/getting-started', { method: 'HEAD' });
    expect([head.status, head.text]).toEqual([200, '']);
    expect((await request(origin, '/docs/reference/')).text).toContain('<h1 id="reference">Reference</h1>');
    // On another host (an app's), /docs is not the platform's.
    expect((await request(origin, '/docs/', { headers: { host: 'someapp.localhost' } })).status).toBe(404);
  });

  it('answers an unknown page 404 with the navigation, and a search of nothing with no match', async () => {
    const missing = await request(origin, '/docs/no-such-page');
    expect(missing.status).toBe(404);
    expect(missing.text).toContain('<h1>Not found</h1>');
    const nothing = await request(origin, `/docs/search?q=${encodeURIComponent('zzqx '.repeat(100))}`);
    expect(nothing.status).toBe(200);
    expect(nothing.text).toContain('No section matches');
    expect(missing.headers['content-security-policy']).toMatch(/^default-src 'none'; style-src /);
  });
});
