import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { loadConfig } from '../../src/config.ts';
import { startPlatform, type Platform } from '../../src/composition.ts';
import { generateKey } from '../../src/core/crypto.ts';
import { cloneControlDatabase, databaseUrl, dropDatabase, dropDatabasesWithPrefix, uniqueSuffix } from './db.ts';
import { docsUrl } from './server.ts';

export interface TestPlatform extends Platform {
  url: string;
  platformKey: string;
  appDbPrefix: string;
  controlDb: string;
  /** An error envelope's documentation_url: the guide section of `area`, or the guide (from the config's base URL). */
  docsUrl(area?: string): string;
  /** A query on this platform's control database. */
  sql(text: string, params?: unknown[]): Promise<any[]>;
  /** fetch against this platform with the owner's platform key unless headers say otherwise. */
  api(method: string, path: string, opts?: { body?: unknown; key?: string | null; headers?: Record<string, string> }): Promise<{ status: number; body: any; headers: Headers }>;
  close(): Promise<void>;
}

/** An in-process platform on its own cloned control database and its own app-database prefix. */
export async function startTestPlatform(env: Record<string, string> = {}): Promise<TestPlatform> {
  const controlDb = await cloneControlDatabase();
  const appDbPrefix = `svc_t${uniqueSuffix()}_`;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-test-'));
  const platformKey = generateKey('svc_pk_');
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl(controlDb),
    SVC_APP_DB_PREFIX: appDbPrefix,
    SVC_PLATFORM_API_KEY: platformKey,
    SVC_DATA_DIR: dataDir,
    // Shipped templates are installed by the tests about them only: each start would otherwise deploy them.
    SVC_TEMPLATES_INSTALL: 'false',
    LOG_LEVEL: 'silent',
    ...env,
  });
  const platform = await startPlatform(config, pino({ level: 'silent' }));
  const url = platform.url!;
  const controlPool = new pg.Pool({ connectionString: databaseUrl(controlDb), max: 2 });
  return {
    ...platform,
    url,
    platformKey,
    appDbPrefix,
    controlDb,
    docsUrl: (area) => docsUrl(config.baseUrl, area),
    sql: async (text, params) => (await controlPool.query(text, params)).rows,
    api: async (method, p, opts = {}) => {
      const headers: Record<string, string> = { ...opts.headers };
      const key = opts.key === undefined ? platformKey : opts.key;
      if (key) headers.authorization = `Bearer ${key}`;
      if (opts.body !== undefined) headers['content-type'] ??= 'application/json';
      const res = await fetch(url + p, {
        method,
        headers,
        body: opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body),
      });
      const text = await res.text();
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        // plain text stays text
      }
      return { status: res.status, body, headers: res.headers };
    },
    close: async () => {
      await platform.stop();
      await controlPool.end();
      await dropDatabasesWithPrefix(appDbPrefix);
      await dropDatabase(controlDb);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A worker-role platform (SVC_ROLE=worker) on `api`'s control database, app-database prefix, key and data folder. */
export function startWorkerFor(api: TestPlatform, env: Record<string, string> = {}): Promise<Platform> {
  return startPlatform(
    loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl(api.controlDb),
      SVC_APP_DB_PREFIX: api.appDbPrefix,
      SVC_PLATFORM_API_KEY: api.platformKey,
      SVC_DATA_DIR: api.services.config.dataDir,
      SVC_ROLE: 'worker',
      LOG_LEVEL: 'silent',
      ...env,
    }),
    pino({ level: 'silent' }),
  );
}
