import { describe, expect, it } from 'vitest';
import { authTools, EmailSchema, PasswordSchema } from '../../tools/auth/auth.ts';
import { tools } from '../../tools/index.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { newRefreshToken } from '../../src/auth/users.ts';
import { inputJsonSchema } from '../../src/core/schema.ts';

describe('auth input schemas', () => {
  it('trims and lower-cases emails before checking them', () => {
    expect(EmailSchema.parse('  Alice@Example.COM ')).toBe('alice@example.com');
    for (const bad of ['', 'alice', 'alice@', '@example.com', 'a b@example.com', `${'a'.repeat(250)}@example.com`]) {
      expect(EmailSchema.safeParse(bad).success, bad).toBe(false);
    }
  });

  it('passwords are 8 to 200 characters and are not trimmed', () => {
    expect(PasswordSchema.safeParse('1234567').success).toBe(false);
    expect(PasswordSchema.parse('12345678')).toBe('12345678');
    expect(PasswordSchema.parse(' spaced  ')).toBe(' spaced  ');
    expect(PasswordSchema.safeParse('x'.repeat(200)).success).toBe(true);
    expect(PasswordSchema.safeParse('x'.repeat(201)).success).toBe(false);
  });

  it('the JSON Schema tells clients the email format and password bounds', () => {
    const signup = authTools.find((t) => t.name === 'auth_signup')!;
    const props = inputJsonSchema(signup).properties!;
    expect(props.email).toMatchObject({ type: 'string', format: 'email', maxLength: 254 });
    expect(props.password).toMatchObject({ type: 'string', minLength: 8, maxLength: 200 });
    expect(inputJsonSchema(signup).required).toEqual(['app_id', 'email', 'password']);
  });
});

describe('auth descriptors', () => {
  const byName = Object.fromEntries(authTools.map((t) => [t.name, t]));

  it.each([
    ['auth_signup', 'POST', '/v1/{app_id}/auth/signup', '/auth/signup', ['none', 'service', 'platform', 'user']],
    ['auth_login', 'POST', '/v1/{app_id}/auth/login', '/auth/login', ['none', 'service', 'platform', 'user']],
    ['auth_refresh', 'POST', '/v1/{app_id}/auth/refresh', '/auth/refresh', ['none', 'service', 'platform', 'user']],
    ['auth_logout', 'POST', '/v1/{app_id}/auth/logout', '/auth/logout', ['user', 'service', 'platform']],
    ['auth_user', 'GET', '/v1/{app_id}/auth/user', '/auth/user', ['user', 'service', 'platform']],
    ['auth_users_list', 'GET', '/v1/{app_id}/auth/users', '/auth/users', ['platform', 'service']],
    ['auth_jwks', 'GET', '/v1/{app_id}/.well-known/jwks.json', '/.well-known/jwks.json', ['none', 'platform', 'service', 'user', 'substrate']],
  ])('%s is %s %s (app host %s) for %o', (name, method, path, subdomainPath, auth) => {
    const tool = byName[name]!;
    expect(tool.http).toMatchObject({ method, path, subdomainPath });
    expect(tool.auth).toEqual(auth);
    expect(tool.appScoped).toBe(true);
  });

  it('signup answers 201 and logout 204; all are in the registry', () => {
    expect(byName.auth_signup!.http && byName.auth_signup!.http.status).toBe(201);
    expect(byName.auth_logout!.http && byName.auth_logout!.http.status).toBe(204);
    for (const t of authTools) expect(tools).toContain(t);
  });
});

describe('auth configuration', () => {
  it('defaults: 15-minute access tokens, 30-day refresh tokens, 10 signups/logins and 60 refreshes a minute', () => {
    expect(loadConfig({})).toMatchObject({ accessTokenTtlSeconds: 900, refreshTokenTtlDays: 30, authRateLimitPerMinute: 10, refreshRateLimitPerMinute: 60 });
  });

  it('reads the variables', () => {
    const c = loadConfig({
      SVC_ACCESS_TOKEN_TTL_SECONDS: '300',
      SVC_REFRESH_TOKEN_TTL_DAYS: '7',
      SVC_AUTH_RATE_LIMIT_PER_MINUTE: '3',
      SVC_AUTH_REFRESH_RATE_LIMIT_PER_MINUTE: '20',
    });
    expect(c).toMatchObject({ accessTokenTtlSeconds: 300, refreshTokenTtlDays: 7, authRateLimitPerMinute: 3, refreshRateLimitPerMinute: 20 });
  });

  it.each([
    [{ SVC_ACCESS_TOKEN_TTL_SECONDS: '10' }, 'SVC_ACCESS_TOKEN_TTL_SECONDS'],
    [{ SVC_ACCESS_TOKEN_TTL_SECONDS: '90000' }, 'SVC_ACCESS_TOKEN_TTL_SECONDS'],
    [{ SVC_REFRESH_TOKEN_TTL_DAYS: '0' }, 'SVC_REFRESH_TOKEN_TTL_DAYS'],
    [{ SVC_REFRESH_TOKEN_TTL_DAYS: '400' }, 'SVC_REFRESH_TOKEN_TTL_DAYS'],
    [{ SVC_AUTH_RATE_LIMIT_PER_MINUTE: '0' }, 'SVC_AUTH_RATE_LIMIT_PER_MINUTE'],
    [{ SVC_AUTH_REFRESH_RATE_LIMIT_PER_MINUTE: 'many' }, 'SVC_AUTH_REFRESH_RATE_LIMIT_PER_MINUTE'],
  ])('refuses %o naming %s', (env, name) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(name);
  });
});

describe('refresh tokens', () => {
  it('are 32 random bytes of base64url with no svc_ prefix (those parse as API keys)', () => {
    const a = newRefreshToken();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a, 'base64url')).toHaveLength(32);
    expect(a.startsWith('svc_')).toBe(false);
    expect(newRefreshToken()).not.toBe(a);
  });
});
