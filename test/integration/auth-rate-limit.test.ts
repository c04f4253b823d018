import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { databaseUrl } from '../helpers/db.ts';
import { openControlDb, type ControlDb } from '../../src/db/control.ts';
import { RateLimiter, rateLimitBucket } from '../../src/auth/rate-limit.ts';
import { rateLimitsPurge } from '../../src/auth/jobs.ts';
import { toTask } from '../../workers/index.ts';

const PASSWORD = 'correct horse battery';
const LIMIT = 3;
const REFRESH_LIMIT = 4;

let p: TestPlatform;
let appA: { app_id: string };
let appB: { app_id: string };

beforeAll(async () => {
  // One trusted proxy hop: X-Forwarded-For then stands for distinct clients.
  p = await startTestPlatform({ SVC_TRUST_PROXY: '1', SVC_AUTH_RATE_LIMIT_PER_MINUTE: String(LIMIT), SVC_AUTH_REFRESH_RATE_LIMIT_PER_MINUTE: String(REFRESH_LIMIT) });
  appA = (await p.api('POST', '/init', { body: { name: 'Limited A' } })).body;
  appB = (await p.api('POST', '/init', { body: { name: 'Limited B' } })).body;
});
afterAll(async () => {
  await p?.close();
});

/** Windows are whole clock minutes: start a test early enough in one that it cannot straddle two. */
async function freshWindow(): Promise<void> {
  const second = new Date().getUTCSeconds();
  if (second >= 45) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
}

/** Each test uses its own client address (the app trusts X-Forwarded-For), so buckets never mix across tests. */
const from = (ip: string) => ({ 'x-forwarded-for': ip });
const post = (path: string, ip: string, body: unknown) => p.api('POST', path, { key: null, body, headers: from(ip) });

describe('auth rate limits over REST', () => {
  it('login: the request after the limit is 429 RATE_LIMITED with retry_after_seconds', async () => {
    await freshWindow();
    const path = `/v1/${appA.app_id}/auth/login`;
    for (let i = 0; i < LIMIT; i++) {
      const r = await post(path, '198.51.100.1', { email: 'nobody@example.com', password: PASSWORD });
      expect(r.status).toBe(401);
    }
    const limited = await post(path, '198.51.100.1', { email: 'nobody@example.com', password: PASSWORD });
    expect(limited.status).toBe(429);
    const retry = limited.body.error.details.retry_after_seconds;
    expect(Number.isInteger(retry)).toBe(true);
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    const unit = retry === 1 ? 'second' : 'seconds';
    expect(limited.body).toEqual({
      error: {
        code: 'RATE_LIMITED',
        message: `Too many requests to this route from this client; retry in ${retry} ${unit}.`,
        remediation: `Wait ${retry} ${unit} (the end of the current one-minute window) before retrying; do not retry in a loop.`,
        documentation_url: p.docsUrl('auth'),
        details: { retry_after_seconds: retry },
      },
    });
  });

  it('the limit is per client, per app and per route', async () => {
    await freshWindow();
    const ip = '198.51.100.2';
    const login = `/v1/${appA.app_id}/auth/login`;
    for (let i = 0; i < LIMIT; i++) await post(login, ip, { email: 'nobody@example.com', password: PASSWORD });
    expect((await post(login, ip, { email: 'nobody@example.com', password: PASSWORD })).status).toBe(429);
    // Another client, another app and another route of the same client are each still allowed.
    expect((await post(login, '198.51.100.3', { email: 'nobody@example.com', password: PASSWORD })).status).toBe(401);
    expect((await post(`/v1/${appB.app_id}/auth/login`, ip, { email: 'nobody@example.com', password: PASSWORD })).status).toBe(401);
    expect((await post(`/v1/${appA.app_id}/auth/signup`, ip, { email: 'per-route@example.com', password: PASSWORD })).status).toBe(201);
  });

  it('signup: over the limit nothing is created (the limit comes before any password work)', async () => {
    await freshWindow();
    const ip = '198.51.100.4';
    const path = `/v1/${appB.app_id}/auth/signup`;
    for (let i = 0; i < LIMIT; i++) expect((await post(path, ip, { email: `s${i}@example.com`, password: PASSWORD })).status).toBe(201);
    const limited = await post(path, ip, { email: 'one-too-many@example.com', password: PASSWORD });
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('RATE_LIMITED');
    const users = await p.api('GET', `/v1/${appB.app_id}/auth/users`);
    expect(users.body.users.map((u: { email: string }) => u.email)).not.toContain('one-too-many@example.com');
  });

  it('refresh has its own, higher limit', async () => {
    await freshWindow();
    const ip = '198.51.100.5';
    const path = `/v1/${appA.app_id}/auth/refresh`;
    for (let i = 0; i < REFRESH_LIMIT; i++) expect((await post(path, ip, { refresh_token: 'unknown' })).status).toBe(401);
    const limited = await post(path, ip, { refresh_token: 'unknown' });
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('RATE_LIMITED');
  });

  it('counts in the control database under <route>:<app_id>:<client>', async () => {
    await freshWindow();
    await post(`/v1/${appA.app_id}/auth/login`, '198.51.100.6', { email: 'nobody@example.com', password: PASSWORD });
    const rows = await p.sql('select hits from rate_limits where bucket = $1', [`login:${appA.app_id}:198.51.100.6`]);
    expect(rows).toEqual([{ hits: 1 }]);
  });
});

