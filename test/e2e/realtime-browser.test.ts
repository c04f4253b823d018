// Realtime in real browsers (issue 42's Done-when): a static site on the app's own host whose page bundles supabase-js
// (esbuild, as an app's build would), opened in two browser contexts of headless Chromium, each signed in through the
// page's form as a different end user. Each page subscribes to postgres_changes of a `user` table (notes: own rows) and
// a `public` one (posts: everyone reads) and renders what arrives. A post Alice adds appears in Bob's page; a note she
// adds appears in hers and never in his: a post she adds after it reaches his page, and changes arrive in commit order
// on a channel, so by then the note would have come before it; neither his page nor any websocket frame it received
// holds it. Every wait is for a DOM condition.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { deployStaticSite, startAppSite, supabaseBundle, type AppSiteHarness } from '../helpers/browser.ts';
import { request } from './e2e-helpers.ts';

let h: AppSiteHarness;

const PASSWORD = 'correct horse battery';
const PEOPLE = { alice: 'alice@example.com', bob: 'bob@example.com' } as const;
/** The end users' ids, by e-mail. */
const ids = new Map<string, string>();

const SCHEMA = {
  tables: {
    notes: {
      columns: { id: { type: 'bigint', primary: true, identity: true }, user_id: { type: 'uuid' }, text: { type: 'text', nullable: false } },
      access: 'user',
      realtime: true,
    },
    posts: {
      columns: { id: { type: 'bigint', primary: true, identity: true }, user_id: { type: 'uuid' }, text: { type: 'text', nullable: false } },
      access: 'public',
      realtime: true,
    },
  },
};

/**
 * The page: a sign-in form; once signed in, one channel with the inserts of both tables, each rendered as an item of
 * its table's list (`#notes`, `#posts`), the channel's status in `#status`, its `system` messages in `#system`, and a
 * form that adds a row to either table as the signed-in user.
 */
const APP_JS = `
import { createClient } from './supabase.mjs';
const env = window.__ENV__;
const supabase = createClient(env.SVC_API_URL, env.SVC_PUBLISHABLE_KEY);
const $ = (id) => document.getElementById(id);
const item = (list, text) => {
  const li = document.createElement('li');
  li.textContent = text;
  $(list).append(li);
};

function listen() {
  const show = (change) => item(change.table, change.new.text);
  supabase
    .channel('feed')
    .on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'notes' }, show)
    .on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'posts' }, show)
    .on('system', {}, (message) => item('system', message.message))
    .subscribe((status, error) => {
      $('status').textContent = error ? status + ': ' + error.message : status;
    });
}

$('signin').addEventListener('submit', async (event) => {
  event.preventDefault();
  const { data, error } = await supabase.auth.signInWithPassword({ email: $('email').value, password: $('password').value });
  if (error) return ($('who').textContent = 'refused: ' + error.message);
  $('who').textContent = data.user.email;
  listen();
});

$('add').addEventListener('submit', async (event) => {
  event.preventDefault();
  const { error } = await supabase.from($('table').value).insert({ text: $('text').value });
  item('added', error ? 'error: ' + error.message : $('table').value + ': ' + $('text').value);
});
`;

const INDEX_HTML = `<!doctype html>
<html>
  <head>
    <meta charset="utf-8" />
    <title>Live notes</title>
    <script src="__env.js"></script>
    <script type="module" src="assets/app.js"></script>
  </head>
  <body>
    <form id="signin"><input id="email" type="email" /><input id="password" type="password" /><button>Sign in</button></form>
    <p id="who"></p>
    <p id="status"></p>
    <ul id="system"></ul>
    <form id="add">
      <select id="table"><option>notes</option><option>posts</option></select>
      <input id="text" />
      <button>Add</button>
    </form>
    <ul id="added"></ul>
    <h2>Notes</h2>
    <ul id="notes"></ul>
    <h2>Posts</h2>
    <ul id="posts"></ul>
  </body>
</html>`;

interface Person {
  context: BrowserContext;
  page: Page;
  /** Every websocket frame the page received, as text (binary frames decoded as UTF-8). */
  frames: string[];
}

beforeAll(async () => {
  h = await startAppSite('Realtime in browsers');
}, 90_000);

afterAll(() => h?.close());

