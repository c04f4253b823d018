// The realtime tools beside the channels (issue 42). realtime_status: which of an app's tables stream, over REST and
// MCP alike, as a postgres_changes join sees them (a table applied with realtime: true streams at once), and the
// channels the answering api process holds for the app, counted as supabase-js joins and leaves them. realtime_token:
// a browser's short-lived credential for channels that act as the app, used as supabase-js's accessToken, refused in
// Supabase's words when it is another app's, forged, expired or its minting key is revoked, and closing its channels at
// its expiry unless a newer one came. Functions broadcast with ctx.realtime, as their caller or as the app.
import { randomBytes } from 'node:crypto';
import { createClient, type RealtimeChannel, type RealtimePostgresChangesPayload, type SupabaseClient } from '@supabase/supabase-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { waitFor } from '../integration/frontend-helpers.ts';
import { callTool, connectMcp, request, resultJson } from './e2e-helpers.ts';
import { parseMasterKey } from '../../src/core/crypto.ts';
import { deriveKey } from '../../src/frontend/signing.ts';
import { RealtimeTokens } from '../../src/realtime/tokens.ts';

const MASTER_KEY = randomBytes(32).toString('hex');
let server: SpawnedServer;
const app = { id: '', publishableKey: '', serviceKey: '' };
let otherServiceKey: string;
let otherAppId: string;

const column = (type: string, extra: Record<string, unknown> = {}) => ({ type, ...extra });
const SCHEMA = {
  tables: {
    posts: { columns: { id: column('bigint', { primary: true, identity: true }), title: column('text') }, access: 'public', realtime: true },
    notes: { columns: { id: column('bigint', { primary: true, identity: true }), user_id: column('uuid'), body: column('text') }, access: 'user', realtime: true },
    quiet: { columns: { id: column('bigint', { primary: true, identity: true }), title: column('text') }, access: 'public' },
  },
};

beforeAll(async () => {
  server = await spawnServer({ SVC_MASTER_KEY: MASTER_KEY });
  const init = async (name: string) => {
    const made = await request(server.url, '/init', { method: 'POST', key: server.platformKey, body: { name } });
    expect(made.status).toBe(201);
    return made.json;
  };
  const made = await init('Streams');
  Object.assign(app, { id: made.app_id, publishableKey: made.publishable_key, serviceKey: made.service_key.key });
  const other = await init('Another app');
  otherServiceKey = other.service_key.key;
  otherAppId = other.app_id;
  const applied = await request(server.url, `/v1/${app.id}/schema/apply`, { method: 'POST', key: app.serviceKey, body: { schema: SCHEMA } });
  expect(applied.status).toBe(200);
}, 90_000);

const clients: SupabaseClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.removeAllChannels()));
});
afterAll(async () => {
  await server?.close();
});

/**
 * A page's supabase-js client: the publishable key, and `token()` as its accessToken when given, asked for before any
 * channel (realtime-js sends a join without a token when its callback has not answered yet).
 */
async function page(token?: () => Promise<string>): Promise<SupabaseClient> {
  const made = createClient(`${server.url}/v1/${app.id}`, app.publishableKey, { auth: { persistSession: false, autoRefreshToken: false }, ...(token ? { accessToken: token } : {}) });
  clients.push(made);
  if (token) await made.realtime.setAuth();
  return made;
}

/** Subscribes and resolves with the outcome: SUBSCRIBED, or the error realtime-js reports. */
const subscribed = (channel: RealtimeChannel) =>
  new Promise<{ status: string; error?: string }>((resolve) => channel.subscribe((status, error) => status !== 'CLOSED' && resolve({ status, ...(error ? { error: error.message } : {}) })));

const status = (key?: string) => request(server.url, `/v1/${app.id}/realtime/status`, key === undefined ? {} : { key });

