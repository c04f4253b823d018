// Realtime channels (issue 42, stage 1) driven by supabase-js unchanged: client.channel(name) over the app's websocket,
// broadcast (ack, self, both serializer versions, bytes), presence between clients, private channels and their tokens,
// HTTP broadcasts (realtime-js's httpSend and api/broadcast, the MCP tool), two api processes on one control
// database; then a raw socket's hostile input and the upgrade's refusals. Every wait is for an event.
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type RealtimeChannel } from '@supabase/supabase-js';
import { decodeJwt, importPKCS8, SignJWT } from 'jose';
import pg from 'pg';
import { freePort, spawnServer, type SpawnedServer } from '../helpers/server.ts';
import WebSocket from 'ws';
import { Inbox, RawSocket } from '../helpers/phoenix-socket.ts';
import { databaseUrl } from '../helpers/db.ts';
import { callTool, connectMcp, request, resultJson } from './e2e-helpers.ts';
import { parseMasterKey, SecretBox } from '../../src/core/crypto.ts';

const MASTER_KEY = randomBytes(32).toString('hex');
let a: SpawnedServer;
let b: SpawnedServer;
const app = { id: '', publishableKey: '', serviceKey: '' };
const other = { id: '', publishableKey: '', serviceKey: '' };
/** An end user of the app, signed up once: their token and its claims (minted tokens copy them). */
const ada = { token: '', refreshToken: '', email: 'ada@example.com', password: 'correct horse battery' };

beforeAll(async () => {
  // One platform in two processes: the same master key and base URL (the issuer of end users' tokens) for both.
  const port = await freePort();
  const shared = { SVC_MASTER_KEY: MASTER_KEY, SVC_BASE_URL: `http://127.0.0.1:${port}`, SVC_AUTH_RATE_LIMIT_PER_MINUTE: '100' };
  a = await spawnServer({ ...shared, PORT: String(port) });
  b = await spawnServer({ ...shared, SVC_ROLE: 'api', SVC_PLATFORM_API_KEY: a.platformKey, SVC_APP_DB_PREFIX: a.appDbPrefix }, { controlDb: a.controlDb });
  const init = async (name: string) => {
    const made = await request(a.url, '/init', { method: 'POST', key: a.platformKey, body: { name } });
    expect(made.status).toBe(201);
    return { id: made.json.app_id, publishableKey: made.json.publishable_key, serviceKey: made.json.service_key.key };
  };
  Object.assign(app, await init('Realtime'));
  Object.assign(other, await init('Another app'));
  const signup = await request(a.url, `/v1/${app.id}/auth/signup`, { method: 'POST', body: { email: ada.email, password: ada.password } });
  expect(signup.status).toBe(201);
  ada.token = signup.json.access_token;
  ada.refreshToken = signup.json.refresh_token;
}, 90_000);

const clients: Array<{ removeAllChannels(): Promise<unknown> }> = [];
const sockets: RawSocket[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.removeAllChannels()));
  for (const s of sockets.splice(0)) s.ws.terminate();
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

/** A supabase-js client of the app on `server`, as a page makes one. */
function client(server: SpawnedServer, key: string, options: Parameters<typeof createClient>[2] = {}) {
  const made = createClient(`${server.url}/v1/${app.id}`, key, { auth: { persistSession: false, autoRefreshToken: false }, ...options });
  clients.push(made);
  return made;
}

/**
 * A client whose realtime token is `holder.token` (supabase-js's accessToken option: what it sends on joins and
 * heartbeats), asked once before any channel, as a page that awaits its session does: otherwise realtime-js sends its
 * first join before its callback has answered, and that join acts for the publishable key.
 */
async function tokenClient(holder: { token: string }, server = a) {
  const made = client(server, app.publishableKey, { accessToken: async () => holder.token });
  await made.realtime.setAuth();
  return made;
}

type Broadcast = { type: 'broadcast'; event: string; payload: unknown };

