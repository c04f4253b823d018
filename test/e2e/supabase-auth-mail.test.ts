// supabase-js's auth flows through e-mail (issue 41), unchanged against `node src/main.ts` with loopback SMTP servers
// (the platform's, and one an app sets as its own): sign-up confirmation by code and by link, links in the implicit
// and the PKCE flow, password recovery, one-time codes and magic links, e-mail change, resend, and the app's settings.
import { createClient, type SupabaseClient } from '@supabase/supabase-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { parseMail, startSmtp, type LoopbackSmtp, type Mail } from '../helpers/smtp.ts';
import { request } from './e2e-helpers.ts';

let server: SpawnedServer;
let smtp: LoopbackSmtp;
let appSmtp: LoopbackSmtp;
const app = { id: '', serviceKey: '', publishableKey: '' };
const SITE = 'http://site.example';

/** A page's client: the app's publishable key, its session in memory, PKCE when asked. */
const client = (flowType: 'implicit' | 'pkce' = 'implicit'): SupabaseClient =>
  createClient(`${server.url}/v1/${app.id}`, app.publishableKey, { auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false, flowType } });

async function until(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for a mail');
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The nth (1-based) mail to the address through a server, once it has come. */
async function mailTo(address: string, nth = 1, via: LoopbackSmtp = smtp): Promise<Mail> {
  const to = () => via.mails.filter((m) => m.to === address).map(parseMail);
  await until(() => to().length >= nth);
  return to()[nth - 1]!;
}

function codeOf(mail: Mail): string {
  const match = /^Or enter this code: (\d{6})$/m.exec(mail.text);
  expect(match, mail.text).not.toBeNull();
  return match![1]!;
}

function linkOf(mail: Mail): URL {
  const match = /^(http\S+\/auth\/v1\/verify\?\S+)$/m.exec(mail.text);
  expect(match, mail.text).not.toBeNull();
  return new URL(match![1]!);
}

/** Follows a mailed link as a browser would, up to the redirect: where it sends the user. */
async function follow(link: URL): Promise<URL> {
  const res = await fetch(link, { redirect: 'manual' });
  expect(res.status).toBe(303);
  return new URL(res.headers.get('location')!);
}

const settings = (body: Record<string, unknown>) => request(server.url, `/v1/${app.id}/auth/settings`, { method: 'PUT', key: server.platformKey, body });

beforeAll(async () => {
  smtp = await startSmtp();
  appSmtp = await startSmtp();
  // Loopback SMTP servers are private addresses: allowed here, as an operator on a private network would.
  server = await spawnServer({ SVC_SMTP_URL: smtp.url, SVC_OUTBOUND_ALLOW_PRIVATE: 'true', SVC_AUTH_RATE_LIMIT_PER_MINUTE: '100' });
  const init = await request(server.url, '/init', { method: 'POST', key: server.platformKey, body: { name: 'Mail flows' } });
  expect(init.status).toBe(201);
  Object.assign(app, { id: init.json.app_id, serviceKey: init.json.service_key.key, publishableKey: init.json.publishable_key });
});
afterAll(async () => {
  await server?.close();
  await smtp?.close();
  await appSmtp?.close();
});

describe('auth settings', () => {
  it('start at the defaults, change field by field, and refuse what is not a setting', async () => {
    const read = await request(server.url, `/v1/${app.id}/auth/settings`, { key: app.serviceKey });
    expect(read.status).toBe(200);
    expect(read.json).toEqual({
      confirm_email: false,
      allow_signup: true,
      site_url: null,
      redirect_urls: [],
      mail_from: null,
      smtp_url_set: false,
      smtp_url_hint: null,
      mail_route: 'platform',
      updated_at: null,
    });
    const changed = await settings({ confirm_email: true, site_url: SITE, redirect_urls: [`${SITE}/welcome`] });
    expect(changed.status).toBe(200);
    expect(changed.json).toMatchObject({ confirm_email: true, allow_signup: true, site_url: SITE, redirect_urls: [`${SITE}/welcome`], mail_route: 'platform' });
    const unknown = await settings({ confirm: true });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error.code).toBe('VALIDATION_FAILED');
    const badSmtp = await settings({ smtp_url: 'http://mail.example' });
    expect(badSmtp.status).toBe(400);
    expect(badSmtp.json.error.details[0].path).toBe('smtp_url');
    const anonymous = await request(server.url, `/v1/${app.id}/auth/settings`, { key: app.publishableKey });
    expect(anonymous.status).toBe(401);
  });
});

