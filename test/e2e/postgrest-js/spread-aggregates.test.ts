// PostgREST parity (issue 17), ported from postgrest-js's test suite (MIT-licensed):
// test/relationships-aggregate-operations.test.ts, test/relationships-error-handling.test.ts and
// test/relationships-spread-operations.test.ts, in the state basic.test.ts left (see fixture.ts). Read-only.
// What is not ported and why: the comment at the top of basic.test.ts.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { PostgrestClient } from '@supabase/postgrest-js';
import { failed, ok, outcome, setupFixture, type Fixture } from './fixture.ts';

let fx: Fixture;
let postgrest: PostgrestClient;

beforeAll(async () => {
  fx = await setupFixture('after-basic');
  postgrest = fx.postgrest;
});
afterAll(async () => {
  await fx?.close();
});

/** supabot's messages 1, 2 and 4 are on channels 1, 2 and 3; channel 3 has no details. */
const perMessageChannel = (channels: (n: 1 | 2 | 3) => Record<string, unknown>) => ({
  messages: ([1, 2, 3] as const).map((n) => ({ channels: channels(n) })),
  username: 'supabot',
});
const DETAILS = { 1: 'Details for public channel', 2: 'Details for random channel', 3: null } as const;

describe('relationships-aggregate-operations', () => {
  test('select with aggregate count function', async () => {
    const res = await postgrest.from('users').select('username, messages(count)').limit(1).single();
    expect(outcome(res)).toEqual(ok({ messages: [{ count: 3 }], username: 'supabot' }));
  });

  test('select with aggregate count on a column function', async () => {
    const res = await postgrest.from('users').select('username, messages(id.count())').limit(1).single();
    expect(outcome(res)).toEqual(ok({ messages: [{ count: 3 }], username: 'supabot' }));
  });

  test('select with aggregate count function and alias', async () => {
    const res = await postgrest.from('users').select('username, messages(message_count:count())').limit(1).single();
    expect(outcome(res)).toEqual(ok({ messages: [{ message_count: 3 }], username: 'supabot' }));
  });

  test('select with aggregate nested count function', async () => {
    const res = await postgrest.from('users').select('username, messages(channels(count))').limit(1).single();
    expect(outcome(res)).toEqual(ok(perMessageChannel(() => ({ count: 1 }))));
  });

  test('select with aggregate nested count function and alias', async () => {
    const res = await postgrest.from('users').select('username, messages(channels(channel_count:count()))').limit(1).single();
    expect(outcome(res)).toEqual(ok(perMessageChannel(() => ({ channel_count: 1 }))));
  });

  test('select with aggregate sum function', async () => {
    const res = await postgrest.from('users').select('username, messages(id.sum())').limit(1).single();
    expect(outcome(res)).toEqual(ok({ messages: [{ sum: 7 }], username: 'supabot' }));
  });

  test('select with aggregate aliased sum function', async () => {
    const res = await postgrest.from('users').select('username, messages(sum_id:id.sum())').limit(1).single();
    expect(outcome(res)).toEqual(ok({ messages: [{ sum_id: 7 }], username: 'supabot' }));
  });

  test('select with aggregate sum function on nested relation', async () => {
    const res = await postgrest.from('users').select('username, messages(channels(id.sum()))').limit(1).single();
    expect(outcome(res)).toEqual(ok(perMessageChannel((n) => ({ sum: n }))));
  });
});

describe('relationships-spread-operations', () => {
  test('select with aggregate count and spread (a single column)', async () => {
    const res = await postgrest.from('users').select('username, messages(channels(count(), ...channel_details(details)))').limit(1).single();
    expect(outcome(res)).toEqual(ok(perMessageChannel((n) => ({ count: 1, details: DETAILS[n] }))));
  });

  test('spread resource with all columns in select query', async () => {
    const res = await postgrest.from('users').select('username, messages(channels(count(), ...channel_details(*)))').limit(1).single();
    expect(outcome(res)).toEqual(ok(perMessageChannel((n) => ({ count: 1, details: DETAILS[n], id: n === 3 ? null : n }))));
  });

  test('select with aggregate sum and spread', async () => {
    const res = await postgrest.from('users').select('username, messages(channels(id.sum(), ...channel_details(details)))').limit(1).single();
    expect(outcome(res)).toEqual(ok(perMessageChannel((n) => ({ details: DETAILS[n], sum: n }))));
  });

  test('select with aggregate sum and spread on nested relation', async () => {
    const res = await postgrest
      .from('users')
      .select('username, messages(channels(id.sum(), ...channel_details(details_sum:id.sum(), details)))')
      .limit(1)
      .single();
    expect(outcome(res)).toEqual(ok(perMessageChannel((n) => ({ details: DETAILS[n], details_sum: n === 3 ? null : n, sum: n }))));
  });

  test('select with spread on nested relation', async () => {
    const res = await postgrest.from('messages').select('id, channels(id, ...channel_details(details_id:id, details))').limit(1).single();
    expect(outcome(res)).toEqual(ok({ channels: { details: 'Details for public channel', details_id: 1, id: 1 }, id: 1 }));
  });

  test('select spread on many relation (PostgREST 13)', async () => {
    const res = await postgrest.from('channels').select('channel_id:id, ...messages(id, message)').limit(1).single();
    expect(outcome(res)).toEqual(ok({ channel_id: 1, id: [1], message: ['Hello World 👋'] }));
  });
});

