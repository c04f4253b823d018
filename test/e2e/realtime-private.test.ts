// Private channels with declared access (issue 42): the schema definition's `channels` says, per topic pattern, which
// end users may join (read) and send on (write) a private channel: one user's own channel, a group's members through a
// members table, the app only, or any signed-in user. Driven with supabase-js unchanged, and over HTTP broadcast.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type RealtimeChannel, type SupabaseClient } from '@supabase/supabase-js';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { Inbox, RawSocket } from '../helpers/phoenix-socket.ts';
import { request } from './e2e-helpers.ts';

let server: SpawnedServer;
const app = { id: '', publishableKey: '', serviceKey: '' };
type EndUser = { id: string; token: string; refreshToken: string };
const ada: EndUser = { id: '', token: '', refreshToken: '' };
const bob: EndUser = { id: '', token: '', refreshToken: '' };

const CHANNELS = {
  'user:*': 'user',
  'room:*': { members: 'room_members', key: 'room_id' },
  'board:*': { members: 'room_members', key: 'room_id', write: 'service' },
  ops: 'service',
  'ops:open': 'authenticated',
};

beforeAll(async () => {
  server = await spawnServer({ SVC_AUTH_RATE_LIMIT_PER_MINUTE: '100' });
  const made = await request(server.url, '/init', { method: 'POST', key: server.platformKey, body: { name: 'Private channels' } });
  expect(made.status).toBe(201);
  Object.assign(app, { id: made.json.app_id, publishableKey: made.json.publishable_key, serviceKey: made.json.service_key.key });
  const schema = { tables: { room_members: { columns: { room_id: { type: 'text', primary: true }, user_id: { type: 'uuid', primary: true } }, access: 'service' } }, channels: CHANNELS };
  const applied = await request(server.url, `/v1/${app.id}/schema/apply`, { method: 'POST', key: app.serviceKey, body: { schema, name: 'channels' } });
  expect(applied.status).toBe(200);
  for (const [user, email] of [[ada, 'ada@example.com'], [bob, 'bob@example.com']] as const) {
    const signup = await request(server.url, `/v1/${app.id}/auth/signup`, { method: 'POST', body: { email, password: 'correct horse battery' } });
    expect(signup.status).toBe(201);
    Object.assign(user, { id: signup.json.user.id, token: signup.json.access_token, refreshToken: signup.json.refresh_token });
  }
  await membership('insert', 'r1', ada);
}, 90_000);

const clients: SupabaseClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.removeAllChannels()));
});
afterAll(async () => {
  await server?.close();
});

/** Ada or Bob joins or leaves a room, as the app's server does (the members table is `service`). */
async function membership(op: 'insert' | 'delete', room: string, user: EndUser): Promise<void> {
  const path = `/v1/${app.id}/rest/v1/room_members${op === 'delete' ? `?room_id=eq.${room}&user_id=eq.${user.id}` : ''}`;
  const done = await request(server.url, path, { method: op === 'insert' ? 'POST' : 'DELETE', key: app.serviceKey, body: op === 'insert' ? { room_id: room, user_id: user.id } : undefined });
  expect(done.status).toBe(op === 'insert' ? 201 : 204);
}

/** A supabase-js client whose realtime acts for `holder.token` (an end user), or for the app's secret key. */
async function clientOf(holder: { token: string } | 'app', vsn: '1.0.0' | '2.0.0' = '2.0.0'): Promise<SupabaseClient> {
  const options = { auth: { persistSession: false, autoRefreshToken: false }, realtime: { vsn } };
  const made =
    holder === 'app'
      ? createClient(`${server.url}/v1/${app.id}`, app.serviceKey, options)
      : createClient(`${server.url}/v1/${app.id}`, app.publishableKey, { ...options, accessToken: async () => holder.token });
  clients.push(made);
  if (holder !== 'app') await made.realtime.setAuth();
  return made;
}

type Status = { status: string; reason?: string };
function statuses(channel: RealtimeChannel): Inbox<Status> {
  const inbox = new Inbox<Status>();
  channel.subscribe((status, err) => inbox.push(err ? { status, reason: err.message } : { status }));
  return inbox;
}

