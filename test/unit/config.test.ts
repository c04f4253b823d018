import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config.ts';

describe('config', () => {
  it('has working defaults for every variable', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 8080,
      databaseUrl: 'postgres://postgres@127.0.0.1:5432/svc',
      appDbPrefix: 'svc_app_',
      platformApiKey: undefined,
      dataDir: path.resolve('./.data'),
      masterKey: undefined,
      baseUrl: 'http://localhost:8080',
      baseDomain: 'localhost:8080',
      role: 'all',
      bodyLimit: '1mb',
    });
    expect(Object.isFrozen(c)).toBe(true);
    expect(c.regions).toEqual({ defaultRegion: 'local', clusters: new Map([['local', 'postgres://postgres@127.0.0.1:5432/svc']]) });
    expect(c.templates).toMatchObject({ publicAllowed: false, clonesPerAccount: 3, install: true });
    expect(c.functions.concurrencyPerProcess).toBe(16);
    expect(loadConfig({ SVC_FUNCTIONS_CONCURRENCY_PER_PROCESS: '256' }).functions.concurrencyPerProcess).toBe(256);
  });

  it('reads regions: the default one on SVC_APP_DATABASE_URL, then SVC_REGIONS; refuses malformed or repeated ones', () => {
    const c = loadConfig({ SVC_APP_DATABASE_URL: 'postgres://a:5432', SVC_DEFAULT_REGION: 'eu', SVC_REGIONS: 'us=postgres://b:5432, ap=postgresql://c:6543' });
    expect([...c.regions.clusters]).toEqual([
      ['eu', 'postgres://a:5432'],
      ['us', 'postgres://b:5432'],
      ['ap', 'postgresql://c:6543'],
    ]);
    expect(c.regions.defaultRegion).toBe('eu');
    expect(() => loadConfig({ SVC_REGIONS: 'US=postgres://b' })).toThrow("SVC_REGIONS: 'US=postgres://b' is not name=postgres://host:port");
    expect(() => loadConfig({ SVC_REGIONS: 'us=http://b' })).toThrow("SVC_REGIONS: region 'us' needs a postgres:// connection string");
    expect(() => loadConfig({ SVC_REGIONS: 'local=postgres://b' })).toThrow("SVC_REGIONS: region 'local' is named twice (the default region is 'local')");
  });

  it('derives the base URL from PORT and trims a trailing slash from SVC_BASE_URL', () => {
    expect(loadConfig({ PORT: '9000' }).baseUrl).toBe('http://localhost:9000');
    expect(loadConfig({ SVC_BASE_URL: 'https://api.example.com/' }).baseUrl).toBe('https://api.example.com');
  });

  it('treats empty variables as unset', () => {
    expect(loadConfig({ SVC_PLATFORM_API_KEY: '', SVC_BASE_DOMAIN: ' ', SVC_BASE_URL: 'https://api.example.com' })).toMatchObject({ platformApiKey: undefined, baseDomain: undefined });
  });

  it("gives apps hosts of their own under localhost when the platform runs on loopback, and none by default elsewhere", () => {
    expect(loadConfig({ PORT: '9000' }).baseDomain).toBe('localhost:9000');
    expect(loadConfig({ SVC_BASE_URL: 'http://127.0.0.1:8443' }).baseDomain).toBe('localhost:8443');
    expect(loadConfig({ SVC_BASE_URL: 'http://[::1]' }).baseDomain).toBe('localhost');
    expect(loadConfig({ SVC_BASE_URL: 'https://platform.example.com' }).baseDomain).toBeUndefined();
    expect(loadConfig({ SVC_BASE_URL: 'http://localhost:9000', SVC_BASE_DOMAIN: 'Apps.Example.com' }).baseDomain).toBe('apps.example.com');
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ SVC_APP_DB_PREFIX: 'Bad-Prefix' }, 'SVC_APP_DB_PREFIX'],
    [{ SVC_PLATFORM_API_KEY: 'short' }, 'SVC_PLATFORM_API_KEY'],
    [{ SVC_ROLE: 'both' }, 'SVC_ROLE'],
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL'],
    [{ SVC_APP_POOL_SIZE: '20', SVC_APP_POOL_BUDGET: '10' }, 'SVC_APP_POOL_SIZE'],
    [{ SVC_FUNCTIONS_CONCURRENCY_PER_PROCESS: '0' }, 'SVC_FUNCTIONS_CONCURRENCY_PER_PROCESS'],
    [{ SVC_FUNCTIONS_CONCURRENCY_PER_PROCESS: '257' }, 'SVC_FUNCTIONS_CONCURRENCY_PER_PROCESS'],
  ])('refuses %o naming %s', (env, name) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(name);
  });
});
