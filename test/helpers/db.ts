import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

export const CLUSTER_URL = process.env.TEST_DATABASE_CLUSTER ?? 'postgres://postgres@127.0.0.1:5432';

export function databaseUrl(name: string): string {
  return `${CLUSTER_URL}/${name}`;
}

export function uniqueSuffix(): string {
  return randomBytes(5).toString('hex');
}

export async function adminQuery(sql: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: databaseUrl('postgres') });
  await client.connect();
  try {
    return await client.query(sql, params);
  } finally {
    await client.end();
  }
}

/** A fresh control database cloned from the template that global setup migrated once. */
export async function cloneControlDatabase(): Promise<string> {
  const name = `svc_test_${uniqueSuffix()}`;
  for (let attempt = 0; ; attempt++) {
    try {
      await adminQuery(`create database ${name} template ${inject('templateDb')}`);
      return name;
    } catch (err) {
      // 55006: the template is briefly in use by another clone; retry.
      if ((err as { code?: string }).code !== '55006' || attempt > 50) throw err;
      await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
    }
  }
}

export async function dropDatabase(name: string): Promise<void> {
  await adminQuery(`drop database if exists ${pg.escapeIdentifier(name)} with (force)`);
}

export async function databasesWithPrefix(prefix: string): Promise<string[]> {
  const { rows } = await adminQuery('select datname from pg_database where starts_with(datname, $1) order by datname', [prefix]);
  return rows.map((r: { datname: string }) => r.datname);
}

export async function dropDatabasesWithPrefix(prefix: string): Promise<void> {
  for (const name of await databasesWithPrefix(prefix)) await dropDatabase(name);
}

/** AppDatabases options for apps all in one region on the test cluster (what a platform without SVC_REGIONS has). */
export function singleRegion(): { clusters: ReadonlyMap<string, string>; defaultRegion: string; regionOf: () => Promise<null> } {
  return { clusters: new Map([['local', CLUSTER_URL + '/postgres']]), defaultRegion: 'local', regionOf: async () => null };
}