async function join(holder: { token: string } | 'app', name: string, ack = true): Promise<{ channel: RealtimeChannel; outcome: Status; got: Inbox<unknown> }> {
  const channel = (await clientOf(holder)).channel(name, { config: { private: true, broadcast: { ack } } });
  const got = new Inbox<unknown>();
  channel.on('broadcast', { event: '*' }, (m) => got.push(m.payload));
  return { channel, outcome: await statuses(channel).find(), got };
}

const SUBSCRIBED = { status: 'SUBSCRIBED' };
const cannotRead = (name: string) => ({ status: 'CHANNEL_ERROR', reason: `Unauthorized: You do not have permissions to read from this Channel topic: ${name}` });

describe('joining private channels by the declared rules', () => {
  it("'user:*' is one end user's own channel", async () => {
    const own = await join(ada, `user:${ada.id}`);
    expect(own.outcome).toEqual(SUBSCRIBED);
    expect((await join(bob, `user:${ada.id}`)).outcome).toEqual(cannotRead(`user:${ada.id}`));
    // The id compares as a uuid does, in any case.
    expect((await join(ada, `user:${ada.id.toUpperCase()}`)).outcome).toEqual(SUBSCRIBED);
    const app_ = await join('app', `user:${ada.id}`);
    expect(app_.outcome).toEqual(SUBSCRIBED);
    expect(await own.channel.send({ type: 'broadcast', event: 'ping', payload: { from: 'ada' } })).toBe('ok');
    expect(await app_.got.find()).toEqual({ from: 'ada' });
  });

  it("a group's members read and write its room; others are refused; 'board:*' lets members read only", async () => {
    const member = await join(ada, 'room:r1');
    expect(member.outcome).toEqual(SUBSCRIBED);
    expect((await join(bob, 'room:r1')).outcome).toEqual(cannotRead('room:r1'));
    expect((await join(ada, 'room:r2')).outcome).toEqual(cannotRead('room:r2'));
    const listener = await join('app', 'room:r1');
    expect(await member.channel.send({ type: 'broadcast', event: 'msg', payload: { text: 'hi' } })).toBe('ok');
    expect(await listener.got.find()).toEqual({ text: 'hi' });

    const board = await join(ada, 'board:r1');
    expect(board.outcome).toEqual(SUBSCRIBED);
    expect(await board.channel.send({ type: 'broadcast', event: 'msg', payload: { text: 'no' } })).toBe('error');
    expect(await board.channel.track({ online: true })).toBe('error');
    const announcer = await join('app', 'board:r1');
    expect(await announcer.channel.send({ type: 'broadcast', event: 'news', payload: { text: 'read this' } })).toBe('ok');
    expect(await board.got.find()).toEqual({ text: 'read this' });
  });

  it("'ops' is the app's alone, a more specific pattern wins, and a topic no pattern covers is open to signed-in users", async () => {
    expect((await join(ada, 'ops')).outcome).toEqual(cannotRead('ops'));
    expect((await join('app', 'ops')).outcome).toEqual(SUBSCRIBED);
    expect((await join(ada, 'ops:open')).outcome).toEqual(SUBSCRIBED);
    expect((await join(bob, 'lobby')).outcome).toEqual(SUBSCRIBED);
  });

  it('a membership that ended closes the channel at the next new token', async () => {
    await membership('insert', 'r3', bob);
    const holder = { token: bob.token };
    const c = await clientOf(holder);
    const channel = c.channel('room:r3', { config: { private: true } });
    const system = new Inbox<Record<string, unknown>>();
    channel.on('system', {}, (m) => system.push(m as Record<string, unknown>));
    const seen = statuses(channel);
    expect(await seen.find()).toEqual(SUBSCRIBED);
    await membership('delete', 'r3', bob);
    const refreshed = await request(server.url, `/v1/${app.id}/auth/v1/token?grant_type=refresh_token`, { method: 'POST', headers: { apikey: app.publishableKey }, body: { refresh_token: bob.refreshToken } });
    expect(refreshed.status).toBe(200);
    bob.refreshToken = refreshed.json.refresh_token;
    holder.token = refreshed.json.access_token;
    await c.realtime.setAuth(holder.token);
    await seen.find((s) => s.status === 'CLOSED');
    expect(await system.find()).toEqual({ extension: 'system', status: 'error', message: 'You do not have permissions to read from this Channel topic: room:r3', channel: 'room:r3' });
  });
});

