// supabase-js in a real browser (issue 41): a plain static site whose page bundles @supabase/supabase-js (esbuild, as
// an app's build would) and reads its API URL and publishable key from window.__ENV__ alone. In headless Chromium,
// on the app's own host, it reads public rows with the publishable key before anyone signs in, is refused a wrong
// password with auth-js's error code, signs up, signs out and in again, uploads an avatar to a public bucket and
// downloads it; after a reload it finds its session kept in localStorage and reads the avatar back, also by its
// public URL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { deployStaticSite, startAppSite, supabaseBundle, type AppSiteHarness } from '../helpers/browser.ts';
import type { SpawnedServer } from '../helpers/server.ts';
import { request, UUID } from './e2e-helpers.ts';

let harness: AppSiteHarness;
let server: SpawnedServer;
let browser: Browser;
let appId: string;
let serviceKey: string;
/** The app's own host, where its site is served: http://{subdomain}.localhost:<port>/. */
let site: string;

const EMAIL = 'ada@example.com';
const PASSWORD = 'correct horse battery';
/** A 1×1 PNG: the avatar the page uploads. */
const AVATAR = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

/**
 * The page's whole program. Without a session (first visit) it runs the sign-up flow; with one (restored from
 * localStorage after a reload) it checks the user and reads the avatar back. Either way it writes its outcome to
 * #result as JSON, or what went wrong.
 */
const APP_JS = `
import { createClient } from './supabase.mjs';
const env = window.__ENV__;
const supabase = createClient(env.SVC_API_URL, env.SVC_PUBLISHABLE_KEY);
const AVATAR = new Uint8Array(${JSON.stringify([...AVATAR])});
const credentials = { email: ${JSON.stringify(EMAIL)}, password: ${JSON.stringify(PASSWORD)} };
const bytesOf = async (blob) => Array.from(new Uint8Array(await blob.arrayBuffer()));
const error = (e) => (e ? { name: e.name, status: e.status, code: e.code ?? null, message: e.message } : null);

async function firstVisit() {
  const posts = await supabase.from('posts').select('title').order('id');
  const wrong = await supabase.auth.signInWithPassword({ ...credentials, password: 'not the password' });
  const signup = await supabase.auth.signUp({ ...credentials, options: { data: { name: 'Ada' } } });
  const user = (await supabase.auth.getUser()).data.user;
  const avatarPath = user.id + '/avatar.png';
  const uploaded = await supabase.storage.from('avatars').upload(avatarPath, AVATAR, { contentType: 'image/png' });
  const downloaded = await supabase.storage.from('avatars').download(avatarPath);
  const signedOut = await supabase.auth.signOut();
  const afterSignOut = (await supabase.auth.getSession()).data.session;
  const wrongAgain = await supabase.auth.signInWithPassword({ ...credentials, password: 'not the password' });
  const signin = await supabase.auth.signInWithPassword(credentials);
  return {
    phase: 'first visit',
    posts: { status: posts.status, data: posts.data, error: posts.error },
    wrong: { user: wrong.data.user, session: wrong.data.session, error: error(wrong.error) },
    signup: {
      error: error(signup.error),
      user: signup.data.user && { id: signup.data.user.id, email: signup.data.user.email },
      session: signup.data.session && { user: signup.data.session.user.id, token_type: signup.data.session.token_type, has_tokens: !!(signup.data.session.access_token && signup.data.session.refresh_token) },
    },
    user: { id: user.id, email: user.email, name: user.user_metadata.name },
    uploaded: { data: uploaded.data && { path: uploaded.data.path, fullPath: uploaded.data.fullPath }, error: error(uploaded.error) },
    downloaded: { error: error(downloaded.error), type: downloaded.data?.type, bytes: downloaded.data && (await bytesOf(downloaded.data)) },
    signedOut: { error: error(signedOut.error), session: afterSignOut },
    wrongAgain: { session: wrongAgain.data.session, error: error(wrongAgain.error) },
    signin: { error: error(signin.error), user: signin.data.user?.id, session: signin.data.session?.user.id },
  };
}

async function reloaded(session) {
  const { data, error: userError } = await supabase.auth.getUser();
  const avatarPath = data.user.id + '/avatar.png';
  const downloaded = await supabase.storage.from('avatars').download(avatarPath);
  const publicUrl = supabase.storage.from('avatars').getPublicUrl(avatarPath).data.publicUrl;
  const fetched = await fetch(publicUrl);
  return {
    phase: 'reloaded',
    session: { user: session.user.id, email: session.user.email },
    user: { error: error(userError), id: data.user.id, email: data.user.email, name: data.user.user_metadata.name },
    storedKeys: Object.keys(localStorage),
    downloaded: { error: error(downloaded.error), type: downloaded.data?.type, bytes: downloaded.data && (await bytesOf(downloaded.data)) },
    publicUrl,
    fetched: { status: fetched.status, type: fetched.headers.get('content-type'), bytes: await bytesOf(await fetched.blob()) },
  };
}

let outcome;
try {
  const { data } = await supabase.auth.getSession();
  outcome = data.session ? await reloaded(data.session) : await firstVisit();
} catch (e) {
  outcome = { phase: 'failed', error: String(e && e.stack || e) };
}
document.getElementById('result').textContent = JSON.stringify(outcome);
`;

