// PostgREST parity (issue 17), ported from postgrest-js's test suite (MIT-licensed): test/basic.test.ts. Each case
// sends what @supabase/postgrest-js sends to PostgREST and asserts what PostgREST answered in that suite's inline
// snapshots: data, count, status, statusText and the error's code, message, details and hint. Unordered reads
// return rows in the table's physical order, as in Postgres; the cases run in upstream order and build on each
// other's writes, like upstream's (ids from identities, rows moved by updates).
//
// The parity suite is test/e2e/postgrest-js/*.test.ts; fixture.ts holds the mirrored schema and dummy data.
// Upstream cases NOT ported, and why:
// - RPC: ported in rpc.test.ts (declared functions), except what it lists there as not ported.
// - Views (non_updatable_view, updatable_view, embedding a view): schema_apply declares tables only.
// - The second schema `personal` (switch schema, dynamic schema): one schema per app.
// - postgis `shops` (geojson()): no postgis.
// - cornercase's "column whitespace" (insert quoted column): our identifiers are [a-z0-9_] (the table is kept,
//   with its array column, for the array filters).
// - Computed fields (blurb_message): no SQL functions in the schema definition.
// - Realtime: not part of the data API.
// - explain() (transforms.test.ts): PostgREST serves plans only with db-plan-enabled (off by default); issue 17
//   does not ask for it.
// - Client-only cases that send nothing to a server or to a mock: custom headers, Prefer headers built by the
//   builder, the columns param, custom or missing fetch, mocked 404 bodies, connection errors, abort signal.
// - Type-only variants of an identical request (returns<>(), overrideTypes<>(), the second "postgrest13" spread
//   case, and the spread case upstream lists twice) are ported once.
// - relationships-error-handling's "select spread on many relation" (PGRST119) is PostgREST 12's answer; PostgREST
//   13, which max-affected and the spread suite target, answers it with arrays (ported in spread-aggregates.test.ts).
// Cases of relationships-join-operations.test.ts identical to ones of basic.test.ts are ported here only.
//
// Adapted where the installed client or our schema differ from upstream's setup (each noted at the case):
// - A missing table is 404 PGRST205 (PostgREST 13, as issue 17 asks) instead of PostgREST 12's 42P01.
// - maybeSingle() on a write: the installed postgrest-js (2.119) checks the row count itself and sends no
//   vnd.pgrst.object+json, so the rows are written and the 406 is the client's own (as in today's upstream suite).
// - count=estimated: our 1000-row read cap is PostgREST's db-max-rows, under which PostgREST answers an estimated
//   count within max-rows with the exact count (upstream ran without max-rows: the larger of exact and planned, 206).
// - Ids in max-affected's rows: upstream's came from identities advanced by earlier files.
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import { PostgrestClient } from '@supabase/postgrest-js';
import { MESSAGES, NOT_ONE_ROW, USERS, failed, foo, ok, outcome, setupFixture, type Fixture } from './fixture.ts';

let fx: Fixture;
let postgrest: PostgrestClient;

beforeAll(async () => {
  fx = await setupFixture('fresh');
  postgrest = fx.postgrest;
});
afterAll(async () => {
  await fx?.close();
});

const { supabot, kiwicopple, awailas, dragarcia, jsonuser } = USERS;
const allMessages = () => postgrest.from('messages').select();

test('basic select table', async () => {
  const res = await postgrest.from('users').select();
  expect(outcome(res)).toEqual(ok([supabot, kiwicopple, awailas, dragarcia, jsonuser]));
});

test('basic select with eq and single (returns from builder)', async () => {
  const res = await postgrest.from('users').select().eq('username', 'supabot').single();
  expect(outcome(res)).toEqual(ok(supabot));
});

test('basic select with maybeSingle yielding more than one result', async () => {
  const res = await postgrest.from('users').select().maybeSingle();
  expect(outcome(res)).toEqual(
    failed(406, {
      code: 'PGRST116',
      details: 'Results contain 5 rows, application/vnd.pgrst.object+json requires 1 row',
      hint: null,
      message: NOT_ONE_ROW,
    }),
  );
});

test('basic select with single yielding more than one result', async () => {
  const res = await postgrest.from('users').select().single();
  expect(outcome(res)).toEqual(failed(406, { code: 'PGRST116', details: 'The result contains 5 rows', hint: null, message: NOT_ONE_ROW }));
});