describe('HTTP broadcast to private channels', () => {
  const broadcast = (key: string, topic: string) =>
    request(server.url, `/v1/${app.id}/realtime/v1/api/broadcast`, { method: 'POST', key, body: { messages: [{ topic, event: 'e', payload: { n: 1 }, private: true }] } });

  it('an end user sends where the rule lets them write, and gets 403 elsewhere; the app sends anywhere', async () => {
    const listener = await join('app', 'room:r1');
    expect((await broadcast(ada.token, 'room:r1')).status).toBe(202);
    expect(await listener.got.find()).toEqual({ n: 1 });
    const refused = await broadcast(bob.token, 'room:r1');
    expect(refused.status).toBe(403);
    expect(refused.json).toEqual({
      code: 'FORBIDDEN',
      message: "This end user may not send to the private channel 'room:r1': the app's channels rules (schema_get's channels) do not allow it. Send it from a server with the secret key, or change the rule with schema_apply.",
    });
    expect((await broadcast(ada.token, 'board:r1')).status).toBe(403);
    expect((await broadcast(app.serviceKey, 'ops')).status).toBe(202);
  });
});

describe('the rules in the schema', () => {
  const apply = (schema: unknown, dry_run = false) => request(server.url, `/v1/${app.id}/schema/apply`, { method: 'POST', key: app.serviceKey, body: { schema, dry_run } });

  it('schema_get shows them as written, and applying them again plans nothing', async () => {
    const got = await request(server.url, `/v1/${app.id}/schema`, { key: app.serviceKey });
    expect(got.json.channels).toEqual({ ...CHANNELS, 'room:*': { members: 'room_members', key: 'room_id', write: 'members' } });
    const again = await apply({ tables: {}, channels: got.json.channels }, true);
    expect(again.json.statements).toEqual([]);
    expect((await apply({ tables: {} }, true)).json.statements).toEqual([]);
  });

  it('refuses a rule it could not judge, naming it, and changes nothing', async () => {
    const cases: Array<[unknown, string]> = [
      [{ lobby: 'user' }, "channels['lobby']: 'user' access needs a pattern ending in '*', where the end user's id goes ('lobby*')."],
      [{ 'a*b': 'service' }, "channels['a*b']: '*' may only end a pattern ('room:*' covers every topic starting 'room:')."],
      [{ 'team:*': { members: 'teams', key: 'id' } }, "Channel pattern 'team:*' is joined by members of 'teams', a table that does not exist after this apply. Define it (user_id uuid and 'id'), or change channels."],
      [{ 'team:*': { members: 'room_members', key: 'team_id' } }, "Channel pattern 'team:*' is joined by members of 'room_members', which has no column 'team_id' (the channel's key)."],
    ];
    for (const [channels, message] of cases) {
      const refused = await apply({ tables: {}, channels });
      expect(refused.status, message).toBe(400);
      expect([refused.json.error.code, refused.json.error.message]).toEqual(['VALIDATION_FAILED', message]);
    }
    const dropping = await apply({ tables: { room_members: { _drop: true } } });
    expect(dropping.status).toBe(400);
    expect(dropping.json.error.message).toMatch(/^Channel pattern 'board:\*' is joined by members of 'room_members', a table that does not exist after this apply/);
    expect((await request(server.url, `/v1/${app.id}/schema`, { key: app.serviceKey })).json.channels['room:*']).toEqual({ members: 'room_members', key: 'room_id', write: 'members' });
  });
});