/** The broadcasts of `event` a channel receives (bound before it subscribes). */
function broadcasts(channel: RealtimeChannel, event = '*'): Inbox<Broadcast> {
  const inbox = new Inbox<Broadcast>();
  channel.on('broadcast', { event }, (m) => inbox.push(m as Broadcast));
  return inbox;
}

type Status = { status: string; reason?: string };

/** Subscribes: every status the channel goes through (CHANNEL_ERROR with the server's reason as the error's message). */
function statuses(channel: RealtimeChannel): Inbox<Status> {
  const inbox = new Inbox<Status>();
  channel.subscribe((status, err) => inbox.push(err ? { status, reason: err.message } : { status }));
  return inbox;
}

/** The subscription's first outcome: SUBSCRIBED, or CHANNEL_ERROR and why. */
const subscribe = (channel: RealtimeChannel): Promise<Status> => statuses(channel).find();

/** The system messages a channel gets (bound before it subscribes). */
function systemMessages(channel: RealtimeChannel): Inbox<Record<string, unknown>> {
  const inbox = new Inbox<Record<string, unknown>>();
  channel.on('system', {}, (m) => inbox.push(m as Record<string, unknown>));
  return inbox;
}

/** A token of Ada's signed with the app's key, expiring at `exp` (seconds): what the platform would issue, sooner. */
async function adaTokenExpiring(exp: number): Promise<string> {
  const db = new pg.Client({ connectionString: databaseUrl(a.controlDb) });
  await db.connect();
  try {
    const { rows } = await db.query('select kid, private_key_sealed from app_signing_keys where app_id = $1 order by created_at desc limit 1', [app.id]);
    const key = await importPKCS8(new SecretBox(parseMasterKey(MASTER_KEY)).open(rows[0].private_key_sealed), 'ES256');
    return await new SignJWT({ ...decodeJwt(ada.token), exp }).setProtectedHeader({ alg: 'ES256', kid: rows[0].kid, typ: 'JWT' }).sign(key);
  } finally {
    await db.end();
  }
}

const now = () => Math.floor(Date.now() / 1000);

describe('broadcast', () => {
  it.each([['2.0.0'], ['1.0.0']] as const)('vsn %s: ack answers the sender, self delivers its own, the other client receives', async (vsn) => {
    const options = { realtime: { vsn } };
    const sender = client(a, app.publishableKey, options).channel(`room-${vsn}`, { config: { broadcast: { ack: true, self: true } } });
    const receiver = client(a, app.publishableKey, options).channel(`room-${vsn}`);
    const own = broadcasts(sender, 'cursor');
    const got = broadcasts(receiver, 'cursor');
    expect(await subscribe(sender)).toEqual({ status: 'SUBSCRIBED' });
    expect(await subscribe(receiver)).toEqual({ status: 'SUBSCRIBED' });
    expect(await sender.send({ type: 'broadcast', event: 'cursor', payload: { x: 1, name: 'é' } })).toBe('ok');
    const expected = { type: 'broadcast', event: 'cursor', payload: { x: 1, name: 'é' } };
    expect(await own.find()).toEqual(expected);
    expect(await got.find()).toEqual(expected);
    // Without self the sender hears nothing of its own: the receiver's next message comes from the other side only.
    const quiet = broadcasts(receiver, 'back');
    await receiver.send({ type: 'broadcast', event: 'back', payload: { n: 2 } });
    const echo = broadcasts(sender, 'back');
    expect(await echo.find()).toEqual({ type: 'broadcast', event: 'back', payload: { n: 2 } });
    expect(quiet.items).toEqual([]);
  });

  it('crosses serializer versions, and carries bytes as binary frames to 2.0.0 sockets only', async () => {
    const v2 = client(a, app.publishableKey).channel('mixed', { config: { broadcast: { ack: true } } });
    const v2b = client(a, app.publishableKey).channel('mixed');
    const v1 = client(a, app.publishableKey, { realtime: { vsn: '1.0.0' } }).channel('mixed');
    const [at2, at1] = [broadcasts(v2b), broadcasts(v1)];
    for (const c of [v2, v2b, v1]) expect(await subscribe(c)).toEqual({ status: 'SUBSCRIBED' });
    const bytes = new Uint8Array([0, 1, 2, 253, 254, 255]).buffer;
    expect(await v2.send({ type: 'broadcast', event: 'blob', payload: bytes })).toBe('ok');
    expect(await v2.send({ type: 'broadcast', event: 'json', payload: { after: true } })).toBe('ok');
    const blob = await at2.find((m) => m.event === 'blob');
    expect(blob.payload).toBeInstanceOf(ArrayBuffer);
    expect([...new Uint8Array(blob.payload as ArrayBuffer)]).toEqual([0, 1, 2, 253, 254, 255]);
    // The 1.0.0 socket gets the JSON message, and had no bytes before it (messages keep their order).
    expect(await at1.find()).toEqual({ type: 'broadcast', event: 'json', payload: { after: true } });
    expect(at1.items).toHaveLength(1);
  });
});