test('on_conflict insert', async () => {
  const res = await postgrest.from('users').upsert({ username: 'dragarcia' }, { onConflict: 'username' }).select();
  expect(outcome(res)).toEqual(ok([dragarcia]));
});

test('ignoreDuplicates upsert', async () => {
  const res = await postgrest.from('users').upsert({ username: 'dragarcia' }, { onConflict: 'username', ignoreDuplicates: true }).select();
  expect(outcome(res)).toEqual(ok([], { status: 201 }));
});

describe('basic insert, update, delete', () => {
  test('basic insert', async () => {
    const res = await postgrest.from('messages').insert({ message: 'foo', username: 'supabot', channel_id: 1 }).select();
    expect(outcome(res)).toEqual(ok([foo(5, 1)], { status: 201 }));
    expect(outcome(await allMessages())).toEqual(ok([MESSAGES[1], MESSAGES[2], MESSAGES[3], MESSAGES[4], foo(5, 1)]));
  });

  test('upsert', async () => {
    const res = await postgrest.from('messages').upsert({ id: 3, message: 'foo', username: 'supabot', channel_id: 2 }).select();
    expect(outcome(res)).toEqual(ok([foo(3, 2)]));
    expect(outcome(await allMessages())).toEqual(ok([MESSAGES[1], MESSAGES[2], MESSAGES[4], foo(5, 1), foo(3, 2)]));
  });

  test('bulk insert', async () => {
    const res = await postgrest
      .from('messages')
      .insert([
        { message: 'foo', username: 'supabot', channel_id: 1 },
        { message: 'foo', username: 'supabot', channel_id: 1 },
      ])
      .select();
    expect(outcome(res)).toEqual(ok([foo(6, 1), foo(7, 1)], { status: 201 }));
    expect(outcome(await allMessages())).toEqual(ok([MESSAGES[1], MESSAGES[2], MESSAGES[4], foo(5, 1), foo(3, 2), foo(6, 1), foo(7, 1)]));
  });

  test('basic update', async () => {
    const res = await postgrest.from('messages').update({ channel_id: 2 }).eq('message', 'foo').select();
    expect(outcome(res)).toEqual(ok([foo(5, 2), foo(3, 2), foo(6, 2), foo(7, 2)]));
    expect(outcome(await allMessages())).toEqual(ok([MESSAGES[1], MESSAGES[2], MESSAGES[4], foo(5, 2), foo(3, 2), foo(6, 2), foo(7, 2)]));
  });

  test('basic delete', async () => {
    const res = await postgrest.from('messages').delete().eq('message', 'foo').select();
    expect(outcome(res)).toEqual(ok([foo(5, 2), foo(3, 2), foo(6, 2), foo(7, 2)]));
    expect(outcome(await allMessages())).toEqual(ok([MESSAGES[1], MESSAGES[2], MESSAGES[4]]));
  });
});