describe('realtime_status', () => {
  it('lists every table with its flag and whether it streams, the same over REST and MCP', async () => {
    const expected = {
      tables: [
        { name: 'notes', realtime: true, streams: true },
        { name: 'posts', realtime: true, streams: true },
        { name: 'quiet', realtime: false, streams: false },
      ],
      channels: 0,
    };
    const rest = await status(app.serviceKey);
    expect(rest.status).toBe(200);
    expect(rest.json).toEqual(expected);
    expect((await status(server.platformKey)).json).toEqual(expected);

    const mcp = await connectMcp(server.url, server.platformKey);
    try {
      const result = await callTool(mcp.client, 'realtime_status', { app_id: app.id });
      expect(result.isError).toBeFalsy();
      expect(resultJson(result)).toEqual(expected);
    } finally {
      await mcp.close();
    }
  });

  it('counts the channels supabase-js joins on this process, and their leaving', async () => {
    const client = await page();
    const changes = client.channel('posts').on('postgres_changes', { event: '*', schema: 'public', table: 'posts' }, () => {});
    expect(await subscribed(changes)).toEqual({ status: 'SUBSCRIBED' });
    expect(await subscribed(client.channel('room'))).toEqual({ status: 'SUBSCRIBED' });
    expect((await status(app.serviceKey)).json.channels).toBe(2);
    await client.removeAllChannels();
    await waitFor(async () => ((await status(app.serviceKey)).json.channels === 0 ? true : undefined), 10_000, 'channels left');
  });

  it('shows a table applied with realtime: true as streaming at once', async () => {
    const schema = { tables: { quiet: { ...SCHEMA.tables.quiet, realtime: true } } };
    expect((await request(server.url, `/v1/${app.id}/schema/apply`, { method: 'POST', key: app.serviceKey, body: { schema } })).status).toBe(200);
    expect((await status(app.serviceKey)).json.tables).toContainEqual({ name: 'quiet', realtime: true, streams: true });
  });

  it('answers keys of the app and platform keys only', async () => {
    const anonymous = {
      code: 'AUTH_REQUIRED',
      message: 'This route needs a credential.',
      remediation: 'Send Authorization: Bearer <key or token>.',
      documentation_url: server.docsUrl('realtime'),
    };
    // The publishable key is anonymous: it names the app and nobody in it.
    for (const key of [undefined, app.publishableKey]) {
      const refused = await status(key);
      expect([refused.status, refused.json]).toEqual([401, { error: anonymous }]);
    }
    const other = await status(otherServiceKey);
    expect([other.status, other.json]).toEqual([
      403,
      {
        error: {
          code: 'FORBIDDEN',
          message: 'The credential does not grant access to this app.',
          remediation: 'Use a credential issued for this app, or the platform key of its owner.',
          documentation_url: server.docsUrl('realtime'),
        },
      },
    ]);
  });
});

const mint = (key: string | undefined, appId = app.id) => request(server.url, `/v1/${appId}/realtime/token`, { method: 'POST', ...(key === undefined ? {} : { key }) });
/** A platform key of the account, made for one test (its id, to revoke it or mint with it). */
async function platformKey(role: 'developer' | 'viewer') {
  const made = await request(server.url, '/dashboard/keys', { method: 'POST', key: server.platformKey, body: { name: `realtime ${role}`, role } });
  expect(made.status).toBe(201);
  return made.json as { id: string; key: string };
}
/** The channel's `system` messages and the changes of a binding on every row of a table. */
async function listen(client: SupabaseClient, name: string, table: string) {
  const got: Array<RealtimePostgresChangesPayload<Record<string, unknown>>> = [];
  const system: Array<Record<string, unknown>> = [];
  const channel = client
    .channel(name)
    .on('postgres_changes', { event: '*', schema: 'public', table }, (p) => got.push(p))
    .on('system', {}, (p: Record<string, unknown>) => system.push(p));
  return { got, system, outcome: await subscribed(channel) };
}

