// People on the platform and their e-mail, end to end against `node src/main.ts` with a loopback SMTP server: open
// sign-up confirmed by mail (silent about known addresses), the verification mail of an invited sign-up and its link,
// password reset (silent about unknown addresses, single-use, ending every session), refused tokens, rate limits
// across clients and addresses, and a platform without SMTP.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey, hashKey } from '../../src/core/crypto.ts';
import { signupRequestsPrune } from '../../src/identity/jobs.ts';
import { toTask } from '../../workers/index.ts';
import { databaseUrl } from '../helpers/db.ts';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { parseMail, startSmtp, type LoopbackSmtp, type Mail } from '../helpers/smtp.ts';
import { request, type RawResponse } from './e2e-helpers.ts';

let smtp: LoopbackSmtp;
let server: SpawnedServer;
let origin: string;
let control: pg.Pool;
/** The account the test's invitations are to. */
let invitingAccount: string;
/** Every token a mail carried: none may appear in the server's output. */
const seenTokens: string[] = [];

/** The headers and the body of a message as sent, the body decoded from quoted-printable or base64. */
async function until(done: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Waits until the worker has run every queued mail job. */
async function mailJobsDone(): Promise<void> {
  const pending = `select count(*)::int as n from graphile_worker.jobs where task_identifier in ('identity_mail', 'identity_signup_mail')`;
  await until(async () => (await control.query(pending)).rows[0].n === 0);
}

/** The mails received so far to the address. */
function mailsTo(address: string): Mail[] {
  return smtp.mails.filter((m) => m.to === address).map(parseMail);
}

/** Waits for the nth (1-based) mail to the address and returns it. */
async function mailTo(address: string, nth = 1): Promise<Mail> {
  await until(() => mailsTo(address).length >= nth);
  return mailsTo(address)[nth - 1]!;
}

/** The latest mail to the address with this subject, once there is one. */
async function mailWithSubject(address: string, subject: string): Promise<Mail> {
  await until(() => mailsTo(address).some((m) => m.subject === subject));
  return mailsTo(address).findLast((m) => m.subject === subject)!;
}

/** The token of the mail's link, checked against the link shape docs/people.md documents. */
function tokenOf(mail: Mail, page: 'verify-email' | 'reset-password' | 'confirm-signup'): string {
  const match = new RegExp(`^${origin}/console/#/${page}/(\\S+)$`, 'm').exec(mail.text);
  expect(match, mail.text).not.toBeNull();
  const token = decodeURIComponent(match![1]!);
  seenTokens.push(token);
  return token;
}

/** A browser on the platform's origin, from its own client address (X-Forwarded-For: each test's limits are its own). */
function browser(client: string, cookie?: string): Record<string, string> {
  return { origin, 'x-forwarded-for': client, ...(cookie ? { cookie } : {}) };
}

function cookieOf(res: RawResponse): string {
  return res.headers['set-cookie']!.find((c) => c.startsWith('svc_session='))!.split(';')[0]!;
}

function post(path: string, body: unknown, headers: Record<string, string>): Promise<RawResponse> {
  return request(server.url, path, { method: 'POST', body, headers });
}

/** A new invitation to the test's account naming `email`, made as an admin's would be. */
async function invitation(email: string): Promise<string> {
  const token = generateKey('svc_inv_');
  await control.query(`insert into invitations (account_id, email, role, token_hash, expires_at) values ($1, $2, 'developer', $3, now() + interval '1 day')`, [
    invitingAccount,
    email,
    hashKey(token),
  ]);
  return token;
}

/** A sign-up with an invitation: signed in at once, the address not verified yet (its verification mail is queued). */
async function signUpInvited(email: string, password: string, client: string): Promise<{ cookie: string; personId: string }> {
  const res = await post('/dashboard/signup', { email, password, invitation_token: await invitation(email) }, browser(client));
  expect(res.status).toBe(201);
  return { cookie: cookieOf(res), personId: (res.json as { person: { id: string } }).person.id };
}

async function session(cookie: string): Promise<RawResponse> {
  return request(server.url, '/dashboard/session', { headers: { cookie } });
}

beforeAll(async () => {
  smtp = await startSmtp();
  server = await spawnServer({
    SVC_SMTP_URL: smtp.url,
    SVC_SMTP_FROM: 'people@platform.test',
    SVC_SIGNUP: 'open',
    // The client address of each request is its X-Forwarded-For, so that each test counts in its own buckets.
    SVC_TRUST_PROXY: '1',
    LOG_LEVEL: 'info',
  });
  origin = `http://localhost:${server.port}`;
  control = new pg.Pool({ connectionString: databaseUrl(server.controlDb), max: 2 });
  invitingAccount = (await control.query(`insert into accounts (name) values ('inviting') returning id`)).rows[0].id;
}, 60_000);

afterAll(async () => {
  await smtp?.close();
  await control?.end();
  await server?.close();
});

describe('open sign-up, confirmed by mail', () => {
  it('answers 202 alike for a new address and one with an account: the new one is mailed the link, the other a notice, and no person is made', async () => {
    const client = '198.51.100.20';
    await signUpInvited('olive@example.com', 'olive password 1', client);
    const known = await post('/dashboard/signup', { email: 'Olive@example.com', password: 'another password 1', name: 'Not Olive' }, browser(client));
    const fresh = await post('/dashboard/signup', { email: 'Nina@example.com', password: 'nina password 1', name: 'Nina' }, browser(client));
    expect(known.status).toBe(202);
    expect(fresh.status).toBe(202);
    expect(known.json).toEqual({ email: 'olive@example.com', mail_configured: true });
    expect(fresh.json).toEqual({ email: 'nina@example.com', mail_configured: true });
    for (const res of [known, fresh]) expect(res.headers['set-cookie']).toBeUndefined();

    const notice = await mailWithSubject('olive@example.com', 'You already have an account');
    expect(notice.text).toContain('tried to sign up');
    expect(notice.text).not.toMatch(/#\//);
    const link = await mailWithSubject('nina@example.com', 'Finish signing up');
    expect(link.text).toContain('within 24 hours and enter the password you chose; it works once');
    const token = tokenOf(link, 'confirm-signup');
    expect(token).toMatch(/^svc_sup_[A-Za-z0-9_-]{43}$/);
    const persons = async (email: string) => (await control.query(`select count(*)::int as n from persons where email = $1`, [email])).rows[0].n as number;
    expect(await persons('olive@example.com')).toBe(1);
    expect(await persons('nina@example.com')).toBe(0);
    // Olive's password and name are hers still.
    expect((await post('/dashboard/signin', { email: 'olive@example.com', password: 'olive password 1' }, browser(client))).status).toBe(200);

    const wrong = await post('/dashboard/signup/confirm', { token, password: 'not nina password' }, browser(client));
    expect(wrong.status).toBe(401);
    expect(wrong.json).toEqual({
      error: {
        code: 'INVALID_CREDENTIALS',
        message: 'The password is not the one chosen when signing up.',
        remediation: 'Enter the password you chose at sign-up; if you forgot it, sign up again (POST /dashboard/signup) and follow the newest link.',
        documentation_url: server.docsUrl('keys'),
      },
    });
    const confirmed = await post('/dashboard/signup/confirm', { token, password: 'nina password 1' }, browser(client));
    expect(confirmed.status).toBe(201);
    expect(confirmed.json).toEqual({
      person: { id: expect.any(String), email: 'nina@example.com', name: 'Nina', email_verified: true, created_at: expect.any(String) },
      account_id: expect.any(String),
      role: 'owner',
    });
    expect(((await session(cookieOf(confirmed))).json as { person: { email: string } }).person.email).toBe('nina@example.com');
    expect(await persons('nina@example.com')).toBe(1);

    const again = await post('/dashboard/signup/confirm', { token, password: 'nina password 1' }, browser(client));
    expect(again.status).toBe(400);
    expect((again.json as { error: { code: string } }).error.code).toBe('TOKEN_INVALID');
  });

  it("the address's owner cannot finish a sign-up someone else made with it, and an expired link is refused", async () => {
    const client = '198.51.100.21';
    // Mallory signs up with Pat's address; Pat gets the link and follows it with the password Pat would choose.
    expect((await post('/dashboard/signup', { email: 'pat@example.com', password: 'mallory password 1' }, browser(client))).status).toBe(202);
    const token = tokenOf(await mailWithSubject('pat@example.com', 'Finish signing up'), 'confirm-signup');
    const refused = await post('/dashboard/signup/confirm', { token, password: 'pat password 1' }, browser(client));
    expect(refused.status).toBe(401);
    expect((await control.query(`select count(*)::int as n from persons where email = 'pat@example.com'`)).rows[0].n).toBe(0);

    await control.query(`update signup_requests set expires_at = now() - interval '1 second' where token_hash = $1`, [hashKey(token)]);
    const expired = await post('/dashboard/signup/confirm', { token, password: 'mallory password 1' }, browser(client));
    expect(expired.status).toBe(400);
    expect(expired.json).toEqual({
      error: {
        code: 'TOKEN_EXPIRED',
        message: 'This sign-up link has expired.',
        remediation: 'Ask for a new e-mail with POST /dashboard/signup (sign up again).',
        documentation_url: server.docsUrl('keys'),
      },
    });

    // The hourly prune keeps a request that expired within the day (its link still says expired), then drops it.
    const prune = () => toTask(signupRequestsPrune, {})({}, { job: { attempts: 1, max_attempts: 1 }, query: (text: string, values?: unknown[]) => control.query(text, values), logger: { info: () => {} } } as never);
    const left = async () => (await control.query(`select count(*)::int as n from signup_requests where token_hash = $1`, [hashKey(token)])).rows[0].n as number;
    await prune();
    expect(await left()).toBe(1);
    await control.query(`update signup_requests set expires_at = now() - interval '25 hours' where token_hash = $1`, [hashKey(token)]);
    await prune();
    expect(await left()).toBe(0);
  });

  it("an invited sign-up checks the invitation before the address, and names a taken address only to the invitation's holder", async () => {
    const client = '198.51.100.22';
    await signUpInvited('quinn@example.com', 'quinn password 1', client);
    // An invitation naming someone else: refused alike for a known and a new address.
    const other = await invitation('rose@example.com');
    for (const email of ['quinn@example.com', 'nobody-here@example.com']) {
      const res = await post('/dashboard/signup', { email, password: 'long enough pw', invitation_token: other }, browser(client));
      expect(res.status, email).toBe(403);
      expect((res.json as { error: { code: string } }).error.code).toBe('INVITATION_OTHER_EMAIL');
    }
    // The invitation for Quinn's own address: the account that gave it vouched for its holder, who is told to sign in.
    const taken = await post('/dashboard/signup', { email: 'quinn@example.com', password: 'long enough pw', invitation_token: await invitation('quinn@example.com') }, browser(client));
    expect(taken.status).toBe(409);
    expect((taken.json as { error: { code: string } }).error.code).toBe('EMAIL_TAKEN');
  });
});

describe('e-mail verification', () => {
  it('an invited sign-up mails a verification link; its token verifies the address once', async () => {
    const res = await post('/dashboard/signup', { email: 'Ada@Example.com', password: 'first password 1', name: 'Ada', invitation_token: await invitation('ada@example.com') }, browser('198.51.100.1'));
    expect(res.status).toBe(201);
    expect(res.json).toEqual({
      person: { id: expect.any(String), email: 'ada@example.com', name: 'Ada', email_verified: false, created_at: expect.any(String) },
      account_id: invitingAccount,
      role: 'developer',
    });
    const cookie = cookieOf(res);

    const mail = await mailTo('ada@example.com');
    expect(mail.from).toBe('people@platform.test');
    expect(mail.subject).toBe('Confirm your e-mail address');
    expect(mail.text).toContain('within 24 hours; it works once');
    const token = tokenOf(mail, 'verify-email');
    expect(token).toMatch(/^svc_vfy_[A-Za-z0-9_-]{43}$/);

    const verified = await post('/dashboard/verify-email', { token }, browser('198.51.100.1'));
    expect(verified.status).toBe(200);
    expect(verified.json).toEqual({ email: 'ada@example.com', email_verified: true });
    expect(((await session(cookie)).json as { person: { email_verified: boolean } }).person.email_verified).toBe(true);

    const reused = await post('/dashboard/verify-email', { token }, browser('198.51.100.1'));
    expect(reused.status).toBe(400);
    expect(reused.json).toEqual({
      error: {
        code: 'TOKEN_USED',
        message: 'This e-mail verification link was used already (or a newer link of the same kind was).',
        remediation: 'Each link works once: ask for a new e-mail with POST /dashboard/verify-email/send (signed in).',
        documentation_url: server.docsUrl('keys'),
      },
    });

    const again = await post('/dashboard/verify-email/send', {}, browser('198.51.100.1', cookie));
    expect(again.status).toBe(409);
    expect(again.json).toEqual({
      error: {
        code: 'EMAIL_ALREADY_VERIFIED',
        message: 'The e-mail address of this person is verified already.',
        remediation: 'Nothing to do: GET /dashboard/session shows email_verified true.',
        documentation_url: server.docsUrl('keys'),
      },
    });
  });

  it('a signed-in person asks for a new link; any one of the links verifies, and then none works again', async () => {
    const { cookie } = await signUpInvited('bob@example.com', 'bob password 1', '198.51.100.2');
    const first = tokenOf(await mailTo('bob@example.com'), 'verify-email');

    const anonymous = await post('/dashboard/verify-email/send', {}, browser('198.51.100.2'));
    expect(anonymous.status).toBe(401);
    const sent = await post('/dashboard/verify-email/send', {}, browser('198.51.100.2', cookie));
    expect(sent.status).toBe(202);
    expect(sent.json).toEqual({ mail_configured: true });
    const second = tokenOf(await mailTo('bob@example.com', 2), 'verify-email');
    expect(second).not.toBe(first);

    expect((await post('/dashboard/verify-email', { token: first }, browser('198.51.100.2'))).json).toEqual({ email: 'bob@example.com', email_verified: true });
    const later = await post('/dashboard/verify-email', { token: second }, browser('198.51.100.2'));
    expect(later.status).toBe(400);
    expect((later.json as { error: { code: string } }).error.code).toBe('TOKEN_USED');
  });
});

describe('password reset', () => {
  it('answers 202 alike for an unknown and a known address, mails only the known one, and the link sets the password once', async () => {
    const client = '198.51.100.3';
    const { cookie: signupCookie, personId } = await signUpInvited('cleo@example.com', 'old password 1', client);
    tokenOf(await mailTo('cleo@example.com'), 'verify-email');
    const signedIn = await post('/dashboard/signin', { email: 'cleo@example.com', password: 'old password 1' }, browser(client));
    expect(signedIn.status).toBe(200);
    const signinCookie = cookieOf(signedIn);

    const unknown = await post('/dashboard/password-reset', { email: 'nobody@example.com' }, browser(client));
    const known = await post('/dashboard/password-reset', { email: 'CLEO@example.com' }, browser(client));
    expect(unknown.status).toBe(202);
    expect(known.status).toBe(202);
    expect(unknown.json).toEqual({ mail_configured: true });
    expect(known.json).toEqual(unknown.json);

    const mail = await mailTo('cleo@example.com', 2);
    expect(mail.subject).toBe('Reset your password');
    expect(mail.text).toContain('within 1 hour; it works once');
    const token = tokenOf(mail, 'reset-password');
    expect(token).toMatch(/^svc_rst_/);
    // Once no mail job is left, the unknown address has had nothing sent.
    await mailJobsDone();
    expect(mailsTo('nobody@example.com')).toEqual([]);

    const confirmed = await post('/dashboard/password-reset/confirm', { token, password: 'new password 2' }, browser(client));
    expect(confirmed.status).toBe(200);
    expect(confirmed.json).toEqual({ email: 'cleo@example.com', sessions_ended: 2 });
    expect((await session(signupCookie)).status).toBe(401);
    expect((await session(signinCookie)).status).toBe(401);

    const old = await post('/dashboard/signin', { email: 'cleo@example.com', password: 'old password 1' }, browser(client));
    expect(old.status).toBe(401);
    expect(old.json).toEqual({
      error: {
        code: 'INVALID_CREDENTIALS',
        message: 'The e-mail or password is wrong.',
        remediation: 'Check both and try again; a forgotten password is reset by e-mail with POST /dashboard/password-reset.',
        documentation_url: server.docsUrl('keys'),
      },
    });
    const fresh = await post('/dashboard/signin', { email: 'cleo@example.com', password: 'new password 2' }, browser(client));
    expect(fresh.status).toBe(200);
    // The mail proved the address, so the reset verified it too.
    expect(fresh.json).toMatchObject({ person: { id: personId, email_verified: true } });

    const reused = await post('/dashboard/password-reset/confirm', { token, password: 'third password 3' }, browser(client));
    expect(reused.status).toBe(400);
    expect(reused.json).toEqual({
      error: {
        code: 'TOKEN_USED',
        message: 'This password reset link was used already (or a newer link of the same kind was).',
        remediation: 'Each link works once: ask for a new e-mail with POST /dashboard/password-reset.',
        documentation_url: server.docsUrl('keys'),
      },
    });
  });

  it('refuses an expired token, a token of the other purpose and an unknown one, with 400 and a code for each', async () => {
    const client = '198.51.100.4';
    await signUpInvited('dora@example.com', 'dora password 1', client);
    const verification = tokenOf(await mailTo('dora@example.com'), 'verify-email');
    expect((await post('/dashboard/password-reset', { email: 'dora@example.com' }, browser(client))).status).toBe(202);
    const reset = tokenOf(await mailTo('dora@example.com', 2), 'reset-password');

    const wrongForReset = await post('/dashboard/password-reset/confirm', { token: verification, password: 'new password 2' }, browser(client));
    expect(wrongForReset.status).toBe(400);
    expect(wrongForReset.json).toEqual({
      error: {
        code: 'TOKEN_WRONG_PURPOSE',
        message: 'The token is one of e-mail verification, which this route does not take.',
        remediation: 'Send it to POST /dashboard/verify-email.',
        documentation_url: server.docsUrl('keys'),
      },
    });
    const wrongForVerify = await post('/dashboard/verify-email', { token: reset }, browser(client));
    expect(wrongForVerify.status).toBe(400);
    expect(wrongForVerify.json).toEqual({
      error: {
        code: 'TOKEN_WRONG_PURPOSE',
        message: 'The token is one of password reset, which this route does not take.',
        remediation: 'Send it to POST /dashboard/password-reset/confirm.',
        documentation_url: server.docsUrl('keys'),
      },
    });

    await control.query(`update person_tokens set expires_at = now() - interval '1 second' where token_hash = $1`, [hashKey(reset)]);
    const expired = await post('/dashboard/password-reset/confirm', { token: reset, password: 'new password 2' }, browser(client));
    expect(expired.status).toBe(400);
    expect(expired.json).toEqual({
      error: {
        code: 'TOKEN_EXPIRED',
        message: 'This password reset link has expired.',
        remediation: 'Ask for a new e-mail with POST /dashboard/password-reset.',
        documentation_url: server.docsUrl('keys'),
      },
    });

    const unknown = await post('/dashboard/password-reset/confirm', { token: 'svc_rst_made-up', password: 'new password 2' }, browser(client));
    expect(unknown.status).toBe(400);
    expect(unknown.json).toEqual({
      error: {
        code: 'TOKEN_INVALID',
        message: 'The token is not one the platform mailed, or it finished its sign-up already.',
        remediation:
          "Send the token exactly as the e-mail's link carries it, or ask for a new e-mail: POST /dashboard/password-reset, POST /dashboard/verify-email/send when signed in, or POST /dashboard/signup again.",
        documentation_url: server.docsUrl('keys'),
      },
    });
    // None of the refusals used the tokens up: the verification link still works.
    expect((await post('/dashboard/verify-email', { token: verification }, browser(client))).status).toBe(200);
    // The old password still signs in: nothing was reset.
    expect((await post('/dashboard/signin', { email: 'dora@example.com', password: 'dora password 1' }, browser(client))).status).toBe(200);
  });
});

describe('rate limits of people on the platform (SVC_AUTH_RATE_LIMIT_PER_MINUTE 10, SVC_PERSON_MAIL_RATE_LIMIT_PER_MINUTE 3)', () => {
  /**
   * Sends 2 x limit + 1 requests: the first `limit` always pass (no window can hold more of them), and one window of
   * at most two holds more than the limit, whenever the minute turns.
   */
  async function flood(limit: number, send: (i: number) => Promise<RawResponse>): Promise<{ statuses: number[]; limited: RawResponse }> {
    const responses: RawResponse[] = [];
    for (let i = 0; i < 2 * limit + 1; i++) responses.push(await send(i));
    const limited = responses.find((r) => r.status === 429);
    expect(limited).toBeDefined();
    return { statuses: responses.map((r) => r.status), limited: limited! };
  }

  function expectRateLimited(res: RawResponse, by: 'from this client' | 'for this e-mail address'): void {
    const retry = Number(res.headers['retry-after']);
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    const unit = retry === 1 ? 'second' : 'seconds';
    expect(res.json).toEqual({
      error: {
        code: 'RATE_LIMITED',
        message: `Too many requests to this route ${by}; retry in ${retry} ${unit}.`,
        remediation: `Wait ${retry} ${unit} (the end of the current one-minute window) before retrying; do not retry in a loop.`,
        documentation_url: server.docsUrl('keys'),
        details: { retry_after_seconds: retry },
      },
    });
  }

  it('reset requests for one address are limited whichever clients send them, and the excess mails nothing', async () => {
    await signUpInvited('flood@example.com', 'flood password 1', '198.51.100.5');
    await mailTo('flood@example.com');
    const { statuses, limited } = await flood(3, (i) => post('/dashboard/password-reset', { email: 'flood@example.com' }, browser(`203.0.113.${i + 1}`)));
    expect(statuses.slice(0, 3)).toEqual([202, 202, 202]);
    expectRateLimited(limited, 'for this e-mail address');
    await mailJobsDone();
    const resets = mailsTo('flood@example.com').filter((m) => m.subject === 'Reset your password');
    expect(resets.length).toBeGreaterThanOrEqual(1);
    expect(resets.length).toBeLessThanOrEqual(statuses.filter((s) => s === 202).length);
  });

  it('sign-ins are limited per client, across addresses', async () => {
    const { statuses, limited } = await flood(10, (i) => post('/dashboard/signin', { email: `guess${i}@example.com`, password: 'wrong password' }, browser('198.51.100.6')));
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expectRateLimited(limited, 'from this client');
  });

  it('sign-ins are limited per address, across clients', async () => {
    const { statuses, limited } = await flood(10, (i) => post('/dashboard/signin', { email: 'ada@example.com', password: 'wrong password' }, browser(`192.0.2.${i + 1}`)));
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expectRateLimited(limited, 'for this e-mail address');
  });

  it('sign-ups are limited per client', async () => {
    const { statuses, limited } = await flood(10, (i) => post('/dashboard/signup', { email: `many${i}@example.com`, password: 'long enough pw' }, browser('198.51.100.7')));
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(202));
    expectRateLimited(limited, 'from this client');
  });

  it('sign-ups mailing one address are limited whichever clients send them, known address or not', async () => {
    await signUpInvited('known@example.com', 'known password 1', '198.51.100.8');
    for (const email of ['known@example.com', 'nobody-yet@example.com']) {
      const { statuses, limited } = await flood(3, (i) => post('/dashboard/signup', { email, password: 'long enough pw' }, browser(`203.0.113.${50 + i}`)));
      expect(statuses.slice(0, 3)).toEqual([202, 202, 202]);
      expectRateLimited(limited, 'for this e-mail address');
    }
  });
});

describe('secrets', () => {
  it('no token, session id or password reached the server output', () => {
    const output = server.output();
    expect(seenTokens.length).toBeGreaterThan(5);
    for (const token of seenTokens) expect(output).not.toContain(token);
    expect(output).not.toMatch(/svc_vfy_|svc_rst_|svc_sup_|svc_ses_|password 1|password 2/);
  });
});

describe('without SMTP (SVC_SMTP_URL unset)', () => {
  let bare: SpawnedServer;
  let bareOrigin: string;

  beforeAll(async () => {
    bare = await spawnServer({ SVC_SIGNUP: 'open' });
    bareOrigin = `http://localhost:${bare.port}`;
  }, 60_000);

  afterAll(async () => {
    await bare?.close();
  });

  /** The warnings the worker logged about the person (pino's JSON lines; the last line may still be partial). */
  function warnings(personId: string): { purpose: string; msg: string }[] {
    const entries = bare
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{') && line.endsWith('}'))
      .map((line) => JSON.parse(line) as { person?: string; purpose: string; msg: string; level: number });
    return entries.filter((e) => e.person === personId && e.level === 40).map(({ purpose, msg }) => ({ purpose, msg }));
  }

  it('answers as with SMTP, saying only mail_configured false; the worker logs a warning naming the person and issues no token', async () => {
    const headers = { origin: bareOrigin };
    const signup = await request(bare.url, '/dashboard/signup', { method: 'POST', body: { email: 'eve@example.com', password: 'eve password 1' }, headers });
    expect(signup.status).toBe(201);
    const personId = (signup.json as { person: { id: string } }).person.id;
    const cookie = cookieOf(signup);
    // Without mail nothing can confirm an open sign-up, so it signs in at once, and a taken address is refused.
    const again = await request(bare.url, '/dashboard/signup', { method: 'POST', body: { email: 'eve@example.com', password: 'other password 1' }, headers });
    expect(again.status).toBe(409);
    expect((again.json as { error: { code: string } }).error.code).toBe('EMAIL_TAKEN');
    const reset = await request(bare.url, '/dashboard/password-reset', { method: 'POST', body: { email: 'eve@example.com' }, headers });
    expect(reset.status).toBe(202);
    expect(reset.json).toEqual({ mail_configured: false });
    const unknown = await request(bare.url, '/dashboard/password-reset', { method: 'POST', body: { email: 'nobody@example.com' }, headers });
    expect(unknown.status).toBe(202);
    expect(unknown.json).toEqual({ mail_configured: false });

    await until(() => warnings(personId).length >= 2);
    const message = 'e-mail to a person not sent: SMTP is not configured (set SVC_SMTP_URL); see docs/people.md, "People: sign-in"';
    expect(warnings(personId).sort((a, b) => a.purpose.localeCompare(b.purpose))).toEqual([
      { purpose: 'reset_password', msg: message },
      { purpose: 'verify_email', msg: message },
    ]);

    const send = await request(bare.url, '/dashboard/verify-email/send', { method: 'POST', headers: { ...headers, cookie } });
    expect(send.status).toBe(202);
    expect(send.json).toEqual({ mail_configured: false });

    const pool = new pg.Pool({ connectionString: databaseUrl(bare.controlDb), max: 1 });
    try {
      expect((await pool.query(`select count(*)::int as n from person_tokens`)).rows[0].n).toBe(0);
    } finally {
      await pool.end();
    }
    expect(mailsTo('eve@example.com')).toEqual([]);
    expect(bare.output()).not.toMatch(/svc_ses_|eve password/);
  });
});
