// Provider webhooks driving meeting bots, with a worker running: signatures (valid, forged, stale, either header
// family), replays, out-of-order events, the forwards an app's receiver gets (signed, default events only, no URLs),
// usage rows and their ledger charges on done, the credit hold given back on fatal, and dead-lettered forwards.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { FakeRecall } from '../fakes/recall.ts';
import { balanceNanos, setBalance, signatureValid, startReceiver, type Forwarded, type Receiver } from '../helpers/meetings.ts';
import { waitFor } from './frontend-helpers.ts';

let p: TestPlatform;
let fake: FakeRecall;
let receiver: Receiver;
let appId: string;
let accountId: string;
let secret: string;
const ZOOM = 'https://zoom.us/j/5551234567';

const M = () => `/v1/${appId}/ai/meetings`;

beforeAll(async () => {
  fake = await FakeRecall.start();
  receiver = await startReceiver();
  p = await startTestPlatform({ ...fake.env(), SVC_OUTBOUND_ALLOW_PRIVATE: 'true', SVC_OUTBOX_MAX_ATTEMPTS: '2' });
  fake.webhookUrl = `${p.url}/webhooks/meetings/recall`;
  const app = (await p.api('POST', '/init', { body: { name: 'events' } })).body;
  appId = app.app_id;
  accountId = (await p.sql('select account_id from apps where id = $1', [appId]))[0].account_id;
  await setBalance(p.sql, accountId, 10);
  secret = (await p.api('PUT', `${M()}/webhook`, { body: { forward_url: receiver.url } })).body.secret;
});
afterAll(async () => {
  await p?.close();
  await fake?.close();
  await receiver?.close();
});

async function spawnBot(body: Record<string, unknown> = {}): Promise<{ id: string; providerId: string }> {
  const res = await p.api('POST', M(), { body: { meetingUrl: ZOOM, metadata: { deal: '7' }, ...body } });
  expect(res.status).toBe(200);
  return { id: res.body.id, providerId: fake.providerId(res.body.id) };
}

const statusOf = async (id: string): Promise<string> => (await p.api('GET', `${M()}/${id}`)).body.status;
const forwardsOf = (id: string): Forwarded[] => receiver.received.filter((r) => r.body.data.bot.id === id);

