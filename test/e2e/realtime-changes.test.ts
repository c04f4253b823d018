// postgres_changes (issue 42, stage 2) driven by supabase-js unchanged, on two api processes sharing one control
// database: each end user receives exactly the changes of the rows row-level security lets them select (deletes too),
// filters and events narrow them, SUBSCRIBED means changes flow (and `system` says so), a table that does not stream is
// a named refusal, and a change committed through one process reaches a subscriber of the other. Every wait is for an
// event: where a change must not arrive, a later one that must arrive proves it, since changes arrive in order.
import { createClient, type RealtimeChannel, type RealtimePostgresChangesPayload, type SupabaseClient } from '@supabase/supabase-js';
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort, spawnServer, type SpawnedServer } from '../helpers/server.ts';
import WebSocket from 'ws';
import { RawSocket } from '../helpers/phoenix-socket.ts';
import { request } from './e2e-helpers.ts';

let a: SpawnedServer;
let b: SpawnedServer;
const app = { id: '', publishableKey: '', serviceKey: '' };
const users = { alice: { id: '', token: '' }, bob: { id: '', token: '' } };

const SCHEMA = {
  tables: {
    notes: {
      columns: { id: { type: 'bigint', primary: true, identity: true }, user_id: { type: 'uuid' }, body: { type: 'text' }, stars: { type: 'integer' } },
      access: 'user',
      realtime: true,
    },
    posts: { columns: { id: { type: 'bigint', primary: true, identity: true }, title: { type: 'text' }, tags: { type: 'text[]' } }, access: 'public', realtime: true },
    quiet: { columns: { id: { type: 'bigint', primary: true, identity: true }, title: { type: 'text' } }, access: 'public' },
  },
};

type Change = RealtimePostgresChangesPayload<Record<string, unknown>>;
/** A change's new or old row, whatever the event. */
const row = (r: unknown) => r as Record<string, unknown>;

beforeAll(async () => {
  const port = await freePort();
  const shared = { SVC_MASTER_KEY: randomBytes(32).toString('hex'), SVC_BASE_URL: `http://127.0.0.1:${port}`, SVC_AUTH_RATE_LIMIT_PER_MINUTE: '100' };
  a = await spawnServer({ ...shared, PORT: String(port) });
  b = await spawnServer({ ...shared, SVC_ROLE: 'api', SVC_PLATFORM_API_KEY: a.platformKey, SVC_APP_DB_PREFIX: a.appDbPrefix }, { controlDb: a.controlDb });
  const made = await request(a.url, '/init', { method: 'POST', key: a.platformKey, body: { name: 'Changes' } });
  expect(made.status).toBe(201);
  Object.assign(app, { id: made.json.app_id, publishableKey: made.json.publishable_key, serviceKey: made.json.service_key.key });
  expect((await request(a.url, `/v1/${app.id}/schema/apply`, { method: 'POST', key: app.serviceKey, body: { schema: SCHEMA } })).status).toBe(200);
  for (const [name, user] of Object.entries(users)) {
    const signup = await request(a.url, `/v1/${app.id}/auth/signup`, { method: 'POST', body: { email: `${name}@example.com`, password: 'correct horse battery' } });
    expect(signup.status).toBe(201);
    Object.assign(user, { id: signup.json.user.id, token: signup.json.access_token });
  }
}, 90_000);

const clients: SupabaseClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.removeAllChannels()));
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

/**
 * A page's client on `server`: the publishable key, and the end user's token when given, asked for before any channel
 * (as a page that awaits its session does), so that the join carries it.
 */
async function page(server: SpawnedServer, token?: string): Promise<SupabaseClient> {
  const made = createClient(`${server.url}/v1/${app.id}`, app.publishableKey, {
    auth: { persistSession: false, autoRefreshToken: false },
    ...(token ? { accessToken: async () => token } : {}),
  });
  clients.push(made);
  if (token) await made.realtime.setAuth();
  return made;
}

