// The console's OpenID Connect sign-in in Debian's Chromium: a real OpenID provider on loopback (oidc-provider), the
// platform spawned as `npm start` runs it with that provider and invitation-only sign-up. An invited person joins by
// the provider's button on the invitation's page, signs out and back in with the provider alone, and a sign-in the
// person declines at the provider comes back to the sign-in page with the reason.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callFrom, heading, startConsole, type ConsoleHarness } from '../helpers/console.ts';
import { startOidcProvider, type OidcProvider } from '../helpers/oidc-provider.ts';

let idp: OidcProvider;
let h: ConsoleHarness;
let alice: Page;

beforeAll(async () => {
  idp = await startOidcProvider('Test IdP');
  h = await startConsole({ ...idp.env, SVC_SIGNUP: 'invite' });
  await idp.serve([new URL(h.consoleUrl).origin]);
  idp.accounts.set('alice-sub', { email: 'alice@example.com', email_verified: true, name: 'Alice' });
}, 90_000);
afterAll(async () => {
  await h?.close();
  await idp?.close();
});

const providerButton = (page: Page) => page.getByRole('link', { name: 'Sign in with Test IdP', exact: true });

describe('the console with an OpenID provider', () => {
  it('an invited person joins through the provider from the invitation page and lands in the console', async () => {
    const invited = await callFrom(h.owner, 'POST', '/dashboard/invitations', { role: 'developer', email: 'alice@example.com' });
    expect(invited.status).toBe(201);
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
    expect(h.problems).toEqual([]);
  });
});
