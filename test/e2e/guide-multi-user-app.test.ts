// docs/guides/multi-user-app.md runs as written (issue 45): its shell blocks, in one bash against the server as
// `npm start` runs it (test/e2e/guide-runner.ts), build a team task board (shared tasks through a group, private tasks,
// functions acting as the app, three end users, a site); the test checks what the guide prints, the rows the database
// holds, and then the site in Chromium.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser.ts';
import { databaseUrl } from '../helpers/db.ts';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { APP_ID, UUID } from './e2e-helpers.ts';
import { runGuide, type GuideRun } from './guide-runner.ts';

let server: SpawnedServer;
let browser: Browser;
/** The guide works in `mktemp -d`: TMPDIR puts that folder here, removed with it. */
const tmp = mkdtempSync(path.join(tmpdir(), 'svc-guide-tmp-'));
let run: GuideRun;

beforeAll(async () => {
  server = await spawnServer();
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** What follows `label` on the line of the output that starts with it. */
function printed(label: string): string {
  const line = run.stdout.split('\n').find((l) => l.startsWith(label));
  if (line === undefined) throw new Error(`the guide printed no line starting with ${JSON.stringify(label)}:\n${run.stdout}`);
  return line.slice(label.length);
}

/** The workspace's tasks, as both of its members read them. */
const SHARED = JSON.stringify([
  { title: 'Write the announcement', done: true, workspaces: { name: 'Launch' } },
  { title: 'Book the venue', done: false, workspaces: { name: 'Launch' } },
]);
const WHO_SEES_WHAT: Record<string, string> = {
  "Ann's tasks": SHARED,
  "Bob's tasks": SHARED,
  "Ann's private tasks": '[{"title":"Renew my passport"}]',
  "Bob's private tasks": '[{"title":"Call the dentist"}]',
  "Ann asks for Bob's private task": '[]',
  "Cleo's workspaces": '[]',
  "Cleo's tasks": '[]',
  'Cleo writes a task into Launch': '403 42501',
  'Cleo adds herself to Launch': '403 42501',
  'Cleo adds herself through add-member': '404 {"error":"no such workspace"}',
  "Launch's members, as Ann counts them": '[{"count":2}]',
};

describe('docs/guides/multi-user-app.md', () => {
  let appId: string;
  let siteUrl: string;

  it('its commands build the app, and each user sees what their access allows', async () => {
    run = await runGuide('guides/multi-user-app.md', server, { TMPDIR: tmp });
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stderr).toBe('');
    appId = printed('app: ');
    expect(appId).toMatch(APP_ID);
    expect(printed('schema applied: ')).toBe('true');
    expect(printed('function create-workspace created: ')).toBe('true');
    expect(printed('function add-member created: ')).toBe('true');
    const workspace = JSON.parse(printed('workspace: '));
    expect(workspace).toEqual({ id: expect.stringMatching(UUID), name: 'Launch' });

    // The lines the guide prints without a label: the membership add-member made, then the task Bob marked done.
    const lines = run.stdout.split('\n');
    const made = lines.indexOf(`workspace: ${JSON.stringify(workspace)}`);
    const membership = JSON.parse(lines[made + 1]!);
    expect(membership).toEqual({ workspace_id: workspace.id, user_id: expect.stringMatching(UUID) });
    const [patched] = JSON.parse(lines[made + 2]!);
    expect(patched).toMatchObject({ workspace_id: workspace.id, title: 'Write the announcement', done: true, user_id: expect.stringMatching(UUID) });
    expect(patched.user_id).not.toBe(membership.user_id);

    // Who sees what: each labelled line as the guide prints it.
    const seen = Object.fromEntries(Object.keys(WHO_SEES_WHAT).map((label) => [label, printed(`${label}: `)]));
    expect(seen).toEqual(WHO_SEES_WHAT);

    const site = printed('site: ').split(' ');
    expect(site[0]).toBe('READY');
    siteUrl = site[1]!;
    expect(siteUrl).toMatch(new RegExp(`^http://[a-z0-9-]+\\.localhost:${server.port}/$`));
    const env = JSON.parse(printed('window.__ENV__ = ').replace(/;$/, ''));
    const api = `http://localhost:${server.port}/v1/${appId}`;
    expect(env).toMatchObject({
      SVC_APP_ID: appId,
      SVC_DATA_URL: api,
      SVC_AUTH_SIGNUP_URL: `${api}/auth/signup`,
      SVC_AUTH_LOGIN_URL: `${api}/auth/login`,
    });
  }, 120_000);

  it('the database holds the rows the guide made: Ann and Bob in Launch, each private task with its owner', async () => {
    const db = new pg.Client({ connectionString: databaseUrl(`${server.appDbPrefix}${appId}`) });
    await db.connect();
    try {
      const members = await db.query(
        `select w.name, u.email from workspace_members m join workspaces w on w.id = m.workspace_id join svc_auth.users u on u.id = m.user_id order by u.email`,
      );
      expect(members.rows).toEqual([
        { name: 'Launch', email: 'ann@example.com' },
        { name: 'Launch', email: 'bob@example.com' },
      ]);
      const tasks = await db.query(`select t.title, u.email from tasks t join svc_auth.users u on u.id = t.user_id order by t.created_at`);
      expect(tasks.rows).toEqual([
        { title: 'Write the announcement', email: 'ann@example.com' },
        { title: 'Book the venue', email: 'bob@example.com' },
      ]);
      const own = await db.query(`select p.title, u.email from private_tasks p join svc_auth.users u on u.id = p.user_id order by p.created_at`);
      expect(own.rows).toEqual([
        { title: 'Renew my passport', email: 'ann@example.com' },
        { title: 'Call the dentist', email: 'bob@example.com' },
      ]);
    } finally {
      await db.end();
    }
  });

  it('the site, in Chromium: a new user signs up and sees only their own task; Bob signs in and sees his list', async () => {
    // Every request a page makes goes to the platform: the app's own host that served it, or the platform's API.
    const platform = new Set([new URL(siteUrl).origin, `http://localhost:${server.port}`]);
    const foreign: string[] = [];
    const open = async () => {
      const page = await browser.newPage();
      page.on('request', (r) => {
        if (!platform.has(new URL(r.url()).origin)) foreign.push(r.url());
      });
      await page.goto(siteUrl);
      return page;
    };
    const statusIs = (expected: string) => document.getElementById('status')!.textContent === expected;

    const dana = await open();
    await dana.fill('#email', 'dana@example.com');
    await dana.fill('#password', 'dana-password-1');
    await dana.click('#account button[name=signup]');
    await dana.waitForFunction(statusIs, '0 tasks');
    expect(await dana.locator('#tasks li').allTextContents()).toEqual([]);
    await dana.fill('#title', 'Water the plants');
    await dana.click('#add button');
    await dana.waitForFunction(statusIs, '1 task');
    expect(await dana.locator('#tasks li').allTextContents()).toEqual(['Private: Water the plants']);
    await dana.close();

    const bob = await open();
    await bob.fill('#email', 'bob@example.com');
    await bob.fill('#password', 'bob-password-1');
    await bob.click('#account button[name=login]');
    await bob.waitForFunction(statusIs, '3 tasks');
    expect(await bob.locator('#tasks li').allTextContents()).toEqual([
      'Launch: Write the announcement (done)',
      'Launch: Book the venue',
      'Private: Call the dentist',
    ]);
    await bob.close();
    expect(foreign).toEqual([]);
  }, 30_000);
});
