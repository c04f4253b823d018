// App databases are migrated, not "ensured": versioned migrations (db/app-migrations) bring a database the previous
// release made (its bootstrap only, perhaps with the RAG store and the entitlement functions it created on first use)
// to the latest version when the platform first opens it, under an advisory lock so that processes opening it at
// once apply each migration exactly once; a new app database starts at the latest version; apps_get reports it.
import { readFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppDatabases } from '../../src/apps/app-databases.ts';
import { APP_MIGRATION_LOCK, appMigrations, loadAppMigrations, migrateAppDatabase, type AppMigration } from '../../src/apps/app-migrations.ts';
import type { AppRecord } from '../../src/apps/types.ts';
import { ENTITLED_STATUSES } from '../../src/monetization/entitlement.sql.ts';
import { syncEntitlement } from '../../src/monetization/entitlement.ts';
import { RAG_DIMENSIONS } from '../../src/rag/store.sql.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-upstream.ts';
import { adminQuery, databaseUrl, singleRegion } from '../helpers/db.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { waitFor } from './frontend-helpers.ts';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8');
const silent = pino({ level: 'silent' });

let fake: FakeOpenAI;
let p: TestPlatform;
let migrations: AppMigration[];
let latest: number;

beforeAll(async () => {
  fake = await startFakeOpenAI({ record: false });
  // api role: no worker, so the tests run ingestion themselves and nothing else opens the app databases.
  p = await startTestPlatform({ SVC_ROLE: 'api', SVC_AI_BASE_URL: fake.url, SVC_AI_API_KEY: 'sk-migrations' });
  await p.sql(`update accounts set plan = 'enterprise'`);
  migrations = await appMigrations();
  latest = migrations.length;
});
afterAll(async () => {
  await p?.close();
  await fake?.close();
});

/** A query on the app's database over a connection of its own (not through the platform). */
async function appSql(appId: string, text: string, params: unknown[] = []): Promise<any[]> {
  const client = new pg.Client({ connectionString: databaseUrl(p.appDbPrefix + appId) });
  await client.connect();
  try {
    return (await client.query(text, params)).rows;
  } finally {
    await client.end();
  }
}

/**
 * An app whose database is as the previous release left it: made through POST /init (row, keys, signing key), then its
 * database dropped (which also makes this process forget it, as a process started after the upgrade knows nothing) and
 * made again from the previous bootstrap and whatever else that release created lazily.
 */
async function appOfPreviousRelease(name: string, lazilyCreated: string[] = []): Promise<{ appId: string; key: string }> {
  const created = await p.api('POST', '/init', { body: { name } });
  expect(created.status).toBe(201);
  const appId: string = created.body.app_id;
  await p.services.databases.drop(appId);
  await adminQuery(`create database ${pg.escapeIdentifier(p.appDbPrefix + appId)} template template0`);
  for (const file of ['app-bootstrap-v0.sql', ...lazilyCreated]) await appSql(appId, fixture(file));
  return { appId, key: created.body.service_key.key };
}

async function recordedVersions(appId: string): Promise<Array<{ version: number; name: string }>> {
  return appSql(appId, 'select version, name from svc_meta.platform_migrations order by version');
}

/** pg_locks rows of the migration lock ($1) in the current database: a bigint key is split into classid (high) and objid (low). */
const MIGRATION_LOCKS = `pg_locks where locktype = 'advisory' and objsubid = 1
  and database = (select oid from pg_database where datname = current_database())
  and (classid::bigint << 32 | objid::bigint) = $1`;

const everyVersion = () => migrations.map((m) => ({ version: m.version, name: m.name }));

async function tracked(appId: string): Promise<boolean> {
  return (await appSql(appId, `select to_regclass('svc_meta.platform_migrations') is not null as t`))[0].t;
}

/** A second "process": its own pools and its own memory of which app databases are up to date. */
function otherProcess(log = silent): AppDatabases {
  return new AppDatabases({ ...singleRegion(), prefix: p.appDbPrefix, poolSize: 2, budget: 4, acquireTimeoutMs: 10_000, log });
}