describe('realtime_token', () => {
  it("mints a token whose channels act as the app: an end user's private row reaches the page that holds it", async () => {
    const minted = await mint(server.platformKey);
    expect(minted.status).toBe(201);
    expect(minted.json).toEqual({ token: expect.stringMatching(/^svc_rt_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/), expires_in: 300 });
    const asApp = await listen(await page(async () => minted.json.token), 'as-app', 'notes');
    const anonymous = await listen(await page(), 'anonymous', 'notes');
    expect([asApp.outcome, anonymous.outcome]).toEqual([{ status: 'SUBSCRIBED' }, { status: 'SUBSCRIBED' }]);

    const signup = await request(server.url, `/v1/${app.id}/auth/signup`, { method: 'POST', body: { email: 'ada@example.com', password: 'correct horse battery' } });
    expect(signup.status).toBe(201);
    const note = await request(server.url, `/v1/${app.id}/notes`, { method: 'POST', key: signup.json.access_token, body: { body: 'private' } });
    expect(note.status).toBe(201);
    await waitFor(async () => (asApp.got.length ? true : undefined), 10_000, 'the change');
    expect(asApp.got.map((c) => [c.eventType, c.new])).toEqual([['INSERT', { id: expect.any(Number), user_id: signup.json.user.id, body: 'private' }]]);
    // The anonymous page, on the same table, hears nothing of it: a public post after it reaches it, and nothing else.
    const posts = await listen(await page(), 'anonymous-posts', 'posts');
    expect((await request(server.url, `/v1/${app.id}/posts`, { method: 'POST', key: app.serviceKey, body: { title: 'after' } })).status).toBe(201);
    await waitFor(async () => (posts.got.length ? true : undefined), 10_000, 'the post');
    expect(anonymous.got).toEqual([]);
  });

  it("refuses a token of another app, a forged or expired one, and one whose key was revoked, in Supabase's words", async () => {
    const tokens = new RealtimeTokens(deriveKey(parseMasterKey(MASTER_KEY), 'realtime-tokens'), { stillValid: async () => new Set() });
    const developer = await platformKey('developer');
    const other = await mint(developer.key, otherAppId);
    expect(other.status).toBe(201);
    const current = await mint(developer.key);
    const token: string = current.json.token;
    const forged = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
    const expired = tokens.mint(app.id, { kind: 'platform', id: developer.id }, Date.now() - 310_000).token;
    const refusals = async (token: string) => (await listen(await page(async () => token), `refused-${randomBytes(4).toString('hex')}`, 'notes')).outcome;
    expect(await refusals(other.json.token)).toEqual({ status: 'CHANNEL_ERROR', error: "Unauthorized: The token is another app's" });
    expect(await refusals(forged)).toEqual({ status: 'CHANNEL_ERROR', error: 'JwtSignatureError: Failed to validate the token signature' });
    expect(await refusals(expired)).toEqual({ status: 'CHANNEL_ERROR', error: expect.stringMatching(/^InvalidJWTToken: Token has expired 1\d seconds ago$/) });

    expect(await refusals(current.json.token)).toEqual({ status: 'SUBSCRIBED' });
    expect((await request(server.url, `/dashboard/keys/${developer.id}`, { method: 'DELETE', key: server.platformKey })).status).toBe(200);
    expect(await refusals(current.json.token)).toEqual({ status: 'CHANNEL_ERROR', error: 'Unauthorized: The session or key that minted the token has ended' });
  });

  it("closes a channel at its token's expiry with a system error, unless a newer token came", async () => {
    const developer = await platformKey('developer');
    const tokens = new RealtimeTokens(deriveKey(parseMasterKey(MASTER_KEY), 'realtime-tokens'), { stillValid: async () => new Set() });
    // One token with two seconds left, as if minted almost five minutes ago, for two pages; one of them is handed a new one.
    const nearlyDone = tokens.mint(app.id, { kind: 'platform', id: developer.id }, Date.now() - 298_000).token;
    let handed = nearlyDone;
    const renewing = await page(async () => handed);
    const ending = await listen(await page(async () => nearlyDone), 'ending', 'posts');
    const kept = await listen(renewing, 'kept', 'posts');
    expect([ending.outcome, kept.outcome]).toEqual([{ status: 'SUBSCRIBED' }, { status: 'SUBSCRIBED' }]);
    handed = (await mint(developer.key)).json.token;
    // What realtime-js does at each heartbeat: ask accessToken, and push what is new.
    await renewing.realtime.setAuth();

    await waitFor(async () => (ending.system.some((m) => m.status === 'error') ? true : undefined), 10_000, 'the expiry');
    expect(ending.system.filter((m) => m.status === 'error')).toEqual([
      { extension: 'system', status: 'error', message: expect.stringMatching(/^Token has expired \d+ seconds ago$/), channel: 'ending' },
    ]);
    // Past the first token's expiry, the renewed channel still gets changes.
    expect((await request(server.url, `/v1/${app.id}/posts`, { method: 'POST', key: app.serviceKey, body: { title: 'still here' } })).status).toBe(201);
    await waitFor(async () => (kept.got.some((c) => (c.new as { title?: string }).title === 'still here') ? true : undefined), 10_000, 'the post');
    expect(kept.system.filter((m) => m.status === 'error')).toEqual([]);
  });

  it('answers platform keys and sessions of developers and above only', async () => {
    const anonymous = await mint(undefined);
    expect([anonymous.status, anonymous.json.error.code]).toEqual([401, 'AUTH_REQUIRED']);
    const service = await mint(app.serviceKey);
    expect([service.status, service.json.error.code]).toEqual([403, 'FORBIDDEN']);
    const viewer = await mint((await platformKey('viewer')).key);
    expect([viewer.status, viewer.json.error.code]).toEqual([403, 'FORBIDDEN_ROLE']);
  });
});