describe('presence', () => {
  it('syncs, joins and leaves between two clients, under their presence keys', async () => {
    const alice = client(a, app.publishableKey).channel('lobby', { config: { presence: { key: 'alice' } } });
    const bob = client(a, app.publishableKey).channel('lobby', { config: { presence: { key: 'bob' } } });
    const aliceSyncs = new Inbox<Record<string, unknown[]>>();
    const aliceJoins = new Inbox<{ key: string; newPresences: unknown[] }>();
    const aliceLeaves = new Inbox<{ key: string; leftPresences: unknown[] }>();
    alice.on('presence', { event: 'sync' }, () => aliceSyncs.push(alice.presenceState()));
    alice.on('presence', { event: 'join' }, (p) => aliceJoins.push(p as never));
    alice.on('presence', { event: 'leave' }, (p) => aliceLeaves.push(p as never));
    const bobSyncs = new Inbox<Record<string, unknown[]>>();
    bob.on('presence', { event: 'sync' }, () => bobSyncs.push(bob.presenceState()));

    expect(await subscribe(alice)).toEqual({ status: 'SUBSCRIBED' });
    expect(await alice.track({ online_at: 1 })).toBe('ok');
    await aliceSyncs.find((s) => 'alice' in s);
    expect(await subscribe(bob)).toEqual({ status: 'SUBSCRIBED' });
    // Bob's first state has Alice, as presence_state gave it on his join.
    expect((await bobSyncs.find((s) => 'alice' in s)).alice).toEqual([{ online_at: 1, presence_ref: expect.any(String) }]);
    expect(await bob.track({ online_at: 2 })).toBe('ok');
    expect(await aliceJoins.find((j) => j.key === 'bob')).toMatchObject({ key: 'bob', newPresences: [{ online_at: 2, presence_ref: expect.any(String) }] });
    expect(await bob.untrack()).toBe('ok');
    expect(await aliceLeaves.find((l) => l.key === 'bob')).toMatchObject({ key: 'bob', leftPresences: [{ online_at: 2 }] });
    // A second track replaces the first (one presence per channel); leaving the channel takes it away.
    expect(await bob.track({ online_at: 3 })).toBe('ok');
    await aliceSyncs.find((s) => (s.bob as Array<{ online_at: number }> | undefined)?.[0]?.online_at === 3);
    expect(await bob.track({ online_at: 4 })).toBe('ok');
    const replaced = await aliceSyncs.find((s) => (s.bob as Array<{ online_at: number }> | undefined)?.[0]?.online_at === 4);
    expect(replaced.bob).toHaveLength(1);
    await bob.unsubscribe();
    await aliceSyncs.find((s) => !('bob' in s) && aliceSyncs.items.indexOf(s) > aliceSyncs.items.indexOf(replaced));
    expect(alice.presenceState()).toEqual({ alice: [{ online_at: 1, presence_ref: expect.any(String) }] });
  });
});