const INDEX_HTML = `<!doctype html>
<html>
  <head>
    <meta charset="utf-8" />
    <title>Avatars</title>
    <script src="__env.js"></script>
    <script type="module" src="assets/app.js"></script>
  </head>
  <body><pre id="result"></pre></body>
</html>`;

beforeAll(async () => {
  harness = await startAppSite('Supabase in a browser');
  ({ server, browser, appId, serviceKey, site } = harness);
  expect(harness.publishableKey).toMatch(/^svc_pub_/);
}, 90_000);

afterAll(() => harness?.close());

/** The page's outcome once it has written one (a new one after each load). */
async function outcomeOf(page: Page): Promise<any> {
  await page.waitForFunction(() => document.getElementById('result')?.textContent !== '', undefined, { timeout: 30_000 });
  return JSON.parse((await page.textContent('#result'))!);
}

describe('a static site using supabase-js in headless Chromium', () => {
  it('deploys: a public table with two rows, a public bucket, the site with its supabase-js bundle, READY', async () => {
    const schema = {
      tables: {
        posts: { columns: { id: { type: 'bigint', primary: true, identity: true }, title: { type: 'text', nullable: false } }, access: 'public' },
      },
    };
    const applied = await request(server.url, `/v1/${appId}/schema/apply`, { method: 'POST', key: serviceKey, body: { schema, name: 'posts' } });
    expect(applied.status).toBe(200);
    for (const title of ['first post', 'second post']) {
      const inserted = await request(server.url, `/v1/${appId}/posts`, { method: 'POST', key: serviceKey, body: { title } });
      expect(inserted.status).toBe(201);
    }
    const bucket = await request(server.url, `/v1/${appId}/storage/v1/bucket`, { method: 'POST', key: serviceKey, body: { id: 'avatars', public: true } });
    expect(bucket.status).toBe(200);
    expect(bucket.json).toEqual({ name: 'avatars' });

    const files = { 'index.html': INDEX_HTML, 'assets/app.js': APP_JS, 'assets/supabase.mjs': await supabaseBundle() };
    const { deployed, deployment } = await deployStaticSite(server.url, appId, serviceKey, files);
    expect(deployed.status).toBe(202);
    expect(deployment).toMatchObject({ status: 'READY', live: true, file_count: 3, url: site });
  }, 60_000);

  it('reads public rows anonymously, signs up, uploads an avatar, and after a reload keeps the session and reads the avatar back', async () => {
    const page = await browser.newPage();
    try {
      expect((await page.goto(site))?.status()).toBe(200);
      const first = await outcomeOf(page);
      expect(first.phase).toBe('first visit');
      const userId = first.user.id;
      expect(userId).toMatch(UUID);
      const avatar = [...AVATAR];
      expect(first).toEqual({
        phase: 'first visit',
        posts: { status: 200, data: [{ title: 'first post' }, { title: 'second post' }], error: null },
        wrong: {
          user: null,
          session: null,
          error: { name: 'AuthApiError', status: 400, code: 'invalid_credentials', message: 'Invalid email or password.' },
        },
        signup: { error: null, user: { id: userId, email: EMAIL }, session: { user: userId, token_type: 'bearer', has_tokens: true } },
        user: { id: userId, email: EMAIL, name: 'Ada' },
        uploaded: { data: { path: `${userId}/avatar.png`, fullPath: `avatars/${userId}/avatar.png` }, error: null },
        downloaded: { error: null, type: 'image/png', bytes: avatar },
        signedOut: { error: null, session: null },
        wrongAgain: {
          session: null,
          error: { name: 'AuthApiError', status: 400, code: 'invalid_credentials', message: 'Invalid email or password.' },
        },
        signin: { error: null, user: userId, session: userId },
      });

      // The platform sees the same user and the same bytes.
      const users = await request(server.url, `/v1/${appId}/auth/users`, { key: serviceKey });
      expect(users.json.users.map((u: { id: string; email: string }) => [u.id, u.email])).toEqual([[userId, EMAIL]]);
      const stored = await fetch(`${server.url}/v1/${appId}/storage/v1/object/avatars/${userId}/avatar.png`, { headers: { apikey: serviceKey, authorization: `Bearer ${serviceKey}` } });
      expect(stored.status).toBe(200);
      expect(Buffer.from(await stored.arrayBuffer())).toEqual(AVATAR);

      // A reload: a new document, the same localStorage.
      expect((await page.reload())?.status()).toBe(200);
      const again = await outcomeOf(page);
      expect(again).toEqual({
        phase: 'reloaded',
        session: { user: userId, email: EMAIL },
        user: { error: null, id: userId, email: EMAIL, name: 'Ada' },
        storedKeys: [expect.stringMatching(/^sb-.+-auth-token$/)],
        downloaded: { error: null, type: 'image/png', bytes: avatar },
        publicUrl: `http://localhost:${server.port}/v1/${appId}/storage/v1/object/public/avatars/${userId}/avatar.png`,
        fetched: { status: 200, type: 'image/png', bytes: avatar },
      });
    } finally {
      await page.close();
    }
  }, 90_000);
});
