// The web console's browser tests' shared start: the platform spawned as `npm start` starts it, Debian's Chromium, the
// owner signed up with the owner invitation (through the sign-up route from the console's own origin, as the page's
// form does) and a page of theirs open on the console; people of other roles invited and signed up the same way.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from './browser.ts';
import { freePort, spawnServer, type SpawnedServer } from './server.ts';

const VIEWPORT = { width: 1280, height: 800 };
export const CONSOLE_OWNER = { name: 'Olga Owner', email: 'olga@example.com', password: 'correct horse battery' };

export interface CallResult {
  status: number;
  json: any;
  headers: Record<string, string>;
}

export interface ConsoleHarness {
  server: SpawnedServer;
  /** The console on base_url's origin (http://localhost:<port>/console/): the origin the platform checks writes against. */
  consoleUrl: string;
  browser: Browser;
  /** A page of the signed-in owner, on the apps list. */
  owner: Page;
  /** Errors the pages threw (each test may assert none). */
  problems: string[];
  /** A fresh browser context's page; dialogs (confirm, prompt) are accepted. */
  newPage(who: string): Promise<Page>;
  /** A page of a new person of `role`, invited by the owner and signed up, on the apps list. */
  personAs(role: 'admin' | 'developer' | 'viewer', email: string): Promise<Page>;
  /** An app created by the owner through POST /init: its id and first service key. */
  createApp(name: string): Promise<{ appId: string; serviceKey: string }>;
  close(): Promise<void>;
}

/** A same-origin call from the page, as the console's own code makes it (the session cookie, the page's Origin). */
export function callFrom(page: Page, method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<CallResult> {
  return page.evaluate(
    async ([m, u, b, h]) => {
      const init: RequestInit = { method: m as string, headers: { ...(b === undefined ? {} : { 'content-type': 'application/json' }), ...(h as Record<string, string>) } };
      if (b !== undefined) init.body = JSON.stringify(b);
      const res = await fetch(u as string, init);
      const text = await res.text();
      let json: unknown = null;
      try {
        json = text ? JSON.parse(text) : null;
      } catch {
        json = text;
      }
      return { status: res.status, json: json as any, headers: Object.fromEntries(res.headers) };
    },
    [method, url, body, headers] as const,
  );
}

/** Waits for the page's level-1 heading `name`. */
export const heading = (page: Page, name: string) => page.getByRole('heading', { name, level: 1, exact: true }).waitFor();
/** Follows a link of the top navigation. */
export const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true }).click();
/** Opens a tab of the app's page or of the substrate's (the tab navigation named `bar`). */
export const tab = (page: Page, bar: 'App' | 'Substrate', name: string) => page.getByRole('navigation', { name: bar }).getByRole('link', { name, exact: true }).click();

/**
 * `host`: the platform's host name other than localhost (SVC_BASE_URL http://<host>:<port>, which Chromium resolves to
 * 127.0.0.1); without it the platform is at http://localhost:<port>.
 */
export async function startConsole(env: Record<string, string> = {}, host?: string): Promise<ConsoleHarness> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-console-'));
  const port = await freePort();
  const origin = `http://${host ?? 'localhost'}:${port}`;
  const server = await spawnServer({ SVC_DATA_DIR: dataDir, PORT: String(port), ...(host ? { SVC_BASE_URL: origin } : {}), ...env });
  const consoleUrl = `${origin}/console/`;
  const browser = await launchChromium(host ? [host] : []);
  const contexts: BrowserContext[] = [];
  const problems: string[] = [];

  const newPage = async (who: string): Promise<Page> => {
    const context = await browser.newContext({ viewport: VIEWPORT });
    contexts.push(context);
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('pageerror', (e) => problems.push(`${who}: ${e.message}`));
    page.on('dialog', (d) => void d.accept(d.type() === 'prompt' ? 'ok' : undefined));
    return page;
  };

  /** Signs up on `page` through POST /dashboard/signup from the console's origin, then opens the console. */
  const signUp = async (page: Page, person: { email: string; password: string; name?: string }, token: string) => {
    await page.goto(consoleUrl);
    const res = await callFrom(page, 'POST', '/dashboard/signup', { ...person, invitation_token: token });
    if (res.status !== 201 && res.status !== 200) throw new Error(`sign-up of ${person.email}: ${res.status} ${JSON.stringify(res.json)}`);
    await page.reload();
    await heading(page, 'Apps');
  };

  const owner = await newPage('owner');
  await signUp(owner, CONSOLE_OWNER, readFileSync(path.join(dataDir, 'owner-invitation'), 'utf8').trim());

  return {
    server,
    consoleUrl,
    browser,
    owner,
    problems,
    newPage,
    async personAs(role, email) {
      const invited = await callFrom(owner, 'POST', '/dashboard/invitations', { role, email });
      if (invited.status !== 201) throw new Error(`invitation: ${invited.status} ${JSON.stringify(invited.json)}`);
      const page = await newPage(role);
      await signUp(page, { email, password: `${role} password 1` }, invited.json.token);
      return page;
    },
    async createApp(name) {
      const res = await callFrom(owner, 'POST', '/init', { name });
      if (res.status !== 201) throw new Error(`app ${name}: ${res.status} ${JSON.stringify(res.json)}`);
      return { appId: res.json.app_id, serviceKey: res.json.service_key.key };
    },
    async close() {
      for (const c of contexts) await c.close().catch(() => {});
      await browser.close().catch(() => {});
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