describe('private channels and tokens', () => {
  it('refuses an anonymous client and admits a signed-in end user and the app', async () => {
    const anon = client(a, app.publishableKey).channel('secret', { config: { private: true } });
    expect(await subscribe(anon)).toEqual({ status: 'CHANNEL_ERROR', reason: 'Unauthorized: You do not have permissions to read from this Channel topic: secret' });

    // Signed in the usual way: supabase-js hands the session's token to realtime.
    const signedIn = client(a, app.publishableKey);
    expect((await signedIn.auth.signInWithPassword({ email: ada.email, password: ada.password })).error).toBeNull();
    const user = signedIn.channel('secret', { config: { private: true } });
    const service = client(a, app.serviceKey).channel('secret', { config: { private: true, broadcast: { ack: true } } });
    const publicTwin = client(a, app.serviceKey).channel('secret', { config: { broadcast: { self: true } } });
    const [toUser, toPublic] = [broadcasts(user), broadcasts(publicTwin)];
    for (const c of [user, service, publicTwin]) expect(await subscribe(c)).toEqual({ status: 'SUBSCRIBED' });
    expect(await service.send({ type: 'broadcast', event: 'note', payload: { for: 'members' } })).toBe('ok');
    expect(await toUser.find()).toEqual({ type: 'broadcast', event: 'note', payload: { for: 'members' } });
    // The public channel of the same name is another channel: its first message is its own.
    await publicTwin.send({ type: 'broadcast', event: 'public', payload: {} });
    await toPublic.find();
    expect(toPublic.items).toEqual([{ type: 'broadcast', event: 'public', payload: {} }]);
  });

  it("refuses a token of another app, a malformed or forged one, and an expired one, with Supabase's codes", async () => {
    const otherUser = await request(a.url, `/v1/${other.id}/auth/signup`, { method: 'POST', body: { email: 'eve@example.com', password: 'correct horse battery' } });
    const [header, body] = ada.token.split('.');
    const cases: Array<[string, string | RegExp]> = [
      [otherUser.json.access_token, "Unauthorized: The token is another app's"],
      ['not-a-jwt', 'MalformedJWT: The token provided is not a valid JWT'],
      [`${header}.${body}.${'A'.repeat(86)}`, 'JwtSignatureError: Failed to validate JWT signature'],
      [other.publishableKey, "Unauthorized: The key is another app's"],
      [await adaTokenExpiring(now() - 10), /^InvalidJWTToken: Token has expired 1[0-9] seconds ago$/],
    ];
    for (const [token, reason] of cases) {
      const channel = (await tokenClient({ token })).channel('secret', { config: { private: true } });
      const outcome = await subscribe(channel);
      expect(outcome.status, String(reason)).toBe('CHANNEL_ERROR');
      expect(outcome.reason).toMatch(reason);
    }
  });

  it('a new token from setAuth keeps the channel past the old one; without it, the channel closes at expiry', async () => {
    const expiring = await adaTokenExpiring(now() + 4);
    const stale = { token: expiring };
    const fresh = { token: expiring };
    const staleChannel = (await tokenClient(stale)).channel('watch', { config: { private: true } });
    const refreshedClient = await tokenClient(fresh);
    const refreshed = refreshedClient.channel('watch', { config: { private: true } });
    const system = systemMessages(staleChannel);
    const kept = broadcasts(refreshed);
    const staleStatuses = statuses(staleChannel);
    expect(await staleStatuses.find()).toEqual({ status: 'SUBSCRIBED' });
    expect(await subscribe(refreshed)).toEqual({ status: 'SUBSCRIBED' });
    fresh.token = ada.token;
    await refreshedClient.realtime.setAuth(ada.token);

    await staleStatuses.find((s) => s.status === 'CLOSED');
    expect(await system.find()).toEqual({ extension: 'system', status: 'error', message: expect.stringMatching(/^Token has expired \d seconds ago$/), channel: 'watch' });
    const service = client(a, app.serviceKey).channel('watch', { config: { private: true, broadcast: { ack: true } } });
    expect(await subscribe(service)).toEqual({ status: 'SUBSCRIBED' });
    expect(await service.send({ type: 'broadcast', event: 'still', payload: { here: true } })).toBe('ok');
    expect(await kept.find()).toEqual({ type: 'broadcast', event: 'still', payload: { here: true } });
  });

  it('an invalid token pushed with setAuth closes the channel with a system error', async () => {
    const holder = { token: ada.token };
    const c = await tokenClient(holder);
    const channel = c.channel('watch', { config: { private: true } });
    const system = systemMessages(channel);
    const channelStatuses = statuses(channel);
    expect(await channelStatuses.find()).toEqual({ status: 'SUBSCRIBED' });
    holder.token = 'a.b.c';
    await c.realtime.setAuth('a.b.c');
    await channelStatuses.find((s) => s.status === 'CLOSED');
    expect(await system.find()).toEqual({ extension: 'system', status: 'error', message: 'Failed to validate JWT signature', channel: 'watch' });
  });
});

