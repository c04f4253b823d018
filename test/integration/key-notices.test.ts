// Resolved keys across processes: two KeysServices on one control database, each with its own PgNotices, as two api
// processes have. A key one of them resolved is served from its cache, and is refused there once the other revoked
// it and its notice was heard; a lost notices connection empties the cache.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import pg from 'pg';
import pino from 'pino';
import { KeysService } from '../../src/auth/keys.ts';
import { openControlDb, type ControlDb } from '../../src/db/control.ts';
import { PgNotices } from '../../src/db/notices.ts';
import { cloneControlDatabase, databaseUrl, dropDatabase } from '../helpers/db.ts';

const WAIT = { timeout: 5_000, interval: 20 };

let dbName: string;
let control: ControlDb;
let noticesA: PgNotices;
let noticesB: PgNotices;
/** The process that changes keys. */
let a: KeysService;
/** The process that caches them. */
let b: KeysService;
/** Reads every key from the database: what a cache must agree with. */
let uncached: KeysService;
/** B's LISTEN connection, to cut it. */
let listenerB: number;
let accountId: string;

beforeAll(async () => {
  dbName = await cloneControlDatabase();
  const url = databaseUrl(dbName);
  control = openControlDb(url, 4);
  const log = pino({ level: 'silent' });
  noticesA = new PgNotices(url, log);
  noticesB = new PgNotices(url, log);
  a = new KeysService(control.db, noticesA);
  b = new KeysService(control.db, noticesB);
  uncached = new KeysService(control.db);
  await noticesB.start();
  listenerB = (await sqlRows<{ pid: number }>(`select pid from pg_stat_activity where datname = current_database() and query like 'listen %'`))[0]!.pid;
  await noticesA.start();
  accountId = (await sqlRows<{ id: string }>(`insert into accounts (name) values ('keys') returning id`))[0]!.id;
});

afterAll(async () => {
  await noticesA?.stop();
  await noticesB?.stop();
  await control?.close();
  if (dbName) await dropDatabase(dbName);
});

async function sqlRows<Row>(text: string, params: unknown[] = []): Promise<Row[]> {
  return (await control.pool.query(text, params)).rows as Row[];
}

/** Runs `change` with the key tables' notices off: a change no process hears, so what B answers then is its cache. */
async function unheard(table: string, change: string, params: unknown[]): Promise<void> {
  await sqlRows(`alter table ${table} disable trigger ${table}_notice`);
  try {
    await sqlRows(change, params);
  } finally {
    await sqlRows(`alter table ${table} enable trigger ${table}_notice`);
  }
}

describe('resolved keys on two processes', () => {
  it('are served from the cache of the process that resolved them', async () => {
    const key = await a.createPlatform(accountId, 'cached', { role: 'owner', createdBy: null });
    expect(await b.resolve(key.key)).toEqual({ kind: 'platform', accountId, role: 'owner', via: 'key', keyId: key.id, personId: null, keyPerson: null });
    await unheard('platform_keys', `update platform_keys set role = 'viewer' where id = $1`, [key.id]);
    expect(await b.resolve(key.key)).toMatchObject({ role: 'owner' });
    expect(await uncached.resolve(key.key)).toMatchObject({ role: 'viewer' });
  });

  it('a platform key revoked on A is refused on A at once and on B once B heard it', async () => {
    const key = await a.createPlatform(accountId, 'revoked', { role: 'admin', createdBy: null });
    expect(await a.resolve(key.key)).toMatchObject({ keyId: key.id, role: 'admin' });
    expect(await b.resolve(key.key)).toMatchObject({ keyId: key.id, role: 'admin' });
    await a.revoke('platform', accountId, key.id);
    expect(await a.resolve(key.key)).toBeUndefined();
    await vi.waitFor(async () => expect(await b.resolve(key.key)).toBeUndefined(), WAIT);
  });

  it("a platform key's lowered role reaches B", async () => {
    const key = await a.createPlatform(accountId, 'lowered', { role: 'owner', createdBy: null });
    expect(await b.resolve(key.key)).toMatchObject({ role: 'owner' });
    await sqlRows(`update platform_keys set role = 'developer' where id = $1`, [key.id]);
    await a.settled();
    await vi.waitFor(async () => expect(await b.resolve(key.key)).toMatchObject({ role: 'developer' }), WAIT);
  });

  it("an app's service and publishable keys are refused on B once the app is deleted, its publishable key once revoked", async () => {
    const app = await newApp('keys-app');
    const service = await a.createService(app, 'svc', null);
    const [publishable] = await a.listPublishable(app);
    const second = await a.createPublishable(app, 'second');
    expect(await b.resolve(service.key)).toEqual({ kind: 'service', accountId, appId: app, keyId: service.id });
    expect(await b.resolve(publishable!.key)).toEqual({ kind: 'none', appId: app, keyId: publishable!.id });
    expect(await b.resolve(second.key)).toEqual({ kind: 'none', appId: app, keyId: second.id });
    await a.revokePublishable(app, second.id);
    await vi.waitFor(async () => expect(await b.resolve(second.key)).toBeUndefined(), WAIT);
    expect(await b.resolve(publishable!.key)).toEqual({ kind: 'none', appId: app, keyId: publishable!.id });
    await sqlRows(`delete from apps where id = $1`, [app]);
    await vi.waitFor(async () => {
      expect(await b.resolve(service.key)).toBeUndefined();
      expect(await b.resolve(publishable!.key)).toBeUndefined();
    }, WAIT);
  });

  it("a key created on A resolves on B at once (a miss is not cached)", async () => {
    const key = await a.createPlatform(accountId, 'late', { role: 'viewer', createdBy: null });
    expect(await b.resolve(key.key + 'x')).toBeUndefined();
    expect(await b.resolve(key.key)).toMatchObject({ keyId: key.id, role: 'viewer' });
  });

  it("B's cache is emptied when its notices connection is lost", async () => {
    const key = await a.createPlatform(accountId, 'lost', { role: 'owner', createdBy: null });
    expect(await b.resolve(key.key)).toMatchObject({ role: 'owner' });
    await unheard('platform_keys', `update platform_keys set role = 'viewer' where id = $1`, [key.id]);
    expect(await b.resolve(key.key)).toMatchObject({ role: 'owner' });
    await sqlRows(`select pg_terminate_backend($1)`, [listenerB]);
    // Once B listens again, what it answers can only come from the database.
    await vi.waitFor(async () => {
      expect(noticesB.listening).toBe(true);
      expect(await b.resolve(key.key)).toMatchObject({ role: 'viewer' });
    }, WAIT);
  });
});

async function newApp(name: string): Promise<string> {
  const id = `app_${name.replace(/-/g, '_')}`;
  await sqlRows(`insert into apps (id, account_id, name, subdomain, db_name, status) values ($1, $2, $3, $3, $1, 'ready')`, [id, accountId, name]);
  return id;
}
