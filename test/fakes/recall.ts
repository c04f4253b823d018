/**
 * A fake Recall.ai on loopback, for the meetings tests: real HTTP (node:http), so the platform's own adapter
 * (src/adapters/recall.ts) sends its real requests, and webhooks reach the platform signed the way Svix signs them
 * (computed here independently of the platform's verifier).
 *
 * API (`Authorization: Token <key>` required, else 401 `{ detail }`):
 *   POST /api/v1/bot/                   create: meeting_url and bot_name required; recording_config, automatic_leave,
 *                                       metadata optional; any other field is a 400 naming it (nothing the fake does
 *                                       not model passes silently). 201 with the bot.
 *   GET  /api/v1/bot/:id/               the bot: status_changes, recordings[] with media_shortcuts (video_mixed,
 *                                       audio_mixed, transcript as the bot's recording_config asked) whose
 *                                       data.download_url is new on every read, as Recall's presigned links are.
 *   POST /api/v1/bot/:id/leave_call/    200 while the bot is in the call (it then ends: call_ended and done are sent);
 *                                       400 `{ detail }` once its call is over. Unknown ids: 404.
 *   GET  /media/...                     the bytes behind a download URL; a transcript's is the JSON set for its bot
 *                                       with `transcripts.set(providerBotId, json)` (Recall's participant/words shape),
 *                                       when one was set. `mediaBaseUrl` makes download URLs point elsewhere (a server
 *                                       a sandboxed reader can reach, answering with `mediaBody(path)`).
 *
 * Scripting a bot's life (each step sends the webhook and resolves with the platform's answer): `move(id, code)`
 * sends `bot.<code>` (joining_call, in_waiting_room, in_call_recording, call_ended, done, fatal, ...);
 * `artifactsReady(id)` makes the recording (and transcript) and sends recording.done and transcript.done;
 * `runToDone(id, seconds)` plays joining_call -> in_call_recording -> (seconds later) call_ended -> recording.done ->
 * transcript.done -> done; `failBot(id, subCode)` sends bot.fatal. Event times come from each bot's own clock, which
 * starts at creation and moves only by the `afterSeconds` of a step, so durations are exact.
 *
 * Webhook controls (EmitOptions): `forge` signs with another secret, `timestamp` sets svix-timestamp (stale ones),
 * `headerStyle: 'webhook'` uses the webhook-* header names, `messageId` reuses an id; `replay(delivery)` sends a
 * recorded delivery again byte for byte. `failNext(status, body)` makes the next API request fail.
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeRecallBot {
  id: string;
  meeting_url: string;
  bot_name: string;
  recording_config: Record<string, unknown>;
  automatic_leave: Record<string, unknown> | undefined;
  metadata: Record<string, string>;
  status_changes: Array<{ code: string; sub_code: string | null; created_at: string }>;
  recordings: Array<{ id: string; transcriptId: string | null }>;
  /** The bot's clock: the time the next event is stamped with. */
  clock: Date;
  leaveCalls: number;
}

export interface EmitOptions {
  afterSeconds?: number;
  subCode?: string | null;
  forge?: boolean;
  timestamp?: number;
  headerStyle?: 'svix' | 'webhook';
  messageId?: string;
}

export interface Delivery {
  id: string;
  headers: Record<string, string>;
  body: string;
  status: number;
  answer: any;
}

const CREATE_FIELDS = new Set(['meeting_url', 'bot_name', 'recording_config', 'automatic_leave', 'metadata']);
const IN_CALL = new Set(['joining_call', 'in_waiting_room', 'in_call_not_recording', 'in_call_recording', 'recording_permission_allowed']);

export class FakeRecall {
  readonly bots = new Map<string, FakeRecallBot>();
  readonly requests: Array<{ method: string; path: string; body: any }> = [];
  readonly deliveries: Delivery[] = [];
  readonly apiKey: string;
  readonly webhookSecret: string;
  webhookUrl: string | undefined;
  /** Transcript JSON per provider bot id, served at its transcript's download URL. */
  readonly transcripts = new Map<string, unknown>();
  /** Where download URLs point (default: this fake's own url). */
  mediaBaseUrl: string | undefined;
  #server: Server;
  #failures: Array<{ status: number; body: unknown }> = [];
  url = '';

  private constructor(apiKey: string, webhookSecret: string) {
    this.apiKey = apiKey;
    this.webhookSecret = webhookSecret;
    this.#server = createServer((req, res) => void this.#handle(req, res));
  }

