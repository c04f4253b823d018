import { afterAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { migrateControl, openControlDb, ensureDatabase } from '../../src/db/control.ts';
import { KeysService } from '../../src/auth/keys.ts';
import { migrations } from '../../db/migrations/index.ts';
import { generateKey } from '../../src/core/crypto.ts';
import { adminQuery, databaseUrl, dropDatabase, uniqueSuffix } from '../helpers/db.ts';

const name = `svc_test_mig_${uniqueSuffix()}`;
afterAll(async () => {
  await dropDatabase(name);
});

describe('control database start-up', () => {
  it('creates the database, and concurrent migrations and owner seeding serialize', async () => {
    const log = pino({ level: 'silent' });
    await Promise.all([ensureDatabase(databaseUrl(name), log), ensureDatabase(databaseUrl(name), log)]);
    const key = generateKey('svc_pk_');
    const controls = [openControlDb(databaseUrl(name), 3), openControlDb(databaseUrl(name), 3), openControlDb(databaseUrl(name), 3)];
    try {
      await Promise.all(controls.map((c) => migrateControl(c, log, () => new KeysService(c.db).ensureOwnerKey(key))));
      const { rows } = await controls[0]!.pool.query(`select
        (select count(*)::int from accounts) as accounts,
        (select count(*)::int from platform_keys) as keys,
        (select count(*)::int from kysely_migration) as migrations,
        (select count(*)::int from pg_namespace where nspname = 'graphile_worker') as worker_schema`);
      expect(rows[0]).toEqual({ accounts: 1, keys: 1, migrations: Object.keys(migrations).length, worker_schema: 1 });
    } finally {
      await Promise.all(controls.map((c) => c.close()));
    }
    expect((await adminQuery('select 1 from pg_database where datname = $1', [name])).rowCount).toBe(1);
  });
});
