// The CRM's meeting bots against the fake Recall, on a cloned CRM (test/helpers/crm.ts): meeting-bot-send,
// meeting-bots-auto, meeting-events (the platform's signed forwards: bot status, then the transcript stored and
// summarized), meeting-summarize and meeting-bot-leave.
//
// The transcript is read through the platform (ctx.meetings.transcript), which downloads it from the fake's media URL.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SupabaseClient } from '@supabase/supabase-js';
import { startCrm, type CrmRig, type EndUser } from '../helpers/crm.ts';
import { waitFor } from '../integration/frontend-helpers.ts';

let rig: CrmRig;
let db: SupabaseClient;
let ann: EndUser;
let eve: EndUser;
let ws: string;
let contactId: string;
let dealId: string;
let secret: string;

const MINUTE = 60_000;
const at = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();
const sign = (raw: string, key = secret) => `v1,${createHmac('sha256', key).update(raw).digest('base64')}`;

async function insert(table: string, rows: unknown): Promise<any[]> {
  const { data, error } = await db.from(table).insert(rows as never).select();
  if (error) throw new Error(`${table}: ${error.message}`);
  return data as any[];
}

const meeting = async (id: string) => (await rig.serviceRows('meetings', `id=eq.${id}`))[0];

beforeAll(async () => {
  rig = await startCrm();
  db = rig.supabase();

  // The owner points the app's meeting events at meeting-events and gives it the secret, as the to-do list says.
  const hook = await rig.platform('PUT', `/v1/${rig.appId}/ai/meetings/webhook`, { forward_url: `${rig.url}/v1/${rig.appId}/fn/meeting-events` });
  expect(hook.status).toBe(200);
  secret = hook.json.secret;
  expect((await rig.platform('PATCH', `/v1/${rig.appId}/functions/meeting-events/env`, { MEETINGS_WEBHOOK_SECRET: secret })).status).toBe(200);

  [ann, eve] = await Promise.all([rig.signUp('ann@seller.io'), rig.signUp('eve@other.io')]);
  ws = await rig.workspace(ann, 'Meetings');
  await rig.workspace(eve, 'Elsewhere');
  [{ id: contactId }] = await insert('contacts', [{ workspace_id: ws, full_name: 'Carol Client', email: 'carol@client.io' }]);
  const [stage] = await rig.serviceRows('pipeline_stages', `workspace_id=eq.${ws}&order=position&limit=1`);
  [{ id: dealId }] = await insert('deals', [{ workspace_id: ws, title: 'Client rollout', stage_id: stage.id, contact_id: contactId }]);
}, 600_000);

afterAll(async () => {
  await rig?.stop();
});