describe('stored broadcasts and replay', () => {
  type Message = { event: string; payload: unknown; meta?: { id: string; replayed?: boolean } };

  /** A private channel of `holder` asking to replay what was stored since `since`; every broadcast it gets. */
  async function replaying(holder: { token: string } | 'app', name: string, replay: { since: number; limit?: number }, vsn: '1.0.0' | '2.0.0' = '2.0.0') {
    const c = await clientOf(holder, vsn);
    const channel = c.channel(name, { config: { private: true, broadcast: { replay } } });
    const got = new Inbox<Message>();
    channel.on('broadcast', { event: '*' }, (m) => got.push({ event: m.event, payload: m.payload, ...(m.meta ? { meta: m.meta } : {}) }));
    expect(await statuses(channel).find()).toEqual(SUBSCRIBED);
    return got;
  }

  it('keeps what is sent with persist, marks it with its id, and replays the latest since a time to a later join', async () => {
    const since = Date.now();
    const listener = await join('app', 'room:r1');
    const live = new Inbox<Message>();
    listener.channel.on('broadcast', { event: 'kept' }, (m) => live.push({ event: m.event, payload: m.payload, meta: m.meta }));
    const sender = await join(ada, 'room:r1');
    expect(await sender.channel.send({ type: 'broadcast', event: 'kept', payload: { n: 1 }, persist: true })).toBe('ok');
    const first = await live.find();
    expect(first).toEqual({ event: 'kept', payload: { n: 1 }, meta: { id: expect.stringMatching(/^[0-9a-f-]{36}$/) } });
    expect(await sender.channel.httpSend('kept', { n: 2 }, { persist: { ttl: 60 } })).toEqual({ success: true });
    expect(await sender.channel.send({ type: 'broadcast', event: 'not-kept', payload: { n: 3 } })).toBe('ok');
    const second = await live.find((m) => (m.payload as { n: number }).n === 2);

    const replayed = await replaying(ada, 'room:r1', { since });
    expect(await replayed.find((m) => (m.payload as { n: number }).n === 2)).toBeDefined();
    expect(replayed.items).toEqual([
      { event: 'kept', payload: { n: 1 }, meta: { id: first.meta!.id, replayed: true } },
      { event: 'kept', payload: { n: 2 }, meta: { id: second.meta!.id, replayed: true } },
    ]);
    const latest = await replaying('app', 'room:r1', { since, limit: 1 }, '1.0.0');
    expect(await latest.find()).toEqual({ event: 'kept', payload: { n: 2 }, meta: { id: second.meta!.id, replayed: true } });
    // Nothing stored after a time: nothing replayed.
    const none = await replaying('app', 'room:r1', { since: Date.now() + 60_000 });
    expect(await sender.channel.send({ type: 'broadcast', event: 'after', payload: {} })).toBe('ok');
    expect(await none.find()).toEqual({ event: 'after', payload: {} });
  });

  it('refuses what it cannot keep with a reason realtime-js returns, and replay where it has no meaning', async () => {
    const sender = await join(ada, 'room:r1');
    const big = { text: 'x'.repeat(70_000) };
    expect(await sender.channel.send({ type: 'broadcast', event: 'big', payload: big, persist: true })).toBe(`A stored broadcast's payload is at most 65536 bytes; this one is ${JSON.stringify(big).length}.`);
    expect(await sender.channel.send({ type: 'broadcast', event: 'odd', payload: {}, persist: { ttl: 0 } })).toBe('persist is true or { ttl: <whole seconds, 1-259200> }');
    const refusedHttp = await request(server.url, `/v1/${app.id}/realtime/v1/api/broadcast/news/events/e?persist=true`, { method: 'POST', key: app.serviceKey, body: { n: 1 } });
    expect([refusedHttp.status, refusedHttp.json]).toEqual([400, { code: 'VALIDATION_FAILED', message: 'Only broadcasts of private channels are stored: add private=true, or leave persist out. Fix the named field and send the request again.' }]);
    const socket = await RawSocket.open(`ws://127.0.0.1:${server.port}/v1/${app.id}/realtime/v1/websocket?apikey=${app.serviceKey}&vsn=2.0.0`);
    try {
      expect(await socket.ask('1', '1', 'realtime:news', 'phx_join', { config: { broadcast: { replay: { since: 0 } } } })).toEqual({
        status: 'error',
        response: { reason: 'InvalidJoinPayload: config.broadcast.replay is for private channels' },
      });
      expect(await socket.ask('2', '2', 'realtime:news', 'phx_join', { config: { private: true, broadcast: { replay: { since: 0, limit: 26 } } } })).toEqual({
        status: 'error',
        response: { reason: 'InvalidJoinPayload: config.broadcast.replay is { since: <milliseconds since the epoch>, limit?: 1-25 }' },
      });
    } finally {
      socket.ws.terminate();
    }
  });
});