  static async start(opts: { apiKey?: string; webhookSecret?: string } = {}): Promise<FakeRecall> {
    const fake = new FakeRecall(opts.apiKey ?? `recall_${randomBytes(8).toString('hex')}`, opts.webhookSecret ?? `whsec_${randomBytes(24).toString('base64')}`);
    await new Promise<void>((resolve) => fake.#server.listen(0, '127.0.0.1', resolve));
    fake.url = `http://127.0.0.1:${(fake.#server.address() as AddressInfo).port}`;
    return fake;
  }

  /** The platform environment that points its adapter here. */
  env(): Record<string, string> {
    return { SVC_MEETINGS_BASE_URL: this.url, SVC_MEETINGS_API_KEY: this.apiKey, SVC_MEETINGS_WEBHOOK_SECRET: this.webhookSecret };
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  failNext(status: number, body: unknown = { detail: 'scripted failure' }): void {
    this.#failures.push({ status, body });
  }

  bot(id: string): FakeRecallBot {
    const bot = this.bots.get(id);
    if (!bot) throw new Error(`fake recall: no bot ${id}`);
    return bot;
  }

  /** The provider id of the bot the platform created with this id of its own (metadata svc_bot_id). */
  providerId(ourId: string): string {
    for (const bot of this.bots.values()) if (bot.metadata.svc_bot_id === ourId) return bot.id;
    throw new Error(`fake recall: no bot for ${ourId}`);
  }

  // ---- scripting ----------------------------------------------------------------------------------------------

  /** A status change: recorded on the bot and sent as `bot.<code>`. */
  move(id: string, code: string, opts: EmitOptions = {}): Promise<Delivery> {
    const bot = this.bot(id);
    const at = this.#tick(bot, opts.afterSeconds);
    bot.status_changes.push({ code, sub_code: opts.subCode ?? null, created_at: at });
    return this.send(this.#payload(`bot.${code}`, bot, code, opts.subCode ?? null, at), opts);
  }

  /** The recording (and transcript, when asked for) exist: recording.done, then transcript.done. */
  async artifactsReady(id: string, opts: EmitOptions = {}): Promise<Delivery[]> {
    const bot = this.bot(id);
    const wantsTranscript = bot.recording_config.transcript !== undefined;
    const recording = { id: randomUUID(), transcriptId: wantsTranscript ? randomUUID() : null };
    bot.recordings.push(recording);
    const at = this.#tick(bot, opts.afterSeconds);
    const sent = [await this.send(this.#payload('recording.done', bot, 'done', null, at, { recording: { id: recording.id, metadata: {} } }), opts)];
    if (recording.transcriptId) {
      const refs = { recording: { id: recording.id, metadata: {} }, transcript: { id: recording.transcriptId, metadata: {} } };
      sent.push(await this.send(this.#payload('transcript.done', bot, 'done', null, at, refs), opts));
    }
    return sent;
  }

  async runToDone(id: string, seconds: number): Promise<Delivery[]> {
    return [
      await this.move(id, 'joining_call'),
      await this.move(id, 'in_call_recording', { afterSeconds: 5 }),
      await this.move(id, 'call_ended', { afterSeconds: seconds }),
      ...(await this.artifactsReady(id, { afterSeconds: 1 })),
      await this.move(id, 'done', { afterSeconds: 1 }),
    ];
  }

  failBot(id: string, subCode = 'bot_kicked_from_call', opts: EmitOptions = {}): Promise<Delivery> {
    return this.move(id, 'fatal', { ...opts, subCode });
  }

  /** Signs and POSTs a payload to the platform's webhook route. */
  async send(payload: unknown, opts: EmitOptions = {}): Promise<Delivery> {
    if (!this.webhookUrl) throw new Error('fake recall: webhookUrl is not set');
    const body = JSON.stringify(payload);
    const id = opts.messageId ?? `msg_${randomBytes(12).toString('hex')}`;
    const timestamp = String(opts.timestamp ?? Math.floor(Date.now() / 1000));
    const secret = opts.forge ? `whsec_${randomBytes(24).toString('base64')}` : this.webhookSecret;
    const signature = `v1,${svixSignature(secret, id, timestamp, body)}`;
    const prefix = opts.headerStyle === 'webhook' ? 'webhook' : 'svix';
    const headers = { 'content-type': 'application/json', [`${prefix}-id`]: id, [`${prefix}-timestamp`]: timestamp, [`${prefix}-signature`]: signature };
    return this.#post(id, headers, body);
  }

  /** The same bytes and headers again (a Svix retry). */
  replay(delivery: Delivery): Promise<Delivery> {
    return this.#post(delivery.id, delivery.headers, delivery.body);
  }

  async #post(id: string, headers: Record<string, string>, body: string): Promise<Delivery> {
    const res = await fetch(this.webhookUrl!, { method: 'POST', headers, body });
    const text = await res.text();
    let answer: unknown = text;
    try {
      answer = JSON.parse(text);
    } catch {
      // not JSON: kept as text
    }
    const delivery = { id, headers, body, status: res.status, answer };
    this.deliveries.push(delivery);
    return delivery;
  }

  #tick(bot: FakeRecallBot, afterSeconds = 0): string {
    bot.clock = new Date(bot.clock.getTime() + afterSeconds * 1000);
    return bot.clock.toISOString();
  }

  #payload(event: string, bot: FakeRecallBot, code: string, subCode: string | null, at: string, extra: Record<string, unknown> = {}): unknown {
    return { event, data: { data: { code, sub_code: subCode, updated_at: at }, bot: { id: bot.id, metadata: bot.metadata }, ...extra } };
  }

  /** What a download URL's path serves: the bot's transcript set by the test for its transcript, else a stand-in. */
  mediaBody(path: string): unknown {
    const m = /^\/media\/([^/]+)\/transcript\.json$/.exec(path);
    if (m) {
      for (const bot of this.bots.values()) {
        if (bot.recordings.some((r) => r.transcriptId === m[1]) && this.transcripts.has(bot.id)) return this.transcripts.get(bot.id);
      }
    }
    return { media: path };
  }

  // ---- API ------------------------------------------------------------------------------------------------------

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const path = (req.url ?? '/').split('?')[0]!;
    let body: any;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      return send(res, 400, { detail: 'JSON parse error' });
    }
    this.requests.push({ method: req.method ?? '', path, body });
    if (path.startsWith('/media/')) return send(res, 200, this.mediaBody(path));
    if (req.headers.authorization !== `Token ${this.apiKey}`) return send(res, 401, { detail: 'Invalid token.' });
    const failure = this.#failures.shift();
    if (failure) return send(res, failure.status, failure.body);
    if (req.method === 'POST' && path === '/api/v1/bot/') return this.#create(res, body);
    const m = /^\/api\/v1\/bot\/([^/]+)\/(leave_call\/)?$/.exec(path);
    const bot = m ? this.bots.get(m[1]!) : undefined;
    if (!m || !bot) return send(res, 404, { detail: 'Not found.' });
    if (req.method === 'GET' && !m[2]) return send(res, 200, this.#view(bot));
    if (req.method === 'POST' && m[2]) return this.#leave(res, bot);
    send(res, 405, { detail: 'Method not allowed.' });
  }

  #create(res: ServerResponse, body: any): void {
    const unknown = Object.keys(body ?? {}).filter((k) => !CREATE_FIELDS.has(k));
    if (unknown.length) return send(res, 400, Object.fromEntries(unknown.map((k) => [k, ['Unknown field.']])));
    if (typeof body?.meeting_url !== 'string') return send(res, 400, { meeting_url: ['This field is required.'] });
    if (body.meeting_url.includes('invalid-at-provider')) return send(res, 400, { meeting_url: ['Invalid meeting URL.'] });
    if (typeof body.bot_name !== 'string') return send(res, 400, { bot_name: ['This field is required.'] });
    const now = new Date();
    const bot: FakeRecallBot = {
      id: randomUUID(),
      meeting_url: body.meeting_url,
      bot_name: body.bot_name,
      recording_config: body.recording_config ?? {},
      automatic_leave: body.automatic_leave,
      metadata: body.metadata ?? {},
      status_changes: [{ code: 'ready', sub_code: null, created_at: now.toISOString() }],
      recordings: [],
      clock: now,
      leaveCalls: 0,
    };
    this.bots.set(bot.id, bot);
    send(res, 201, this.#view(bot));
  }

  #leave(res: ServerResponse, bot: FakeRecallBot): void {
    const code = bot.status_changes.at(-1)!.code;
    if (!IN_CALL.has(code) && code !== 'ready') return send(res, 400, { detail: 'Bot is not in a call.' });
    bot.leaveCalls++;
    send(res, 200, this.#view(bot));
  }

  /** Recall's bot: media links are presigned, so each read gets new ones. */
  #view(bot: FakeRecallBot): unknown {
    const link = (recording: string, kind: string) => ({ data: { download_url: `${this.mediaBaseUrl ?? this.url}/media/${recording}/${kind}?X-Amz-Signature=${randomBytes(8).toString('hex')}` } });
    const config = bot.recording_config;
    return {
      id: bot.id,
      meeting_url: bot.meeting_url,
      bot_name: bot.bot_name,
      metadata: bot.metadata,
      status_changes: bot.status_changes,
      recordings: bot.recordings.map((r) => ({
        id: r.id,
        media_shortcuts: {
          video_mixed: config.video_mixed_mp4 ? link(r.id, 'video.mp4') : null,
          audio_mixed: config.audio_mixed_mp3 ? link(r.id, 'audio.mp3') : null,
          transcript: r.transcriptId ? link(r.transcriptId, 'transcript.json') : null,
        },
      })),
    };
  }
}

/** Svix's scheme: base64 HMAC-SHA256 of "id.timestamp.body", keyed with the base64-decoded part of whsec_<key>. */
export function svixSignature(secret: string, id: string, timestamp: string, body: string): string {
  return createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64')).update(`${id}.${timestamp}.${body}`).digest('base64');
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
