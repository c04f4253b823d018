// The control database's dialect sends BEGIN with the transaction's first statement, and COMMIT with its last when
// asked (src/db/deferred-begin.ts): round trips fewer, the same transaction.
import type pg from 'pg';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openControlDb, type ControlDb } from '../../src/db/control.ts';
import { withCommit } from '../../src/db/deferred-begin.ts';
import { adminQuery, databaseUrl, dropDatabase, uniqueSuffix } from '../helpers/db.ts';

const name = `svc_test_deferred_${uniqueSuffix()}`;
let control: ControlDb;
/** What each connection was asked and answered, in order: `sent <sql>` and `answered <sql>`. */
const events: string[] = [];

beforeAll(async () => {
  await adminQuery(`create database ${name}`);
  control = openControlDb(databaseUrl(name), 2);
  control.pool.on('connect', (client: pg.PoolClient) => {
    const query = client.query.bind(client) as (text: string, values?: unknown[]) => Promise<unknown>;
    (client as unknown as { query: typeof query }).query = (text, values) => {
      events.push(`sent ${text}`);
      const answer = query(text, values);
      void answer.then(() => events.push(`answered ${text}`), () => events.push(`failed ${text}`));
      return answer;
    };
  });
  await sql`create table t (id int primary key)`.execute(control.db);
});

afterAll(async () => {
  await control.close();
  await dropDatabase(name);
});

const rows = async (): Promise<number[]> => (await sql<{ id: number }>`select id from t order by id`.execute(control.db)).rows.map((r) => r.id);

it('writes the first statement before BEGIN is answered, and commits both', async () => {
  events.length = 0;
  await control.db.transaction().execute(async (tx) => {
    await sql`insert into t values (1)`.execute(tx);
  });
  expect(events.slice(0, 3)).toEqual(['sent begin', 'sent insert into t values (1)', 'answered begin']);
  expect(await rows()).toEqual([1]);
});

it('rolls the first statement back with the transaction', async () => {
  await expect(
    control.db.transaction().execute(async (tx) => {
      await sql`insert into t values (2)`.execute(tx);
      throw new Error('changed my mind');
    }),
  ).rejects.toThrow('changed my mind');
  expect(await rows()).toEqual([1]);
});

it('rolls back after a failed statement, and the connection serves the next transaction', async () => {
  await expect(
    control.db.transaction().execute(async (tx) => {
      await sql`insert into t values (3)`.execute(tx);
      await sql`insert into t values (1)`.execute(tx);
    }),
  ).rejects.toMatchObject({ code: '23505' });
  await control.db.transaction().execute(async (tx) => {
    await sql`insert into t values (4)`.execute(tx);
  });
  expect(await rows()).toEqual([1, 4]);
});

it('a transaction with an isolation level begins as before', async () => {
  events.length = 0;
  const level = await control.db
    .transaction()
    .setIsolationLevel('serializable')
    .execute(async (tx) => (await sql<{ level: string }>`select current_setting('transaction_isolation') as level`.execute(tx)).rows[0]!.level);
  expect(level).toBe('serializable');
  expect(events.slice(0, 2)).toEqual(['sent start transaction isolation level serializable', 'answered start transaction isolation level serializable']);
});

it('withCommit writes COMMIT right behind the last statement, and answers its rows once both are answered', async () => {
  events.length = 0;
  const inserted = await control.db.transaction().execute(async (tx) => {
    await sql`insert into t values (5)`.execute(tx);
    return (await withCommit(tx, sql<{ id: number }>`insert into t values (6) returning id`)).rows;
  });
  expect(inserted).toEqual([{ id: 6 }]);
  const last = events.indexOf('sent insert into t values (6) returning id');
  expect(events.slice(last, last + 2)).toEqual(['sent insert into t values (6) returning id', 'sent commit']);
  expect(events.filter((e) => e === 'sent commit')).toHaveLength(1);
  expect(await rows()).toEqual([1, 4, 5, 6]);
});

it('a last statement that fails takes its transaction with it, and the connection serves the next one', async () => {
  await expect(
    control.db.transaction().execute(async (tx) => {
      await sql`insert into t values (7)`.execute(tx);
      await withCommit(tx, sql`insert into t values (1)`);
    }),
  ).rejects.toMatchObject({ code: '23505' });
  expect(await rows()).toEqual([1, 4, 5, 6]);
  await control.db.transaction().execute(async (tx) => withCommit(tx, sql`insert into t values (8)`));
  expect(await rows()).toEqual([1, 4, 5, 6, 8]);
});
