// Signing in to the console in Debian's Chromium, against the platform spawned as `npm start` runs it with a real
// OpenID provider on loopback (oidc-provider), invitation-only sign-up and a loopback SMTP server. An invited person
// joins by the provider's button on the invitation's page, signs out and back in with the provider alone, and a
// sign-in declined at the provider comes back with the reason. The e-mails' links are opened as a person opens them:
// the verification link confirms the address, "Forgot your password?" mails a link whose page sets a new password that
// then signs in, and an invitation link opened signed in offers to accept it.
import pg from 'pg';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseUrl } from '../helpers/db.ts';
import { callFrom, heading, startConsole, type ConsoleHarness } from '../helpers/console.ts';
import { request } from './e2e-helpers.ts';
import { startOidcProvider, type OidcProvider } from '../helpers/oidc-provider.ts';
import { parseMail, startSmtp, type LoopbackSmtp } from '../helpers/smtp.ts';

let idp: OidcProvider;
let smtp: LoopbackSmtp;
let h: ConsoleHarness;
let alice: Page;

beforeAll(async () => {
  idp = await startOidcProvider('Test IdP');
  smtp = await startSmtp();
  h = await startConsole({ ...idp.env, SVC_SIGNUP: 'invite', SVC_SMTP_URL: smtp.url, SVC_SMTP_FROM: 'people@platform.test' });
  await idp.serve([new URL(h.consoleUrl).origin]);
  idp.accounts.set('alice-sub', { email: 'alice@example.com', email_verified: true, name: 'Alice' });
}, 90_000);
afterAll(async () => {
  await h?.close();
  await idp?.close();
  await smtp?.close();
});

/** The console link of the `nth` (1-based) mail to `to`, once it has arrived. */
async function linkMailed(to: string, nth = 1): Promise<string> {
  const mails = () => smtp.mails.filter((m) => m.to === to).map(parseMail);
  await expect.poll(() => mails().length, { timeout: 15_000 }).toBeGreaterThanOrEqual(nth);
  const match = new RegExp(`^(${new URL(h.consoleUrl).origin}/console/#/\\S+)$`, 'm').exec(mails()[nth - 1]!.text);
  expect(match).not.toBeNull();
  return match![1]!;
}

const providerButton = (page: Page) => page.getByRole('link', { name: 'Sign in with Test IdP', exact: true });