describe('meeting bots', () => {
  let demoId: string;
  let botId: string;

  it('meeting-bot-send sends a bot with the meeting in its metadata; a second, an outsider and bad input are refused', async () => {
    [{ id: demoId }] = await insert('meetings', [
      { workspace_id: ws, user_id: ann.userId, title: 'Demo with Carol', meeting_url: 'https://meet.google.com/abc-defg-hij', starts_at: at(2 * 60 * MINUTE), deal_id: dealId, contact_id: contactId },
    ]);
    const sent = await rig.fn('meeting-bot-send', { token: ann.token, body: { meeting_id: demoId } });
    expect(sent.status).toBe(201);
    botId = sent.json.meeting.bot_id;
    expect(sent.json.meeting).toMatchObject({ id: demoId, bot_id: expect.any(String), bot_status: 'joining' });
    const created = rig.fakes.recall.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/bot/');
    expect(created).toHaveLength(1);
    expect(created[0]!.body).toMatchObject({
      meeting_url: 'https://meet.google.com/abc-defg-hij',
      bot_name: 'CRM notetaker',
      metadata: { meeting_id: demoId, workspace_id: ws, svc_bot_id: botId },
    });
    expect(await meeting(demoId)).toMatchObject({ bot_id: botId, bot_status: 'joining' });

    const again = await rig.fn('meeting-bot-send', { token: ann.token, body: { meeting_id: demoId } });
    expect([again.status, again.json.error.code]).toEqual([409, 'bot_already_sent']);
    const outsider = await rig.fn('meeting-bot-send', { token: eve.token, body: { meeting_id: demoId } });
    expect([outsider.status, outsider.json.error.code]).toEqual([404, 'not_found']);
    const bad = await rig.fn('meeting-bot-send', { token: ann.token, body: { meeting_id: 'demo' } });
    expect([bad.status, bad.json.error.code]).toEqual([400, 'invalid_field']);
    const [noLink] = await insert('meetings', [{ workspace_id: ws, title: 'Phone call', starts_at: at(MINUTE) }]);
    const linkless = await rig.fn('meeting-bot-send', { token: ann.token, body: { meeting_id: noLink.id } });
    expect([linkless.status, linkless.json.error.code]).toEqual([409, 'no_meeting_link']);
  });

  it('meeting-events verifies the signature (401 when wrong), follows the bot, then stores the transcript and its summary on the deal', async () => {
    const forged = JSON.stringify({ event: 'bot.done', data: { bot: { id: botId, metadata: {} }, data: { code: 'done', sub_code: null, updated_at: at(0) } } });
    const wrong = await rig.fn('meeting-events', { body: forged, headers: { 'x-svc-signature': sign(forged, 'wsec_not-the-secret') } });
    expect([wrong.status, wrong.json.error.code]).toEqual([401, 'bad_signature']);
    const unsigned = await rig.fn('meeting-events', { body: forged });
    expect([unsigned.status, unsigned.json.error.code]).toEqual([401, 'bad_signature']);
    const tampered = await rig.fn('meeting-events', { body: forged.replace('bot.done', 'bot.fatal'), headers: { 'x-svc-signature': sign(forged) } });
    expect(tampered.status).toBe(401);
    expect((await meeting(demoId)).bot_status).toBe('joining');
    const unknown = JSON.stringify({ event: 'bot.done', data: { bot: { id: '00000000-0000-4000-8000-000000000000', metadata: {} }, data: { code: 'done' } } });
    const ignored = await rig.fn('meeting-events', { body: unknown, headers: { 'x-svc-signature': sign(unknown) } });
    expect([ignored.status, ignored.json]).toEqual([200, { ignored: 'unknown bot' }]);

    const recall = rig.fakes.recall;
    const providerId = recall.providerId(botId);
    recall.transcripts.set(providerId, [
      { participant: { id: 1, name: 'Carol' }, words: [{ text: 'We', start_timestamp: { relative: 1.5 } }, { text: 'need' }, { text: 'SSO.', end_timestamp: { relative: 3 } }] },
      { participant: { id: 2, name: 'Ann' }, words: [{ text: 'It', start_timestamp: { relative: 4 } }, { text: 'ships' }, { text: 'in' }, { text: 'May.' }] },
    ]);
    await recall.move(providerId, 'joining_call');
    await recall.move(providerId, 'in_call_recording', { afterSeconds: 5 });
    const recording = await waitFor(async () => ((await meeting(demoId)).bot_status === 'in_call_recording' ? true : undefined), 20_000);
    expect(recording).toBe(true);
    await recall.move(providerId, 'call_ended', { afterSeconds: 600 });
    await recall.artifactsReady(providerId, { afterSeconds: 1 });
    await recall.move(providerId, 'done', { afterSeconds: 1 });

    const done = await waitFor(async () => {
      const m = await meeting(demoId);
      return m.bot_status === 'done' && m.summary ? m : undefined;
    }, 30_000);
    expect(done.transcript_text).toBe('Carol: We need SSO.\nAnn: It ships in May.');
    expect(done.transcript).toEqual([
      { speaker: 'Carol', text: 'We need SSO.', start: 1.5, end: 3 },
      { speaker: 'Ann', text: 'It ships in May.', start: 4, end: null },
    ]);
    expect(done.summary).toBe('echo: Meeting: Demo with Carol Carol: We need SSO. Ann: It ships in May.');
    const timeline = await rig.serviceRows('activities', `workspace_id=eq.${ws}&kind=eq.meeting`);
    expect(timeline).toEqual([
      expect.objectContaining({ external_id: `meeting:${demoId}`, deal_id: dealId, contact_id: contactId, user_id: ann.userId, subject: 'Meeting: Demo with Carol', body: done.summary }),
    ]);
    // Every event the platform forwarded was verified and answered 2xx by the function.
    const deliveries = await rig.platform('GET', `/v1/${rig.appId}/ai/meetings/webhook/deliveries`);
    expect(deliveries.json.deliveries.length).toBeGreaterThanOrEqual(4);
    expect(deliveries.json.deliveries.filter((d: { status: string; last_status: number }) => d.status !== 'delivered')).toEqual([]);
  }, 60_000);

  it('meeting-summarize writes the summary again, updating the one timeline entry; no transcript is a 409', async () => {
    const chatsBefore = rig.fakes.openai.requests.filter((r) => r.path === '/chat/completions').length;
    const again = await rig.fn('meeting-summarize', { token: ann.token, body: { meeting_id: demoId } });
    expect(again.status).toBe(200);
    expect(again.json.summary).toBe('echo: Meeting: Demo with Carol Carol: We need SSO. Ann: It ships in May.');
    const [chat] = rig.fakes.openai.requests.filter((r) => r.path === '/chat/completions').slice(chatsBefore);
    expect(chat!.body.messages.at(-1)).toEqual({ role: 'user', content: 'Meeting: Demo with Carol\n\nCarol: We need SSO.\nAnn: It ships in May.' });
    expect(await rig.serviceRows('activities', `workspace_id=eq.${ws}&kind=eq.meeting`)).toHaveLength(1);

    const [bare] = await insert('meetings', [{ workspace_id: ws, title: 'Not recorded', meeting_url: 'https://zoom.us/j/1' }]);
    const none = await rig.fn('meeting-summarize', { token: ann.token, body: { meeting_id: bare.id } });
    expect([none.status, none.json.error.code]).toEqual([409, 'no_transcript']);
    const outsider = await rig.fn('meeting-summarize', { token: eve.token, body: { meeting_id: demoId } });
    expect([outsider.status, outsider.json.error.code]).toEqual([404, 'not_found']);
  });

  it('meeting-bots-auto sends bots to meetings starting within 10 minutes; meeting-bot-leave makes one leave', async () => {
    const [soon, later] = await insert('meetings', [
      { workspace_id: ws, title: 'Standup', meeting_url: 'https://zoom.us/j/222', starts_at: at(5 * MINUTE) },
      { workspace_id: ws, title: 'Tomorrow', meeting_url: 'https://zoom.us/j/333', starts_at: at(24 * 60 * MINUTE) },
    ]);
    const run = await rig.cron('meeting-bots-auto');
    expect([run.status, run.body]).toEqual([200, { sent: [soon.id], failed: [] }]);
    const standup = await meeting(soon.id);
    expect(standup).toMatchObject({ bot_id: expect.any(String), bot_status: 'joining' });
    expect((await meeting(later.id)).bot_id).toBeNull();
    expect((await rig.cron('meeting-bots-auto')).body).toEqual({ sent: [], failed: [] });

    const providerId = rig.fakes.recall.providerId(standup.bot_id);
    await rig.fakes.recall.move(providerId, 'in_call_recording');
    const left = await rig.fn('meeting-bot-leave', { token: ann.token, body: { meeting_id: soon.id } });
    expect([left.status, left.json]).toEqual([200, { left: true, bot_id: standup.bot_id }]);
    expect(rig.fakes.recall.bot(providerId).leaveCalls).toBe(1);
    const noBot = await rig.fn('meeting-bot-leave', { token: ann.token, body: { meeting_id: later.id } });
    expect([noBot.status, noBot.json.error.code]).toEqual([409, 'no_bot']);
    const outsider = await rig.fn('meeting-bot-leave', { token: eve.token, body: { meeting_id: soon.id } });
    expect([outsider.status, outsider.json.error.code]).toEqual([404, 'not_found']);
  });
});