describe('RateLimiter', () => {
  let one: ControlDb;
  let two: ControlDb;
  beforeAll(() => {
    // Two pools on one control database: what two api instances behind a load balancer share.
    one = openControlDb(databaseUrl(p.controlDb), 4);
    two = openControlDb(databaseUrl(p.controlDb), 4);
  });
  afterAll(async () => {
    await one?.close();
    await two?.close();
  });

  it('holds across two instances sharing the control database', async () => {
    await freshWindow();
    const a = new RateLimiter(one.db);
    const b = new RateLimiter(two.db);
    const bucket = rateLimitBucket('login', appA.app_id, 'shared-client');
    expect(await a.hit(bucket, 3)).toMatchObject({ hits: 1, allowed: true });
    expect(await b.hit(bucket, 3)).toMatchObject({ hits: 2, allowed: true });
    expect(await a.hit(bucket, 3)).toMatchObject({ hits: 3, allowed: true });
    const over = await b.hit(bucket, 3);
    expect(over).toMatchObject({ hits: 4, limit: 3, allowed: false });
    await expect(a.enforce(bucket, 3)).rejects.toMatchObject({ status: 429, code: 'RATE_LIMITED', details: { retry_after_seconds: expect.any(Number) } });
  });

  it('counts concurrent hits from both instances exactly once each', async () => {
    await freshWindow();
    const limiters = [new RateLimiter(one.db), new RateLimiter(two.db)];
    const bucket = rateLimitBucket('signup', appA.app_id, 'burst-client');
    const verdicts = await Promise.all(Array.from({ length: 20 }, (_, i) => limiters[i % 2]!.hit(bucket, 10)));
    expect(verdicts.map((v) => v.hits).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(verdicts.filter((v) => v.allowed)).toHaveLength(10);
  });

  it('a new minute starts a new window', async () => {
    const bucket = rateLimitBucket('login', appA.app_id, 'old-window-client');
    await p.sql(`insert into rate_limits (bucket, window_start, hits) values ($1, date_trunc('minute', now()) - interval '1 minute', 999)`, [bucket]);
    expect(await new RateLimiter(one.db).hit(bucket, 3)).toMatchObject({ hits: 1, allowed: true });
  });

  it('purge (and the cron task) drop windows older than five minutes and keep recent ones', async () => {
    const old = rateLimitBucket('login', appB.app_id, 'stale');
    const recent = rateLimitBucket('login', appB.app_id, 'recent');
    const seed = async () => {
      await p.sql(`insert into rate_limits (bucket, window_start, hits) values ($1, date_trunc('minute', now()) - interval '10 minutes', 5)
        on conflict do nothing`, [old]);
      await p.sql(`insert into rate_limits (bucket, window_start, hits) values ($1, date_trunc('minute', now()) - interval '1 minute', 5)
        on conflict do nothing`, [recent]);
    };
    const buckets = async () => (await p.sql('select bucket from rate_limits where bucket = any($1) order by bucket', [[old, recent]])).map((r) => r.bucket);
    await seed();
    expect(await new RateLimiter(one.db).purge()).toBeGreaterThanOrEqual(1);
    expect(await buckets()).toEqual([recent]);

    await seed();
    const logs: string[] = [];
    const helpers = {
      job: { attempts: 1, max_attempts: 1 },
      query: (text: string, values?: unknown[]) => one.pool.query(text, values),
      logger: { debug: (m: string) => logs.push(m) },
    };
    await toTask(rateLimitsPurge, {})({}, helpers as never);
    expect(await buckets()).toEqual([recent]);
    expect(logs[0]).toMatch(/^purged \d+ old rate-limit windows$/);
  });
});

describe('client address', () => {
  it('without a trusted proxy, X-Forwarded-For cannot buy a fresh bucket', async () => {
    const q = await startTestPlatform({ SVC_AUTH_RATE_LIMIT_PER_MINUTE: '2' });
    try {
      const app = (await q.api('POST', '/init', { body: { name: 'spoof' } })).body.app_id as string;
      const statuses: number[] = [];
      await freshWindow();
      for (let i = 0; i < 3; i++) {
        const res = await q.api('POST', `/v1/${app}/auth/login`, { key: null, body: { email: 'x@example.com', password: 'whatever123' }, headers: { 'x-forwarded-for': `10.0.0.${i}` } });
        statuses.push(res.status);
        if (res.status === 429) {
          expect(res.body.error.code).toBe('RATE_LIMITED');
          expect(Number(res.headers.get('retry-after'))).toBe(res.body.error.details.retry_after_seconds);
        }
      }
      expect(statuses).toEqual([401, 401, 429]);
    } finally {
      await q.close();
    }
  });
});
