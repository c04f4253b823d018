// Meeting bots end to end, as the "done when" walks it: the server started as `npm start` would, an agent on
// the official MCP client configures the app's webhook and spawns a bot; the fake Recall drives the bot to done with
// Svix-signed webhooks; the app's receiver gets the signed events through bot.done and the usage rows are written.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { FakeRecall } from '../fakes/recall.ts';
import { signatureValid, startReceiver, type Receiver } from '../helpers/meetings.ts';
import { waitFor } from '../integration/frontend-helpers.ts';
import { request, resultJson, UUID } from './e2e-helpers.ts';

let server: SpawnedServer;
let fake: FakeRecall;
let receiver: Receiver;
let client: Client;

async function call(name: string, args: Record<string, unknown>): Promise<any> {
  const res = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (res.isError) throw new Error(`${name} failed: ${JSON.stringify(res.content)}`);
  return resultJson(res);
}

beforeAll(async () => {
  fake = await FakeRecall.start();
  receiver = await startReceiver();
  server = await spawnServer({ ...fake.env(), SVC_OUTBOUND_ALLOW_PRIVATE: 'true' });
  fake.webhookUrl = `${server.url}/webhooks/meetings/recall`;
  client = new Client({ name: 'meetings-agent', version: '0.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp?toolsets=default,meetings', server.url), { requestInit: { headers: { Authorization: `Bearer ${server.platformKey}` } } }),
  );
});
afterAll(async () => {
  await client?.close().catch(() => {});
  await server?.close();
  await fake?.close();
  await receiver?.close();
});

describe('meeting bots over MCP', () => {
  it('an agent spawns a bot; the app webhook receives signed events through done; usage rows are written', async () => {
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(['meetings_spawn', 'meetings_get', 'meetings_webhook_set', 'meetings_usage', 'meetings_status']));
    expect(await call('meetings_status', {})).toEqual({ available: true });

    const app = await call('apps_create', { name: 'Standups' });
    const hook = await call('meetings_webhook_set', { app_id: app.app_id, forward_url: receiver.url });
    expect(hook).toEqual({ ok: true, app_id: app.app_id, forward_url: receiver.url, secret: expect.stringMatching(/^wsec_/) });
    expect(await call('meetings_estimate', { app_id: app.app_id, durationMinutes: 30 })).toEqual({ usd: 0.325 });

    const bot = await call('meetings_spawn', { app_id: app.app_id, meetingUrl: 'https://meet.google.com/xyz-abcd-efg', botName: 'Standup notes', metadata: { team: 'core' } });
    expect(bot).toMatchObject({ id: expect.stringMatching(UUID), status: 'joining', startedAt: null, recordingUrl: null, transcriptUrl: null, botName: 'Standup notes' });

    const providerId = fake.providerId(bot.id);
    for (const step of await fake.runToDone(providerId, 1800)) expect(step.status).toBe(200);

    const done = await waitFor(async () => receiver.received.find((r) => r.event === 'bot.done'), 20_000);
    expect(done.body).toEqual({ event: 'bot.done', data: { bot: { id: bot.id, metadata: { team: 'core' } }, data: { code: 'done', sub_code: null, updated_at: expect.any(String) } } });
    await waitFor(async () => (receiver.received.length >= 4 ? true : undefined));
    expect(receiver.received.map((r) => r.event).sort()).toEqual(['bot.done', 'bot.in_call_recording', 'recording.done', 'transcript.done']);
    for (const r of receiver.received) expect(signatureValid(hook.secret, r.raw, r.signature), r.event).toBe(true);

    const read = await call('meetings_get', { app_id: app.app_id, bot_id: bot.id });
    expect(read).toMatchObject({ status: 'done', durationSeconds: 1800, recordingUrl: expect.stringContaining('/media/'), transcriptUrl: expect.stringContaining('/media/') });
    const usage = await call('meetings_usage', { app_id: app.app_id });
    expect(usage.rows.map((r: { dimension: string; seconds: number; usd_charged: string }) => [r.dimension, r.seconds, r.usd_charged]).sort()).toEqual([
      ['recording', 1800, '0.250000'],
      ['transcription', 1800, '0.075000'],
    ]);

    // The same rows over REST with the owner's platform key.
    const rest = await request(server.url, `/v1/${app.app_id}/ai/meetings/usage`, { key: server.platformKey });
    expect(rest.json.rows).toHaveLength(2);
    const deliveries = await call('meetings_webhook_deliveries', { app_id: app.app_id, status: 'delivered' });
    expect(deliveries.deliveries).toHaveLength(4);
  });

  it('a domain failure is a tool error in the standard envelope', async () => {
    const res = (await client.callTool({ name: 'meetings_spawn', arguments: { app_id: 'zzzzzzzzzzzzzzzz', meetingUrl: 'https://zoom.us/j/1' } })) as CallToolResult;
    expect(res.isError).toBe(true);
    expect(resultJson(res).error.code).toBe('RESOURCE_NOT_FOUND');
  });
});