async function until(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Subscribes and resolves with the subscription's outcome: SUBSCRIBED, or the error realtime-js reports. */
function subscribed(channel: RealtimeChannel): Promise<{ status: string; error?: Error }> {
  return new Promise((resolve) => {
    channel.subscribe((status, error) => {
      if (status !== 'CLOSED') resolve({ status, ...(error ? { error } : {}) });
    });
  });
}

/** A channel of changes of one binding, collecting what arrives (and the `system` messages). */
async function listen(client: SupabaseClient, name: string, binding: { event: '*' | 'INSERT' | 'UPDATE' | 'DELETE'; table?: string; filter?: string }) {
  const got: Change[] = [];
  const system: Record<string, unknown>[] = [];
  const channel = client
    .channel(name)
    .on('postgres_changes', { schema: 'public', ...binding } as never, (p: Change) => got.push(p))
    .on('system', {}, (p: Record<string, unknown>) => system.push(p));
  const outcome = await subscribed(channel);
  return { got, system, outcome, channel };
}

const write = (server: SpawnedServer, method: string, path: string, key: string, body?: unknown) =>
  request(server.url, `/v1/${app.id}/${path}`, { method, key, ...(body === undefined ? {} : { body }) });

describe('postgres_changes under row-level security', () => {
  it('gives each end user the changes of their own rows only, inserts, updates and deletes, as realtime-js casts them', async () => {
    const alice = await listen(await page(a, users.alice.token), 'alice-notes', { event: '*', table: 'notes' });
    const bob = await listen(await page(b, users.bob.token), 'bob-notes', { event: '*', table: 'notes' });
    const anon = await listen(await page(a), 'anon-notes', { event: '*', table: 'notes' });
    expect([alice.outcome.status, bob.outcome.status, anon.outcome.status]).toEqual(['SUBSCRIBED', 'SUBSCRIBED', 'SUBSCRIBED']);
    // SUBSCRIBED came once changes flow; the system message says so.
    await until(() => alice.system.length > 0);
    expect(alice.system[0]).toEqual({ extension: 'postgres_changes', status: 'ok', message: 'Subscribed to PostgreSQL', channel: 'alice-notes' });

    expect((await write(a, 'POST', 'notes', users.alice.token, { body: 'mine', stars: 3 })).status).toBe(201);
    expect((await write(b, 'POST', 'notes', app.serviceKey, { body: "bob's", user_id: users.bob.id })).status).toBe(201);
    expect((await write(a, 'PATCH', 'notes?body=eq.mine', users.alice.token, { stars: 5 })).status).toBe(204);
    expect((await write(b, 'DELETE', 'notes?body=eq.mine', app.serviceKey)).status).toBe(204);
    await until(() => alice.got.length >= 3 && bob.got.length >= 1);

    expect(alice.got.map((c) => [c.eventType, c.new, c.old])).toEqual([
      ['INSERT', { id: expect.any(Number), user_id: users.alice.id, body: 'mine', stars: 3 }, {}],
      ['UPDATE', { id: expect.any(Number), user_id: users.alice.id, body: 'mine', stars: 5 }, { id: expect.any(Number), user_id: users.alice.id, body: 'mine', stars: 3 }],
      ['DELETE', {}, { id: expect.any(Number), user_id: users.alice.id, body: 'mine', stars: 5 }],
    ]);
    expect(alice.got[0]).toMatchObject({ schema: 'public', table: 'notes', commit_timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), errors: null });
    expect(bob.got.map((c) => [c.eventType, row(c.new).body])).toEqual([['INSERT', "bob's"]]);

    // Anonymous readers see nothing of a 'user' table: a public row committed after proves nothing came before it.
    const anonPosts = await listen(await page(a), 'anon-posts', { event: 'INSERT', table: 'posts' });
    expect((await write(a, 'POST', 'posts', app.serviceKey, { title: 'after', tags: ['a', 'b'] })).status).toBe(201);
    await until(() => anonPosts.got.length === 1);
    expect(anonPosts.got[0]!.new).toEqual({ id: expect.any(Number), title: 'after', tags: ['a', 'b'] });
    expect(anon.got).toEqual([]);
    await until(() => bob.got.length >= 1);
    expect(bob.got).toHaveLength(1);
  });

  it('narrows by event and filter', async () => {
    const client = await page(b);
    const titled = await listen(client, 'titled', { event: 'INSERT', table: 'posts', filter: 'title=eq.hello' });
    const updates = await listen(client, 'updates', { event: 'UPDATE', table: 'posts' });
    const all = await listen(client, 'all', { event: '*', table: 'posts' });
    expect((await write(a, 'POST', 'posts', app.serviceKey, [{ title: 'hello' }, { title: 'other' }])).status).toBe(201);
    expect((await write(a, 'PATCH', 'posts?title=eq.other', app.serviceKey, { title: 'renamed' })).status).toBe(204);
    await until(() => all.got.length >= 3);
    expect(titled.got.map((c) => row(c.new).title)).toEqual(['hello']);
    expect(updates.got.map((c) => [row(c.old).title, row(c.new).title])).toEqual([['other', 'renamed']]);
    expect(all.got.map((c) => c.eventType)).toEqual(['INSERT', 'INSERT', 'UPDATE']);
  });

  it('refuses what it cannot stream, naming why', async () => {
    const client = await page(a, users.alice.token);
    const quiet = await listen(client, 'quiet', { event: '*', table: 'quiet' });
    expect(quiet.outcome.status).toBe('CHANNEL_ERROR');
    expect(quiet.outcome.error?.message).toBe(`InvalidPostgresChanges: table 'quiet' does not stream: apply its definition with "realtime": true`);
    const missing = await listen(client, 'missing', { event: '*', table: 'nope' });
    expect(missing.outcome.error?.message).toBe("InvalidPostgresChanges: table 'nope' does not exist");
    const column = await listen(client, 'column', { event: '*', table: 'notes', filter: 'color=eq.red' });
    expect(column.outcome.error?.message).toBe("InvalidPostgresChanges: filter: column 'color' is not in table 'notes'");
    const regex = await listen(client, 'regex', { event: '*', table: 'notes', filter: 'body=match.^a' });
    expect(regex.outcome.error?.message).toContain('regular expressions are not evaluated');
  });
});

