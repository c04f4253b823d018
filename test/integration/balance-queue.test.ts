// The per-account queue that groups the statements writing a credit_balances row (src/credits/balance-queue.ts): the
// values it writes into EXECUTE come back from Postgres exactly as bound parameters would, statements arriving
// together share transactions in arrival order, each prepared once per connection, and one that fails fails alone.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BalanceQueue, DURABLE_MARK, executeText } from '../../src/credits/balance-queue.ts';
import { openControlDb, type ControlDb } from '../../src/db/control.ts';
import { cloneControlDatabase, databaseUrl, dropDatabase } from '../helpers/db.ts';

let name: string;
let control: ControlDb;

beforeAll(async () => {
  name = await cloneControlDatabase();
  control = openControlDb(databaseUrl(name), 10);
});
afterAll(async () => {
  await control?.close();
  if (name) await dropDatabase(name);
});

describe('executeText', () => {
  it('writes every value the ledger binds as a literal that Postgres reads back unchanged', async () => {
    const texts = ["it's", 'back\\slash \\\' end', 'ünïcödé ✓ 🎉', '$1 -- not a comment; /* nor this */', '', 'new\nline\ttab'];
    const numbers = [0, -5, 42, -(2 ** 53 - 1), 2 ** 53 - 1, 2 ** 31];
    const arrays = [['pro'], [], ['a,b', '{c}', 'd"e', 'f\\g', 'NULL', ' space ']];
    const query = sql<Record<string, unknown>>`select
      ${sql.join(texts.map((t) => sql`${t}::text`))},
      ${sql.join(numbers.map((n) => sql`${n}::bigint`))},
      1 - ${-3}::int as minus_negative,
      ${sql.join(arrays.map((a) => sql`${a}::text[]`))},
      ${null}::uuid as nothing, ${true}::boolean as yes, ${false}::boolean as no`.compile(control.db);
    const bound = await control.pool.query({ text: query.sql, values: query.parameters as unknown[], rowMode: 'array' });
    const client = await control.pool.connect();
    try {
      await client.query(`prepare literals as ${query.sql}`);
      const executed = await client.query({ text: executeText('literals', query.parameters), rowMode: 'array' });
      expect(executed.rows).toEqual(bound.rows);
      expect(executed.rows[0]).toContain(4);
    } finally {
      await client.query('deallocate literals');
      client.release();
    }
  });

  it('refuses a NUL character and values it cannot write', () => {
    expect(() => executeText('s', ['a\0b'])).toThrow(/NUL/);
    expect(() => executeText('s', [{ a: 1 }])).toThrow(/literal/);
    expect(executeText('s', [])).toBe('execute s');
  });
});

