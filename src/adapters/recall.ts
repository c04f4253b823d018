// The meetings provider: Recall.ai's v1 bot API (create a bot, retrieve it with its media shortcuts, make it leave)
// and its webhooks, which Recall sends through Svix. Everything vendor-shaped stays here: the service sees
// MeetingsProvider, ProviderEvent and MeetingsProviderError, which it declares (src/meetings/provider.ts).
import { createHmac, timingSafeEqual } from 'node:crypto';
import {
  MeetingsProviderError,
  WebhookSignatureError,
  type ArtifactRef,
  type BotMedia,
  type BotRequest,
  type MeetingsProvider,
  type ProviderEvent,
  type RecordingKind,
  type TranscriptSegment,
  type WebhookHeaders,
} from '../meetings/provider.ts';

/** Recall's request fields as our spawn body names them, to point a provider 400 at the caller's field. */
const FIELD_NAMES: Readonly<Record<string, string>> = {
  meeting_url: 'meetingUrl',
  bot_name: 'botName',
  metadata: 'metadata',
  recording_config: 'recording',
  automatic_leave: 'automaticLeave',
};

export class RecallAdapter implements MeetingsProvider {
  readonly #baseUrl: string;
  readonly #apiKey: string;
  readonly #timeoutMs: number;

  constructor(options: { baseUrl: string; apiKey: string; timeoutMs: number }) {
    this.#baseUrl = options.baseUrl.replace(/(?<!\/)\/+$/, '');
    this.#apiKey = options.apiKey;
    this.#timeoutMs = options.timeoutMs;
  }

  async createBot(request: BotRequest): Promise<{ id: string }> {
    const bot = await this.#call('POST', '/api/v1/bot/', createBody(request));
    const id = (bot as { id?: unknown }).id;
    if (typeof id !== 'string' || id === '') throw new MeetingsProviderError(502, 'the created bot has no id');
    return { id };
  }