test('throwOnError throws errors instead of returning them', async () => {
  // Adapted: PostgREST 13's answer to a missing table (issue 17: 404 PGRST205), not PostgREST 12's 42P01.
  let caught: unknown;
  try {
    await postgrest.from('missing_table').select().throwOnError();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(Error);
  expect((caught as Error).name).toBe('PostgrestError');
  expect((caught as Error).message).toBe("Could not find the table 'public.missing_table' in the schema cache");
  expect((caught as { code?: unknown }).code).toBe('PGRST205');
});

test('throwOnError throws errors which include stack', async () => {
  let caught: unknown;
  try {
    await postgrest.from('does_not_exist').select().throwOnError();
  } catch (err) {
    caught = err;
  }
  expect(caught instanceof Error).toBe(true);
  expect((caught as Error).stack).not.toBeUndefined();
});

test('maybeSingle w/ throwOnError', async () => {
  let passes = true;
  await postgrest
    .from('messages')
    .select()
    .eq('message', 'i do not exist')
    .throwOnError()
    .maybeSingle()
    .then(undefined, () => {
      passes = false;
    });
  expect(passes).toEqual(true);
});

test("don't mutate PostgrestClient.headers", async () => {
  await postgrest.from('users').select().limit(1).single();
  const { error } = await postgrest.from('users').select();
  expect(error).toBeNull();
});

test('allow ordering on JSON column', async () => {
  const { data } = await postgrest.from('users').select().order('data->something');
  expect(data).toEqual([supabot, kiwicopple, awailas, jsonuser, dragarcia]);
});

test('Prefer: return=minimal', async () => {
  onTestFinished(async () => void (await postgrest.from('users').delete().eq('username', 'bar')));
  const res = await postgrest.from('users').insert({ username: 'bar' });
  expect(outcome(res)).toEqual(ok(null, { status: 201 }));
});

test('select with head:true', async () => {
  const res = await postgrest.from('users').select('*', { head: true });
  expect(outcome(res)).toEqual(ok(null));
});

test('select with head:true, count:exact', async () => {
  const res = await postgrest.from('users').select('*', { head: true, count: 'exact' });
  expect(outcome(res)).toEqual(ok(null, { count: 5 }));
});

test('select with head:true, count:planned', async () => {
  const res = await postgrest.from('users').select('*', { head: true, count: 'planned' });
  expect(outcome(res)).toEqual(ok(null, { status: 206, count: expect.any(Number) }));
});

test('select with head:true, count:estimated', async () => {
  // Adapted to our 1000-row read cap, which is PostgREST's db-max-rows: with it set, PostgREST answers estimated
  // with the exact count while that is within max-rows (upstream ran without max-rows, where PostgREST takes the
  // larger of the exact and planned counts, hence its 206).
  const res = await postgrest.from('users').select('*', { head: true, count: 'estimated' });
  expect(outcome(res)).toEqual(ok(null, { count: 5 }));
});

test('select with count:exact', async () => {
  const res = await postgrest.from('users').select('*', { count: 'exact' });
  expect(outcome(res)).toEqual(ok([supabot, kiwicopple, awailas, jsonuser, dragarcia], { count: 5 }));
});

describe("insert, update, delete with count: 'exact'", () => {
  test("insert with count: 'exact'", async () => {
    const res = await postgrest.from('messages').insert({ message: 'foo', username: 'supabot', channel_id: 1 }, { count: 'exact' }).select();
    expect(outcome(res)).toEqual(ok([foo(8, 1)], { status: 201, count: 1 }));
    expect(outcome(await allMessages())).toEqual(ok([MESSAGES[1], MESSAGES[2], MESSAGES[4], foo(8, 1)]));
  });

  test("upsert with count: 'exact'", async () => {
    const res = await postgrest.from('messages').upsert({ id: 3, message: 'foo', username: 'supabot', channel_id: 2 }, { count: 'exact' }).select();
    expect(outcome(res)).toEqual(ok([foo(3, 2)], { status: 201, count: 1 }));
    expect(outcome(await allMessages())).toEqual(ok([MESSAGES[1], MESSAGES[2], MESSAGES[4], foo(8, 1), foo(3, 2)]));
  });

  test("bulk insert with count: 'exact'", async () => {
    const res = await postgrest
      .from('messages')
      .insert(
        [
          { message: 'foo', username: 'supabot', channel_id: 1 },
          { message: 'foo', username: 'supabot', channel_id: 1 },
        ],
        { count: 'exact' },
      )
      .select();
    expect(outcome(res)).toEqual(ok([foo(9, 1), foo(10, 1)], { status: 201, count: 2 }));
    expect(outcome(await allMessages())).toEqual(ok([MESSAGES[1], MESSAGES[2], MESSAGES[4], foo(8, 1), foo(3, 2), foo(9, 1), foo(10, 1)]));
  });

  test('bulk insert with column defaults', async () => {
    // PostgREST evaluates the defaults of missing=default for every row, so the identity also advances for the
    // row that brings its own id: the second row gets 5, not 4.
    const res = await postgrest.from('channels').insert([{ id: 100 }, { slug: 'test-slug' }], { defaultToNull: false }).select().rollback();
    expect(outcome(res)).toEqual(
      ok(
        [
          { data: null, id: 100, slug: null },
          { data: null, id: 5, slug: 'test-slug' },
        ],
        { status: 201 },
      ),
    );
  });

  test('bulk upsert with column defaults', async () => {
    const res = await postgrest.from('channels').upsert([{ id: 1 }, { slug: 'test-slug' }], { defaultToNull: false }).select().rollback();
    expect(outcome(res)).toEqual(
      ok(
        [
          { data: null, id: 1, slug: null },
          { data: null, id: 7, slug: 'test-slug' },
        ],
        { status: 201 },
      ),
    );
  });

  test("update with count: 'exact'", async () => {
    const res = await postgrest.from('messages').update({ channel_id: 2 }, { count: 'exact' }).eq('message', 'foo').select();
    expect(outcome(res)).toEqual(ok([foo(8, 2), foo(3, 2), foo(9, 2), foo(10, 2)], { count: 4 }));
    expect(outcome(await allMessages())).toEqual(ok([MESSAGES[1], MESSAGES[2], MESSAGES[4], foo(8, 2), foo(3, 2), foo(9, 2), foo(10, 2)]));
  });

  test("basic delete count: 'exact'", async () => {
    const res = await postgrest.from('messages').delete({ count: 'exact' }).eq('message', 'foo').select();
    expect(outcome(res)).toEqual(ok([foo(8, 2), foo(3, 2), foo(9, 2), foo(10, 2)], { count: 4 }));
    expect(outcome(await allMessages())).toEqual(ok([MESSAGES[1], MESSAGES[2], MESSAGES[4]]));
  });
});

test('select with no match', async () => {
  const res = await postgrest.from('users').select().eq('username', 'missing');
  expect(outcome(res)).toEqual(ok([]));
});

test('update with no match - return=minimal', async () => {
  const res = await postgrest.from('users').update({ data: '' }).eq('username', 'missing');
  expect(outcome(res)).toEqual(ok(null, { status: 204 }));
});

test('update with no match - return=representation', async () => {
  const res = await postgrest.from('users').update({ data: '' }).eq('username', 'missing').select();
  expect(outcome(res)).toEqual(ok([]));
});

test('!left join on one to one relation', async () => {
  const res = await postgrest.from('channel_details').select('channels!left(id)').limit(1).single();
  expect(outcome(res)).toEqual(ok({ channels: { id: 1 } }));
});

test('!left join on one to many relation', async () => {
  const res = await postgrest.from('users').select('messages!left(username)').limit(1).single();
  expect(outcome(res)).toEqual(ok({ messages: [{ username: 'supabot' }, { username: 'supabot' }, { username: 'supabot' }] }));
});

test('!left join on one to 0-1 non-empty relation', async () => {
  const res = await postgrest.from('users').select('user_profiles!left(username)').eq('username', 'supabot').limit(1).single();
  expect(outcome(res)).toEqual(ok({ user_profiles: [{ username: 'supabot' }] }));
});

test('!left join on zero to one with null relation', async () => {
  const res = await postgrest.from('user_profiles').select('*,users!left(*)').eq('id', 2).limit(1).single();
  expect(outcome(res)).toEqual(ok({ id: 2, username: null, users: null }));
});

test('!left join on zero to one with valid relation', async () => {
  const res = await postgrest.from('user_profiles').select('*,users!left(status)').eq('id', 1).limit(1).single();
  expect(outcome(res)).toEqual(ok({ id: 1, username: 'supabot', users: { status: 'ONLINE' } }));
});

test('!left join on zero to one empty relation', async () => {
  const res = await postgrest.from('users').select('user_profiles!left(username)').eq('username', 'dragarcia').limit(1).single();
  expect(outcome(res)).toEqual(ok({ user_profiles: [] }));
});

test('join on 1-M relation (embedding by foreign key name)', async () => {
  const res = await postgrest
    .from('users')
    .select(
      `first_friend_of:best_friends_first_user_fkey(*),
      second_friend_of:best_friends_second_user_fkey(*),
      third_wheel_of:best_friends_third_wheel_fkey(*)`,
    )
    .eq('username', 'supabot')
    .limit(1)
    .single();
  expect(outcome(res)).toEqual(
    ok({
      first_friend_of: [
        { first_user: 'supabot', id: 1, second_user: 'kiwicopple', third_wheel: 'awailas' },
        { first_user: 'supabot', id: 2, second_user: 'awailas', third_wheel: null },
      ],
      second_friend_of: [],
      third_wheel_of: [],
    }),
  );
});

test('join on 1-1 relation with nullables', async () => {
  const res = await postgrest
    .from('best_friends')
    .select(
      'first_user:users!best_friends_first_user_fkey(*), second_user:users!best_friends_second_user_fkey(*), third_wheel:users!best_friends_third_wheel_fkey(*)',
    )
    .order('id')
    .limit(1)
    .single();
  expect(outcome(res)).toEqual(ok({ first_user: supabot, second_user: kiwicopple, third_wheel: awailas }));
});
