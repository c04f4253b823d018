// Meeting bots over REST against the fake Recall: spawn validation field by field, what reaches the provider, get,
// list and its cursor, leave, estimate, the webhook configuration's secret rules, credit refusals, provider failures,
// ownership, the OpenAI-shaped errors of every refusal, and a platform without a provider (501, available: false).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { FakeRecall } from '../fakes/recall.ts';
import { balanceNanos, setBalance } from '../helpers/meetings.ts';

let p: TestPlatform;
let fake: FakeRecall;
let appId: string;
let serviceKey: string;
let accountId: string;
const ZOOM = 'https://us02web.zoom.us/j/81234567890?pwd=abc';

const M = () => `/v1/${appId}/ai/meetings`;
const spawn = (body: Record<string, unknown>, key?: string | null) => p.api('POST', M(), { body, key });

beforeAll(async () => {
  fake = await FakeRecall.start();
  p = await startTestPlatform(fake.env());
  fake.webhookUrl = `${p.url}/webhooks/meetings/recall`;
  const app = (await p.api('POST', '/init', { body: { name: 'meetings' } })).body;
  appId = app.app_id;
  serviceKey = app.service_key.key;
  accountId = (await p.sql('select account_id from apps where id = $1', [appId]))[0].account_id;
  await setBalance(p.sql, accountId, 100);
});
afterAll(async () => {
  await p?.close();
  await fake?.close();
});

/** The 400 of an invalid spawn body, with the field its first issue names. */
async function refused(body: Record<string, unknown>, field: string): Promise<void> {
  const res = await spawn({ meetingUrl: ZOOM, ...body });
  expect(res.status, JSON.stringify(body)).toBe(400);
  expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request' });
  expect(res.body.error.details.map((d: { path: string }) => d.path), JSON.stringify(body)).toContain(field);
}