  async media(providerBotId: string, recording: RecordingKind): Promise<BotMedia> {
    const bot = (await this.#call('GET', `/api/v1/bot/${encodeURIComponent(providerBotId)}/`)) as RecallBot;
    return mediaOf(bot, recording);
  }

  async transcript(providerBotId: string, recording: RecordingKind): Promise<TranscriptSegment[] | null> {
    const { transcriptUrl } = await this.media(providerBotId, recording);
    if (!transcriptUrl) return null;
    return segmentsOf(await this.#download(transcriptUrl));
  }

  /** A download URL the provider issued (its media host, not the API): read whole up to TRANSCRIPT_MAX_BYTES. */
  async #download(url: string): Promise<unknown> {
    let res: Response;
    try {
      res = await fetch(url, { signal: AbortSignal.timeout(this.#timeoutMs) });
    } catch (err) {
      const timedOut = err instanceof Error && err.name === 'TimeoutError';
      throw new MeetingsProviderError(null, timedOut ? `the transcript download gave no answer within ${this.#timeoutMs} ms` : 'the transcript download is unreachable');
    }
    if (!res.ok) throw new MeetingsProviderError(res.status, `the transcript download answered ${res.status}`);
    const text = await readCapped(res, TRANSCRIPT_MAX_BYTES);
    if (text === undefined) throw new MeetingsProviderError(null, `the transcript is larger than ${TRANSCRIPT_MAX_BYTES / 1024 / 1024} MB`);
    const json = parseJson(text);
    if (json === undefined) throw new MeetingsProviderError(null, 'the transcript download is not JSON');
    return json;
  }

  async leaveCall(providerBotId: string): Promise<void> {
    try {
      await this.#call('POST', `/api/v1/bot/${encodeURIComponent(providerBotId)}/leave_call/`, {});
    } catch (err) {
      // Recall refuses to make a bot leave a call it is not in (already gone, never admitted): the wish is granted.
      if (err instanceof MeetingsProviderError && err.status !== null && [400, 404, 409].includes(err.status)) return;
      throw err;
    }
  }

  verifyWebhook(body: Buffer, headers: WebhookHeaders, secret: string): string {
    return verifyWebhook(body, headers, secret);
  }

  parseEvent(payload: unknown): ProviderEvent | undefined {
    return parseProviderEvent(payload);
  }

  async #call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
    let res: Response;
    try {
      res = await fetch(this.#baseUrl + path, {
        method,
        headers: { authorization: `Token ${this.#apiKey}`, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (err) {
      const timedOut = err instanceof Error && err.name === 'TimeoutError';
      throw new MeetingsProviderError(null, timedOut ? `no answer within ${this.#timeoutMs} ms` : 'unreachable');
    }
    const text = await res.text();
    const json = parseJson(text);
    if (res.ok) return json ?? {};
    throw new MeetingsProviderError(res.status, describeFailure(json, text), res.status === 400 ? fieldErrors(json) : {});
  }
}

function createBody(r: BotRequest): Record<string, unknown> {
  const leave = r.automaticLeave;
  const automaticLeave = dropUndefined({
    waiting_room_timeout: leave.waitingRoomTimeoutSec,
    noone_joined_timeout: leave.noOneJoinedTimeoutSec,
    everyone_left_timeout: leave.everyoneLeftTimeoutSec === undefined ? undefined : { timeout: leave.everyoneLeftTimeoutSec },
    in_call_not_recording_timeout: leave.inCallNotRecordingTimeoutSec,
  });
  return {
    meeting_url: r.meetingUrl,
    bot_name: r.botName,
    recording_config: dropUndefined({
      // Recall records mixed video by default: null turns it off.
      video_mixed_mp4: r.recording === 'mp4' ? {} : null,
      audio_mixed_mp3: r.recording === 'audio_only' ? {} : undefined,
      transcript: r.transcript ? { provider: { meeting_captions: {} } } : undefined,
    }),
    ...(Object.keys(automaticLeave).length > 0 ? { automatic_leave: automaticLeave } : {}),
    metadata: r.metadata,
  };
}

interface MediaShortcut {
  data?: { download_url?: unknown } | null;
}

interface RecallBot {
  recordings?: Array<{ media_shortcuts?: Record<string, MediaShortcut | null> | null }> | null;
}

/** The newest recording's download URLs for the kind the bot records (video_mixed or audio_mixed) and its transcript. */
function mediaOf(bot: RecallBot, recording: RecordingKind): BotMedia {
  const shortcuts = (bot.recordings ?? []).map((r) => r.media_shortcuts ?? {});
  const latest = (key: string): string | null => {
    for (const s of [...shortcuts].reverse()) {
      const url = s[key]?.data?.download_url;
      if (typeof url === 'string' && url !== '') return url;
    }
    return null;
  };
  const mediaKey = recording === 'mp4' ? 'video_mixed' : recording === 'audio_only' ? 'audio_mixed' : undefined;
  return { recordingUrl: mediaKey ? latest(mediaKey) : null, transcriptUrl: latest('transcript') };
}

/**
 * An hour of Recall's word-level transcript is about 1 MB of JSON: 4 MB (3 hours and more) is parsed on the event loop in
 * about 25 ms; more is refused rather than parsed.
 */
const TRANSCRIPT_MAX_BYTES = 4 * 1024 * 1024;

/** The body as text, or undefined past `max` bytes (read as it streams, so an endless body stops there). */
async function readCapped(res: Response, max: number): Promise<string | undefined> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body ?? []) {
    size += chunk.byteLength;
    if (size > max) {
      await res.body?.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

interface RecallWord {
  text?: unknown;
  start_timestamp?: { relative?: unknown } | null;
  end_timestamp?: { relative?: unknown } | null;
}

/** Recall's transcript: one entry per speaker's turn, { participant: { name }, words: [{ text, start_timestamp, end_timestamp }] }. */
function segmentsOf(json: unknown): TranscriptSegment[] {
  if (!Array.isArray(json)) throw new MeetingsProviderError(null, 'the transcript is not a list of turns');
  const seconds = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  const segments: TranscriptSegment[] = [];
  for (const turn of json as Array<{ participant?: { name?: unknown; id?: unknown } | null; words?: unknown }>) {
    const words = (Array.isArray(turn?.words) ? turn.words : []) as RecallWord[];
    const text = words.map((w) => (typeof w?.text === 'string' ? w.text : '')).filter(Boolean).join(' ');
    if (!text) continue;
    const name = turn.participant?.name;
    segments.push({
      speaker: typeof name === 'string' && name ? name : `Speaker ${String(turn.participant?.id ?? '?')}`,
      text,
      start: seconds(words[0]?.start_timestamp?.relative),
      end: seconds(words[words.length - 1]?.end_timestamp?.relative),
    });
  }
  return segments;
}

function dropUndefined(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

function describeFailure(json: unknown, text: string): string {
  const detail = (json as { detail?: unknown } | undefined)?.detail;
  if (typeof detail === 'string') return detail.slice(0, 300);
  return (json === undefined ? text : JSON.stringify(json)).slice(0, 300) || 'no body';
}

/** `{ "meeting_url": ["Invalid meeting URL."] }` -> `{ meetingUrl: "Invalid meeting URL." }`. */
function fieldErrors(json: unknown): Record<string, string> {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return {};
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(json)) {
    const why = Array.isArray(value) ? value.filter((v) => typeof v === 'string').join(' ') : typeof value === 'string' ? value : '';
    if (why) out[FIELD_NAMES[key] ?? key] = why.slice(0, 300);
  }
  return out;
}

// ---- webhooks ---------------------------------------------------------------------------------------------------

/** How far a webhook's timestamp may be from our clock (either way): a captured delivery cannot be replayed later. */
export const WEBHOOK_TOLERANCE_SECONDS = 5 * 60;

function header(headers: WebhookHeaders, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = headers[name];
    if (typeof value === 'string' && value !== '') return value;
  }
  return undefined;
}

/**
 * Verifies a Svix-signed delivery on its raw bytes and returns its message id (the idempotency key). Headers
 * `svix-id`, `svix-timestamp`, `svix-signature` or their `webhook-*` equivalents; the secret is `whsec_<base64 key>`;
 * the signature list holds space-separated `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` (several during a secret
 * rotation: one match is enough).
 */
export function verifyWebhook(body: Buffer, headers: WebhookHeaders, secret: string, nowSeconds = Math.floor(Date.now() / 1000)): string {
  const id = header(headers, 'svix-id', 'webhook-id');
  const timestamp = header(headers, 'svix-timestamp', 'webhook-timestamp');
  const signatures = header(headers, 'svix-signature', 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookSignatureError('missing svix-id, svix-timestamp or svix-signature (or webhook-*) header');
  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookSignatureError('the timestamp is not whole seconds');
  if (Math.abs(nowSeconds - Number(timestamp)) > WEBHOOK_TOLERANCE_SECONDS) throw new WebhookSignatureError('the timestamp is more than 5 minutes away');
  const expected = webhookSignature(secret, id, timestamp, body);
  const matches = signatures.split(' ').some((entry) => {
    const [version, value] = entry.split(',', 2);
    return version === 'v1' && value !== undefined && sameBytes(Buffer.from(value, 'base64'), expected);
  });
  if (!matches) throw new WebhookSignatureError('no v1 signature matches');
  return id;
}

/** The raw HMAC of a Svix delivery: the key is the base64 part of whsec_<key>. */
function webhookSignature(secret: string, id: string, timestamp: string, body: Buffer | string): Buffer {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest();
}

function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Recall's current format `{ event, data: { data: { code, sub_code, updated_at }, bot: { id, metadata },
 * recording?: { id, metadata }, transcript?: ... } }`, and the older `bot.status_change` one `{ event, data: { bot_id,
 * status: { code, sub_code, created_at } } }` (its event becomes `bot.<code>`). Undefined: not an event about a bot.
 */
export function parseProviderEvent(payload: unknown): ProviderEvent | undefined {
  const p = payload as { event?: unknown; data?: Record<string, any> } | null;
  if (!p || typeof p.event !== 'string' || typeof p.data !== 'object' || p.data === null) return undefined;
  const d = p.data;
  if (p.event === 'bot.status_change') {
    const status = d.status ?? {};
    if (typeof d.bot_id !== 'string' || typeof status.code !== 'string') return undefined;
    return event(`bot.${status.code}`, d.bot_id, status.code, status.sub_code, status.created_at, undefined, undefined);
  }
  const inner = d.data ?? {};
  const botId = d.bot?.id;
  if (typeof botId !== 'string') return undefined;
  const code = typeof inner.code === 'string' ? inner.code : p.event.slice(p.event.indexOf('.') + 1);
  return event(p.event, botId, code, inner.sub_code, inner.updated_at, artifact(d.recording), artifact(d.transcript));
}

function event(name: string, botId: string, code: string, subCode: unknown, at: unknown, recording: ArtifactRef | undefined, transcript: ArtifactRef | undefined): ProviderEvent {
  const time = typeof at === 'string' && !Number.isNaN(Date.parse(at)) ? new Date(at).toISOString() : new Date().toISOString();
  return { event: name, providerBotId: botId, code, subCode: typeof subCode === 'string' ? subCode : null, updatedAt: time, recording, transcript };
}

function artifact(value: unknown): ArtifactRef | undefined {
  const v = value as { id?: unknown; metadata?: unknown } | null | undefined;
  if (!v || typeof v.id !== 'string') return undefined;
  return { id: v.id, metadata: stringMap(v.metadata) };
}

/** Only string values: metadata is a map of strings, whatever else a payload carries. */
export function stringMap(value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === 'string'));
}
