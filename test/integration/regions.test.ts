// Regions: an app created in a second region has its database on that region's cluster (a second PostgreSQL the test
// starts), and everything that opens it follows it: the data API, a second process that did not create it, the size
// meter, the reaper (which compares each cluster with the app rows of its region) and the drop on delete.
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppDatabases } from '../../src/apps/app-databases.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { databasesWithPrefix } from '../helpers/db.ts';
import { startSecondCluster, type SecondCluster } from '../helpers/second-cluster.ts';

let cluster: SecondCluster;
let p: TestPlatform;

beforeAll(async () => {
  cluster = await startSecondCluster();
  p = await startTestPlatform({ SVC_REGIONS: `far=${cluster.url}` });
}, 60_000);
afterAll(async () => {
  await p?.close();
  await cluster?.stop();
});

async function farDatabases(prefix: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: `${cluster.url}/postgres` });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>('select datname from pg_database where starts_with(datname, $1) order by 1', [prefix]);
    return rows.map((r) => r.datname);
  } finally {
    await client.end();
  }
}

describe('an app in a second region', () => {
  it('lives on that cluster and serves the data API from it; a process that did not create it finds it', async () => {
    const res = await p.api('POST', '/init', { body: { name: 'far away', region: 'far' } });
    expect(res.status).toBe(201);
    expect(res.body.region).toBe('far');
    const appId = res.body.app_id as string;
    expect(await farDatabases(p.appDbPrefix)).toEqual([p.appDbPrefix + appId]);
    expect(await databasesWithPrefix(p.appDbPrefix)).toEqual([]);

    const schema = { tables: { things: { columns: { id: { type: 'bigint', primary: true, identity: true }, name: { type: 'text', nullable: false } }, access: 'public' } } };
    expect((await p.api('POST', `/v1/${appId}/schema/apply`, { body: { schema, name: 'things' } })).status).toBe(200);
    expect((await p.api('POST', `/v1/${appId}/things`, { body: { name: 'far thing' } })).status).toBe(201);
    expect((await p.api('GET', `/v1/${appId}/things?select=name`, { key: null })).body).toEqual([{ name: 'far thing' }]);

    // Another process (its own pools, nothing remembered): the region comes from the app's row.
    const other = new AppDatabases({
      clusters: p.services.config.regions.clusters,
      defaultRegion: 'local',
      regionOf: async (id) => (await p.sql('select region from apps where id = $1', [id]))[0]?.region,
      prefix: p.appDbPrefix,
      poolSize: 1,
      budget: 2,
      acquireTimeoutMs: 5000,
      log: pino({ level: 'silent' }),
    });
    try {
      expect((await other.sql(appId).query('select current_database() as db, name from things')).rows).toEqual([{ db: p.appDbPrefix + appId, name: 'far thing' }]);
      expect((await other.sizes()).get(appId)).toBeGreaterThan(1_000_000);
    } finally {
      await other.close();
    }
  });

  it('is compared with its own cluster by the reaper, and dropped there on delete', async () => {
    const appId = (await p.api('POST', '/init', { body: { name: 'far two', region: 'far' } })).body.app_id as string;
    const admin = new pg.Client({ connectionString: `${cluster.url}/postgres` });
    await admin.connect();
    try {
      // A database nobody claims on the far cluster, and one named like a local app's but on the wrong cluster.
      const local = (await p.api('POST', '/init', { body: { name: 'near' } })).body.app_id as string;
      await admin.query(`create database ${p.appDbPrefix}orphanorphanfar1`);
      await admin.query(`create database ${p.appDbPrefix}${local}`);
      expect(await p.services.apps.reap()).toEqual({ rows: 0, databases: 2 });
      expect(await farDatabases(p.appDbPrefix)).not.toContain(p.appDbPrefix + 'orphanorphanfar1');
      expect(await farDatabases(p.appDbPrefix)).not.toContain(p.appDbPrefix + local);
      expect(await databasesWithPrefix(p.appDbPrefix)).toEqual([p.appDbPrefix + local]);
    } finally {
      await admin.end();
    }
    expect((await p.api('DELETE', `/apps/${appId}`)).status).toBe(200);
    expect(await farDatabases(p.appDbPrefix)).not.toContain(p.appDbPrefix + appId);
  });
});