describe('a session from spawn to done', () => {
  it('moves the bot, forwards the default events signed and without URLs, and bills one row per dimension', async () => {
    const before = await balanceNanos(p.sql, accountId);
    const bot = await spawnBot();
    const held = await balanceNanos(p.sql, accountId);
    expect(held.reserved - before.reserved).toBe(650_000_000);

    const steps = await fake.runToDone(bot.providerId, 600);
    expect(steps.map((s) => [s.status, s.answer.status])).toEqual([
      [200, 'joining'],
      [200, 'recording'],
      [200, 'ended'],
      [200, 'ended'],
      [200, 'ended'],
      [200, 'done'],
    ]);
    const done = (await p.api('GET', `${M()}/${bot.id}`)).body;
    expect(done).toMatchObject({ status: 'done', durationSeconds: 600, metadata: { deal: '7' } });
    expect(Date.parse(done.completedAt) - Date.parse(done.startedAt)).toBe(600_000);
    expect(done.recordingUrl).toMatch(new RegExp(`^${fake.url}/media/.+/video\\.mp4\\?X-Amz-Signature=`));
    expect(done.transcriptUrl).toMatch(/\/transcript\.json\?/);
    const again = (await p.api('GET', `${M()}/${bot.id}`)).body;
    expect(again.recordingUrl).not.toBe(done.recordingUrl);

    const forwarded = await waitFor(async () => (forwardsOf(bot.id).length >= 4 ? forwardsOf(bot.id) : undefined));
    await new Promise((r) => setTimeout(r, 300));
    expect(forwardsOf(bot.id).map((f) => f.event).sort()).toEqual(['bot.done', 'bot.in_call_recording', 'recording.done', 'transcript.done']);
    for (const f of forwarded) {
      expect(signatureValid(secret, f.raw, f.signature), f.event).toBe(true);
      expect(f.contentType).toBe('application/json');
      expect(f.body.event).toBe(f.event);
      expect(f.raw).not.toMatch(/https?:\/\//);
    }
    const inCall = forwarded.find((f) => f.event === 'bot.in_call_recording')!;
    expect(inCall.body).toEqual({
      event: 'bot.in_call_recording',
      data: { bot: { id: bot.id, metadata: { deal: '7' } }, data: { code: 'in_call_recording', sub_code: null, updated_at: done.startedAt } },
    });
    const recording = fake.bot(bot.providerId).recordings[0]!;
    expect(forwarded.find((f) => f.event === 'recording.done')!.body.data).toEqual({
      bot: { id: bot.id, metadata: { deal: '7' } },
      data: { code: 'done', sub_code: null, updated_at: expect.any(String) },
      recording: { id: recording.id, metadata: {} },
    });
    expect(forwarded.find((f) => f.event === 'transcript.done')!.body.data).toMatchObject({ recording: { id: recording.id }, transcript: { id: recording.transcriptId } });

    const usage = (await p.api('GET', `${M()}/usage`)).body.rows;
    expect(usage.filter((r: { bot_id: string }) => r.bot_id === bot.id).map(({ id: _id, created_at: _at, ...rest }: Record<string, unknown>) => rest).sort((a: any, b: any) => a.dimension.localeCompare(b.dimension))).toEqual([
      { bot_id: bot.id, dimension: 'recording', seconds: 600, usd_charged: '0.083333' },
      { bot_id: bot.id, dimension: 'transcription', seconds: 600, usd_charged: '0.025000' },
    ]);
    const charges = await p.sql(`select amount_nanos::text as n, usage_ref from credit_ledger where account_id = $1 and source = 'meetings' order by id`, [accountId]);
    const ids = usage.filter((r: { bot_id: string }) => r.bot_id === bot.id).map((r: { id: string }) => `meeting_usage:${r.id}`);
    expect(charges.filter((c) => ids.includes(c.usage_ref)).map((c) => Number(c.n)).sort()).toEqual([-83_333_000, -25_000_000].sort());
    const after = await balanceNanos(p.sql, accountId);
    expect(after).toEqual({ balance: before.balance - 108_333_000, reserved: before.reserved });
    expect((await p.api('GET', `${M()}/webhook/deliveries?status=delivered`)).body.deliveries.filter((d: { bot_id: string }) => d.bot_id === bot.id)).toHaveLength(4);

    // Replays of the same Svix messages change nothing: no second charge, no second forward.
    for (const step of steps) expect((await fake.replay(step)).answer).toEqual({ handled: false });
    await new Promise((r) => setTimeout(r, 300));
    expect(forwardsOf(bot.id)).toHaveLength(4);
    expect(await balanceNanos(p.sql, accountId)).toEqual(after);
    expect((await p.sql('select count(*)::int as n from meeting_usage where bot_id = $1', [bot.id]))[0].n).toBe(2);
  });

  it('bills recording only when transcription is off, and a waiting room on the way', async () => {
    const bot = await spawnBot({ transcript: false, recording: false });
    await fake.move(bot.providerId, 'joining_call');
    expect((await fake.move(bot.providerId, 'in_waiting_room', { afterSeconds: 3 })).answer).toEqual({ handled: true, status: 'waiting_room' });
    expect((await fake.move(bot.providerId, 'in_call_not_recording', { afterSeconds: 10 })).answer.status).toBe('in_call');
    await fake.move(bot.providerId, 'call_ended', { afterSeconds: 90 });
    await fake.move(bot.providerId, 'done', { afterSeconds: 2 });
    const done = (await p.api('GET', `${M()}/${bot.id}`)).body;
    expect(done).toMatchObject({ status: 'done', durationSeconds: 90, recordingUrl: null, transcriptUrl: null });
    const rows = await p.sql('select dimension, seconds, usd_nanos::int as n from meeting_usage where bot_id = $1', [bot.id]);
    expect(rows).toEqual([{ dimension: 'recording', seconds: 90, n: 12_500_000 }]);
  });
});

describe('the state machine', () => {
  it('never moves a bot back: late events of an earlier phase, and older ones inside a phase, change nothing', async () => {
    const bot = await spawnBot();
    await fake.move(bot.providerId, 'joining_call');
    await fake.move(bot.providerId, 'in_call_recording', { afterSeconds: 10 });
    const bots = fake.bot(bot.providerId);
    // Stamped before the recording started: an older in-call status does not pause the recording.
    const older = await fake.send({ event: 'bot.in_call_not_recording', data: { data: { code: 'in_call_not_recording', sub_code: null, updated_at: new Date(bots.clock.getTime() - 5000).toISOString() }, bot: { id: bot.providerId, metadata: {} } } });
    expect(older.answer).toEqual({ handled: true, status: 'recording' });
    expect((await fake.move(bot.providerId, 'in_waiting_room', { afterSeconds: 1 })).answer.status).toBe('recording');
    expect((await fake.move(bot.providerId, 'joining_call', { afterSeconds: 1 })).answer.status).toBe('recording');
    // A newer one does: recording paused, then resumed.
    expect((await fake.move(bot.providerId, 'in_call_not_recording', { afterSeconds: 1 })).answer.status).toBe('in_call');
    expect((await fake.move(bot.providerId, 'in_call_recording', { afterSeconds: 1 })).answer.status).toBe('recording');
    expect((await fake.move(bot.providerId, 'call_ended', { afterSeconds: 30 })).answer.status).toBe('ended');
    expect((await fake.move(bot.providerId, 'in_call_recording', { afterSeconds: 1 })).answer.status).toBe('ended');
    expect((await fake.move(bot.providerId, 'done', { afterSeconds: 1 })).answer.status).toBe('done');
    for (const code of ['in_call_recording', 'call_ended', 'fatal', 'joining_call']) {
      expect((await fake.move(bot.providerId, code, { afterSeconds: 1 })).answer, code).toEqual({ handled: true, status: 'done' });
    }
    expect(await statusOf(bot.id)).toBe('done');
    await new Promise((r) => setTimeout(r, 500));
    // bot.in_call_recording twice (start and resume), bot.done once; nothing for the events that moved nothing.
    expect(forwardsOf(bot.id).map((f) => f.event)).toEqual(['bot.in_call_recording', 'bot.in_call_recording', 'bot.done']);
    expect((await p.sql('select count(*)::int as n from meeting_usage where bot_id = $1', [bot.id]))[0].n).toBe(2);
  });

  it('fatal ends the bot without a charge and gives the credit hold back; a done after it changes nothing', async () => {
    const before = await balanceNanos(p.sql, accountId);
    const bot = await spawnBot();
    await fake.move(bot.providerId, 'joining_call');
    const fatal = await fake.failBot(bot.providerId, 'meeting_not_found', { afterSeconds: 4 });
    expect(fatal.answer).toEqual({ handled: true, status: 'fatal' });
    expect((await fake.move(bot.providerId, 'done', { afterSeconds: 1 })).answer.status).toBe('fatal');
    expect(await balanceNanos(p.sql, accountId)).toEqual(before);
    expect((await p.sql('select count(*)::int as n from meeting_usage where bot_id = $1', [bot.id]))[0].n).toBe(0);
    const forwarded = await waitFor(async () => forwardsOf(bot.id)[0]);
    expect(forwarded.body).toEqual({ event: 'bot.fatal', data: { bot: { id: bot.id, metadata: { deal: '7' } }, data: { code: 'fatal', sub_code: 'meeting_not_found', updated_at: expect.any(String) } } });
    expect(await p.api('GET', `${M()}/${bot.id}`)).toMatchObject({ body: { status: 'fatal', startedAt: null, durationSeconds: null, recordingUrl: null } });
    expect((await p.api('DELETE', `${M()}/${bot.id}`)).status).toBe(204);
  });

  it('accepts the older bot.status_change format; an event about no bot of ours is retried while recent, then acknowledged', async () => {
    const bot = await spawnBot();
    const legacy = await fake.send({ event: 'bot.status_change', data: { bot_id: bot.providerId, status: { code: 'in_waiting_room', sub_code: null, created_at: new Date().toISOString() } } });
    expect(legacy.answer).toEqual({ handled: true, status: 'waiting_room' });
    // A recent event about a bot we do not hold may precede its spawn's insert: retryable 503, its id not used up.
    const unknownId = '0b7d4f3e-5c1a-4e8b-9f2d-6a3c1e7b9d40';
    const early = await fake.send({ event: 'bot.done', data: { data: { code: 'done', sub_code: null, updated_at: new Date().toISOString() }, bot: { id: unknownId, metadata: {} } } });
    expect(early.status).toBe(503);
    expect(early.answer.error.code).toBe('PROVIDER_EVENT_EARLY');
    expect((await p.sql('select count(*)::int as n from meeting_provider_events where id = $1', [early.id]))[0].n).toBe(0);
    const old = new Date(Date.now() - 3_600_000).toISOString();
    const stranger = await fake.send({ event: 'bot.done', data: { data: { code: 'done', sub_code: null, updated_at: old }, bot: { id: unknownId, metadata: {} } } });
    expect(stranger).toMatchObject({ status: 200, answer: { handled: false } });
    // The provider's bot ids are uuids: a recent event about anything else can never become one of ours, so it is
    // acknowledged at once rather than retried for ten minutes.
    for (const id of ['not-ours', '', 'x'.repeat(300)]) {
      const malformed = await fake.send({ event: 'bot.done', data: { data: { code: 'done', sub_code: null, updated_at: new Date().toISOString() }, bot: { id, metadata: {} } } });
      expect(malformed).toMatchObject({ status: 200, answer: { handled: false } });
    }
    const other = await fake.send({ event: 'calendar.sync_events', data: { calendar_id: 'c1' } });
    expect(other).toMatchObject({ status: 200, answer: { handled: false } });
  });
});

describe('signatures', () => {
  it('refuses forged, stale, future, unsigned and half-signed deliveries with 400 and applies nothing', async () => {
    const bot = await spawnBot();
    const refusedSends = [
      await fake.move(bot.providerId, 'in_call_recording', { forge: true, messageId: 'msg_forged_then_real' }),
      await fake.move(bot.providerId, 'in_call_recording', { timestamp: Math.floor(Date.now() / 1000) - 301 }),
      await fake.move(bot.providerId, 'in_call_recording', { timestamp: Math.floor(Date.now() / 1000) + 301 }),
    ];
    for (const r of refusedSends) {
      expect(r.status).toBe(400);
      expect(r.answer.error.code).toBe('WEBHOOK_SIGNATURE_INVALID');
    }
    const body = JSON.stringify({ event: 'bot.fatal', data: { data: { code: 'fatal' }, bot: { id: bot.providerId } } });
    const unsigned = await fetch(fake.webhookUrl!, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(unsigned.status).toBe(400);
    const valid = await fake.move(bot.providerId, 'in_call_not_recording', { afterSeconds: 1 });
    const tampered = await fetch(fake.webhookUrl!, { method: 'POST', headers: { ...valid.headers, 'svix-id': 'msg_other' }, body: valid.body });
    expect(tampered.status).toBe(400);
    const altered = await fetch(fake.webhookUrl!, { method: 'POST', headers: valid.headers, body: valid.body.replace('in_call_not_recording', 'fatal') });
    expect(altered.status).toBe(400);
    expect(await statusOf(bot.id)).toBe('in_call');
    // The forged message's id was not recorded: the real delivery under the same id applies.
    expect((await fake.move(bot.providerId, 'in_call_recording', { afterSeconds: 1, messageId: 'msg_forged_then_real' })).answer).toEqual({ handled: true, status: 'recording' });
  });

  it('accepts the webhook-* header names, a timestamp inside 5 minutes and a list holding one valid signature', async () => {
    const bot = await spawnBot();
    const viaWebhookHeaders = await fake.move(bot.providerId, 'joining_call', { headerStyle: 'webhook', timestamp: Math.floor(Date.now() / 1000) - 290 });
    expect(viaWebhookHeaders).toMatchObject({ status: 200, answer: { handled: true, status: 'joining' } });
    const next = await fake.move(bot.providerId, 'in_waiting_room', { afterSeconds: 1, forge: true });
    const good = `v1,${(await import('../fakes/recall.ts')).svixSignature(fake.webhookSecret, next.id, next.headers['svix-timestamp']!, next.body)}`;
    const rotated = await fetch(fake.webhookUrl!, {
      method: 'POST',
      headers: { ...next.headers, 'svix-signature': `${next.headers['svix-signature']} v2,abc ${good}` },
      body: next.body,
    });
    expect(rotated.status).toBe(200);
    expect(await statusOf(bot.id)).toBe('waiting_room');
  });
});

describe('forward deliveries', () => {
  it('retries a failing receiver, dead-letters after the attempt limit, and lists the deliveries', async () => {
    const bot = await spawnBot();
    receiver.answers.push(500, 503);
    await fake.move(bot.providerId, 'in_call_recording');
    const dead = await waitFor(async () => {
      const list = (await p.api('GET', `${M()}/webhook/deliveries?status=dead`)).body.deliveries;
      return list.find((d: { bot_id: string }) => d.bot_id === bot.id);
    }, 20_000);
    expect(dead).toMatchObject({ event: 'bot.in_call_recording', status: 'dead', attempts: 2, last_status: 503, last_error: expect.stringContaining('answered 503'), delivered_at: null });
    expect(forwardsOf(bot.id)).toHaveLength(2);
    expect(forwardsOf(bot.id)[0]!.raw).toBe(forwardsOf(bot.id)[1]!.raw);
    const limited = (await p.api('GET', `${M()}/webhook/deliveries?limit=1`)).body.deliveries;
    expect(limited).toHaveLength(1);
    expect((await p.api('GET', `${M()}/webhook/deliveries?status=lost`)).status).toBe(400);
  });

  it('sends nothing for an app without a forward URL, and signs with the rotated secret from then on', async () => {
    const quiet = (await p.api('POST', '/init', { body: { name: 'quiet' } })).body.app_id;
    const res = await p.api('POST', `/v1/${quiet}/ai/meetings`, { body: { meetingUrl: ZOOM } });
    await fake.move(fake.providerId(res.body.id), 'in_call_recording');
    expect((await p.sql('select count(*)::int as n from meeting_forwards where app_id = $1', [quiet]))[0].n).toBe(0);

    const rotated = (await p.api('PUT', `${M()}/webhook`, { body: { rotate_secret: true } })).body.secret;
    const bot = await spawnBot();
    await fake.move(bot.providerId, 'in_call_recording');
    const got = await waitFor(async () => forwardsOf(bot.id)[0]);
    expect(signatureValid(rotated, got.raw, got.signature)).toBe(true);
    expect(signatureValid(secret, got.raw, got.signature)).toBe(false);
    secret = rotated;
  });
});

describe('an app deleted while its bot is in a call', () => {
  it('makes the bot leave and charges the time it ran, once; a finished bot is left alone', async () => {
    const other = (await p.api('POST', '/init', { body: { name: 'short-lived' } })).body;
    const spawn = async () => {
      const res = await p.api('POST', `/v1/${other.app_id}/ai/meetings`, { body: { meetingUrl: ZOOM } });
      expect(res.status).toBe(200);
      return { id: res.body.id as string, providerId: fake.providerId(res.body.id) };
    };
    const running = await spawn();
    const finished = await spawn();
    const ended = await spawn();
    await fake.move(running.providerId, 'in_call_recording');
    await fake.move(ended.providerId, 'in_call_recording');
    await fake.move(ended.providerId, 'call_ended');
    await waitFor(async () => ((await p.sql('select status from meeting_bots where id = $1', [ended.id]))[0]?.status === 'ended' ? true : undefined));
    await p.sql(`update meeting_bots set started_at = now() - interval '10 minutes', completed_at = now() - interval '9 minutes' where id = $1`, [ended.id]);
    await fake.runToDone(finished.providerId, 60);
    await waitFor(async () => ((await p.sql('select status from meeting_bots where id = $1', [finished.id]))[0]?.status === 'done' ? true : undefined));
    await p.sql(`update meeting_bots set started_at = now() - interval '120 seconds' where id = $1`, [running.id]);
    const [{ reservation_id }] = await p.sql('select reservation_id from meeting_bots where id = $1', [running.id]);
    const before = await balanceNanos(p.sql, accountId);

    expect((await p.api('DELETE', `/apps/${other.app_id}`)).status).toBe(200);
    await waitFor(async () => (fake.bot(running.providerId).leaveCalls === 1 ? true : undefined));
    const charge = await waitFor(async () => (await p.sql(`select -amount_nanos as nanos from credit_ledger where usage_ref = $1`, [`meeting_bot:${running.id}`]))[0]);
    const { sessionNanos } = await import('../../src/meetings/pricing.ts');
    const cost = (seconds: number) => sessionNanos(p.services.config.meetings, true, seconds);
    expect(Number(charge.nanos)).toBeGreaterThanOrEqual(cost(120));
    expect(Number(charge.nanos)).toBeLessThanOrEqual(cost(135));
    expect(await p.sql('select 1 from credit_reservations where id = $1', [reservation_id])).toEqual([]);
    await waitFor(async () => (await p.sql(`select 1 from credit_ledger where usage_ref = $1`, [`meeting_bot:${ended.id}`]))[0]);
    const after = await balanceNanos(p.sql, accountId);
    expect(before.balance - after.balance).toBe(Number(charge.nanos) + cost(60));
    expect(fake.bot(finished.providerId).leaveCalls).toBe(0);
    // The bot whose call had ended (its charge was to come with done) is charged its 60 s and not asked to leave.
    const endedCharge = await waitFor(async () => (await p.sql(`select -amount_nanos as nanos from credit_ledger where usage_ref = $1`, [`meeting_bot:${ended.id}`]))[0]);
    expect(Number(endedCharge.nanos)).toBe(cost(60));
    expect(fake.bot(ended.providerId).leaveCalls).toBe(0);

    // A second run of the job (a retry after a crash) charges nothing more.
    await p.services.meetings.bots.leaveOrphan({
      botId: running.id,
      providerBotId: running.providerId,
      accountId,
      reservationId: reservation_id,
      transcript: true,
      status: 'recording',
      startedAt: new Date(Date.now() - 120_000),
      completedAt: null,
    });
    expect(await p.sql(`select count(*)::int as n from credit_ledger where usage_ref = $1`, [`meeting_bot:${running.id}`])).toEqual([{ n: 1 }]);
  });
});
