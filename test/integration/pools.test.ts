import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { AppDatabases } from '../../src/apps/app-databases.ts';
import pino from 'pino';
import { singleRegion } from '../helpers/db.ts';

let p: TestPlatform;
const appIds: string[] = [];

beforeAll(async () => {
  p = await startTestPlatform();
  for (const name of ['one', 'two', 'three']) appIds.push((await p.api('POST', '/init', { body: { name } })).body.app_id);
});
afterAll(async () => {
  await p?.close();
});

describe('per-app pools', () => {
  it('keep at most budget / size pools open, evicting the least recently used', async () => {
    const dbs = new AppDatabases({ ...singleRegion(), prefix: p.appDbPrefix, poolSize: 2, budget: 4, acquireTimeoutMs: 5000, log: pino({ level: 'silent' }) });
    try {
      expect(dbs.maxPools).toBe(2);
      const [a, b, c] = appIds as [string, string, string];
      const q = async (id: string) => (await dbs.pool(id).query('select current_database() as db')).rows[0].db;
      expect(await q(a)).toBe(p.appDbPrefix + a);
      expect(await q(b)).toBe(p.appDbPrefix + b);
      expect(await q(a)).toBe(p.appDbPrefix + a); // a is now the most recent
      expect(await q(c)).toBe(p.appDbPrefix + c); // evicts b
      expect(dbs.openPools).toBe(2);
      const pa = dbs.pool(a);
      expect(dbs.pool(a)).toBe(pa);
      expect(await q(b)).toBe(p.appDbPrefix + b); // reopened after eviction
      expect(dbs.openPools).toBe(2);
      const held = await countConnections(p.appDbPrefix);
      expect(held).toBeLessThanOrEqual(4);
    } finally {
      await dbs.close();
    }
    // A closed connection's backend exits asynchronously: give pg_stat_activity a moment to catch up.
    const deadline = Date.now() + 5000;
    while ((await countConnections(p.appDbPrefix)) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await countConnections(p.appDbPrefix)).toBe(0);
  });
});

async function countConnections(prefix: string): Promise<number> {
  const rows = await p.sql(`select count(*)::int as n from pg_stat_activity where starts_with(datname, $1)`, [prefix]);
  return rows[0].n;
}