describe('functions broadcasting', () => {
  /** A function broadcasting what its request names, answering realtime_broadcast's output or the PlatformError. */
  const ANNOUNCE = `
export default async (req: Request, ctx: any) => {
  const { topic, event, payload, private: isPrivate } = await req.json();
  try {
    return Response.json(await ctx.realtime.broadcast(topic, event, payload, { private: isPrivate }));
  } catch (err: any) {
    return Response.json({ name: err.name, code: err.code, status: err.status }, { status: 500 });
  }
};`;

  it("a function's ctx.realtime.broadcast reaches supabase-js channels, public ones and, as the app, private ones", async () => {
    const deployed = await request(server.url, `/v1/${app.id}/functions`, { method: 'POST', key: app.serviceKey, body: { name: 'announce', code: ANNOUNCE } });
    expect(deployed.status).toBe(201);
    const heard = async (client: SupabaseClient, topic: string, config: { private?: boolean } = {}) => {
      const got: unknown[] = [];
      const channel = client.channel(topic, { config }).on('broadcast', { event: 'announce' }, (m) => got.push(m));
      expect(await subscribed(channel)).toEqual({ status: 'SUBSCRIBED' });
      return got;
    };
    const minted = await mint(server.platformKey);
    const news = await heard(await page(), 'news');
    const staff = await heard(await page(async () => minted.json.token), 'staff', { private: true });

    // Invoked anonymously: the function acts as its app, which may reach private channels too.
    const invoke = (body: unknown) => request(server.url, `/v1/${app.id}/fn/announce`, { method: 'POST', body });
    const sent = [
      await invoke({ topic: 'news', event: 'announce', payload: { headline: 'hello' } }),
      await invoke({ topic: 'staff', event: 'announce', payload: { memo: 'private' }, private: true }),
    ];
    expect(sent.map((r) => [r.status, r.json])).toEqual([
      [200, { sent: 1 }],
      [200, { sent: 1 }],
    ]);
    await waitFor(async () => (news.length && staff.length ? true : undefined), 10_000, 'both broadcasts');
    expect(news).toEqual([{ type: 'broadcast', event: 'announce', payload: { headline: 'hello' } }]);
    expect(staff).toEqual([{ type: 'broadcast', event: 'announce', payload: { memo: 'private' } }]);

    // The tool's own checks hold: a message without a payload is refused.
    const refused = await invoke({ topic: 'news', event: 'announce' });
    expect([refused.status, refused.json]).toEqual([500, { name: 'PlatformError', code: 'VALIDATION_FAILED', status: 400 }]);
  });
});
