// The per-account queue that groups the statements writing a credit_balances row (src/credits/balance-queue.ts): the
// values it writes into the statement text come back from Postgres exactly as bound parameters would, statements
// arriving together share transactions in arrival order, and one statement that fails fails alone.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BalanceQueue, inlineParameters } from '../../src/credits/balance-queue.ts';
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

describe('inlineParameters', () => {
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
    // A value that reads like a placeholder ('$1 ...') is written once, not substituted again.
    const text = inlineParameters(query);
    const bound = await control.pool.query({ text: query.sql, values: query.parameters as unknown[], rowMode: 'array' });
    const inlined = await control.pool.query({ text, rowMode: 'array' });
    expect(inlined.rows).toEqual(bound.rows);
    expect(inlined.rows[0]).toContain(4);
  });

  it('refuses a NUL character and values it cannot write', () => {
    expect(() => inlineParameters(sql`select ${'a\0b'}::text`.compile(control.db))).toThrow(/NUL/);
    expect(() => inlineParameters(sql`select ${{ a: 1 }}::jsonb`.compile(control.db))).toThrow(/literal/);
  });
});

describe('BalanceQueue', () => {
  async function counterTable(): Promise<string> {
    const table = `q_${Math.random().toString(36).slice(2, 10)}`;
    await control.pool.query(`create table ${table} (id int primary key, n int not null); insert into ${table} values (1, 0)`);
    return table;
  }

  it('runs statements arriving together in arrival order, grouped into few transactions', async () => {
    const table = await counterTable();
    let checkouts = 0;
    const counted = Object.create(control.pool) as typeof control.pool;
    counted.connect = (() => {
      checkouts++;
      return control.pool.connect();
    }) as typeof control.pool.connect;
    const queue = new BalanceQueue(counted);
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) => queue.run('account-a', `update ${table} set n = n + 1 where id = 1 returning n`, i % 2 === 0)),
    );
    // Each statement saw the row as the ones before it left it: 1, 2, 3, ... in the order they were queued.
    expect(results.map((r) => r.rows[0].n)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    expect(checkouts).toBeLessThan(10);
    expect((await control.pool.query(`select n from ${table}`)).rows).toEqual([{ n: 60 }]);
  });

  it('a statement Postgres refuses fails alone: the others of its group are run again and committed', async () => {
    const table = await counterTable();
    const queue = new BalanceQueue(control.pool);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 9 }, (_, i) => queue.run('account-b', i === 4 ? 'select 1 / 0' : `update ${table} set n = n + 1 where id = 1 returning n`, true)),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(8);
    expect(outcomes[4]).toMatchObject({ status: 'rejected', reason: { code: '22012' } });
    expect((await control.pool.query(`select n from ${table}`)).rows).toEqual([{ n: 8 }]);
    // The queue goes on after a failure, and accounts do not wait for each other.
    const [a, b] = await Promise.all([queue.run('account-b', 'select 1 as one', false), queue.run('account-c', 'select 2 as two', false)]);
    expect([a.rows, b.rows]).toEqual([[{ one: 1 }], [{ two: 2 }]]);
  });
});
