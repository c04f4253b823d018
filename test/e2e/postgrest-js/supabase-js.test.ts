// PostgREST parity (issue 17) through @supabase/supabase-js: `createClient(`${url}/v1/${appId}`, serviceKey).from()`
// calls `${url}/v1/${appId}/rest/v1/<table>` with `apikey` and `Authorization: Bearer`, and must run unchanged.
// A handful of the postgrest-js suite's kinds of cases (MIT-licensed upstream), in the state basic.test.ts left
// (see fixture.ts); the cases build on each other in order.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createClient, type SupabaseClient } from '@supabase/supabase-js';
import { MESSAGES, USERS, ok, outcome, setupFixture, type Fixture } from './fixture.ts';

let fx: Fixture;
let supabase: SupabaseClient;

beforeAll(async () => {
  fx = await setupFixture('after-basic');
  supabase = createClient(fx.restUrl, fx.serviceKey, { auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false } });
});
afterAll(async () => {
  await fx?.close();
});

const { supabot, kiwicopple } = USERS;

test('select with nested embedding', async () => {
  const res = await supabase.from('users').select('username, messages(id, message, channels(slug))').eq('username', 'supabot').single();
  expect(outcome(res)).toEqual(
    ok({
      messages: [
        { channels: { slug: 'public' }, id: 1, message: MESSAGES[1].message },
        { channels: { slug: 'random' }, id: 2, message: MESSAGES[2].message },
        { channels: { slug: 'other' }, id: 4, message: MESSAGES[4].message },
      ],
      username: 'supabot',
    }),
  );
});

test('insert with select', async () => {
  const res = await supabase.from('users').insert({ username: 'supa', age_range: '[3,5)', catchphrase: 'new user' }).select().single();
  expect(outcome(res)).toEqual(ok({ age_range: '[3,5)', catchphrase: "'new' 'user'", data: null, status: 'ONLINE', username: 'supa' }, { status: 201 }));
});

test('upsert on a conflict updates the row', async () => {
  const res = await supabase.from('users').upsert({ username: 'supa', status: 'OFFLINE' }, { onConflict: 'username' }).select('username, status, age_range');
  expect(outcome(res)).toEqual(ok([{ age_range: '[3,5)', status: 'OFFLINE', username: 'supa' }]));
});

test('filters: in, like, or, not', async () => {
  const res = await supabase
    .from('users')
    .select('username')
    .in('status', ['OFFLINE'])
    .like('username', '%i%')
    .or('username.eq.kiwicopple,username.eq.supa')
    .not('age_range', 'is', null);
  expect(outcome(res)).toEqual(ok([{ username: 'kiwicopple' }]));
});

test('count exact with a partial range is 206 with the total', async () => {
  const res = await supabase.from('users').select('*', { count: 'exact' }).range(0, 1);
  expect(outcome(res)).toEqual(ok([supabot, kiwicopple], { status: 206, count: 6 }));
});

test('count exact with head', async () => {
  const res = await supabase.from('users').select('*', { count: 'exact', head: true }).eq('status', 'OFFLINE');
  expect(outcome(res)).toEqual(ok(null, { count: 2 }));
});

test('delete with select', async () => {
  const res = await supabase.from('users').delete().eq('username', 'supa').select('username');
  expect(outcome(res)).toEqual(ok([{ username: 'supa' }]));
});

test('a missing table is 404 PGRST205', async () => {
  const res = await supabase.from('missing_table').select();
  expect({ status: res.status, statusText: res.statusText, data: res.data, code: res.error?.code, message: res.error?.message }).toEqual({
    status: 404,
    statusText: 'Not Found',
    data: null,
    code: 'PGRST205',
    message: "Could not find the table 'public.missing_table' in the schema cache",
  });
});
