// PostgREST parity (issue 43), ported from postgrest-js's test suite (MIT-licensed): its rpc cases (rpc.test.ts and
// the rpc cases of basic, transforms, filters and advanced_rpc) that apply to declared functions
// (docs/design/schema-functions.md §1.2), driving @supabase/postgrest-js unchanged against /v1/{app_id}/rpc/{fn}.
// The fixture functions are upstream's (test/db/00-schema.sql), created in the app's database as schema_apply
// creates declared ones and recorded in svc_meta.functions (fixture.ts, declareFunctions).
// Not ported: composite-row arguments, views, overloads (PGRST203),
// computed fields and an unnamed `text` argument (not declarable); the fuzzy hint of PGRST202 is null here.
// Then, beyond upstream: who may call a function (access), row-level security inside one, a GET of a function that
// writes (405 25006), the refused methods (405 PGRST101) and supabase-js's /rest/v1/rpc path.
import { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { request } from '../e2e-helpers.ts';
import { declareFunctions, failed, ok, outcome, setupFixture, USERS, type Fixture, type FixtureFunction } from './fixture.ts';

const text = (name: string, type = 'text', dflt: string | null = null) => ({ name, type, default: dflt });

const FUNCTIONS: FixtureFunction[] = [
  {
    name: 'get_status',
    sql: `create function public.get_status(name_param text) returns text language sql stable security invoker as $$ select status from public.users where username = name_param $$`,
    args: [text('name_param')],
    returns: { kind: 'scalar', type: 'text' },
    volatility: 'stable',
    access: 'public',
  },
  {
    name: 'get_username_and_status',
    sql: `create function public.get_username_and_status(name_param text) returns table(username text, status text) language sql stable security invoker as $$ select username, status from public.users where username = name_param $$`,
    args: [text('name_param')],
    returns: { kind: 'table', columns: { username: 'text', status: 'text' } },
    volatility: 'stable',
    access: 'public',
  },
  {
    name: 'offline_user',
    sql: `create function public.offline_user(name_param text) returns text language sql volatile security invoker as $$ update public.users set status = 'OFFLINE' where username = name_param returning status $$`,
    args: [text('name_param')],
    returns: { kind: 'scalar', type: 'text' },
    volatility: 'volatile',
    access: 'public',
  },
  {
    name: 'set_users_offline',
    sql: `create function public.set_users_offline(name_param text) returns setof public.users language sql volatile security invoker as $$ update public.users set status = 'OFFLINE' where username like name_param returning * $$`,
    args: [text('name_param')],
    returns: { kind: 'set', table: 'users' },
    volatility: 'volatile',
    access: 'public',
  },
  {
    name: 'void_func',
    sql: `create function public.void_func() returns void language sql volatile security invoker as $$ $$`,
    args: [],
    returns: { kind: 'void' },
    volatility: 'volatile',
    access: 'public',
  },
  {
    name: 'function_with_optional_param',
    sql: `create function public.function_with_optional_param(param text default '') returns text language sql stable security invoker as $$ select param $$`,
    args: [text('param', 'text', "''::text")],
    returns: { kind: 'scalar', type: 'text' },
    volatility: 'stable',
    access: 'public',
  },
  {
    name: 'function_with_array_param',
    sql: `create function public.function_with_array_param(param uuid[]) returns void language sql stable security invoker as $$ select null::void $$`,
    args: [text('param', 'uuid[]')],
    returns: { kind: 'void' },
    volatility: 'stable',
    access: 'public',
  },
  {
    name: 'get_messages_by_username',
    sql: `create function public.get_messages_by_username(search_username text) returns setof public.messages language sql stable security invoker as $$ select * from public.messages where username = search_username $$`,
    args: [text('search_username')],
    returns: { kind: 'set', table: 'messages' },
    volatility: 'stable',
    access: 'public',
  },
  {
    name: 'function_returning_row',
    sql: `create function public.function_returning_row() returns public.users language sql stable security invoker as $$ select * from public.users limit 1 $$`,
    args: [],
    returns: { kind: 'row', table: 'users' },
    volatility: 'stable',
    access: 'public',
  },
  {
    name: 'function_returning_set_of_rows',
    sql: `create function public.function_returning_set_of_rows() returns setof public.users language sql stable security invoker as $$ select * from public.users $$`,
    args: [],
    returns: { kind: 'set', table: 'users' },
    volatility: 'stable',
    access: 'public',
  },
  ...(['json', 'jsonb'] as const).map((type) => ({
    name: `polymorphic_function_with_unnamed_${type}`,
    sql: `create function public.polymorphic_function_with_unnamed_${type}(${type}) returns integer language sql stable security invoker as $$ select 1 $$`,
    args: [text('', type)],
    returns: { kind: 'scalar' as const, type: 'integer' },
    volatility: 'stable' as const,
    access: 'public' as const,
  })),
  {
    name: 'echo_bigint',
    sql: `create function public.echo_bigint(bigint_param bigint) returns text language sql stable security invoker as $$ select bigint_param::text $$`,
    args: [text('bigint_param', 'bigint')],
    returns: { kind: 'scalar', type: 'text' },
    volatility: 'stable',
    access: 'public',
  },
  {
    name: 'echo_bigint_in_json',
    sql: `create function public.echo_bigint_in_json(payload jsonb) returns text language sql stable security invoker as $$ select payload->>'id' $$`,
    args: [text('payload', 'jsonb')],
    returns: { kind: 'scalar', type: 'text' },
    volatility: 'stable',
    access: 'public',
  },
];

let fx: Fixture;

beforeAll(async () => {
  fx = await setupFixture('fresh');
  await declareFunctions(fx.server, fx.appId, FUNCTIONS);
}, 120_000);

afterAll(async () => {
  await fx?.close();
});

const SUPABOT = { username: 'supabot', status: 'ONLINE' };

describe('basic', () => {
  it('rpc', async () => {
    expect(outcome(await fx.postgrest.rpc('get_status', { name_param: 'supabot' }))).toEqual(ok('ONLINE'));
  });

  it('rpc returns void', async () => {
    expect(outcome(await fx.postgrest.rpc('void_func'))).toEqual(ok(null, { status: 204 }));
  });

  it('rpc with count: exact', async () => {
    expect(outcome(await fx.postgrest.rpc('get_status', { name_param: 'supabot' }, { count: 'exact' }))).toEqual(ok('ONLINE', { count: 1 }));
  });

  it('rpc with head: true', async () => {
    expect(outcome(await fx.postgrest.rpc('get_status', { name_param: 'supabot' }, { head: true, count: 'exact' }))).toEqual(ok(null, { count: 1 }));
  });

  it('rpc with get: true', async () => {
    expect(outcome(await fx.postgrest.rpc('get_status', { name_param: 'supabot' }, { get: true, count: 'exact' }))).toEqual(ok('ONLINE', { count: 1 }));
  });

  it('rpc with get: true and an optional param left out', async () => {
    expect(outcome(await fx.postgrest.rpc('function_with_optional_param', {}, { get: true }))).toEqual(ok(''));
  });

  it('rpc with get: true and an array param', async () => {
    const res = await fx.postgrest.rpc('function_with_array_param', { param: ['00000000-0000-0000-0000-000000000000'] }, { get: true });
    expect(outcome(res)).toEqual(ok(null, { status: 204 }));
  });
});

describe('filters and transforms', () => {
  it('filter on rpc', async () => {
    expect(outcome(await fx.postgrest.rpc('get_username_and_status', { name_param: 'supabot' }).neq('status', 'ONLINE'))).toEqual(ok([]));
  });

  it('select on rpc', async () => {
    expect(outcome(await fx.postgrest.rpc('get_username_and_status', { name_param: 'supabot' }).select('status'))).toEqual(ok([{ status: 'ONLINE' }]));
  });

  it('rollback rpc', async () => {
    expect(outcome(await fx.postgrest.rpc('offline_user', { name_param: 'dragarcia' }).rollback())).toEqual(ok('OFFLINE'));
    expect(outcome(await fx.postgrest.from('users').select('status').eq('username', 'dragarcia'))).toEqual(ok([{ status: 'ONLINE' }]));
  });
});

describe('max-affected.test.ts (PostgREST 13)', () => {
  let postgrest13: PostgrestClient<any, { PostgrestVersion: '13' }>;
  beforeAll(() => {
    postgrest13 = new PostgrestClient<any, { PostgrestVersion: '13' }>(fx.restUrl, { headers: fx.headers });
  });
  const deleteUsers = (...names: string[]) => onTestFinished(async () => void (await fx.postgrest.from('users').delete().in('username', names)));

  it('should be able to use .maxAffected with setof records returning rpc', async () => {
    deleteUsers('testuser');
    expect((await fx.postgrest.from('users').insert([{ username: 'testuser', status: 'ONLINE' }])).error).toBeNull();
    const res = await postgrest13.rpc('set_users_offline', { name_param: 'testuser' }).maxAffected(1).select();
    expect(outcome(res)).toEqual(ok([{ username: 'testuser', data: null, age_range: null, status: 'OFFLINE', catchphrase: null }]));
  });

  it('should fail when rpc returns more results than maxAffected', async () => {
    deleteUsers('testuser1', 'testuser2', 'testuser3');
    const three = ['testuser1', 'testuser2', 'testuser3'].map((username) => ({ username, status: 'ONLINE' }));
    expect((await fx.postgrest.from('users').insert(three)).error).toBeNull();
    const res = await postgrest13.rpc('set_users_offline', { name_param: 'testuser%' }).maxAffected(1).select();
    expect(outcome(res)).toEqual(failed(400, { code: 'PGRST124', details: 'The query affects 3 rows', hint: null, message: 'Query result exceeds max-affected preference constraint' }));
    // Rolled back: no user went offline.
    expect(outcome(await fx.postgrest.from('users').select('status').like('username', 'testuser%'))).toEqual(ok(three.map(() => ({ status: 'ONLINE' }))));
  });
});

describe('rpc.test.ts', () => {
  const call = () => fx.postgrest.rpc('get_username_and_status', { name_param: 'supabot' });

  it('select without arguments, and *', async () => {
    expect(outcome(await call().select())).toEqual(ok([SUPABOT]));
    expect(outcome(await call().select('*'))).toEqual(ok([SUPABOT]));
  });

  it('select of one column, of two, with an alias, a cast and an aggregate', async () => {
    expect(outcome(await call().select('username'))).toEqual(ok([{ username: 'supabot' }]));
    expect(outcome(await call().select('username,status'))).toEqual(ok([SUPABOT]));
    expect(outcome(await call().select('name:username'))).toEqual(ok([{ name: 'supabot' }]));
    expect(outcome(await call().select('status::text'))).toEqual(ok([{ status: 'ONLINE' }]));
    expect(outcome(await call().select('username.count(),status'))).toEqual(ok([{ count: 1, status: 'ONLINE' }]));
  });

  it('bigint arguments, bare and inside jsonb', async () => {
    expect(outcome(await fx.postgrest.rpc('echo_bigint', { bigint_param: '9223372036854775807' }))).toEqual(ok('9223372036854775807'));
    expect(outcome(await fx.postgrest.rpc('echo_bigint_in_json', { payload: { id: '9223372036854775807' } }))).toEqual(ok('9223372036854775807'));
  });
});

describe('advanced rpc', () => {
  it('a scalar argument returning a set of table rows', async () => {
    const res = await fx.postgrest.rpc('get_messages_by_username', { search_username: 'supabot' });
    expect(res.status).toBe(200);
    expect((res.data as { id: number }[]).map((m) => m.id)).toEqual([1, 2, 3, 4]);
  });

  it('a single unnamed json and jsonb argument', async () => {
    for (const type of ['json', 'jsonb']) {
      expect(outcome(await fx.postgrest.rpc(`polymorphic_function_with_unnamed_${type}`, { '': { test: 'value' } }))).toEqual(ok(1));
    }
  });

  it('an unknown function is 404 PGRST202, word for word', async () => {
    expect(outcome(await fx.postgrest.rpc('blurb_message', {}))).toEqual(
      failed(404, {
        code: 'PGRST202',
        details: 'Searched for the function public.blurb_message without parameters or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.',
        hint: null,
        message: 'Could not find the function public.blurb_message without parameters in the schema cache',
      }),
    );
    expect(outcome(await fx.postgrest.rpc('blurb_message', { '': { test: 'value' } }))).toEqual(
      failed(404, {
        code: 'PGRST202',
        details: 'Searched for the function public.blurb_message with parameter  or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.',
        hint: null,
        message: 'Could not find the function public.blurb_message() in the schema cache',
      }),
    );
  });

  it('a function returning a row, and a set of rows', async () => {
    expect(outcome(await fx.postgrest.rpc('function_returning_row'))).toEqual(ok(USERS.supabot));
    expect(outcome(await fx.postgrest.rpc('function_returning_set_of_rows'))).toEqual(ok([USERS.supabot, USERS.kiwicopple, USERS.awailas, USERS.dragarcia, USERS.jsonuser]));
  });
});

describe('beyond upstream: access, row-level security, read-only GET, methods', () => {
  let appId: string;
  const tokens: Record<string, string> = {};
  const NOTES = { tables: { notes: { columns: { body: { type: 'text', nullable: false }, user_id: { type: 'uuid' } }, access: 'user' } } };
  const ACCESS_FUNCTIONS: FixtureFunction[] = [
    {
      name: 'hello',
      sql: `create function public.hello() returns text language sql stable security invoker as $$ select 'hello' $$`,
      args: [],
      returns: { kind: 'scalar', type: 'text' },
      volatility: 'stable',
      access: 'public',
    },
    {
      name: 'my_notes',
      sql: `create function public.my_notes() returns setof public.notes language sql stable security invoker as $$ select * from public.notes order by body $$`,
      args: [],
      returns: { kind: 'set', table: 'notes' },
      volatility: 'stable',
      access: 'authenticated',
    },
    {
      name: 'add_note',
      sql: `create function public.add_note(body text) returns void language sql volatile security invoker as $$ insert into public.notes (body) values (body) $$`,
      args: [text('body')],
      returns: { kind: 'void' },
      volatility: 'volatile',
      access: 'authenticated',
    },
    {
      name: 'note_total',
      sql: `create function public.note_total() returns bigint language sql stable security invoker as $$ select count(*) from public.notes $$`,
      args: [],
      returns: { kind: 'scalar', type: 'bigint' },
      volatility: 'stable',
      access: 'service',
    },
  ];

  /** A deployed function calling the declared ones through ctx.data.rpc, as its caller. */
  const CALLER = `
export default async (req: Request, ctx: any) => {
  const added = await ctx.data.rpc('add_note', { body: 'via ctx' });
  const mine = await ctx.data.rpc('my_notes', undefined, { query: 'select=body&body=like.via*', count: true });
  const hello = await ctx.data.rpc('hello', {}, { get: true });
  const missing = await ctx.data.rpc('nope');
  // Inside a transaction (which writes), a read-only call of a function that may write is refused.
  const readOnlyInTx = await ctx.data.transaction((tx: any) => tx.rpc('add_note', { body: 'in tx' }, { get: true })).then((r: any) => r.error?.message, (e: any) => e.message);
  return Response.json({ added, mine, hello, missing: { status: missing.status, code: missing.error.code }, readOnlyInTx });
};`;

  beforeAll(async () => {
    const created = await request(fx.server.url, '/init', { method: 'POST', key: fx.server.platformKey, body: { name: 'rpc access' } });
    expect(created.status, created.text).toBe(201);
    appId = created.json.app_id;
    const apply = await request(fx.server.url, `/v1/${appId}/schema/apply`, { method: 'POST', key: created.json.service_key.key, body: { schema: NOTES } });
    expect(apply.status, apply.text).toBe(200);
    await declareFunctions(fx.server, appId, ACCESS_FUNCTIONS);
    const deployed = await request(fx.server.url, `/v1/${appId}/functions`, { method: 'POST', key: created.json.service_key.key, body: { name: 'caller', code: CALLER } });
    expect(deployed.status, deployed.text).toBe(201);
    for (const who of ['ann', 'bob']) {
      const signup = await request(fx.server.url, `/v1/${appId}/auth/signup`, { method: 'POST', body: { email: `${who}@example.com`, password: 'correct horse battery' } });
      expect(signup.status, signup.text).toBe(201);
      tokens[who] = signup.json.access_token;
    }
  }, 60_000);

  const rpc = (fn: string, opts: { method?: string; token?: string; body?: unknown; query?: string; base?: string } = {}) =>
    request(fx.server.url, `/v1/${appId}${opts.base ?? ''}/rpc/${fn}${opts.query ? `?${opts.query}` : ''}`, {
      method: opts.method ?? 'POST',
      ...(opts.token ? { key: opts.token } : {}),
      ...(opts.body === undefined ? {} : { body: opts.body }),
    });

  it('anonymous callers reach public functions only; signed-in callers authenticated ones; keys all', async () => {
    const hello = await rpc('hello', { body: {} });
    expect([hello.status, hello.json]).toEqual([200, 'hello']);
    const anonymous = await rpc('my_notes', { body: {} });
    expect(anonymous.status).toBe(401);
    expect(anonymous.json).toMatchObject({ code: '42501', message: 'permission denied for function my_notes', details: null, hint: null });
    const user = await rpc('note_total', { body: {}, token: tokens.ann });
    expect(user.status).toBe(403);
    expect(user.json).toMatchObject({ code: '42501', message: 'permission denied for function note_total', details: null, hint: null });
  });

  it('row-level security applies inside a function: each end user sees their own rows', async () => {
    expect((await rpc('add_note', { body: { body: 'ann 1' }, token: tokens.ann })).status).toBe(204);
    expect((await rpc('add_note', { body: { body: 'bob 1' }, token: tokens.bob })).status).toBe(204);
    const ann = await rpc('my_notes', { body: {}, token: tokens.ann, query: 'select=body' });
    expect([ann.status, ann.json]).toEqual([200, [{ body: 'ann 1' }]]);
    const bob = await rpc('my_notes', { method: 'GET', token: tokens.bob, query: 'select=body' });
    expect([bob.status, bob.json]).toEqual([200, [{ body: 'bob 1' }]]);
  });

  it('GET of a function that writes is 405 25006 and writes nothing', async () => {
    const res = await rpc('add_note', { method: 'GET', token: tokens.ann, query: 'body=sneaky' });
    expect(res.status).toBe(405);
    expect(res.json).toMatchObject({ code: '25006', details: null, hint: null, message: 'cannot execute INSERT in a read-only transaction' });
    const ann = await rpc('my_notes', { body: {}, token: tokens.ann, query: 'select=body' });
    expect(ann.json).toEqual([{ body: 'ann 1' }]);
  });

  it('PATCH and DELETE are 405 PGRST101', async () => {
    for (const method of ['PATCH', 'DELETE']) {
      const res = await rpc('hello', { method, ...(method === 'PATCH' ? { body: {} } : {}) });
      expect(res.status, res.text).toBe(405);
      expect(res.json).toMatchObject({ code: 'PGRST101', details: null, hint: null, message: `Cannot use the ${method} method on RPC` });
    }
  });

  it('ctx.data.rpc in a function: { data, error, status, count } as the invocation\'s caller', async () => {
    const res = await request(fx.server.url, `/v1/${appId}/fn/caller`, { method: 'POST', key: tokens.bob, body: {} });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual({
      added: { data: null, error: null, status: 204, count: null },
      mine: { data: [{ body: 'via ctx' }], error: null, status: 200, count: 1 },
      hello: { data: 'hello', error: null, status: 200, count: null },
      missing: { status: 404, code: 'RESOURCE_NOT_FOUND' },
      readOnlyInTx:
        "The transaction was rolled back because a call in it failed (400 VALIDATION_FAILED: 'add_note' may write, so it cannot be called read-only (get) inside a transaction.); nothing it wrote was kept.",
    });
  });

  it('a function schema_apply declares is served at once (the catalog of functions is refreshed by the apply)', async () => {
    // A fresh app: the other one's functions were recorded by hand (declareFunctions), with no declaration to diff.
    const created = await request(fx.server.url, '/init', { method: 'POST', key: fx.server.platformKey, body: { name: 'rpc apply' } });
    expect(created.status, created.text).toBe(201);
    const id: string = created.json.app_id;
    const key: string = created.json.service_key.key;
    const call = (init: Parameters<typeof request>[2], query = '') => request(fx.server.url, `/v1/${id}/rpc/shout${query}`, init);
    expect((await call({ method: 'POST', key, body: { word: 'hi' } })).status).toBe(404);
    const functions = { shout: { args: { word: 'text' }, returns: 'text', access: 'public', body: 'select upper(word)' } };
    const apply = await request(fx.server.url, `/v1/${id}/schema/apply`, { method: 'POST', key, body: { schema: { ...NOTES, functions } } });
    expect(apply.status, apply.text).toBe(200);
    const res = await call({ method: 'POST', body: { word: 'hi' } });
    expect([res.status, res.json]).toEqual([200, 'HI']);
    const get = await call({ method: 'GET' }, '?word=hey');
    expect([get.status, get.json]).toEqual([200, 'HEY']);
  });

  it("supabase-js's path /rest/v1/rpc/{fn} is the same route", async () => {
    const client = new PostgrestClient(`${fx.server.url}/v1/${appId}/rest/v1`, { headers: { Authorization: `Bearer ${tokens.ann}` } });
    expect(outcome(await client.rpc('my_notes').select('body'))).toEqual(ok([{ body: 'ann 1' }]));
  });
});
