import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { loadConfig } from '../../src/config.ts';
import { startPlatform, type Platform } from '../../src/composition.ts';
import { generateKey } from '../../src/core/crypto.ts';
import { createPool } from '../../src/db/pg.ts';
import { cloneControlDatabase, databaseUrl, dropDatabase, dropDatabasesWithPrefix, uniqueSuffix } from './db.ts';
import { docsUrl } from './server.ts';
import { signUpOwner, substrateKeyOf, type SignedInPerson } from '../e2e/e2e-helpers.ts';

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
  /** An owner of the platform key's account, signed in: the first call signs them up with an invitation the key makes. */
  owner(): Promise<SignedInPerson>;
  /** A substrate key minted by that owner, signed in (as only a person may): it reaches their substrate, the account's default user. */
  substrateKey(name?: string): Promise<string>;
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
  const platform = await startPlatform(config, pino({ level: process.env.TEST_LOG ?? 'silent' }));
  const url = platform.url!;
  // The platform's own kind of pool: a connection that the database's drop ends while it closes reports nothing.
  const controlPool = createPool({ connectionString: databaseUrl(controlDb), max: 2 });
  let owner: Promise<SignedInPerson> | undefined;
  const test: TestPlatform = {
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
    owner: () => (owner ??= signUpOwner(test)),
    substrateKey: async (name) => (await substrateKeyOf(test, await test.owner(), name)).key,
    close: async () => {
      await platform.stop();
      await controlPool.end();
      await dropDatabasesWithPrefix(appDbPrefix);
      await dropDatabase(controlDb);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return test;
}

/**
 * A substrate key of a new person of `accountId` with a substrate user of their own, written straight into the
 * control database: another account's key, for the tests of what it must not see.
 */
export async function insertSubstrateKey(p: TestPlatform, accountId: string, key: string): Promise<void> {
  await p.sql(
    `with person as (insert into persons (email) values ('person-' || gen_random_uuid() || '@example.com') returning id),
          usr as (insert into substrate_users (account_id, name, person_id) select $1, 'person', id from person returning id, person_id)
     insert into substrate_keys (account_id, key_hash, hint, name, created_by, substrate_user_id)
     select $1, encode(sha256($2::bytea), 'hex'), 'x', 'o', person_id, id from usr`,
    [accountId, key],
  );
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
