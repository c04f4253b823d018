// The meetings pieces that need no server: Svix verification at its edges, the provider's payload formats, the status
// moves, prices and the meeting hosts.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseProviderEvent, verifyWebhook } from '../../src/adapters/recall.ts';
import { WebhookSignatureError } from '../../src/meetings/provider.ts';
import { moves, statusOfCode, BOT_STATUSES, type BotStatus } from '../../src/meetings/states.ts';
import { chargeNanos, estimateUsd, usdString } from '../../src/meetings/pricing.ts';
import { isMeetingUrl } from '../../src/meetings/hosts.ts';

const SECRET = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
const NOW = 1_800_000_000;
const body = Buffer.from('{"event":"bot.done"}');
const sign = (id: string, ts: number, secret = SECRET) =>
  `v1,${createHmac('sha256', Buffer.from(secret.slice(6), 'base64')).update(`${id}.${ts}.${body.toString()}`).digest('base64')}`;
const headers = (ts: number, signature = sign('msg_1', ts)) => ({ 'svix-id': 'msg_1', 'svix-timestamp': String(ts), 'svix-signature': signature });

describe('verifyWebhook', () => {
  it('returns the message id of a valid delivery, within 5 minutes either way', () => {
    for (const ts of [NOW, NOW - 300, NOW + 300]) expect(verifyWebhook(body, headers(ts), SECRET, NOW)).toBe('msg_1');
  });

  it('refuses stale or future timestamps, malformed ones, missing headers and foreign signatures', () => {
    const refuse = (h: Record<string, string>) => expect(() => verifyWebhook(body, h, SECRET, NOW)).toThrow(WebhookSignatureError);
    refuse(headers(NOW - 301));
    refuse(headers(NOW + 301));
    refuse({ ...headers(NOW), 'svix-timestamp': '1.8e9' });
    refuse({ 'svix-id': 'msg_1', 'svix-timestamp': String(NOW) });
    refuse(headers(NOW, sign('msg_1', NOW, `whsec_${Buffer.from('another secret of 32 bytes......').toString('base64')}`)));
    refuse(headers(NOW, sign('msg_1', NOW).replace('v1,', 'v2,')));
    refuse(headers(NOW, 'v1'));
    refuse(headers(NOW, 'v1,'));
  });

  it('accepts one matching signature among several, and the webhook-* header names', () => {
    expect(verifyWebhook(body, headers(NOW, `v1,AAAA ${sign('msg_1', NOW)} v1a,xyz`), SECRET, NOW)).toBe('msg_1');
    const h = headers(NOW);
    expect(verifyWebhook(body, { 'webhook-id': h['svix-id'], 'webhook-timestamp': h['svix-timestamp'], 'webhook-signature': h['svix-signature'] }, SECRET, NOW)).toBe('msg_1');
  });
});

describe('parseProviderEvent', () => {
  it('reads the current format with its artifacts, and the older status_change one', () => {
    expect(
      parseProviderEvent({
        event: 'transcript.done',
        data: { data: { code: 'done', sub_code: null, updated_at: '2026-01-02T03:04:05Z' }, bot: { id: 'b1', metadata: { a: '1' } }, recording: { id: 'r1', metadata: {} }, transcript: { id: 't1', metadata: { n: 2, k: 'v' } } },
      }),
    ).toEqual({ event: 'transcript.done', providerBotId: 'b1', code: 'done', subCode: null, updatedAt: '2026-01-02T03:04:05.000Z', recording: { id: 'r1', metadata: {} }, transcript: { id: 't1', metadata: { k: 'v' } } });
    expect(parseProviderEvent({ event: 'bot.status_change', data: { bot_id: 'b2', status: { code: 'call_ended', sub_code: 'call_ended_by_host', created_at: '2026-01-02T03:04:05Z' } } })).toMatchObject({
      event: 'bot.call_ended',
      providerBotId: 'b2',
      code: 'call_ended',
      subCode: 'call_ended_by_host',
    });
    for (const junk of [null, 'x', { event: 1 }, { event: 'bot.done' }, { event: 'bot.done', data: { bot: {} } }, { event: 'bot.status_change', data: { status: {} } }]) {
      expect(parseProviderEvent(junk)).toBeUndefined();
    }
  });
});

describe('status moves', () => {
  const t = (s: number) => new Date(1_000_000 + s * 1000);
  it('goes forward by phase, alternates in_call and recording by time, and never leaves done or fatal', () => {
    expect(moves('joining', t(0), 'waiting_room', t(1))).toBe(true);
    expect(moves('waiting_room', t(5), 'joining', t(6))).toBe(false);
    expect(moves('joining', t(9), 'recording', t(1))).toBe(true);
    expect(moves('recording', t(5), 'in_call', t(4))).toBe(false);
    expect(moves('recording', t(5), 'in_call', t(6))).toBe(true);
    expect(moves('ended', t(5), 'recording', t(9))).toBe(false);
    expect(moves('ended', t(5), 'fatal', t(1))).toBe(true);
    for (const next of BOT_STATUSES) {
      expect(moves('done', t(0), next as BotStatus, t(9))).toBe(false);
      expect(moves('fatal', t(0), next as BotStatus, t(9))).toBe(false);
    }
  });

  it('maps the provider codes that are ours and ignores the rest', () => {
    expect(['joining_call', 'in_waiting_room', 'in_call_not_recording', 'in_call_recording', 'call_ended', 'recording_done', 'done', 'fatal'].map(statusOfCode)).toEqual([
      'joining',
      'waiting_room',
      'in_call',
      'recording',
      'ended',
      'ended',
      'done',
      'fatal',
    ]);
    for (const code of ['ready', 'analysis_done', 'media_expired', 'toString', '__proto__']) expect(statusOfCode(code)).toBeUndefined();
  });
});

describe('prices', () => {
  const prices = { recordingUsdPerHour: 0.5, transcriptionUsdPerHour: 0.15 };
  it('charges per second in whole micro-dollars, written with 6 decimals', () => {
    expect(chargeNanos(prices, 'recording', 600)).toBe(83_333_000);
    expect(usdString(chargeNanos(prices, 'recording', 600))).toBe('0.083333');
    expect(usdString(chargeNanos(prices, 'transcription', 1))).toBe('0.000042');
    expect(usdString(0)).toBe('0.000000');
    expect(estimateUsd(prices, 90, true)).toBe(0.975);
    expect(estimateUsd(prices, 90, false)).toBe(0.75);
  });
});

describe('isMeetingUrl', () => {
  it.each(['https://zoom.us/j/1', 'https://ACME.Zoom.us/j/1', 'https://meet.google.com/a-b-c', 'https://teams.microsoft.com/l/meetup-join/x', 'https://x.webex.com/meet/y'])('accepts %s', (url) => {
    expect(isMeetingUrl(url)).toBe(true);
  });
  it.each(['http://zoom.us/j/1', 'https://zoom.us.evil.com/j/1', 'https://evilzoom.us/j/1', 'https://google.com/meet', 'zoommtg://zoom.us/join', 'https://a:b@zoom.us/j/1', 'nope'])('refuses %s', (url) => {
    expect(isMeetingUrl(url)).toBe(false);
  });
});
