import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quickAddJob } from 'graphile-worker';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { adminQuery, databaseUrl, databasesWithPrefix } from '../helpers/db.ts';

let p: TestPlatform;
beforeAll(async () => {
  p = await startTestPlatform();
});
afterAll(async () => {
  await p?.close();
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('reaper and drop jobs', () => {
  it('reaps stale provisioning rows and unclaimed databases, and leaves fresh creates alone', async () => {
    const live = (await p.api('POST', '/init', { body: { name: 'live' } })).body.app_id as string;
    const account = (await p.sql(`select account_id from apps where id = $1`, [live]))[0].account_id;
    // A crash after the row and the database were made, an hour ago:
    await p.sql(`insert into apps (id, account_id, name, subdomain, db_name, status, created_at)
      values ('stalestalestale1', $1, 'stale', 'stale-x', $2, 'provisioning', now() - interval '1 hour')`, [account, p.appDbPrefix + 'stalestalestale1']);
    await adminQuery(`create database ${p.appDbPrefix}stalestalestale1`);
    // A create in flight right now:
    await p.sql(`insert into apps (id, account_id, name, subdomain, db_name, status)
      values ('freshfreshfresh1', $1, 'fresh', 'fresh-x', $2, 'provisioning')`, [account, p.appDbPrefix + 'freshfreshfresh1']);
    await adminQuery(`create database ${p.appDbPrefix}freshfreshfresh1`);
    // A database nobody claims:
    await adminQuery(`create database ${p.appDbPrefix}orphanorphanorp1`);

    expect(await p.services.apps.reap()).toEqual({ rows: 1, databases: 1 });
    expect(await databasesWithPrefix(p.appDbPrefix)).toEqual([p.appDbPrefix + 'freshfreshfresh1', p.appDbPrefix + live].sort());
    expect((await p.sql(`select id from apps order by id`)).map((r) => r.id)).toEqual(['freshfreshfresh1', live].sort());
    expect(await p.services.apps.reap()).toEqual({ rows: 0, databases: 0 });
  });

  it('the worker runs apps_drop_database jobs and refuses names outside the app prefix', async () => {
    const name = `${p.appDbPrefix}droppedbyworker1`;
    await adminQuery(`create database ${name}`);
    await quickAddJob({ connectionString: databaseUrl(p.controlDb) }, 'apps_drop_database', { db_name: name });
    await waitFor(async () => (await databasesWithPrefix(name)).length === 0);

    await quickAddJob({ connectionString: databaseUrl(p.controlDb) }, 'apps_drop_database', { db_name: 'postgres' }, { maxAttempts: 1 });
    await waitFor(async () => (await p.sql(`select count(*)::int as n from graphile_worker.jobs where task_identifier = 'apps_drop_database' and last_error is not null`))[0].n === 1);
    const [job] = await p.sql(`select last_error from graphile_worker.jobs where task_identifier = 'apps_drop_database'`);
    expect(job.last_error).toContain('refusing to drop postgres: not an app database');
    expect((await adminQuery(`select 1 from pg_database where datname = 'postgres'`)).rowCount).toBe(1);
  });

  it('deleting an app enqueues its drop job in the same transaction', async () => {
    const id = (await p.api('POST', '/init', { body: { name: 'delete me' } })).body.app_id as string;
    await p.api('DELETE', `/apps/${id}`);
    expect(await databasesWithPrefix(p.appDbPrefix + id)).toEqual([]);
    // The job either already ran (a no-op) or is still queued with the app's key.
    await waitFor(async () => (await p.sql(`select count(*)::int as n from graphile_worker.jobs where key = $1`, ['drop:' + id]))[0].n === 0);
  });
});