describe('relationships-error-handling', () => {
  const ambiguous = (from: string, to: string, cardinality: 'many-to-one' | 'one-to-many') => {
    const fkeys = ['first_user', 'second_user', 'third_wheel'].map((c) => ({
      cardinality,
      embedding: `${from} with ${to}`,
      relationship:
        cardinality === 'many-to-one'
          ? `best_friends_${c}_fkey using best_friends(${c}) and users(username)`
          : `best_friends_${c}_fkey using users(username) and best_friends(${c})`,
    }));
    return failed(300, {
      code: 'PGRST201',
      details: fkeys,
      hint: `Try changing '${to}' to one of the following: ${['first_user', 'second_user', 'third_wheel']
        .map((c) => `'${to}!best_friends_${c}_fkey'`)
        .join(', ')}. Find the desired relationship in the 'details' key.`,
      message: `Could not embed because more than one relationship was found for '${from}' and '${to}'`,
    });
  };

  test('join over a 1-1 relation with no hinting', async () => {
    const res = await postgrest.from('best_friends').select('first_user:users(*), second_user:users(*), third_wheel:users(*)').single();
    expect(outcome(res)).toEqual(ambiguous('best_friends', 'users', 'many-to-one'));
  });

  test('join over a 1-M relation with no hinting', async () => {
    const res = await postgrest
      .from('users')
      .select('first_friend_of:best_friends(*), second_friend_of:best_friends(*), third_wheel_of:best_friends(*)')
      .limit(1)
      .single();
    expect(outcome(res)).toEqual(ambiguous('users', 'best_friends', 'one-to-many'));
  });

  test('join over a 1-M relation with no hinting on the nested relation', async () => {
    const res = await postgrest
      .from('users')
      .select(
        'first_friend_of:best_friends!first_user(*, first_user:users(*)), second_friend_of:best_friends!second_user(*), third_wheel_of:best_friends!third_wheel(*)',
      )
      .limit(1)
      .single();
    expect(outcome(res)).toEqual(ambiguous('best_friends', 'users', 'many-to-one'));
  });

  test('join with same dest twice column hinting', async () => {
    // PostgREST's message names its own alias of the embedded table.
    const res = await postgrest.from('best_friends').select('users!first_user(*), users!second_user(*)').limit(1).single();
    expect(outcome(res)).toEqual(failed(400, { code: '42712', details: null, hint: null, message: 'table name "best_friends_users_1" specified more than once' }));
  });

  test('nested query with selective fields and inner join should error on non existing relation', async () => {
    const res = await postgrest
      .from('users')
      .select('msgs:messages(id, ...message_details(created_at, channel!inner(id, slug, owner:users(*))))')
      .limit(1)
      .single();
    expect(outcome(res)).toEqual(
      failed(400, {
        code: 'PGRST200',
        details: "Searched for a foreign key relationship between 'messages' and 'message_details' in the schema 'public', but no matches were found.",
        hint: null,
        message: "Could not find a relationship between 'messages' and 'message_details' in the schema cache",
      }),
    );
  });

  test('aggregate on missing column with alias', async () => {
    const res = await postgrest.from('users').select('alias:missing_column.count()').eq('id', 2).limit(1).single();
    expect(outcome(res)).toEqual(failed(400, { code: '42703', details: null, hint: null, message: 'column users.missing_column does not exist' }));
  });

  test('typecasting and aggregate', async () => {
    const res = await postgrest
      .from('messages')
      .select('message, users.count(), casted_message:message::int4, casted_count:users.count()::text')
      .limit(1)
      .single();
    expect(outcome(res)).toEqual(failed(400, { code: '42703', details: null, hint: null, message: 'column messages.users does not exist' }));
  });

  test('select with aggregate sum function without column should error', async () => {
    // PostgREST's message names its own alias of the embedded table.
    const res = await postgrest.from('users').select('username, messages(sum)').limit(1).single();
    expect(outcome(res)).toEqual(failed(400, { code: '42703', details: null, hint: null, message: 'column messages_1.sum does not exist' }));
  });
});