describe('the console with an OpenID provider', () => {
  it('an invited person joins through the provider from the invitation page and lands in the console', async () => {
    const invited = await callFrom(h.owner, 'POST', '/dashboard/invitations', { role: 'developer', email: 'alice@example.com' });
    expect(invited.status).toBe(201);
    // The e-mailed invitation links the console's invitation page, as the API's answer does.
    expect(await linkMailed('alice@example.com')).toBe(invited.json.url);
    alice = await h.newPage('alice');
    idp.next.loginAs = 'alice-sub';
    const started = Date.now();
    await alice.goto(`${h.consoleUrl}#/signup/${invited.json.token}`);
    await heading(alice, 'Create your account');
    await providerButton(alice).click();
    await heading(alice, 'Apps');
    console.log(`console: OpenID sign-in, from the provider's button to the apps page, ${Date.now() - started} ms`);
    await expect(alice.locator('.who').textContent()).resolves.toBe('alice@example.com developer');
    const session = await callFrom(alice, 'GET', '/dashboard/session');
    expect(session.status).toBe(200);
    expect(session.json).toMatchObject({ person: { email: 'alice@example.com', name: 'Alice' }, role: 'developer' });
    const members = (await callFrom(h.owner, 'GET', '/dashboard/members')).json.members as Array<{ email: string; role: string }>;
    expect(members.map((m) => [m.email, m.role]).sort()).toEqual([
      ['alice@example.com', 'developer'],
      ['olga@example.com', 'owner'],
    ]);
  });

  it('signs out, then back in with the provider alone: the same person, no second account', async () => {
    const before = (await callFrom(alice, 'GET', '/dashboard/session')).json.person.id as string;
    await alice.getByRole('button', { name: 'Sign out' }).click();
    await heading(alice, 'Sign in to the console');
    expect((await callFrom(alice, 'GET', '/dashboard/session')).status).toBe(401);
    await providerButton(alice).click();
    await heading(alice, 'Apps');
    const after = await callFrom(alice, 'GET', '/dashboard/session');
    expect(after.json.person.id).toBe(before);
    expect(after.json.accounts).toHaveLength(1);
  });

  it('a sign-in declined at the provider comes back to the sign-in page with the reason', async () => {
    const stranger = await h.newPage('stranger');
    idp.next.decline = true;
    await stranger.goto(h.consoleUrl);
    await heading(stranger, 'Sign in to the console');
    await providerButton(stranger).click();
    await heading(stranger, 'Sign in to the console');
    expect(new URL(stranger.url()).searchParams.get('signin_error')).toBe('OIDC_PROVIDER_REFUSED');
    await expect(stranger.getByRole('alert').textContent()).resolves.toBe('The sign-in with your provider failed (OIDC_PROVIDER_REFUSED).');
    expect((await callFrom(stranger, 'GET', '/dashboard/session')).status).toBe(401);
  });

  it("the verification e-mail's link confirms the address in the console", async () => {
    const link = await linkMailed('olga@example.com');
    expect(link).toMatch(/\/console\/#\/verify-email\/svc_vfy_/);
    expect((await callFrom(h.owner, 'GET', '/dashboard/session')).json.person.email_verified).toBe(false);
    await h.owner.goto(link);
    await heading(h.owner, 'Confirm your e-mail address');
    await h.owner.getByRole('button', { name: 'Confirm my address' }).click();
    await expect(h.owner.getByRole('status').textContent()).resolves.toBe('olga@example.com is confirmed.');
    expect((await callFrom(h.owner, 'GET', '/dashboard/session')).json.person.email_verified).toBe(true);
    // A link works once.
    await h.owner.reload();
    await h.owner.getByRole('button', { name: 'Confirm my address' }).click();
    await expect(h.owner.getByRole('alert').textContent()).resolves.toBe('This e-mail verification link was used already (or a newer link of the same kind was).');
  });

  it('"Forgot your password?" mails a link whose page sets a password that then signs in', async () => {
    const page = await h.newPage('forgetful');
    await page.goto(h.consoleUrl);
    await heading(page, 'Sign in to the console');
    await page.getByRole('button', { name: 'Forgot your password?' }).click();
    await page.getByLabel('Your e-mail').fill('alice@example.com');
    await page.getByRole('button', { name: 'Send me a link' }).click();
    await page.getByRole('status').filter({ hasText: 'If an account has this address' }).waitFor();
    const link = await linkMailed('alice@example.com', 2);
    expect(link).toMatch(/\/console\/#\/reset-password\/svc_rst_/);
    await page.goto(link);
    await heading(page, 'Choose a new password');
    await page.getByLabel('New password', { exact: true }).fill('alice new password');
    await page.getByLabel('Repeat it').fill('alice other password');
    await page.getByRole('button', { name: 'Set the password' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toBe('The two passwords differ.');
    await page.getByLabel('Repeat it').fill('alice new password');
    await page.getByRole('button', { name: 'Set the password' }).click();
    await page.getByRole('status').filter({ hasText: 'The password of alice@example.com is set' }).waitFor();
    // Alice's provider session in her other browser ended with the reset.
    expect((await callFrom(alice, 'GET', '/dashboard/session')).status).toBe(401);
    await page.getByRole('link', { name: 'Sign in' }).click();
    await heading(page, 'Sign in to the console');
    await page.getByLabel('E-mail').fill('alice@example.com');
    await page.getByLabel('Password').fill('alice new password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await heading(page, 'Apps');
    alice = page;
  });

  it("an invitation's link opened signed in offers to accept it; the API's refusal shows as it is", async () => {
    const invited = await callFrom(h.owner, 'POST', '/dashboard/invitations', { role: 'viewer' });
    expect(invited.json.url).toBe(`${new URL(h.consoleUrl).origin}/console/#/invitation/${invited.json.token}`);
    await alice.goto(invited.json.url);
    await heading(alice, 'Invitation');
    await alice.getByRole('button', { name: 'Accept the invitation' }).click();
    await expect(alice.getByRole('alert').textContent()).resolves.toMatch(/already a member/i);
  });

  it('a person in two accounts chooses the one the session acts in, with their role there', async () => {
    const control = new pg.Client({ connectionString: databaseUrl(h.server.controlDb) });
    await control.connect();
    let own: string;
    try {
      own = (await control.query(`insert into accounts (name) values ('Alice & Co') returning id`)).rows[0].id;
      await control.query(`insert into account_members (account_id, person_id, role) select $1, id, 'owner' from persons where email = 'alice@example.com'`, [own]);
    } finally {
      await control.end();
    }
    const first = (await callFrom(alice, 'GET', '/dashboard/session')).json.account_id as string;
    // A fresh load reads the session with its two accounts.
    await alice.goto(`${h.consoleUrl}#/apps`);
    await alice.reload();
    await heading(alice, 'Apps');
    const choice = alice.getByRole('combobox', { name: 'Account' });
    expect(await choice.locator('option').allTextContents()).toEqual([expect.stringMatching(/ \(developer\)$/), 'Alice & Co (owner)']);
    await choice.selectOption(own);
    await expect.poll(() => alice.locator('.who').textContent()).toBe('alice@example.com owner');
    expect((await callFrom(alice, 'GET', '/dashboard/session')).json).toMatchObject({ account_id: own, role: 'owner' });
    expect((await callFrom(alice, 'GET', '/apps')).json.apps).toEqual([]);
    await choice.selectOption(first);
    await expect.poll(() => alice.locator('.who').textContent()).toBe('alice@example.com developer');
    // An account the person is not in is none of theirs; a platform key has no session to move.
    const stranger = await callFrom(alice, 'POST', '/dashboard/session/account', { account_id: '00000000-0000-4000-8000-000000000000' });
    expect([stranger.status, stranger.json.error.code]).toEqual([404, 'RESOURCE_NOT_FOUND']);
    const byKey = await request(h.server.url, '/dashboard/session/account', { method: 'POST', key: h.server.platformKey, body: { account_id: own } });
    expect([byKey.status, byKey.json.error.code]).toEqual([403, 'FORBIDDEN']);
    expect(h.problems).toEqual([]);
  });
});