describe('spawn', () => {
  it('answers the bot in joining with null times and URLs, and sends the provider what was asked', async () => {
    const before = fake.requests.length;
    const res = await spawn(
      {
        meetingUrl: 'https://meet.google.com/abc-defg-hij',
        botName: 'x'.repeat(64),
        recording: 'audio_only',
        transcript: false,
        metadata: { deal: '42', owner: 'dana' },
        automaticLeave: { waitingRoomTimeoutSec: 1, noOneJoinedTimeoutSec: 600, everyoneLeftTimeoutSec: 30, inCallNotRecordingTimeoutSec: 86_400 },
      },
      serviceKey,
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      status: 'joining',
      startedAt: null,
      completedAt: null,
      durationSeconds: null,
      recordingUrl: null,
      transcriptUrl: null,
      botName: 'x'.repeat(64),
      metadata: { deal: '42', owner: 'dana' },
      meetingUrl: 'https://meet.google.com/abc-defg-hij',
      transcript: false,
      recording: 'audio_only',
      createdAt: expect.any(String),
    });
    const sent = fake.requests.slice(before).filter((r) => r.method === 'POST');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body).toEqual({
      meeting_url: 'https://meet.google.com/abc-defg-hij',
      bot_name: 'x'.repeat(64),
      recording_config: { video_mixed_mp4: null, audio_mixed_mp3: {} },
      automatic_leave: { waiting_room_timeout: 1, noone_joined_timeout: 600, everyone_left_timeout: { timeout: 30 }, in_call_not_recording_timeout: 86_400 },
      metadata: { deal: '42', owner: 'dana', svc_app_id: appId, svc_bot_id: res.body.id },
    });
  });

  it('defaults: transcript on, mp4, the service bot name, no metadata, provider timeouts', async () => {
    const res = await spawn({ meetingUrl: ZOOM });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'joining', botName: 'Meeting Notetaker', metadata: {}, transcript: true, recording: 'mp4' });
    expect(fake.bot(fake.providerId(res.body.id))).toMatchObject({
      bot_name: 'Meeting Notetaker',
      recording_config: { video_mixed_mp4: {}, transcript: { provider: { meeting_captions: {} } } },
      automatic_leave: undefined,
    });
    const noRecording = await spawn({ meetingUrl: ZOOM, recording: false });
    expect(noRecording.body.recording).toBe(false);
    expect(fake.bot(fake.providerId(noRecording.body.id)).recording_config).toEqual({ video_mixed_mp4: null, transcript: { provider: { meeting_captions: {} } } });
  });

  it('accepts the meeting hosts of every supported platform', async () => {
    for (const url of [
      'https://zoom.us/j/123',
      'https://acme.zoomgov.com/j/1',
      'https://teams.microsoft.com/l/meetup-join/19%3ameeting',
      'https://teams.live.com/meet/9999',
      'https://acme.webex.com/meet/dana',
      'https://meet.goto.com/123456789',
    ]) {
      expect((await spawn({ meetingUrl: url })).status, url).toBe(200);
    }
  });

  it('refuses each invalid field with 400 invalid_request naming it', async () => {
    const res = await spawn({});
    expect(res.body.error.details[0].path).toBe('meetingUrl');
    for (const meetingUrl of ['not a url', 'http://zoom.us/j/1', 'https://example.com/j/1', 'https://zoom.us.evil.com/j/1', 'https://user:pw@zoom.us/j/1', 'https://zoom.us:8443/j/1', 42]) {
      await refused({ meetingUrl }, 'meetingUrl');
    }
    await refused({ transcript: 'yes' }, 'transcript');
    for (const recording of ['wav', true, null]) await refused({ recording }, 'recording');
    for (const botName of ['', 'x'.repeat(65), 7]) await refused({ botName }, 'botName');
    await refused({ metadata: { svc_owner: 'x' } }, 'metadata.svc_owner');
    await refused({ metadata: { n: 5 } }, 'metadata.n');
    await refused({ metadata: 'deal=1' }, 'metadata');
    await refused({ metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata');
    for (const value of [0, -5, 86_401, 1.5, '60']) {
      await refused({ automaticLeave: { waitingRoomTimeoutSec: value } }, 'automaticLeave.waitingRoomTimeoutSec');
      await refused({ automaticLeave: { noOneJoinedTimeoutSec: value } }, 'automaticLeave.noOneJoinedTimeoutSec');
      await refused({ automaticLeave: { everyoneLeftTimeoutSec: value } }, 'automaticLeave.everyoneLeftTimeoutSec');
      await refused({ automaticLeave: { inCallNotRecordingTimeoutSec: value } }, 'automaticLeave.inCallNotRecordingTimeoutSec');
    }
    await refused({ automaticLeave: { silenceTimeoutSec: 60 } }, 'automaticLeave');
    await refused({ joinAt: '2030-01-01' }, '');
    const json = await p.api('POST', M(), { body: '{"meetingUrl":', headers: { 'content-type': 'application/json' } });
    expect(json.status).toBe(400);
    expect(json.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request' });
  });

  it('relays the provider refusing the bot as 400 naming our field, and releases the credit held', async () => {
    const res = await spawn({ meetingUrl: 'https://zoom.us/j/invalid-at-provider' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request', details: [{ path: 'meetingUrl', message: 'Invalid meeting URL.' }] });
    expect((await p.sql('select count(*)::int as n from credit_reservations where account_id = $1 and amount_nanos > 0 and id not in (select reservation_id from meeting_bots where reservation_id is not null)', [accountId]))[0].n).toBe(0);
  });

  it('answers 502 api_error when the provider fails, 503 with Retry-After when it has no bot free, and holds nothing after', async () => {
    const held = await balanceNanos(p.sql, accountId);
    fake.failNext(500, { detail: 'boom' });
    const failed = await spawn({ meetingUrl: ZOOM });
    expect(failed.status).toBe(502);
    expect(failed.body.error).toMatchObject({ type: 'api_error', code: 'provider_error' });
    fake.failNext(507, { detail: 'no capacity' });
    const busy = await spawn({ meetingUrl: ZOOM });
    expect(busy.status).toBe(503);
    expect(busy.body.error).toMatchObject({ type: 'api_error', code: 'provider_busy' });
    expect(busy.headers.get('retry-after')).toBe('60');
    fake.failNext(401, { detail: 'Invalid token.' });
    expect((await spawn({ meetingUrl: ZOOM })).status).toBe(502);
    expect(await balanceNanos(p.sql, accountId)).toEqual(held);
  });

  it('refuses with 402 insufficient_credits and the balance fields when the balance is at its floor, without calling the provider', async () => {
    await setBalance(p.sql, accountId, 0);
    const before = fake.requests.length;
    try {
      const res = await spawn({ meetingUrl: ZOOM });
      expect(res.status).toBe(402);
      expect(res.body.error).toMatchObject({ type: 'billing_error', code: 'insufficient_credits', balance_usd: 0, credit_floor_usd: 0 });
      expect(fake.requests.length).toBe(before);
    } finally {
      await setBalance(p.sql, accountId, 100);
    }
  });

  it('reports the balance calls in flight do not hold: held credit is not shown as available', async () => {
    await setBalance(p.sql, accountId, 0.09775);
    await p.sql(`insert into credit_reservations (account_id, amount_nanos, expires_at) values ($1, 97750000, now() + interval '1 hour')`, [accountId]);
    await p.sql(`update credit_balances set reserved_nanos = 97750000 where account_id = $1`, [accountId]);
    try {
      const res = await spawn({ meetingUrl: ZOOM });
      expect(res.status).toBe(402);
      expect(res.body).toEqual({
        error: {
          message:
            "The account's credit balance is below its credit floor: no bot was sent. Upgrade the plan (billing_checkout) or wait for the next period of credits, then spawn again; meetings_estimate tells what a session costs.",
          type: 'billing_error',
          code: 'insufficient_credits',
          param: null,
          details: { balance_usd: 0, credit_floor_usd: 0 },
          balance_usd: 0,
          credit_floor_usd: 0,
        },
      });
    } finally {
      await setBalance(p.sql, accountId, 100);
    }
  });
});

describe('get, list, leave', () => {
  it('gets a bot; unknown ids are 404 bot_not_found, malformed ones 400', async () => {
    const bot = (await spawn({ meetingUrl: ZOOM, metadata: { k: 'v' } })).body;
    const got = await p.api('GET', `${M()}/${bot.id}`, { key: serviceKey });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(bot);
    const missing = await p.api('GET', `${M()}/00000000-0000-4000-8000-000000000000`);
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ type: 'invalid_request_error', code: 'bot_not_found' });
    const bad = await p.api('GET', `${M()}/not-a-uuid`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_request', details: [{ path: 'bot_id' }] });
  });

  it("reads a done bot's transcript from the provider, normalized; 409 TRANSCRIPT_NOT_READY before, or without one", async () => {
    const bot = (await spawn({ meetingUrl: ZOOM })).body;
    const early = await p.api('GET', `${M()}/${bot.id}/transcript`, { key: serviceKey });
    expect([early.status, early.body.error?.code]).toEqual([409, 'transcript_not_ready']);
    const [{ provider_bot_id: providerId }] = await p.sql('select provider_bot_id from meeting_bots where id = $1', [bot.id]);
    fake.transcripts.set(providerId, [
      { participant: { id: 1, name: 'Ada' }, words: [{ text: 'Shall', start_timestamp: { relative: 1.5 } }, { text: 'we?', end_timestamp: { relative: 2.25 } }] },
      { participant: { id: 2, name: null }, words: [{ text: 'Yes.', start_timestamp: { relative: 3 }, end_timestamp: { relative: 3.5 } }] },
      { participant: { id: 3, name: 'Silent' }, words: [] },
    ]);
    await fake.runToDone(providerId, 30);
    for (let i = 0; i < 100 && (await p.api('GET', `${M()}/${bot.id}`, { key: serviceKey })).body.status !== 'done'; i++) await new Promise((r) => setTimeout(r, 50));
    const read = await p.api('GET', `${M()}/${bot.id}/transcript`, { key: serviceKey });
    expect(read.status, JSON.stringify(read.body)).toBe(200);
    expect(read.body).toEqual({
      bot_id: bot.id,
      segments: [
        { speaker: 'Ada', text: 'Shall we?', start: 1.5, end: 2.25 },
        { speaker: 'Speaker 2', text: 'Yes.', start: 3, end: 3.5 },
      ],
      text: 'Ada: Shall we?\nSpeaker 2: Yes.',
    });
    const silent = (await spawn({ meetingUrl: ZOOM, transcript: false })).body;
    const none = await p.api('GET', `${M()}/${silent.id}/transcript`, { key: serviceKey });
    expect([none.status, none.body.error?.code]).toEqual([409, 'transcript_not_ready']);
  });

  it('lists newest first with a cursor, filters by status, and checks its query', async () => {
    const other = (await p.api('POST', '/init', { body: { name: 'paging' } })).body.app_id;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await p.api('POST', `/v1/${other}/ai/meetings`, { body: { meetingUrl: ZOOM } })).body.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    const pages: number[] = [];
    do {
      const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const page: { status: number; body: any } = await p.api('GET', `/v1/${other}/ai/meetings?limit=2${q}`);
      expect(page.status).toBe(200);
      pages.push(page.body.bots.length);
      seen.push(...page.body.bots.map((b: { id: string }) => b.id));
      for (const b of page.body.bots) expect(b).toMatchObject({ recordingUrl: null, transcriptUrl: null });
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(pages).toEqual([2, 2, 1]);
    expect(seen).toEqual([...ids].reverse());
    const all = await p.api('GET', `/v1/${other}/ai/meetings`);
    expect(all.body).toMatchObject({ nextCursor: null });
    expect(all.body.bots).toHaveLength(5);
    expect((await p.api('GET', `/v1/${other}/ai/meetings?status=joining`)).body.bots).toHaveLength(5);
    expect((await p.api('GET', `/v1/${other}/ai/meetings?status=done`)).body).toEqual({ bots: [], nextCursor: null });
    for (const q of ['limit=0', 'limit=101', 'limit=x', 'status=bogus', 'cursor=nope', 'colour=red']) {
      const res = await p.api('GET', `/v1/${other}/ai/meetings?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body.error.code, q).toBe('invalid_request');
    }
    expect((await p.api('GET', `/v1/${other}/ai/meetings?limit=100`)).status).toBe(200);
  });

  it('makes a bot leave with 204, idempotently; a bot whose call is over is not sent to the provider', async () => {
    const bot = (await spawn({ meetingUrl: ZOOM })).body;
    const providerId = fake.providerId(bot.id);
    for (let i = 0; i < 2; i++) {
      const res = await p.api('DELETE', `${M()}/${bot.id}`, { key: serviceKey });
      expect(res.status).toBe(204);
      expect(res.body).toBeUndefined();
    }
    expect(fake.bot(providerId).leaveCalls).toBe(2);
    await fake.move(providerId, 'call_ended');
    expect((await p.api('DELETE', `${M()}/${bot.id}`)).status).toBe(204);
    expect(fake.bot(providerId).leaveCalls).toBe(2);
    expect((await p.api('DELETE', `${M()}/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
  });
});

describe('estimate, usage, status', () => {
  it('estimates USD per the configured hourly prices (0.50 recording, 0.15 transcription)', async () => {
    expect((await p.api('GET', `${M()}/_estimate?durationMinutes=60`)).body).toEqual({ usd: 0.65 });
    expect((await p.api('GET', `${M()}/_estimate?durationMinutes=60&transcript=false`)).body).toEqual({ usd: 0.5 });
    expect((await p.api('GET', `${M()}/_estimate?durationMinutes=1440&transcript=true`, { key: serviceKey })).body).toEqual({ usd: 15.6 });
    expect((await p.api('GET', `${M()}/_estimate?durationMinutes=1`)).body).toEqual({ usd: 0.010833 });
    for (const q of ['', 'durationMinutes=0', 'durationMinutes=1441', 'durationMinutes=1.5', 'durationMinutes=10&transcript=maybe']) {
      const res = await p.api('GET', `${M()}/_estimate?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
  });

  it('usage is { rows } (empty before any session is done)', async () => {
    const fresh = (await p.api('POST', '/init', { body: { name: 'no usage' } })).body.app_id;
    expect((await p.api('GET', `/v1/${fresh}/ai/meetings/usage`)).body).toEqual({ rows: [] });
  });

  it('_status needs no credential and says the provider is available', async () => {
    const res = await p.api('GET', '/v1/ai/meetings/_status', { key: null });
    expect(res).toMatchObject({ status: 200, body: { available: true } });
  });
});

describe('webhook configuration', () => {
  it('mints a wsec_ secret on creation and rotation only, and keeps it sealed', async () => {
    const app = (await p.api('POST', '/init', { body: { name: 'hooks' } })).body.app_id;
    const W = `/v1/${app}/ai/meetings/webhook`;
    const none = await p.api('PUT', W, { body: { rotate_secret: true } });
    expect(none.status).toBe(400);
    expect(none.body.error).toMatchObject({ code: 'invalid_request', details: [{ path: 'forward_url' }] });
    const first = await p.api('PUT', W, { body: { forward_url: 'https://203.0.113.7/meetings' } });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ ok: true, app_id: app, forward_url: 'https://203.0.113.7/meetings', secret: expect.stringMatching(/^wsec_[A-Za-z0-9_-]{43}$/) });
    const moved = await p.api('PUT', W, { body: { forward_url: 'https://203.0.113.8/other', rotate_secret: false } });
    expect(moved.body).toEqual({ ok: true, app_id: app, forward_url: 'https://203.0.113.8/other', secret: null });
    const rotated = await p.api('PUT', W, { body: { rotate_secret: true } });
    expect(rotated.body).toEqual({ ok: true, app_id: app, forward_url: 'https://203.0.113.8/other', secret: expect.stringMatching(/^wsec_/) });
    expect(rotated.body.secret).not.toBe(first.body.secret);
    const stored = (await p.sql('select secret_sealed from meeting_webhooks where app_id = $1', [app]))[0].secret_sealed;
    expect(stored).toMatch(/^v1\./);
    expect(stored).not.toContain(rotated.body.secret.slice(5));
    expect((await p.api('GET', `/v1/${app}/ai/meetings/webhook/deliveries`)).body).toEqual({ deliveries: [] });
  });

  it('refuses forward URLs that are not http(s) or resolve to private addresses', async () => {
    const W = `${M()}/webhook`;
    for (const url of ['ftp://203.0.113.7/x', 'not a url', 'https://user:pw@203.0.113.7/x']) {
      const res = await p.api('PUT', W, { body: { forward_url: url } });
      expect(res.status, url).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
    for (const url of ['http://127.0.0.1:9/x', 'http://10.0.0.8/x', 'http://[::1]/x', 'http://169.254.169.254/latest']) {
      const res = await p.api('PUT', W, { body: { forward_url: url } });
      expect(res.status, url).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'outbound_address_refused' });
    }
  });
});

describe('who may call', () => {
  it('401 missing_credentials without or with an invalid credential', async () => {
    for (const key of [null, 'svc_sk_notakey', 'garbage']) {
      const res = await p.api('POST', M(), { body: { meetingUrl: ZOOM }, key });
      expect(res.status).toBe(401);
      expect(res.body.error).toMatchObject({ type: 'authentication_error', code: 'missing_credentials' });
    }
    expect((await p.api('GET', `${M()}/usage`, { key: null })).body.error.code).toBe('missing_credentials');
  });

  it("403 not_authorized for end users, other apps' keys and other accounts; 404 app_not_found for unknown apps", async () => {
    const user = (await p.api('POST', `/v1/${appId}/auth/signup`, { body: { email: 'meet@example.com', password: 'correct horse battery' }, key: null })).body;
    const otherApp = (await p.api('POST', '/init', { body: { name: 'not mine' } })).body;
    const stranger = (await p.services.keys.create('platform', (await p.sql(`insert into accounts (name) values ('stranger') returning id`))[0].id, 'x')).key;
    for (const key of [user.access_token, otherApp.service_key.key, stranger]) {
      for (const [method, path] of [
        ['POST', M()],
        ['GET', M()],
        ['GET', `${M()}/usage`],
        ['PUT', `${M()}/webhook`],
      ] as const) {
        const body = method === 'POST' ? { meetingUrl: ZOOM } : method === 'PUT' ? { forward_url: 'https://203.0.113.7/x' } : undefined;
        const res = await p.api(method, path, { key, body });
        expect(res.status, `${method} ${path}`).toBe(403);
        expect(res.body.error).toMatchObject({ type: 'permission_error', code: 'not_authorized' });
      }
    }
    const unknown = await p.api('GET', '/v1/zzzzzzzzzzzzzzzz/ai/meetings');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ type: 'invalid_request_error', code: 'app_not_found' });
  });
});

describe('without a provider', () => {
  it('answers 501 provider_unavailable on every route and _status { available: false }', async () => {
    const bare = await startTestPlatform({ SVC_ROLE: 'api' });
    try {
      expect((await bare.api('GET', '/v1/ai/meetings/_status', { key: null })).body).toEqual({ available: false });
      const app = (await bare.api('POST', '/init', { body: { name: 'bare' } })).body.app_id;
      const B = `/v1/${app}/ai/meetings`;
      for (const [method, path, body] of [
        ['POST', B, { meetingUrl: ZOOM }],
        ['GET', B, undefined],
        ['GET', `${B}/00000000-0000-4000-8000-000000000000`, undefined],
        ['DELETE', `${B}/00000000-0000-4000-8000-000000000000`, undefined],
        ['GET', `${B}/_estimate?durationMinutes=5`, undefined],
        ['GET', `${B}/usage`, undefined],
        ['PUT', `${B}/webhook`, { forward_url: 'https://203.0.113.7/x' }],
      ] as const) {
        const res = await bare.api(method, path, { body });
        expect(res.status, `${method} ${path}`).toBe(501);
        expect(res.body.error).toMatchObject({ type: 'api_error', code: 'provider_unavailable' });
      }
      const hook = await bare.api('POST', '/webhooks/meetings/recall', { body: { event: 'bot.done' }, key: null });
      expect(hook.status).toBe(501);
    } finally {
      await bare.close();
    }
  });

  it('refuses a base URL without its key and webhook secret at start', async () => {
    const { loadConfig } = await import('../../src/config.ts');
    expect(() => loadConfig({ SVC_MEETINGS_BASE_URL: fake.url })).toThrow(/SVC_MEETINGS_API_KEY and SVC_MEETINGS_WEBHOOK_SECRET/);
    expect(() => loadConfig({ ...fake.env(), SVC_MEETINGS_WEBHOOK_SECRET: 'secret' })).toThrow(/whsec_/);
  });
});