describe('sign-up confirmed by mail', () => {
  it('answers the user without a session, refuses sign-in until the code confirms it, then signs in', async () => {
    const page = client();
    const signedUp = await page.auth.signUp({ email: 'ada@example.com', password: 'correct horse', options: { data: { name: 'Ada' }, emailRedirectTo: `${SITE}/welcome` } });
    expect(signedUp.error).toBeNull();
    expect(signedUp.data.session).toBeNull();
    expect(signedUp.data.user).toMatchObject({ email: 'ada@example.com', email_confirmed_at: null, user_metadata: { name: 'Ada' } });

    const early = await page.auth.signInWithPassword({ email: 'ada@example.com', password: 'correct horse' });
    expect(early.error).toMatchObject({ status: 400, code: 'email_not_confirmed' });
    const platform = await request(server.url, `/v1/${app.id}/auth/login`, { method: 'POST', body: { email: 'ada@example.com', password: 'correct horse' } });
    expect(platform.status).toBe(403);
    expect(platform.json.error.code).toBe('AUTH_EMAIL_NOT_CONFIRMED');

    const mail = await mailTo('ada@example.com');
    expect(mail.subject).toBe('Confirm your sign-up');
    const verified = await page.auth.verifyOtp({ email: 'ada@example.com', token: codeOf(mail), type: 'signup' });
    expect(verified.error).toBeNull();
    expect(verified.data.user).toMatchObject({ email: 'ada@example.com', email_confirmed_at: expect.any(String) });
    expect((await page.auth.getUser()).data.user?.id).toBe(signedUp.data.user!.id);

    const again = await client().auth.verifyOtp({ email: 'ada@example.com', token: codeOf(mail), type: 'signup' });
    expect(again.error).toMatchObject({ status: 403, code: 'otp_expired' });
    const signedIn = await client().auth.signInWithPassword({ email: 'ada@example.com', password: 'correct horse' });
    expect(signedIn.error).toBeNull();
  });

  it('confirms by the link: a redirect the app allows, with the session in the fragment; a used link redirects with an error', async () => {
    const page = client();
    expect((await page.auth.signUp({ email: 'bob@example.com', password: 'correct horse', options: { emailRedirectTo: `${SITE}/welcome?from=mail` } })).error).toBeNull();
    const link = linkOf(await mailTo('bob@example.com'));
    expect(link.searchParams.get('type')).toBe('signup');
    const landed = await follow(link);
    expect(`${landed.origin}${landed.pathname}${landed.search}`).toBe(`${SITE}/welcome?from=mail`);
    const fragment = new URLSearchParams(landed.hash.slice(1));
    expect(fragment.get('token_type')).toBe('bearer');
    expect(fragment.get('type')).toBe('signup');
    const session = await page.auth.setSession({ access_token: fragment.get('access_token')!, refresh_token: fragment.get('refresh_token')! });
    expect(session.data.user).toMatchObject({ email: 'bob@example.com', email_confirmed_at: expect.any(String) });

    const used = await follow(link);
    expect(`${used.origin}${used.pathname}`).toBe(`${SITE}/welcome`);
    expect(Object.fromEntries(new URLSearchParams(used.hash.slice(1)))).toEqual({
      error: 'access_denied',
      error_code: 'otp_expired',
      error_description: 'Email link is invalid or has expired',
    });
  });

  it('sends a link to a place the app does not allow to its site instead', async () => {
    expect((await client().auth.signUp({ email: 'eve@example.com', password: 'correct horse', options: { emailRedirectTo: 'http://evil.example/steal' } })).error).toBeNull();
    const landed = await follow(linkOf(await mailTo('eve@example.com')));
    expect(landed.origin).toBe(SITE);
  });

  it('resends the confirmation of an unconfirmed sign-up, and voids a code after five wrong tries', async () => {
    const page = client();
    expect((await page.auth.signUp({ email: 'cy@example.com', password: 'correct horse' })).error).toBeNull();
    await mailTo('cy@example.com');
    expect((await page.auth.resend({ type: 'signup', email: 'cy@example.com' })).error).toBeNull();
    const second = await mailTo('cy@example.com', 2);
    for (let i = 0; i < 5; i++) {
      const wrong = await page.auth.verifyOtp({ email: 'cy@example.com', token: '000000' === codeOf(second) ? '111111' : '000000', type: 'signup' });
      expect(wrong.error).toMatchObject({ status: 403, code: 'otp_expired' });
    }
    const late = await page.auth.verifyOtp({ email: 'cy@example.com', token: codeOf(second), type: 'signup' });
    expect(late.error).toMatchObject({ status: 403, code: 'otp_expired' });
  });
});

