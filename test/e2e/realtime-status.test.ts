// realtime_status (issue 42): which of an app's tables stream, over REST and MCP alike, as a postgres_changes join sees
// them (a table applied with realtime: true streams at once, without a restart), and the channels the answering api
// process holds for the app, counted as supabase-js joins and leaves them.
import { createClient } from '@supabase/supabase-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { waitFor } from '../integration/frontend-helpers.ts';
import { callTool, connectMcp, request, resultJson } from './e2e-helpers.ts';

let server: SpawnedServer;
const app = { id: '', publishableKey: '', serviceKey: '' };
let otherServiceKey: string;

const column = (type: string, extra: Record<string, unknown> = {}) => ({ type, ...extra });
const SCHEMA = {
  tables: {
    posts: { columns: { id: column('bigint', { primary: true, identity: true }), title: column('text') }, access: 'public', realtime: true },
    notes: { columns: { id: column('bigint', { primary: true, identity: true }), user_id: column('uuid'), body: column('text') }, access: 'user', realtime: true },
    quiet: { columns: { id: column('bigint', { primary: true, identity: true }), title: column('text') }, access: 'public' },
  },
};

beforeAll(async () => {
  server = await spawnServer();
  const init = async (name: string) => {
    const made = await request(server.url, '/init', { method: 'POST', key: server.platformKey, body: { name } });
    expect(made.status).toBe(201);
    return made.json;
  };
  const made = await init('Streams');
  Object.assign(app, { id: made.app_id, publishableKey: made.publishable_key, serviceKey: made.service_key.key });
  otherServiceKey = (await init('Another app')).service_key.key;
  const applied = await request(server.url, `/v1/${app.id}/schema/apply`, { method: 'POST', key: app.serviceKey, body: { schema: SCHEMA } });
  expect(applied.status).toBe(200);
}, 90_000);

afterAll(async () => {
  await server?.close();
});

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
    const client = createClient(`${server.url}/v1/${app.id}`, app.publishableKey, { auth: { persistSession: false, autoRefreshToken: false } });
    const joined = (channel: ReturnType<typeof client.channel>) =>
      new Promise<string>((resolve) => channel.subscribe((s) => s !== 'CLOSED' && resolve(s)));
    try {
      const changes = client.channel('posts').on('postgres_changes', { event: '*', schema: 'public', table: 'posts' }, () => {});
      expect(await joined(changes)).toBe('SUBSCRIBED');
      expect(await joined(client.channel('room'))).toBe('SUBSCRIBED');
      expect((await status(app.serviceKey)).json.channels).toBe(2);
    } finally {
      await client.removeAllChannels();
    }
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