describe('HTTP broadcast', () => {
  it("realtime-js's httpSend (JSON and bytes) reaches subscribers; api/broadcast takes batches and keeps private channels for members", async () => {
    const listener = client(a, app.publishableKey).channel('news');
    const privateListener = client(a, app.serviceKey).channel('news', { config: { private: true } });
    const [got, gotPrivate] = [broadcasts(listener), broadcasts(privateListener)];
    expect(await subscribe(listener)).toEqual({ status: 'SUBSCRIBED' });
    expect(await subscribe(privateListener)).toEqual({ status: 'SUBSCRIBED' });

    const sender = client(a, app.publishableKey).channel('news');
    expect(await sender.httpSend('headline', { title: 'Hello' })).toEqual({ success: true });
    expect(await got.find((m) => m.event === 'headline')).toEqual({ type: 'broadcast', event: 'headline', payload: { title: 'Hello' } });
    expect(await sender.httpSend('bytes', new Uint8Array([7, 8, 9]).buffer)).toEqual({ success: true });
    const bytes = await got.find((m) => m.event === 'bytes');
    expect([...new Uint8Array(bytes.payload as ArrayBuffer)]).toEqual([7, 8, 9]);

    const batch = { messages: [{ topic: 'news', event: 'one', payload: { n: 1 } }, { topic: 'news', event: 'two', payload: [2] }] };
    const sent = await request(a.url, `/v1/${app.id}/realtime/v1/api/broadcast?apikey=${app.publishableKey}&vsn=2.0.0`, { method: 'POST', headers: { apikey: app.publishableKey }, body: batch });
    expect(sent.status).toBe(202);
    expect(sent.text).toBe('');
    expect((await got.find((m) => m.event === 'two')).payload).toEqual([2]);

    const privateMessage = { messages: [{ topic: 'news', event: 'members', payload: { n: 3 }, private: true }] };
    const anonymous = await request(a.url, `/v1/${app.id}/realtime/v1/api/broadcast`, { method: 'POST', headers: { apikey: app.publishableKey }, body: privateMessage });
    expect(anonymous.status).toBe(401);
    expect(anonymous.json).toEqual({
      code: 'AUTH_REQUIRED',
      message:
        "Private channels take a signed-in end user or the app itself; this request is anonymous. Send the end user's access token as Authorization: Bearer (supabase-js does once signed in), or the app's secret key from a server.",
    });
    expect((await request(a.url, `/v1/${app.id}/realtime/v1/api/broadcast`, { method: 'POST', key: ada.token, body: privateMessage })).status).toBe(202);
    expect(await gotPrivate.find()).toEqual({ type: 'broadcast', event: 'members', payload: { n: 3 } });
    expect(got.items.map((m) => m.event)).toEqual(['headline', 'bytes', 'one', 'two']);

    const wrong = await request(a.url, `/v1/${app.id}/realtime/v1/api/broadcast`, { method: 'POST', key: app.serviceKey, body: { messages: [{ topic: '', event: 'e', payload: 1 }] } });
    expect(wrong.status).toBe(400);
    expect(wrong.json).toEqual({ code: 'VALIDATION_FAILED', message: "Invalid 'messages.0.topic': topic must not be empty. Fix the named field and send the request again." });
    const persist = await request(a.url, `/v1/${app.id}/realtime/v1/api/broadcast/news/events/e?persist=true`, { method: 'POST', key: app.serviceKey, body: {} });
    expect(persist.status).toBe(400);
    expect(persist.json.code).toBe('VALIDATION_FAILED');
  });

  it('an agent broadcasts with the realtime_broadcast tool', async () => {
    const listener = client(a, app.publishableKey).channel('agents');
    const got = broadcasts(listener);
    expect(await subscribe(listener)).toEqual({ status: 'SUBSCRIBED' });
    const mcp = await connectMcp(a.url, a.platformKey);
    try {
      const result = await callTool(mcp.client, 'realtime_broadcast', { app_id: app.id, messages: [{ topic: 'agents', event: 'done', payload: { task: 42 } }] });
      expect(resultJson(result)).toEqual({ sent: 1 });
    } finally {
      await mcp.close();
    }
    expect(await got.find()).toEqual({ type: 'broadcast', event: 'done', payload: { task: 42 } });
  });
});