describe('the shipped migrations', () => {
  it('are numbered from 1 without gaps, the bootstrap first', () => {
    expect(migrations.map((m) => m.version)).toEqual(migrations.map((_, i) => i + 1));
    expect(migrations.slice(0, 3).map((m) => m.name)).toEqual(['0001_bootstrap', '0002_rag', '0003_entitlements']);
  });

  it('spell the constants the code uses (a migration is frozen text: a change of either needs a new one)', () => {
    const dir = new URL('../../db/app-migrations/', import.meta.url);
    expect(readFileSync(new URL('0002_rag.sql', dir), 'utf8')).toContain(`embedding vector(${RAG_DIMENSIONS}) not null`);
    const entitlements = readFileSync(new URL('0003_entitlements.sql', dir), 'utf8');
    expect(entitlements).toContain(`status in (${ENTITLED_STATUSES.map((s) => `'${s}'`).join(', ')})`);
  });

  it('are read from .sql and .ts files; a misnamed file or a gap is refused', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'svc-app-migrations-'));
    try {
      writeFileSync(path.join(dir, '0001_first.sql'), 'select 1;');
      writeFileSync(path.join(dir, '0002_code.ts'), 'export async function up(client: any): Promise<void> { await client.query("select 2"); }\n');
      const loaded = await loadAppMigrations(pathToFileURL(dir + '/'));
      expect(loaded.map((m) => [m.version, m.name, typeof m.up])).toEqual([
        [1, '0001_first', 'function'],
        [2, '0002_code', 'function'],
      ]);
      writeFileSync(path.join(dir, '0004_gap.sql'), 'select 4;');
      await expect(loadAppMigrations(pathToFileURL(dir + '/'))).rejects.toThrow('0004_gap.sql: expected version 3');
      rmSync(path.join(dir, '0004_gap.sql'));
      writeFileSync(path.join(dir, '3_bad.sql'), 'select 3;');
      await expect(loadAppMigrations(pathToFileURL(dir + '/'))).rejects.toThrow('name it NNNN_name.sql');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a new app database', () => {
  it('is created at the latest version, with the RAG store and the entitlement functions in place', async () => {
    const created = await p.api('POST', '/init', { body: { name: 'fresh' } });
    const appId: string = created.body.app_id;
    expect(await recordedVersions(appId)).toEqual(everyVersion());
    const [objects] = await appSql(
      appId,
      `select to_regclass('svc_rag.chunks') is not null as rag, to_regclass('svc_billing.entitlements') is not null as billing,
         to_regprocedure('public.current_user_plan()') is not null as plan_fn`,
    );
    expect(objects).toEqual({ rag: true, billing: true, plan_fn: true });
    // The user's own migration history is another table, still empty.
    expect((await p.api('GET', `/v1/${appId}/migrations`)).body).toEqual({ migrations: [] });
    const got = await p.api('GET', `/apps/${appId}`);
    expect(got.body).toEqual({ ...(({ service_key: _k, publishable_key: _p, ...view }) => view)(created.body), migration_version: latest });
  });
});

