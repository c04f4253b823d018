// The console's views of issue 41 in Debian's Chromium against the platform started as `npm start` starts it: the
// app's publishable keys beside its service keys (listed whole, copied to the clipboard, created, revoked after a
// confirmation, after which the data API refuses the key) with supabase-js's createClient line; the end users' auth
// settings on the Users tab (the API's refusals shown in the form, the saved settings shown again after a reload, the
// SMTP URL never shown, only its server, then removed); the app's buckets on the Files tab (created with their access
// and limits, the API's refusal shown in the form, changed by their id, deleted with their files after a confirmation,
// 'files' kept). A viewer reads all three with no button that changes them, and the API refuses their writes anyway.
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { callFrom, startConsole, tab, type ConsoleHarness } from '../helpers/console.ts';
import { request } from './e2e-helpers.ts';

let h: ConsoleHarness;
let appId: string;
let serviceKey: string;

beforeAll(async () => {
  // The SMTP host typed below is saved without being resolved (the platform's own network is allowed); no mail is sent.
  h = await startConsole({ SVC_OUTBOUND_ALLOW_PRIVATE: 'true' });
  ({ appId, serviceKey } = await h.createApp('Shop'));
}, 90_000);
afterEach(async (t) => {
  if (t.task.result?.state === 'fail') await h?.owner.screenshot({ path: `/tmp/console-app-settings-${t.task.name.slice(0, 24).replace(/\W+/g, '-')}.png` }).catch(() => {});
});
afterAll(async () => {
  await h?.close();
});

/** Opens a tab of the app's page, waiting for its heading. */
async function openTab(page: Page, name: string) {
  await page.goto(`${h.consoleUrl}#/apps/${appId}`);
  await tab(page, 'App', name);
  await page.getByRole('heading', { level: 2, name, exact: true }).waitFor();
}
const button = (page: Page, name: string) => page.getByRole('main').getByRole('button', { name, exact: true });
/** The cells of a table's rows, as text. */
const cells = (page: Page, table: string) =>
  page.getByRole('main').getByRole('table', { name: table, exact: true }).locator('tbody tr').evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent ?? '')));
/** The facts (term, value) of a facts list named `list`. */
const facts = (page: Page, list: string) =>
  page.locator(`dl[aria-label="${list}"] > div`).evaluateAll((divs) => divs.map((d) => [d.querySelector('dt')?.textContent ?? '', d.querySelector('dd')?.textContent ?? '']));
const publishable = async (page: Page) => (await callFrom(page, 'GET', `/apps/${appId}/publishable-keys`)).json.keys as Array<{ id: string; name: string; key: string; created_at: string }>;