describe('two api processes', () => {
  it('a broadcast sent through one reaches the clients of the other, large ones and HTTP ones too', async () => {
    const onB = client(b, app.publishableKey).channel('across');
    const got = broadcasts(onB);
    expect(await subscribe(onB)).toEqual({ status: 'SUBSCRIBED' });
    const onA = client(a, app.publishableKey).channel('across', { config: { broadcast: { ack: true } } });
    expect(await subscribe(onA)).toEqual({ status: 'SUBSCRIBED' });
    expect(await onA.send({ type: 'broadcast', event: 'hello', payload: { from: 'a' } })).toBe('ok');
    expect(await got.find()).toEqual({ type: 'broadcast', event: 'hello', payload: { from: 'a' } });
    // Beyond a NOTIFY's size: through realtime_messages.
    const large = { text: 'x'.repeat(20_000) };
    expect(await onA.send({ type: 'broadcast', event: 'large', payload: large })).toBe('ok');
    expect((await got.find((m) => m.event === 'large')).payload).toEqual(large);
    expect(await onA.send({ type: 'broadcast', event: 'bytes', payload: new Uint8Array(10_000).fill(7).buffer })).toBe('ok');
    const bytes = await got.find((m) => m.event === 'bytes');
    expect(new Uint8Array(bytes.payload as ArrayBuffer).every((x) => x === 7) && (bytes.payload as ArrayBuffer).byteLength).toBe(10_000);
    const http = await request(a.url, `/v1/${app.id}/realtime/v1/api/broadcast`, { method: 'POST', key: app.serviceKey, body: { messages: [{ topic: 'across', event: 'http', payload: 1 }] } });
    expect(http.status).toBe(202);
    expect((await got.find((m) => m.event === 'http')).payload).toBe(1);
    expect(got.items.map((m) => m.event)).toEqual(['hello', 'large', 'bytes', 'http']);
  });

  it("a client of one process sees the presences of the other's clients, and their leaving", async () => {
    const alice = client(a, app.publishableKey).channel('hall', { config: { presence: { key: 'alice' } } });
    expect(await subscribe(alice)).toEqual({ status: 'SUBSCRIBED' });
    expect(await alice.track({ at: 'a' })).toBe('ok');
    const bob = client(b, app.publishableKey).channel('hall', { config: { presence: { key: 'bob' } } });
    const bobSyncs = new Inbox<Record<string, unknown[]>>();
    bob.on('presence', { event: 'sync' }, () => bobSyncs.push(bob.presenceState()));
    expect(await subscribe(bob)).toEqual({ status: 'SUBSCRIBED' });
    expect((await bobSyncs.find((s) => 'alice' in s)).alice).toEqual([{ at: 'a', presence_ref: expect.any(String) }]);
    expect(await alice.untrack()).toBe('ok');
    await bobSyncs.find((s) => !('alice' in s));
  });
});

