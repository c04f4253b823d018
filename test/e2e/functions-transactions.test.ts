// ctx.data.transaction against a server started like `npm start`: a deployed function's tx.from(...) calls run in one
// Postgres transaction as the invocation's caller (row-level security for an end user), committed when the callback
// resolves and rolled back when it throws, when a call in it fails, when it outlives its time limit or when the
// invocation ends with it open; an invocation holds one at a time and an app at most half its pool's connections.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseUrl } from '../helpers/db.ts';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { request } from './e2e-helpers.ts';

let server: SpawnedServer;
let appId: string;
let serviceKey: string;
let appDb: pg.Client;
const tokens: Record<string, string> = {};
const userIds: Record<string, string> = {};

/**
 * Runs the request's steps in one ctx.data.transaction (ctx.asApp.data's with asApp) and answers each step's result and
 * how the transaction ended. A step is a tx call ({ table, op, args }), or: outside (the same call on ctx.data, outside
 * the transaction), all (tx calls made at once), throw, sleep (ms), nested (a second transaction), mark (a row of signals
 * written as the app, outside), waitFor (until signals has that row).
 */
const SCRIPT = `
const signals = (ctx: any) => ctx.asApp.data.from('signals');
export default async (req: Request, ctx: any) => {
  const plan = await req.json();
  const results: unknown[] = [];
  const failure = (err: any) => ({ name: err.name, code: err.code, status: err.status, message: err.message });
  try {
    const value = await (plan.asApp ? ctx.asApp.data : ctx.data).transaction(async (tx: any) => {
      for (const step of plan.steps) {
        if (step.throw) throw new Error(step.throw);
        if (step.sleep) await new Promise((r) => setTimeout(r, step.sleep));
        else if (step.all) results.push(await Promise.all(step.all.map((s: any) => tx.from(s.table)[s.op](...s.args))));
        else if (step.nested) results.push(await ctx.data.transaction(async () => 'inner').catch(failure));
        else if (step.mark) await signals(ctx).insert({ name: step.mark });
        else if (step.waitFor) while (!(await signals(ctx).select('name', { query: 'name=eq.' + step.waitFor })).data.length) await new Promise((r) => setTimeout(r, 20));
        else results.push(await (step.outside ? ctx.data : tx).from(step.table)[step.op](...step.args));
      }
      return 'done';
    });
    return Response.json({ ok: true, value, results });
  } catch (err) {
    return Response.json({ ok: false, error: failure(err), results });
  }
};`;

/** Leaves a transaction open with a row written in it and returns (or, with ?hang, never returns). */
const LEAVE = `
export default async (req: Request, ctx: any) => {
  let opened = () => {};
  const ready = new Promise<void>((resolve) => (opened = resolve));
  ctx.data.transaction(async (tx: any) => {
    await tx.from('notes').insert({ body: new URL(req.url).searchParams.get('body') });
    opened();
    await new Promise(() => {});
  }).catch(() => {});
  await ready;
  if (new URL(req.url).searchParams.has('hang')) await new Promise(() => {});
  return Response.json({ returned: true });
};`;

async function deploy(name: string, code: string, extra: Record<string, unknown> = {}) {
  const res = await request(server.url, `/v1/${appId}/functions`, { method: 'POST', key: serviceKey, body: { name, code, ...extra } });
  expect(res.status, res.text).toBe(201);
}

type Outcome = { ok: boolean; value?: string; error?: { name: string; code: string; status: number; message: string }; results: any[] };

async function run(steps: unknown[], opts: { token?: string; asApp?: boolean } = {}): Promise<Outcome> {
  const res = await request(server.url, `/v1/${appId}/fn/script`, { method: 'POST', ...(opts.token ? { key: opts.token } : {}), body: { steps, asApp: opts.asApp } });
  expect(res.status, res.text).toBe(200);
  return res.json;
}

async function notes(): Promise<Array<{ body: string; user_id: string | null }>> {
  return (await appDb.query('select body, user_id::text from notes order by body')).rows;
}

/** Sessions of the app's database inside a transaction: open ones are idle in it between statements. */
async function openTransactions(): Promise<number> {
  const res = await appDb.query(`select count(*)::int as n from pg_stat_activity where datname = current_database() and state like 'idle in transaction%'`);
  return res.rows[0].n;
}

