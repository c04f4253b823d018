import { describe, expect, it } from 'vitest';
import { AppError, envelope } from '../../src/core/errors.ts';
import { decide, PURGE_RATE_LIMITS_SQL, rateLimitBucket, rateLimited, routeLimit } from '../../src/auth/rate-limit.ts';

describe('rate-limit helpers', () => {
  it('names buckets <route>:<app_id>:<client>', () => {
    expect(rateLimitBucket('login', 'abcdefgh12345678', '203.0.113.9')).toBe('login:abcdefgh12345678:203.0.113.9');
    expect(rateLimitBucket('signup', 'abcdefgh12345678', 'mcp:acc')).toBe('signup:abcdefgh12345678:mcp:acc');
  });

  it('signup, login and the routes of people share the auth limit; refresh and e-mails to one address have their own', () => {
    const config = { authRateLimitPerMinute: 10, refreshRateLimitPerMinute: 60, personMailRateLimitPerMinute: 3 };
    expect(routeLimit(config, 'signup')).toBe(10);
    expect(routeLimit(config, 'login')).toBe(10);
    expect(routeLimit(config, 'refresh')).toBe(60);
    for (const route of ['person_signup', 'person_signin', 'password_reset', 'verify_email_send'] as const) expect(routeLimit(config, route)).toBe(10);
    expect(routeLimit(config, 'person_mail')).toBe(3);
  });

  it.each([
    [1, 10, 59.2, true, 60],
    [10, 10, 0.4, true, 1],
    [11, 10, 30, false, 30],
    [11, 10, 0, false, 1],
    [11, 10, -0.2, false, 1],
  ])('hits %i of limit %i with %fs left: allowed %s, retry after %i', (hits, limit, left, allowed, retry) => {
    expect(decide(hits, limit, left)).toEqual({ hits, limit, allowed, retryAfterSeconds: retry });
  });

  it('429 RATE_LIMITED says when to retry, in the message and in details', () => {
    const err = rateLimited(17);
    expect(err).toBeInstanceOf(AppError);
    expect(err.status).toBe(429);
    expect(envelope(err.inArea('auth'), 'https://svc.example')).toEqual({
      error: {
        code: 'RATE_LIMITED',
        message: 'Too many requests to this route from this client; retry in 17 seconds.',
        remediation: 'Wait 17 seconds (the end of the current one-minute window) before retrying; do not retry in a loop.',
        documentation_url: 'https://svc.example/llms.txt?area=auth',
        details: { retry_after_seconds: 17 },
      },
    });
    expect(rateLimited(1).message).toBe('Too many requests to this route from this client; retry in 1 second.');
    expect(rateLimited(5, 'email').message).toBe('Too many requests to this route for this e-mail address; retry in 5 seconds.');
  });

  it('purges only windows well past their minute', () => {
    expect(PURGE_RATE_LIMITS_SQL).toBe(`delete from rate_limits where window_start < now() - interval '5 minutes'`);
  });
});