/** A websocket to the realtime endpoint spoken by hand (serializer 2.0.0). */
/** A raw socket of the app on `server` (closed after each test). */
async function openRaw(query = `apikey=${app.publishableKey}&vsn=2.0.0`, server = a): Promise<RawSocket> {
  const socket = await RawSocket.open(`ws://127.0.0.1:${server.port}/v1/${app.id}/realtime/v1/websocket?${query}`);
  sockets.push(socket);
  return socket;
}

const refusal = (reason: string) => ({ status: 'error', response: { reason } });

describe('hostile input on a raw socket', () => {
  it('answers what it cannot serve exactly, ignores what it cannot read, and keeps answering heartbeats', async () => {
    const s = await openRaw();
    s.send('not json');
    s.send(Buffer.from([1, 2, 3]));
    s.send(JSON.stringify({ topic: 'phoenix' }));
    expect(await s.ask(null, 'h1', 'phoenix', 'heartbeat', {})).toEqual({ status: 'ok', response: {} });
    s.send([null, 'm1', 'realtime:a', 'broadcast', 'text']);
    expect((await s.reply('m1'))[4]).toEqual(refusal('MalformedMessage: join_ref and ref are strings or null, topic and event strings, payload an object'));
    expect(await s.ask('j', 'j1', 'realtime:', 'phx_join', {})).toEqual(refusal('TopicNameRequired: You must provide a topic name'));
    expect(await s.ask('j', 'j2', `realtime:${'t'.repeat(250)}`, 'phx_join', {})).toEqual(refusal("TopicNameTooLong: A topic is at most 255 bytes, 'realtime:' included"));
    expect(await s.ask('j', 'j3', 'room:lobby', 'phx_join', {})).toEqual(refusal('unmatched topic'));
    expect(await s.ask(null, 'x1', 'realtime:nowhere', 'broadcast', { event: 'e' })).toEqual(refusal('unmatched topic'));
    expect(await s.ask('j', 'j4', 'realtime:db', 'phx_join', { config: { postgres_changes: [{ event: '*', schema: 'public', table: 'notes' }] } })).toEqual(
      refusal("InvalidPostgresChanges: table 'notes' does not exist"),
    );
    expect(await s.ask('j', 'j6', 'realtime:db', 'phx_join', { config: { postgres_changes: 'all' } })).toEqual(
      refusal('InvalidPostgresChanges: postgres_changes must be a list of bindings'),
    );
    expect(await s.ask('j', 'j7', 'realtime:db', 'phx_join', { config: { postgres_changes: [{ event: 'TRUNCATE', schema: 'public' }] } })).toEqual(
      refusal('InvalidPostgresChanges: event must be one of *, INSERT, UPDATE, DELETE'),
    );
    expect(await s.ask('j5', 'j5', 'realtime:ok', 'phx_join', { config: { broadcast: { ack: 'true' } } })).toEqual({ status: 'ok', response: { postgres_changes: [] } });
    expect(await s.ask('j5', 'u1', 'realtime:ok', 'shout', {})).toEqual(refusal("UnknownEvent: a channel takes broadcast, presence, access_token and phx_leave, not 'shout'"));
    expect(await s.ask('j5', 'b1', 'realtime:ok', 'broadcast', { type: 'broadcast', event: 42 })).toEqual(
      refusal("InvalidBroadcast: a broadcast is { type: 'broadcast', event: <string of at most 255 bytes>, payload }"),
    );
    expect(await s.ask('j5', 'p1', 'realtime:ok', 'presence', { type: 'presence', event: 'track', payload: 'me' })).toEqual(refusal('Presence track payload must be a map'));
    expect(await s.ask('j5', 'b2', 'realtime:ok', 'broadcast', { type: 'broadcast', event: 'fine', payload: {} })).toEqual({ status: 'ok', response: {} });
    expect(await s.ask('j5', 'l1', 'realtime:ok', 'phx_leave', {})).toEqual({ status: 'ok', response: {} });
    expect(await s.frames.find((f) => f[3] === 'phx_close')).toEqual(['j5', 'j5', 'realtime:ok', 'phx_close', {}]);
    expect(await s.ask(null, 'h2', 'phoenix', 'heartbeat', {})).toEqual({ status: 'ok', response: {} });
  });

  it(`refuses the channel beyond the socket's limit`, async () => {
    const s = await openRaw();
    for (let i = 0; i < 100; i++) s.send([`c${i}`, `c${i}`, `realtime:c${i}`, 'phx_join', {}]);
    expect((await s.reply('c99'))[4]).toEqual({ status: 'ok', response: { postgres_changes: [] } });
    expect(await s.ask('c100', 'c100', 'realtime:c100', 'phx_join', {})).toEqual(refusal('ChannelRateLimitReached: Too many channels'));
    // Joining a topic again replaces its channel (the first is closed) rather than counting twice.
    expect(await s.ask('again', 'again', 'realtime:c0', 'phx_join', {})).toEqual({ status: 'ok', response: { postgres_changes: [] } });
    expect(await s.frames.find((f) => f[3] === 'phx_close')).toEqual(['c0', 'c0', 'realtime:c0', 'phx_close', {}]);
  });

  it('closes a flooding socket (1008) and one sending more than 1 MB (1009); the process keeps serving', async () => {
    const flood = await openRaw();
    for (let i = 0; i < 1000; i++) flood.send([null, `f${i}`, 'phoenix', 'heartbeat', {}]);
    expect(await flood.closed).toEqual({ code: 1008, reason: 'too many messages: at most 100 a second' });
    const big = await openRaw();
    big.send('x'.repeat(1024 * 1024 + 1));
    expect((await big.closed).code).toBe(1009);
    const after = await openRaw();
    expect(await after.ask(null, 'h', 'phoenix', 'heartbeat', {})).toEqual({ status: 'ok', response: {} });
  });

  it('refuses an upgrade without a key of the app (401, 403), with an unknown vsn (400), for an unknown app (404)', async () => {
    const refused = (query: string) => openRaw(query).then(() => ({ status: 0, code: '' }), (e: { status: number; body: { error: { code: string } } }) => ({ status: e.status, code: e.body.error.code }));
    expect(await refused('vsn=2.0.0')).toEqual({ status: 401, code: 'AUTH_REQUIRED' });
    expect(await refused(`apikey=svc_pub_unknown&vsn=2.0.0`)).toEqual({ status: 401, code: 'AUTH_INVALID_TOKEN' });
    expect(await refused(`apikey=${a.platformKey}&vsn=2.0.0`)).toEqual({ status: 401, code: 'AUTH_INVALID_TOKEN' });
    expect(await refused(`apikey=${other.publishableKey}&vsn=2.0.0`)).toEqual({ status: 403, code: 'FORBIDDEN' });
    expect(await refused(`apikey=${app.publishableKey}&vsn=3.0.0`)).toEqual({ status: 400, code: 'VALIDATION_FAILED' });
    const unknownApp = new WebSocket(`ws://127.0.0.1:${a.port}/v1/aaaaaaaaaaaaaaaa/realtime/v1/websocket?apikey=${app.publishableKey}&vsn=2.0.0`);
    expect(await new Promise((resolve) => unknownApp.once('unexpected-response', (_req, res) => resolve(res.statusCode)))).toBe(404);
    // A secret key opens the socket too.
    const s = await openRaw(`apikey=${app.serviceKey}&vsn=1.0.0`);
    s.send({ topic: 'phoenix', event: 'heartbeat', payload: {}, ref: '1' });
    expect(await s.frames.find()).toEqual({ join_ref: null, ref: '1', topic: 'phoenix', event: 'phx_reply', payload: { status: 'ok', response: {} } });
  });
});
