// Open sign-up in the console, in Debian's Chromium, on a platform that sends mail (a loopback SMTP server): the
// sign-up form answers "check your e-mail" alike for a new address and one that has an account, and the mailed link's
// page finishes the sign-up with the password chosen, landing signed in on the apps.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callFrom, CONSOLE_OWNER, heading, startConsole, type ConsoleHarness } from '../helpers/console.ts';
import { parseMail, startSmtp, type LoopbackSmtp } from '../helpers/smtp.ts';

let smtp: LoopbackSmtp;
let h: ConsoleHarness;

beforeAll(async () => {
  smtp = await startSmtp();
  h = await startConsole({ SVC_SIGNUP: 'open', SVC_SMTP_URL: smtp.url, SVC_SMTP_FROM: 'people@platform.test' });
}, 90_000);
afterAll(async () => {
  await h?.close();
  await smtp?.close();
});

/** The mail to `to` with `subject`, once it has arrived. */
async function mailed(to: string, subject: string): Promise<string> {
  const find = () => smtp.mails.map(parseMail).find((m) => m.to === to && m.subject === subject);
  await expect.poll(() => find() !== undefined, { timeout: 15_000 }).toBe(true);
  return find()!.text;
}

/** Fills and sends the console's sign-up form. */
async function signUpInConsole(page: Page, email: string, password: string): Promise<void> {
  await page.goto(h.consoleUrl);
  await page.getByRole('button', { name: 'Create an account' }).click();
  await heading(page, 'Create your account');
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign up' }).click();
  await heading(page, 'Check your e-mail');
}

describe('open sign-up in the console, confirmed by mail', () => {
  it('says to check the mail for a known and a new address alike; the link finishes the new one with its password', async () => {
    await signUpInConsole(await h.newPage('known'), CONSOLE_OWNER.email, 'someone else password');
    expect(await mailed(CONSOLE_OWNER.email, 'You already have an account')).toContain('tried to sign up');

    const page = await h.newPage('newcomer');
    await signUpInConsole(page, 'nell@example.com', 'nell password 1');
    await expect(page.getByRole('status').textContent()).resolves.toContain('nell@example.com');
    const link = /^(\S+\/console\/#\/confirm-signup\/\S+)$/m.exec(await mailed('nell@example.com', 'Finish signing up'))![1]!;

    await page.goto(link);
    await heading(page, 'Finish signing up');
    await page.getByLabel('The password you chose').fill('not the password');
    await page.getByRole('button', { name: 'Finish signing up' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('not the one chosen when signing up');
    await page.getByLabel('The password you chose').fill('nell password 1');
    await page.getByRole('button', { name: 'Finish signing up' }).click();
    await heading(page, 'Apps');
    const session = await callFrom(page, 'GET', '/dashboard/session');
    expect(session.json).toMatchObject({ person: { email: 'nell@example.com', email_verified: true }, role: 'owner' });
    expect(h.problems).toEqual([]);
  });
});