/** Polls until `check` holds, failing after `withinMs`. */
async function until(check: () => Promise<boolean>, withinMs: number): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`the condition did not hold within ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const insert = (body: unknown) => ({ table: 'notes', op: 'insert', args: [body] });

beforeAll(async () => {
  server = await spawnServer();
  const created = await request(server.url, '/init', { method: 'POST', key: server.platformKey, body: { name: 'tx' } });
  expect(created.status, created.text).toBe(201);
  appId = created.json.app_id;
  serviceKey = created.json.service_key.key;
  const schema = {
    tables: {
      notes: { columns: { body: { type: 'text', nullable: false, unique: true }, user_id: { type: 'uuid' } }, access: 'user' },
      signals: { columns: { name: { type: 'text' } } },
    },
  };
  const applied = await request(server.url, `/v1/${appId}/schema/apply`, { method: 'POST', key: serviceKey, body: { schema } });
  expect(applied.status, applied.text).toBe(200);
  for (const who of ['ann', 'bob']) {
    const signup = await request(server.url, `/v1/${appId}/auth/signup`, { method: 'POST', body: { email: `${who}@example.com`, password: 'correct horse battery' } });
    expect(signup.status, signup.text).toBe(201);
    tokens[who] = signup.json.access_token;
    userIds[who] = signup.json.user.id;
  }
  await deploy('script', SCRIPT);
  await deploy('leave', LEAVE, { timeoutMs: 1000 });
  appDb = new pg.Client({ connectionString: databaseUrl(server.appDbPrefix + appId) });
  await appDb.connect();
}, 120_000);

afterAll(async () => {
  await appDb?.end();
  await server?.close();
});

describe('ctx.data.transaction', () => {
  it('commits several writes together when the callback resolves; calls outside it meanwhile do not see them', async () => {
    const out = await run(
      [
        insert({ body: 'a1' }),
        insert([{ body: 'a2' }, { body: 'a3' }]),
        { table: 'notes', op: 'update', args: [{ body: 'a1x' }, 'body=eq.a1'] },
        { table: 'notes', op: 'select', args: ['body', { query: 'order=body', count: true }] },
        { outside: true, table: 'notes', op: 'select', args: ['body', { count: true }] },
        // A statement sent with an EXPLAIN ahead of it and a timezone of its own.
        { table: 'notes', op: 'select', args: ['body', { query: 'order=body', prefer: 'count=planned, timezone=Asia/Tokyo' }] },
      ],
      { token: tokens.ann },
    );
    expect(out.ok).toBe(true);
    expect(out.value).toBe('done');
    expect(out.results[0]).toEqual({ data: [{ body: 'a1', user_id: userIds.ann }], error: null, status: 201, count: null });
    expect(out.results[1].status).toBe(201);
    expect(out.results[2]).toMatchObject({ status: 200, data: [{ body: 'a1x' }] });
    expect(out.results[3]).toEqual({ data: [{ body: 'a1x' }, { body: 'a2' }, { body: 'a3' }], error: null, status: 200, count: 3 });
    expect(out.results[4]).toEqual({ data: [], error: null, status: 200, count: 0 });
    expect(out.results[5]).toMatchObject({ data: [{ body: 'a1x' }, { body: 'a2' }, { body: 'a3' }], error: null, count: expect.any(Number) });
    expect(await notes()).toEqual([
      { body: 'a1x', user_id: userIds.ann },
      { body: 'a2', user_id: userIds.ann },
      { body: 'a3', user_id: userIds.ann },
    ]);
  });

  it('rolls everything back when the callback throws, and the rejection reaches the caller', async () => {
    const out = await run([insert({ body: 't1' }), insert({ body: 't2' }), { throw: 'changed my mind' }], { token: tokens.ann });
    expect(out).toEqual({ ok: false, error: { name: 'Error', message: 'changed my mind' }, results: [expect.objectContaining({ status: 201 }), expect.objectContaining({ status: 201 })] });
    expect((await notes()).map((n) => n.body)).toEqual(['a1x', 'a2', 'a3']);
  });

  it('rolls everything back when a statement fails mid-way: the failure is returned, later calls and the commit are refused', async () => {
    const out = await run([insert({ body: 'u1' }), insert({ body: 'a2' }), insert({ body: 'u2' })], { token: tokens.ann });
    expect(out.results[0].status).toBe(201);
    expect(out.results[1]).toEqual({
      data: null,
      status: 409,
      count: null,
      error: { code: 'CONFLICT', message: 'A row with this unique value already exists.', remediation: 'Use a different value or update the existing row.' },
    });
    const aborted =
      'The transaction was rolled back because a call in it failed (409 CONFLICT: A row with this unique value already exists.); nothing it wrote was kept.';
    expect(out.results[2]).toEqual({
      data: null,
      status: 409,
      count: null,
      error: { code: 'TRANSACTION_ABORTED', message: aborted, remediation: "Handle the failed call's error; to write again, run a new ctx.data.transaction." },
    });
    expect(out).toMatchObject({ ok: false, error: { name: 'TransactionError', code: 'TRANSACTION_ABORTED', status: 409, message: aborted } });
    expect((await notes()).map((n) => n.body)).toEqual(['a1x', 'a2', 'a3']);
  });

  it('answers calls made at once in the order they were made: the first failure is named, the later ones are refused', async () => {
    const out = await run([{ all: [insert({ body: 'p1' }), insert({ body: 'a3' }), insert({ body: 'p2' }), { table: 'notes', op: 'select', args: ['body'] }] }], { token: tokens.ann });
    expect(out.results[0].map((r: any) => [r.status, r.error?.code ?? null])).toEqual([
      [201, null],
      [409, 'CONFLICT'],
      [409, 'TRANSACTION_ABORTED'],
      [409, 'TRANSACTION_ABORTED'],
    ]);
    expect(out).toMatchObject({ ok: false, error: { name: 'TransactionError', code: 'TRANSACTION_ABORTED', status: 409 } });
    expect((await notes()).map((n) => n.body)).toEqual(['a1x', 'a2', 'a3']);
  });

  it("applies row-level security inside: an end user's transaction cannot write another's row; the app's can", async () => {
    const bob = await run([insert({ body: 'b1' })], { token: tokens.bob });
    expect(bob.ok).toBe(true);
    const ann = await run(
      [
        { table: 'notes', op: 'update', args: [{ body: 'stolen' }, 'body=eq.b1'] },
        { table: 'notes', op: 'delete', args: ['body=eq.b1'] },
        { table: 'notes', op: 'select', args: ['body', { query: 'order=body' }] },
      ],
      { token: tokens.ann },
    );
    expect(ann.ok).toBe(true);
    expect(ann.results.map((r) => [r.status, r.data])).toEqual([
      [200, []],
      [200, []],
      [200, [{ body: 'a1x' }, { body: 'a2' }, { body: 'a3' }]],
    ]);
    expect(await notes()).toContainEqual({ body: 'b1', user_id: userIds.bob });
    // ctx.asApp.data.transaction acts as the app whoever called: every row, any owner.
    const app = await run([insert({ body: 'for-bob', user_id: userIds.bob }), { table: 'notes', op: 'select', args: ['body', { count: true }] }], { token: tokens.ann, asApp: true });
    expect(app.ok).toBe(true);
    expect(app.results[1].count).toBe(5);
    expect(await notes()).toContainEqual({ body: 'for-bob', user_id: userIds.bob });
  });

  it('rolls back a transaction open past its time limit, with a clear error for its later calls and its commit', async () => {
    const out = await run([insert({ body: 'slow1' }), { sleep: 5200 }, insert({ body: 'slow2' })], { token: tokens.ann });
    const timedOut = {
      code: 'TRANSACTION_TIMEOUT',
      message: 'The transaction was open longer than 5000 ms and was rolled back; nothing it wrote was kept.',
      remediation: 'Do slow work (fetch, AI calls, waiting) before or after the transaction; keep inside it only the reads and writes that must be atomic.',
    };
    expect(out.results[1]).toEqual({ data: null, status: 504, count: null, error: timedOut });
    expect(out).toMatchObject({ ok: false, error: { name: 'TransactionError', code: 'TRANSACTION_TIMEOUT', status: 504, message: timedOut.message } });
    expect((await notes()).map((n) => n.body)).not.toContain('slow1');
    expect(await openTransactions()).toBe(0);
  }, 20_000);

  it('holds one transaction per invocation: a nested one is refused and the outer one commits', async () => {
    const out = await run([insert({ body: 'outer' }), { nested: true }], { token: tokens.ann });
    expect(out.ok).toBe(true);
    expect(out.results[1]).toEqual({
      name: 'TransactionError',
      code: 'TOO_MANY_TRANSACTIONS',
      status: 429,
      message: 'This invocation already has 1 transaction open, the most it may hold at once (transactions do not nest).',
    });
    expect((await notes()).map((n) => n.body)).toContain('outer');
  });

  it("holds at most half the app's pool in transactions at once; the next waits for none and is refused", async () => {
    const holders = ['h1', 'h2'].map((name) => run([insert({ body: name }), { mark: name }, { waitFor: 'go' }], { token: tokens.ann }));
    await until(async () => (await appDb.query(`select count(*)::int as n from signals where name in ('h1', 'h2')`)).rows[0].n === 2, 4000);
    const refused = await run([insert({ body: 'h3' })], { token: tokens.bob });
    expect(refused).toEqual({
      ok: false,
      error: {
        name: 'TransactionError',
        code: 'TOO_MANY_TRANSACTIONS',
        status: 429,
        message: 'The app already has 2 transactions open, the most it may hold at once (half of its 5 database connections).',
      },
      results: [],
    });
    await appDb.query(`insert into signals (name) values ('go')`);
    for (const holder of await Promise.all(holders)) expect(holder).toMatchObject({ ok: true, value: 'done' });
    expect((await notes()).map((n) => n.body)).toEqual(expect.arrayContaining(['h1', 'h2']));
    expect(await run([insert({ body: 'h3' })], { token: tokens.bob })).toMatchObject({ ok: true });
  });

  it('rolls back what an invocation left open when it returns or times out, and releases the connection', async () => {
    const returned = await request(server.url, `/v1/${appId}/fn/leave?body=left1`, { key: tokens.ann });
    expect(returned.status, returned.text).toBe(200);
    // Well before the transaction's own 5 s limit: the end of the invocation ended it.
    await until(async () => (await openTransactions()) === 0, 3000);
    const timedOut = await request(server.url, `/v1/${appId}/fn/leave?body=left2&hang`, { key: tokens.ann });
    expect(timedOut.status).toBe(504);
    expect(timedOut.json.error.code).toBe('FUNCTION_TIMEOUT');
    await until(async () => (await openTransactions()) === 0, 3000);
    const bodies = (await notes()).map((n) => n.body);
    expect(bodies).not.toContain('left1');
    expect(bodies).not.toContain('left2');
  });
});