describe('an app database of the previous release', () => {
  const PRO = 'pln_upgrade0000000000000';

  it('is upgraded when the platform first opens it: every version recorded, RAG and entitlements work, apps_get says so', async () => {
    const { appId, key } = await appOfPreviousRelease('bootstrap only');
    expect(await tracked(appId)).toBe(false);
    expect((await appSql(appId, `select to_regclass('svc_rag.collections') as t`))[0].t).toBeNull();

    // The first use opens the database: a RAG call, which before versioned migrations made svc_rag itself.
    const collection = await p.api('POST', `/v1/${appId}/rag/collections`, { key, body: { name: 'notes', chunkSize: 64, chunkOverlap: 8 } });
    expect(collection.status, JSON.stringify(collection.body)).toBe(201);
    expect(await recordedVersions(appId)).toEqual(everyVersion());
    expect((await p.api('GET', `/apps/${appId}`)).body.migration_version).toBe(latest);
    expect((await p.api('GET', `/v1/${appId}/migrations`, { key })).body).toEqual({ migrations: [] });

    // RAG: ingest, embed (the fake upstream), retrieve.
    const app = (await p.services.apps.get(appId)) as AppRecord;
    const { documentId } = await p.services.rag.ingest({ app, endUserId: null }, 'notes', { text: 'Migrations run once per app database.' });
    await p.services.rag.process(appId, documentId, { number: 1, max: 5 });
    const query = await p.api('POST', `/v1/${appId}/rag/collections/notes/query`, { key, body: { query: 'migrations', topK: 3 } });
    expect(query.status, JSON.stringify(query.body)).toBe(200);
    expect(query.body.chunks).toEqual([expect.objectContaining({ text: 'Migrations run once per app database.', documentId })]);

    // Entitlements: a table gated by a plan opens to an end user once their subscription is synced.
    await p.sql(
      `insert into app_plans (id, app_id, name, price_cents, interval, stripe_product_id, stripe_price_id) values ($1, $2, 'Pro', 900, 'month', 'prod_u', 'price_u')`,
      [PRO, appId],
    );
    const guides = { columns: { id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' }, user_id: { type: 'uuid' }, title: { type: 'text' } }, access: 'public', plans: [PRO] };
    const applied = await p.api('POST', `/v1/${appId}/schema/apply`, { key, body: { schema: { tables: { guides } }, name: 'premium' } });
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    expect((await p.api('POST', `/v1/${appId}/guides`, { key, body: { title: 'advanced' } })).status).toBe(201);
    const signup = await p.api('POST', `/v1/${appId}/auth/signup`, { key: null, body: { email: 'ann@example.com', password: 'correct horse battery' } });
    expect(signup.status).toBe(201);
    const read = async () => (await p.api('GET', `/v1/${appId}/guides?select=title`, { key: signup.body.access_token })).body;
    expect(await read()).toEqual([]);
    await p.sql(`insert into app_subscriptions (id, app_id, user_id, plan_id, status) values ('sbn_upgrade', $1, $2, $3, 'active')`, [appId, signup.body.user.id, PRO]);
    const deps = { databases: p.services.databases, control: (text: string, values?: unknown[]) => p.sql(text, values).then((rows) => ({ rows })) };
    expect(await syncEntitlement(deps, appId, signup.body.user.id)).toBe('entitled');
    expect(await read()).toEqual([{ title: 'advanced' }]);
  });

  it('keeps what that release created on first use (RAG store with its rows, entitlement functions) and records every version', async () => {
    const { appId, key } = await appOfPreviousRelease('lazily made', ['app-rag-v0.sql', 'app-entitlements-v0.sql']);
    await appSql(appId, `insert into svc_rag.collections (name, chunk_size, chunk_overlap, embedding_model) values ('kept', 64, 8, 'openai/text-embedding-3-small')`);
    expect(await tracked(appId)).toBe(false);

    expect((await p.api('GET', `/apps/${appId}`)).body.migration_version).toBe(latest);
    expect(await recordedVersions(appId)).toEqual(everyVersion());
    const listed = await p.api('GET', `/v1/${appId}/rag/collections`, { key });
    expect(listed.body.map((c: { name: string }) => c.name)).toEqual(['kept']);
    const [plan] = await appSql(appId, `select public.current_user_has_plan(array['x']) as has`);
    expect(plan).toEqual({ has: false });
  });

  it('opened by two processes at once: they wait for the lock, and each migration is applied exactly once', async () => {
    const { appId } = await appOfPreviousRelease('raced');
    const events: Array<{ msg: string; version?: number }> = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void events.push(JSON.parse(line)) });
    const processes = [otherProcess(log), otherProcess(log)];
    // A third party holds the lock first, so both really meet at it rather than one finishing before the other starts.
    const holder = new pg.Client({ connectionString: databaseUrl(p.appDbPrefix + appId) });
    await holder.connect();
    try {
      await holder.query('select pg_advisory_lock($1)', [APP_MIGRATION_LOCK]);
      const opened = [
        processes[0]!.pool(appId).query('select count(*)::int as n from svc_rag.collections'),
        processes[1]!.migrationVersion(appId),
      ];
      await waitFor(async () => {
        const [row] = await appSql(appId, `select count(*)::int as n from ${MIGRATION_LOCKS} and not granted`, [APP_MIGRATION_LOCK]);
        return row.n === 2 ? true : undefined;
      });
      expect(await tracked(appId)).toBe(false);
      await holder.query('select pg_advisory_unlock($1)', [APP_MIGRATION_LOCK]);
      const [counted, version] = await Promise.all(opened);
      expect((counted as pg.QueryResult).rows).toEqual([{ n: 0 }]);
      expect(version).toBe(latest);
      expect(await processes[0]!.migrationVersion(appId)).toBe(latest);
    } finally {
      await holder.end();
      await Promise.all(processes.map((d) => d.close()));
    }
    expect(await recordedVersions(appId)).toEqual(everyVersion());
    const applied = events.filter((e) => e.msg === 'app database migrated').map((e) => e.version);
    expect(applied).toEqual(migrations.slice(1).map((m) => m.version));
    expect(events.filter((e) => e.msg.startsWith('app database: bootstrap of the previous release'))).toHaveLength(1);
  });
});