describe('recovery, codes and e-mail change', () => {
  it('recovers a password through a PKCE link: ?code= exchanged for a session, then updateUser sets the password', async () => {
    const page = client('pkce');
    expect((await page.auth.resetPasswordForEmail('ada@example.com', { redirectTo: `${SITE}/reset` })).error).toBeNull();
    const mail = await mailTo('ada@example.com', 2);
    expect(mail.subject).toBe('Reset your password');
    const landed = await follow(linkOf(mail));
    expect(`${landed.origin}${landed.pathname}`).toBe(`${SITE}/reset`);
    const code = landed.searchParams.get('code')!;
    // auth-js names its flow in the redirect; the page passes it back to find its verifier.
    const flowId = landed.searchParams.get('sb_flow_id')!;
    expect(landed.hash).toBe('');

    const wrongVerifier = await fetch(`${server.url}/v1/${app.id}/auth/v1/token?grant_type=pkce`, {
      method: 'POST',
      headers: { apikey: app.publishableKey, 'content-type': 'application/json' },
      body: JSON.stringify({ auth_code: code, code_verifier: 'x'.repeat(43) }),
    });
    expect(wrongVerifier.status).toBe(400);
    expect(await wrongVerifier.json()).toMatchObject({ code: 'bad_code_verifier' });
    const spent = await page.auth.exchangeCodeForSession(code, { flowId });
    expect(spent.error).toMatchObject({ status: 404, code: 'flow_state_not_found' });
    const unknownAddress = await client().auth.resetPasswordForEmail('nobody@example.com');
    expect(unknownAddress.error).toBeNull();

    // The wrong verifier spent that code: the page asks for a new link and exchanges its code.
    expect((await page.auth.resetPasswordForEmail('ada@example.com', { redirectTo: `${SITE}/reset` })).error).toBeNull();
    const again = await follow(linkOf(await mailTo('ada@example.com', 3)));
    const exchanged = await page.auth.exchangeCodeForSession(again.searchParams.get('code')!, { flowId: again.searchParams.get('sb_flow_id')! });
    expect(exchanged.error).toBeNull();
    expect(exchanged.data.user?.email).toBe('ada@example.com');
    expect((await page.auth.updateUser({ password: 'a new password' })).error).toBeNull();
    expect((await client().auth.signInWithPassword({ email: 'ada@example.com', password: 'a new password' })).error).toBeNull();
    expect(smtp.mails.filter((m) => m.to === 'nobody@example.com')).toEqual([]);
  });

  it('signs in with a one-time code: a new address becomes a user without a password, unless create_user is false', async () => {
    const refused = await client().auth.signInWithOtp({ email: 'dee@example.com', options: { shouldCreateUser: false } });
    expect(refused.error).toMatchObject({ status: 422, code: 'otp_disabled' });
    const page = client();
    expect((await page.auth.signInWithOtp({ email: 'dee@example.com', options: { data: { plan: 'free' } } })).error).toBeNull();
    const verified = await page.auth.verifyOtp({ email: 'dee@example.com', token: codeOf(await mailTo('dee@example.com')), type: 'email' });
    expect(verified.error).toBeNull();
    expect(verified.data.user).toMatchObject({ email: 'dee@example.com', user_metadata: { plan: 'free' }, email_confirmed_at: expect.any(String) });
    const noPassword = await client().auth.signInWithPassword({ email: 'dee@example.com', password: 'anything at all' });
    expect(noPassword.error).toMatchObject({ status: 400, code: 'invalid_credentials' });

    expect((await client().auth.signInWithOtp({ email: 'dee@example.com' })).error).toBeNull();
    const magic = await mailTo('dee@example.com', 2);
    expect(magic.subject).toBe('Your sign-in link');
    expect((await client().auth.verifyOtp({ email: 'dee@example.com', token: codeOf(magic), type: 'magiclink' })).error).toBeNull();
  });

  it('changes the e-mail address once the new address confirms it', async () => {
    const page = client();
    expect((await page.auth.signInWithPassword({ email: 'bob@example.com', password: 'correct horse' })).error).toBeNull();
    const asked = await page.auth.updateUser({ email: 'robert@example.com' });
    expect(asked.error).toBeNull();
    expect(asked.data.user).toMatchObject({ email: 'bob@example.com', new_email: 'robert@example.com' });
    const taken = await page.auth.updateUser({ email: 'cy@example.com' });
    expect(taken.error).toMatchObject({ status: 422, code: 'email_exists' });
    const mail = await mailTo('robert@example.com');
    expect(mail.subject).toBe('Confirm your new e-mail address');
    const verified = await page.auth.verifyOtp({ email: 'robert@example.com', token: codeOf(mail), type: 'email_change' });
    expect(verified.error).toBeNull();
    expect(verified.data.user?.email).toBe('robert@example.com');
    expect(verified.data.user?.new_email).toBeUndefined();
  });

  it("mails through the app's own server once it sets one, which is never shown back", async () => {
    const withPassword = await settings({ smtp_url: 'smtp://user:secret@127.0.0.1:2525' });
    expect(withPassword.json).toMatchObject({ smtp_url_set: true, smtp_url_hint: 'smtp://127.0.0.1:2525', mail_route: 'app' });
    expect(JSON.stringify(withPassword.json)).not.toContain('secret');
    const set = await settings({ smtp_url: appSmtp.url, mail_from: 'Mail flows <hello@app.example>' });
    expect(set.status).toBe(200);
    expect(set.json).toMatchObject({ smtp_url_set: true, smtp_url_hint: appSmtp.url, mail_route: 'app', mail_from: 'Mail flows <hello@app.example>' });
    expect((await client().auth.resetPasswordForEmail('robert@example.com')).error).toBeNull();
    const mail = await mailTo('robert@example.com', 1, appSmtp);
    expect(mail.from).toBe('Mail flows <hello@app.example>');
    expect(smtp.mails.filter((m) => m.to === 'robert@example.com')).toHaveLength(1);
  });

  it('closes sign-ups when the app says so', async () => {
    expect((await settings({ allow_signup: false })).status).toBe(200);
    const refused = await client().auth.signUp({ email: 'zed@example.com', password: 'correct horse' });
    expect(refused.error).toMatchObject({ status: 422, code: 'signup_disabled' });
    const otp = await client().auth.signInWithOtp({ email: 'zed@example.com' });
    expect(otp.error).toMatchObject({ status: 422, code: 'signup_disabled' });
  });
});