describe('the console\'s publishable keys, auth settings and buckets', () => {
  it('lists the publishable key whole with supabase-js\'s line, creates another, copies it and revokes it', async () => {
    const page = h.owner;
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(h.consoleUrl).origin });
    await openTab(page, 'Overview');
    await page.getByRole('heading', { level: 2, name: 'Publishable keys', exact: true }).waitFor();
    const [first] = await publishable(page);
    expect(first).toEqual({ id: expect.any(String), name: 'default', key: expect.stringMatching(/^svc_pub_/), created_at: expect.any(String) });
    await expect.poll(() => cells(page, 'Publishable keys')).toEqual([['default', first!.key, expect.any(String), 'Copy', 'Revoke']]);
    expect(await page.getByText('Public keys for browsers and apps: supabase-js takes one as').textContent()).toBe(
      `Public keys for browsers and apps: supabase-js takes one as createClient('${new URL(h.consoleUrl).origin}/v1/${appId}', '<publishable key>').`,
    );

    await page.getByLabel('Name of the publishable key').fill('mobile');
    await button(page, 'Create publishable key').click();
    await page.getByRole('table', { name: 'Publishable keys', exact: true }).getByRole('cell', { name: 'mobile', exact: true }).waitFor();
    const keys = await publishable(page);
    expect(keys.map((k) => k.name)).toEqual(['default', 'mobile']);
    const mobile = keys[1]!;
    expect(mobile.key).toMatch(/^svc_pub_/);
    expect(await cells(page, 'Publishable keys')).toEqual([
      ['default', first!.key, expect.any(String), 'Copy', 'Revoke'],
      ['mobile', mobile.key, expect.any(String), 'Copy', 'Revoke'],
    ]);
    // The service keys' form and table are untouched beside them.
    expect(await cells(page, 'Service keys')).toEqual([['default', expect.stringMatching(/…$/), expect.any(String), 'Revoke']]);

    const copy = page.getByRole('button', { name: 'Copy publishable key mobile', exact: true });
    await copy.click();
    await copy.filter({ hasText: 'Copied' }).waitFor();
    expect(await page.getByRole('status').filter({ hasText: 'Copied' }).count()).toBe(1);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(mobile.key);
    const before = await request(h.server.url, `/v1/${appId}/no_such_table`, { headers: { apikey: mobile.key } });
    expect([before.status, before.json.code]).toEqual([404, 'PGRST205']);

    // The page asks first (the harness says yes), then the key goes from the list and the API refuses it.
    const asked = page.waitForEvent('dialog');
    await page.getByRole('button', { name: 'Revoke publishable key mobile', exact: true }).click();
    expect((await asked).message()).toBe('Revoke the publishable key mobile? Browsers and apps sending it get 401 from then on.');
    await page.getByRole('table', { name: 'Publishable keys', exact: true }).getByRole('cell', { name: 'mobile', exact: true }).waitFor({ state: 'detached' });
    expect((await publishable(page)).map((k) => k.name)).toEqual(['default']);
    const after = await request(h.server.url, `/v1/${appId}/no_such_table`, { headers: { apikey: mobile.key } });
    expect([after.status, after.json.error.code]).toEqual([401, 'AUTH_INVALID_TOKEN']);
    expect(h.problems).toEqual([]);
  });

  it('saves the auth settings, shows the API\'s refusals in the form, and shows the saved settings after a reload', async () => {
    const page = h.owner;
    await openTab(page, 'Users');
    await page.getByRole('heading', { level: 3, name: 'Auth settings', exact: true }).waitFor();
    await expect.poll(() => facts(page, 'Auth settings')).toEqual([
      ['Confirm e-mail', 'no'],
      ['Sign-ups', 'open'],
      ['Site URL', 'not set'],
      ['Redirect URLs', 'none'],
      ['Mail from', 'not set'],
      ['SMTP server', 'not set'],
      ['Mail goes out through', 'none: no mail can be sent'],
      ['Updated', 'never'],
    ]);
    const form = page.getByRole('form', { name: 'Auth settings' });
    const alert = form.getByRole('alert');

    // A redirect URL that is not http(s): the API's validation error, in the form, the fields as typed.
    await form.getByLabel('Site URL').fill('https://shop.example');
    await form.getByLabel('Redirect URLs (one per line)').fill('https://shop.example/welcome\nftp://shop.example/files');
    await button(page, 'Save auth settings').click();
    await alert.waitFor();
    expect(await alert.textContent()).toBe("Invalid 'redirect_urls.1': an absolute http(s) URL.");
    expect(await form.getByLabel('Site URL').inputValue()).toBe('https://shop.example');

    // Confirmations with no server to mail them: refused.
    await form.getByLabel('Redirect URLs (one per line)').fill('https://shop.example/welcome\nhttps://shop.example/reset');
    await form.getByLabel('Sign-ups confirm their e-mail first').check();
    await button(page, 'Save auth settings').click();
    await alert.filter({ hasText: 'confirm_email' }).waitFor();
    expect(await alert.textContent()).toBe("confirm_email needs a mail server: the platform has none (SVC_SMTP_URL), so set smtp_url, the app's own.");
    const refused = await callFrom(page, 'PUT', `/v1/${appId}/auth/settings`, { confirm_email: true });
    expect([refused.status, refused.json.error.code, refused.json.error.details]).toEqual([400, 'VALIDATION_FAILED', [{ path: 'confirm_email', message: 'no mail server to send confirmations' }]]);

    // With the app's own SMTP server it saves; the URL's credentials are never shown again.
    await form.getByLabel('Mail from').fill('Shop <no-reply@shop.example>');
    await form.getByLabel('SMTP URL (smtp:// or smtps://)').fill('smtps://mailer:s3cret-pass@smtp.shop.example:465');
    await form.getByLabel('Anyone may sign up').uncheck();
    await button(page, 'Save auth settings').click();
    const saved = [
      ['Confirm e-mail', 'yes: sign-ups confirm by mail first'],
      ['Sign-ups', 'closed'],
      ['Site URL', 'https://shop.example'],
      ['Redirect URLs', 'https://shop.example/welcome, https://shop.example/reset'],
      ['Mail from', 'Shop <no-reply@shop.example>'],
      ['SMTP server', 'smtps://smtp.shop.example:465'],
      ['Mail goes out through', "the app's SMTP server"],
      ['Updated', expect.any(String)],
    ];
    await expect.poll(() => facts(page, 'Auth settings')).toEqual(saved);
    expect(await alert.count()).toBe(0);
    const view = {
      confirm_email: true,
      allow_signup: false,
      site_url: 'https://shop.example',
      redirect_urls: ['https://shop.example/welcome', 'https://shop.example/reset'],
      mail_from: 'Shop <no-reply@shop.example>',
      smtp_url_set: true,
      smtp_url_hint: 'smtps://smtp.shop.example:465',
      mail_route: 'app',
      updated_at: expect.any(String),
    };
    expect((await callFrom(page, 'GET', `/v1/${appId}/auth/settings`)).json).toEqual(view);

    await page.reload();
    await page.getByRole('heading', { level: 3, name: 'Auth settings', exact: true }).waitFor();
    await expect.poll(() => facts(page, 'Auth settings')).toEqual(saved);
    expect(await form.getByLabel('Sign-ups confirm their e-mail first').isChecked()).toBe(true);
    expect(await form.getByLabel('Anyone may sign up').isChecked()).toBe(false);
    expect(await form.getByLabel('Site URL').inputValue()).toBe('https://shop.example');
    expect(await form.getByLabel('Redirect URLs (one per line)').inputValue()).toBe('https://shop.example/welcome\nhttps://shop.example/reset');
    expect(await form.getByLabel('Mail from').inputValue()).toBe('Shop <no-reply@shop.example>');
    expect(await form.getByLabel('New SMTP URL (empty: keep)').inputValue()).toBe('');
    expect(await page.content()).not.toContain('s3cret-pass');

    // Removing the server while confirmations are asked for is refused; without them it goes.
    await form.getByLabel('Remove the SMTP server').check();
    await button(page, 'Save auth settings').click();
    await alert.waitFor();
    expect(await alert.textContent()).toBe("confirm_email needs a mail server: the platform has none (SVC_SMTP_URL), so set smtp_url, the app's own.");
    expect((await callFrom(page, 'GET', `/v1/${appId}/auth/settings`)).json).toEqual(view);
    await form.getByLabel('Sign-ups confirm their e-mail first').uncheck();
    await button(page, 'Save auth settings').click();
    await expect.poll(() => facts(page, 'Auth settings')).toEqual([
      ['Confirm e-mail', 'no'],
      ['Sign-ups', 'closed'],
      ['Site URL', 'https://shop.example'],
      ['Redirect URLs', 'https://shop.example/welcome, https://shop.example/reset'],
      ['Mail from', 'Shop <no-reply@shop.example>'],
      ['SMTP server', 'not set'],
      ['Mail goes out through', 'none: no mail can be sent'],
      ['Updated', expect.any(String)],
    ]);
    await form.getByLabel('SMTP URL (smtp:// or smtps://)').waitFor();
    expect(await form.getByLabel('Remove the SMTP server').count()).toBe(0);
    expect((await callFrom(page, 'GET', `/v1/${appId}/auth/settings`)).json).toEqual({ ...view, confirm_email: false, smtp_url_set: false, smtp_url_hint: null, mail_route: 'none' });
    expect(h.problems).toEqual([]);
  });

  it('creates a bucket, shows the API\'s refusal in the form, changes the bucket and deletes it with its file; \'files\' stays', async () => {
    const page = h.owner;
    await openTab(page, 'Files');
    await page.getByRole('heading', { level: 3, name: 'Buckets', exact: true }).waitFor();
    const listed = async () => (await callFrom(page, 'GET', `/storage/${appId}/buckets`)).json.buckets;
    const [files] = await listed();
    expect(files).toEqual({ id: 'files', access: 'owner', public: false, file_size_limit: null, allowed_mime_types: null, created_at: expect.any(String), updated_at: expect.any(String) });
    const filesRow = ['files', 'owner: end users read their own files', "the app's limit", "the app's", expect.any(String), 'always kept'];
    await expect.poll(() => cells(page, 'Buckets')).toEqual([filesRow]);

    // A bucket's limit above the app's: the API's refusal, in the form, the fields as typed.
    const { max_file_bytes: appMax } = (await callFrom(page, 'GET', `/storage/${appId}/limits`)).json;
    const form = page.getByRole('form', { name: 'Save a bucket' });
    await form.getByLabel('Bucket id').fill('avatars');
    await form.getByLabel('Access').selectOption('public');
    await form.getByLabel("Largest file in bytes (empty: the app's limit)").fill(String(appMax + 1));
    await form.getByLabel("Allowed types (comma-separated; empty: the app's)").fill('image/png, image/jpeg');
    await button(page, 'Save bucket').click();
    await form.getByRole('alert').waitFor();
    expect(await form.getByRole('alert').textContent()).toBe(`file_size_limit ${appMax + 1} exceeds the app's limit of ${appMax} bytes per file; a bucket's limits only tighten the app's.`);
    expect(await listed()).toEqual([files]);

    await form.getByLabel("Largest file in bytes (empty: the app's limit)").fill('1048576');
    await button(page, 'Save bucket').click();
    const avatarsRow = (access: string, size: string, types: string) => ['avatars', access, size, types, expect.any(String), 'Delete'];
    await expect.poll(() => cells(page, 'Buckets')).toEqual([avatarsRow('public: anyone reads', '1.0 MB', 'image/png, image/jpeg'), filesRow]);
    expect(await form.getByLabel('Bucket id').inputValue()).toBe('');
    expect((await listed())[0]).toEqual({ id: 'avatars', access: 'public', public: true, file_size_limit: 1048576, allowed_mime_types: ['image/png', 'image/jpeg'], created_at: expect.any(String), updated_at: expect.any(String) });

    // The same id changes it: an empty limit gives back the app's.
    await form.getByLabel('Bucket id').fill('avatars');
    await form.getByLabel('Access').selectOption('authenticated');
    await button(page, 'Save bucket').click();
    await expect.poll(() => cells(page, 'Buckets')).toEqual([avatarsRow('authenticated: signed-in end users read', "the app's limit", "the app's"), filesRow]);
    expect((await listed()).map((b: { id: string; access: string }) => [b.id, b.access])).toEqual([['avatars', 'authenticated'], ['files', 'owner']]);

    // A file in it (storage-js's upload with the service key) goes with it.
    const png = Buffer.from('89504e470d0a1a0a', 'hex');
    const put = await request(h.server.url, `/v1/${appId}/storage/v1/object/avatars/me.png`, { method: 'POST', key: serviceKey, headers: { 'content-type': 'image/png' }, body: png });
    expect(put.status).toBe(200);
    const asked = page.waitForEvent('dialog');
    await page.getByRole('button', { name: 'Delete bucket avatars', exact: true }).click();
    expect((await asked).message()).toBe('Delete the bucket avatars and every file in it?');
    await expect.poll(() => cells(page, 'Buckets')).toEqual([filesRow]);
    expect(await listed()).toEqual([files]);
    expect((await request(h.server.url, `/v1/${appId}/storage/v1/object/avatars/me.png`, { key: serviceKey })).status).toBe(404);

    // 'files' has no delete button, and the API refuses to delete it.
    expect(await page.getByRole('button', { name: 'Delete bucket files' }).count()).toBe(0);
    const refused = await callFrom(page, 'DELETE', `/storage/${appId}/buckets/files?empty=true`);
    expect([refused.status, refused.json.error.code, refused.json.error.message]).toEqual([400, 'VALIDATION_FAILED', "The bucket 'files' cannot be deleted: the app's storage routes store there."]);
    expect(h.problems).toEqual([]);
  });

  it('a viewer reads all three with no button that changes them, and the API refuses their writes', async () => {
    const viewer = await h.personAs('viewer', 'vic@example.com');
    const [key] = await publishable(h.owner);
    await openTab(viewer, 'Overview');
    await expect.poll(() => cells(viewer, 'Publishable keys')).toEqual([['default', key!.key, expect.any(String), 'Copy']]);
    expect(await viewer.getByRole('form', { name: 'Create a publishable key' }).count()).toBe(0);
    await openTab(viewer, 'Users');
    await expect.poll(() => facts(viewer, 'Auth settings')).toContainEqual(['Sign-ups', 'closed']);
    expect(await viewer.getByRole('form', { name: 'Auth settings' }).count()).toBe(0);
    await openTab(viewer, 'Files');
    await expect.poll(() => cells(viewer, 'Buckets')).toEqual([['files', 'owner: end users read their own files', "the app's limit", "the app's", expect.any(String)]]);
    expect(await viewer.getByRole('form', { name: 'Save a bucket' }).count()).toBe(0);
    for (const [method, url, body] of [
      ['POST', `/apps/${appId}/publishable-keys`, { name: 'sneaky' }],
      ['DELETE', `/apps/${appId}/publishable-keys/${key!.id}`, undefined],
      ['PUT', `/v1/${appId}/auth/settings`, { allow_signup: true }],
      ['PUT', `/storage/${appId}/buckets/sneaky`, { access: 'public' }],
      ['DELETE', `/storage/${appId}/buckets/files`, undefined],
    ] as const) {
      const refused = await callFrom(viewer, method, url, body);
      expect([method, url, refused.status, refused.json.error.code]).toEqual([method, url, 403, 'FORBIDDEN_ROLE']);
    }
    expect(h.problems).toEqual([]);
  });
});