describe('BalanceQueue', () => {
  async function counterTable(): Promise<string> {
    const table = `q_${Math.random().toString(36).slice(2, 10)}`;
    await control.pool.query(`create table ${table} (id int primary key, n int not null); insert into ${table} values (1, 0)`);
    return table;
  }

  const statement = (text: string, ...parameters: unknown[]) => ({ sql: text, parameters });

  it('runs statements arriving together in arrival order, grouped into few transactions, each prepared once per connection', async () => {
    const table = await counterTable();
    let checkouts = 0;
    const counted = Object.create(control.pool) as typeof control.pool;
    counted.connect = ((...args: Parameters<typeof control.pool.connect>) => {
      checkouts++;
      return control.pool.connect(...args);
    }) as typeof control.pool.connect;
    const queue = new BalanceQueue(counted);
    const add = `update ${table} set n = n + $1 where id = 1 returning n`;
    const results = await Promise.all(Array.from({ length: 60 }, () => queue.run('account-a', statement(add, 1))));
    // Each statement saw the row as the ones before it left it: 1, 2, 3, ... in the order they were queued.
    expect(results.map((r) => r.rows[0].n)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    expect(checkouts).toBeLessThan(10);
    expect((await queue.run('account-a', statement(add, 40))).rows).toEqual([{ n: 100 }]);
    expect((await control.pool.query(`select n from ${table}`)).rows).toEqual([{ n: 100 }]);
    // Prepared on the connections that ran it (Postgres refuses a second PREPARE of a name on one connection, so the
    // 61 answers above also say it was prepared once on each).
    const clients = await Promise.all(Array.from({ length: control.pool.totalCount }, () => control.pool.connect()));
    const names = await Promise.all(clients.map(async (c) => (await c.query('select name from pg_prepared_statements where statement like $1', [`%${table}%`])).rows));
    clients.forEach((c) => c.release());
    expect(names.flat().length).toBeGreaterThan(0);
    expect(new Set(names.flat().map((r) => r.name)).size).toBe(1);
  });

  it('queues sharing a pool, and connections that lost their prepared statements, still run every statement', async () => {
    const table = await counterTable();
    const add = statement(`update ${table} set n = n + 1 where id = 1 returning n`);
    const [one, two] = [new BalanceQueue(control.pool), new BalanceQueue(control.pool)];
    expect((await one.run('account-d', add)).rows).toEqual([{ n: 1 }]);
    expect((await two.run('account-d', add)).rows).toEqual([{ n: 2 }]);
    // Every connection forgets its statements, as DISCARD ALL by a pooler would.
    const clients = await Promise.all(Array.from({ length: control.pool.totalCount }, () => control.pool.connect()));
    await Promise.all(clients.map((c) => c.query('deallocate all')));
    clients.forEach((c) => c.release());
    expect((await Promise.all([one.run('account-d', add), one.run('account-d', add)])).map((r) => r.rows[0].n)).toEqual([3, 4]);
    expect((await control.pool.query(`select n from ${table}`)).rows).toEqual([{ n: 4 }]);
  });

  it('rows of a set statement arriving together run as one statement; each call gets its own rows; a refused set is run again row by row', async () => {
    const table = await counterTable();
    const queue = new BalanceQueue(control.pool);
    const set = {
      sql: `with bump as (update ${table} set n = n + 1 where id = 1 returning n)
            select c.ord, 100 / c.v as share, (select n from bump) as run from jsonb_to_recordset($1::jsonb) as c(ord int, v int)`,
      parameters: [],
    };
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => queue.runInSet(`account-s`, set, { v: i + 1 })));
    // The first call found the queue idle and ran alone; the 29 that arrived meanwhile ran as one statement.
    expect(answers).toEqual(Array.from({ length: 30 }, (_, i) => [{ share: Math.trunc(100 / (i + 1)), run: i === 0 ? 1 : 2 }]));
    // A row Postgres refuses (a division by zero) fails alone: the set is run again one row at a time.
    const outcomes = await Promise.allSettled([1, 2, 0, 4].map((v) => queue.runInSet(`account-s`, set, { v })));
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(outcomes[2]).toMatchObject({ reason: { code: '22012' } });
    // Runs: the two above, the first of these alone, then 2 and 4 alone (the refused set of three applied nothing).
    expect((await control.pool.query(`select n from ${table}`)).rows).toEqual([{ n: 5 }]);
    await expect(queue.runInSet('account-s', set, { v: 'a\0b' })).rejects.toThrow('runInSet: a string holds a NUL character');
  });

  it('a lingering queue waits for more rows before each group, also after a group that ran while rows arrived', async () => {
    const table = await counterTable();
    const queue = new BalanceQueue(control.pool);
    const LOCK = 46_046;
    // Each group waits for the test's advisory lock, so the test decides when the first one ends.
    const set = {
      sql: `with held as (select pg_advisory_xact_lock(${LOCK})), bump as (update ${table} set n = n + 1 where id = 1 and exists (select 1 from held) returning n)
            select c.ord, (select n from bump) as run from jsonb_to_recordset($1::jsonb) as c(ord int, v int)`,
      parameters: [],
    };
    const holder = await control.pool.connect();
    try {
      await holder.query('select pg_advisory_lock($1)', [LOCK]);
      const linger = { lingerMs: 400 };
      const first = [1, 2].map((v) => queue.runInSet<{ run: number }>('account-l', set, { v }, linger));
      // The first group (both rows: the second came while the first lingered) is sent, and waits for the lock.
      for (;;) {
        const waiting = await control.pool.query(`select 1 from pg_locks where locktype = 'advisory' and objid = $1 and not granted`, [LOCK]);
        if (waiting.rowCount) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const second = queue.runInSet<{ run: number }>('account-l', set, { v: 3 }, linger);
      await holder.query('select pg_advisory_unlock($1)', [LOCK]);
      expect((await Promise.all(first)).map(([row]) => row!.run)).toEqual([1, 1]);
      // Well after the first group ended: a queue that sent the waiting row at once would have sent it alone by now.
      await new Promise((resolve) => setImmediate(resolve));
      const third = queue.runInSet<{ run: number }>('account-l', set, { v: 4 }, linger);
      expect([(await second)[0]!.run, (await third)[0]!.run]).toEqual([2, 2]);
      expect((await control.pool.query(`select n from ${table}`)).rows).toEqual([{ n: 2 }]);
    } finally {
      holder.release();
    }
  });

  it("a set's durably statement runs after its group's commit, in a durable transaction of its own, before the calls are answered", async () => {
    const table = await counterTable();
    const done = `${table}_durably`;
    await control.pool.query(`create table ${done} (tx bigint not null, sync text not null)`);
    const queue = new BalanceQueue(control.pool);
    const set = {
      sql: `with bump as (update ${table} set n = n + 1 where id = 1 returning n)
            select c.ord, txid_current()::text as tx, current_setting('synchronous_commit') as sync, (select n from bump) as run
            from jsonb_to_recordset($1::jsonb) as c(ord int, v int)`,
      parameters: [],
      durably: statement(`insert into ${done} select txid_current(), current_setting('synchronous_commit')`),
    };
    const seenByFirst = queue.runInSet<{ tx: string }>('account-d', set, { v: 1 }).then(async (rows) => ({ rows, done: (await control.pool.query(`select sync from ${done}`)).rows }));
    const rest = await Promise.all([2, 3, 4, 5].map((v) => queue.runInSet<{ tx: string; sync: string; run: number }>('account-d', set, { v })));
    const first = await seenByFirst;
    // Answered once its group's durable statement had run: the first call ran alone.
    expect(first.done).toEqual([{ sync: 'on' }]);
    expect(rest.map(([r]) => r!.run)).toEqual([2, 2, 2, 2]);
    expect(new Set(rest.map(([r]) => r!.sync))).toEqual(new Set(['off']));
    const runs = (await control.pool.query<{ tx: string; sync: string }>(`select tx::text, sync from ${done} order by tx`)).rows;
    expect(runs.map(({ sync }) => sync)).toEqual(['on', 'on']);
    // Each in a transaction of its own, after its group's.
    expect(BigInt(runs[0]!.tx)).toBeGreaterThan(BigInt(first.rows[0]!.tx));
    expect(BigInt(runs[1]!.tx)).toBeGreaterThan(BigInt(rest[0]![0]!.tx));
  });

  it("a group holding a set's rows on both sides of another statement runs the set's durably statement once", async () => {
    const table = await counterTable();
    const done = `${table}_durably`;
    await control.pool.query(`create table ${done} (tx bigint not null)`);
    const queue = new BalanceQueue(control.pool);
    const set = {
      sql: `select c.ord from jsonb_to_recordset($1::jsonb) as c(ord int, v int)`,
      parameters: [],
      durably: statement(`insert into ${done} select txid_current()`),
    };
    // The first runs alone; the three after it arrive while it is in flight and go in one group: the set's rows, a
    // statement of another kind, the set's rows again.
    await Promise.all([
      queue.runInSet('account-twice', set, { v: 1 }),
      queue.runInSet('account-twice', set, { v: 2 }),
      queue.run('account-twice', statement(`update ${table} set n = n + 1 where id = 1`)),
      queue.runInSet('account-twice', set, { v: 3 }),
    ]);
    expect((await control.pool.query(`select count(*)::int as n from ${done}`)).rows).toEqual([{ n: 2 }]);
  });

  it('DURABLE_MARK makes its transaction wait for the WAL flush: it writes WAL and takes a transaction id', async () => {
    const client = await control.pool.connect();
    try {
      await client.query('begin');
      // Both are what makes a commit flush (RecordTransactionCommit): WAL written before the commit record, and an id.
      const explained = await client.query<{ 'QUERY PLAN': Array<{ Plan: { 'WAL Records': number } }> }>(`explain (analyze, wal, format json) ${DURABLE_MARK.sql}`);
      expect(explained.rows[0]!['QUERY PLAN'][0]!.Plan['WAL Records']).toBe(1);
      const xid = await client.query<{ xid: string | null }>('select pg_current_xact_id_if_assigned()::text as xid');
      expect(xid.rows[0]!.xid).toMatch(/^\d+$/);
      await client.query('commit');
    } finally {
      client.release();
    }
  });

  it('a statement Postgres refuses fails alone: the others of its group are run again and committed', async () => {
    const table = await counterTable();
    const queue = new BalanceQueue(control.pool);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 9 }, (_, i) =>
        queue.run('account-b', i === 4 ? statement('select 1 / $1::int', 0) : statement(`update ${table} set n = n + 1 where id = 1 returning n`)),
      ),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(8);
    expect(outcomes[4]).toMatchObject({ status: 'rejected', reason: { code: '22012' } });
    expect((await control.pool.query(`select n from ${table}`)).rows).toEqual([{ n: 8 }]);
    // The queue goes on after a failure, and accounts do not wait for each other.
    const [a, b] = await Promise.all([queue.run('account-b', statement('select 1 as one')), queue.run('account-c', statement('select 2 as two'))]);
    expect([a.rows, b.rows]).toEqual([[{ one: 1 }], [{ two: 2 }]]);
    // A statement Postgres cannot prepare fails alone too, and a value that cannot be written is refused before it is queued.
    const more = await Promise.allSettled([
      queue.run('account-b', statement(`update ${table} set n = n + 1 where id = 1 returning n`)),
      queue.run('account-b', statement('select no_such_column')),
      queue.run('account-b', statement('select $1::text', 'a\0b')),
    ]);
    expect(more.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
    expect(more[1]).toMatchObject({ reason: { code: '42703' } });
    expect(more[2]).toMatchObject({ reason: { message: 'executeText: a string holds a NUL character' } });
    expect((await control.pool.query(`select n from ${table}`)).rows).toEqual([{ n: 9 }]);
  });
});