describe('the runner', () => {
  it('checks an app once per process: a process that saw it up to date asks no more, a new process checks again', async () => {
    const appId: string = (await p.api('POST', '/init', { body: { name: 'once' } })).body.app_id;
    const first = otherProcess();
    try {
      expect(await first.migrationVersion(appId)).toBe(latest);
      // Remove the record of the last migration behind the process's back: it does not look again.
      await appSql(appId, 'delete from svc_meta.platform_migrations where version = $1', [latest]);
      await first.pool(appId).query('select 1');
      expect(await first.migrationVersion(appId)).toBe(latest);
      expect((await recordedVersions(appId)).map((r) => r.version)).not.toContain(latest);
    } finally {
      await first.close();
    }
    // A new process applies it again (idempotent) and records it.
    const second = otherProcess();
    try {
      expect(await second.migrationVersion(appId)).toBe(latest);
    } finally {
      await second.close();
    }
    expect(await recordedVersions(appId)).toEqual(everyVersion());
  });

  it('a failed migration rolls back alone, releases the lock, and is tried again; a newer database is left as it is', async () => {
    const appId: string = (await p.api('POST', '/init', { body: { name: 'broken next' } })).body.app_id;
    const client = new pg.Client({ connectionString: databaseUrl(p.appDbPrefix + appId) });
    await client.connect();
    try {
      const broken: AppMigration = {
        version: latest + 1,
        name: 'broken',
        up: async (c) => {
          await c.query('create table svc_meta.half_done (id int)');
          await c.query('select 1/0');
        },
      };
      await expect(migrateAppDatabase(client, [...migrations, broken], silent)).rejects.toMatchObject({ code: '22012' });
      expect((await client.query(`select to_regclass('svc_meta.half_done') as t`)).rows[0].t).toBeNull();
      expect((await client.query(`select count(*)::int as n from ${MIGRATION_LOCKS}`, [APP_MIGRATION_LOCK])).rows[0].n).toBe(0);
      const fixed: AppMigration = { ...broken, up: async (c) => void (await c.query('create table svc_meta.half_done (id int)')) };
      expect(await migrateAppDatabase(client, [...migrations, fixed], silent)).toBe(latest + 1);
      // This release does not know version latest + 1: it reports it and undoes nothing.
      expect(await migrateAppDatabase(client, migrations, silent)).toBe(latest + 1);
    } finally {
      await client.end();
    }
  });
});