describe('catch-up after a dropped connection', () => {
  /** A raw socket of the app on `server`, joined to `topic` with the end user's token and one binding on notes. */
  async function joined(server: SpawnedServer, token: string, topic: string) {
    const socket = await RawSocket.open(`ws://127.0.0.1:${server.port}/v1/${app.id}/realtime/v1/websocket?apikey=${app.publishableKey}&vsn=2.0.0`);
    const reply = await socket.ask('1', '1', `realtime:${topic}`, 'phx_join', {
      config: { postgres_changes: [{ event: '*', schema: 'public', table: 'notes' }] },
      access_token: token,
    });
    expect(reply).toMatchObject({ status: 'ok' });
    return socket;
  }
  const bodies = (socket: RawSocket) =>
    socket.frames.items.filter((f) => f[3] === 'postgres_changes').map((f) => (f[4] as { data: { record: { body?: string } } }).data.record.body);
  const insert = async (body: string) => expect((await write(a, 'POST', 'notes', users.alice.token, { body })).status).toBe(201);

  it('hands a rejoin of the same session, topic and bindings what it missed while away, on any api process', async () => {
    const first = await joined(a, users.alice.token, 'resume');
    await insert('before');
    await first.frames.find((f) => f[3] === 'postgres_changes');
    first.drop();
    await first.closed;
    await insert('while away 1');
    await insert('while away 2');
    const again = await joined(b, users.alice.token, 'resume');
    await insert('after');
    await again.frames.find((f) => f[3] === 'postgres_changes' && (f[4] as { data: { record: { body?: string } } }).data.record.body === 'after');
    // At least once: 'before' was sent after the client was last heard (its join), so it may not have arrived.
    expect(bodies(again)).toEqual(['before', 'while away 1', 'while away 2', 'after']);
    again.ws.close();
  });

  it('supabase-js: a channel whose connection drops reconnects by itself and gets what it missed', async () => {
    const made = createClient(`${a.url}/v1/${app.id}`, app.publishableKey, {
      auth: { persistSession: false, autoRefreshToken: false },
      accessToken: async () => users.alice.token,
      realtime: { transport: WebSocket as never },
    });
    clients.push(made);
    await made.realtime.setAuth();
    const got: string[] = [];
    const channel = made.channel('resume-js').on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'notes' }, (p: Change) => void got.push(String(row(p.new).body)));
    expect((await subscribed(channel)).status).toBe('SUBSCRIBED');
    await insert('js before');
    await until(() => got.includes('js before'));
    // The network goes: no close frame, as a sleeping laptop's connection ends.
    const conn = (made.realtime as unknown as { socketAdapter: { socket: { conn: { _socket: { destroy(): void } } } } }).socketAdapter.socket.conn;
    conn._socket.destroy();
    await insert('js while away');
    await until(() => got.includes('js while away'));
    await insert('js after');
    await until(() => got.includes('js after'));
    expect(got.filter((b) => b !== 'js before')).toEqual(['js while away', 'js after']);
  });

  it('starts afresh after a page closes its socket, and for another session', async () => {
    const first = await joined(a, users.alice.token, 'fresh');
    await insert('seen');
    await first.frames.find((f) => f[3] === 'postgres_changes');
    first.ws.close(1001);
    await first.closed;
    await insert('gone');
    const again = await joined(a, users.alice.token, 'fresh');
    await insert('next');
    await again.frames.find((f) => f[3] === 'postgres_changes');
    expect(bodies(again)).toEqual(['next']);
    again.ws.close();
  });
});