/** A browser context of its own (its own localStorage) on the site, signed in as `email` through the page's form. */
async function signedIn(email: string): Promise<Person> {
  const context = await h.browser.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  const frames: string[] = [];
  page.on('websocket', (ws) => ws.on('framereceived', ({ payload }) => frames.push(payload.toString())));
  expect((await page.goto(h.site))?.status()).toBe(200);
  await page.fill('#email', email);
  await page.fill('#password', PASSWORD);
  await page.click('#signin button');
  await page.locator('#who', { hasText: email }).waitFor();
  await page.locator('#status', { hasText: /^SUBSCRIBED$/ }).waitFor();
  return { context, page, frames };
}

/** Adds a row through the page's form, as its signed-in user, and waits for the page to report the insert. */
async function add(person: Person, table: 'notes' | 'posts', text: string): Promise<void> {
  await person.page.selectOption('#table', table);
  await person.page.fill('#text', text);
  await person.page.click('#add button');
  await person.page.locator('#added li', { hasText: `${table}: ${text}` }).waitFor();
}

/** Waits for `text` to be rendered in the page's list of `table`'s changes. */
const shown = (person: Person, table: 'notes' | 'posts', text: string) => person.page.locator(`#${table} li`, { hasText: text }).waitFor();
const items = (person: Person, list: string) => person.page.locator(`#${list} li`).allTextContents();

describe('postgres_changes in two browsers signed in as two end users', () => {
  it('deploys: a user table and a public table that stream, the site with its supabase-js bundle, two end users', async () => {
    const applied = await request(h.server.url, `/v1/${h.appId}/schema/apply`, { method: 'POST', key: h.serviceKey, body: { schema: SCHEMA, name: 'live' } });
    expect(applied.status).toBe(200);
    for (const email of Object.values(PEOPLE)) {
      const signup = await request(h.server.url, `/v1/${h.appId}/auth/signup`, { method: 'POST', body: { email, password: PASSWORD } });
      expect(signup.status).toBe(201);
      ids.set(email, signup.json.user.id);
    }
    const files = { 'index.html': INDEX_HTML, 'assets/app.js': APP_JS, 'assets/supabase.mjs': await supabaseBundle() };
    const { deployed, deployment } = await deployStaticSite(h.server.url, h.appId, h.serviceKey, files);
    expect(deployed.status).toBe(202);
    expect(deployment).toMatchObject({ status: 'READY', live: true, file_count: 3, url: h.site });
  }, 60_000);

  it("shows Alice's public post in Bob's page and her own note in hers only", async () => {
    const alice = await signedIn(PEOPLE.alice);
    const bob = await signedIn(PEOPLE.bob);
    try {
      // SUBSCRIBED came once changes flow; the system message says so.
      for (const person of [alice, bob]) await person.page.locator('#system li', { hasText: 'Subscribed to PostgreSQL' }).waitFor();

      await add(alice, 'posts', 'hello from alice');
      await shown(bob, 'posts', 'hello from alice');
      await shown(alice, 'posts', 'hello from alice');

      await add(alice, 'notes', 'alice private note');
      await shown(alice, 'notes', 'alice private note');

      // Committed after the note: once Bob's page shows it, the note would already have reached his page.
      await add(alice, 'posts', 'after the note');
      await shown(bob, 'posts', 'after the note');
      expect(await items(bob, 'posts')).toEqual(['hello from alice', 'after the note']);
      expect(await items(bob, 'notes')).toEqual([]);
      expect(await bob.page.content()).not.toContain('alice private note');
      expect(bob.frames.some((f) => f.includes('after the note'))).toBe(true);
      expect(bob.frames.filter((f) => f.includes('alice private note'))).toEqual([]);

      // Bob's own note is his alone in turn; Alice's page has her note and both posts, nothing of his.
      await add(bob, 'notes', 'bob private note');
      await shown(bob, 'notes', 'bob private note');
      await add(bob, 'posts', 'hello from bob');
      await shown(alice, 'posts', 'hello from bob');
      expect(await items(alice, 'notes')).toEqual(['alice private note']);
      expect(await items(alice, 'posts')).toEqual(['hello from alice', 'after the note', 'hello from bob']);
      expect(alice.frames.filter((f) => f.includes('bob private note'))).toEqual([]);
      expect(await items(bob, 'notes')).toEqual(['bob private note']);

      // Each note is its writer's, as the app sees its rows.
      const notes = await request(h.server.url, `/v1/${h.appId}/notes?select=text,user_id&order=id`, { key: h.serviceKey });
      expect(notes.json).toEqual([
        { text: 'alice private note', user_id: ids.get(PEOPLE.alice) },
        { text: 'bob private note', user_id: ids.get(PEOPLE.bob) },
      ]);
    } finally {
      await alice.context.close();
      await bob.context.close();
    }
  }, 90_000);
});
