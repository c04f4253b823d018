// What meetings asks of a bot provider, in our terms: send a bot, read its media, make it leave, and take the
// provider's webhooks (verify a delivery, read its event). Adapters in src/adapters/ (recall.ts) implement it; the
// composition root builds one from the configuration and hands it to MeetingsService.

export type RecordingKind = 'mp4' | 'audio_only' | 'none';

/** Our automaticLeave, in seconds; omitted fields keep the provider's defaults. */
export interface AutomaticLeave {
  waitingRoomTimeoutSec?: number | undefined;
  noOneJoinedTimeoutSec?: number | undefined;
  everyoneLeftTimeoutSec?: number | undefined;
  inCallNotRecordingTimeoutSec?: number | undefined;
}

export interface BotRequest {
  meetingUrl: string;
  botName: string;
  transcript: boolean;
  recording: RecordingKind;
  automaticLeave: AutomaticLeave;
  /** Sent to the provider as the bot's metadata (the service adds its own svc_ keys). */
  metadata: Record<string, string>;
}

/** Download URLs the provider issues on each read; they expire within hours. */
export interface BotMedia {
  recordingUrl: string | null;
  transcriptUrl: string | null;
}

/** A webhook delivery's headers, as the HTTP server hands them over. */
export type WebhookHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** A provider event, normalized from the provider's payload. */
export interface ProviderEvent {
  /** The provider's event name: `bot.<status code>` for status changes, `recording.done`, `transcript.done`, ... */
  event: string;
  providerBotId: string;
  code: string;
  subCode: string | null;
  /** When the provider says it happened (ISO 8601). */
  updatedAt: string;
  recording: ArtifactRef | undefined;
  transcript: ArtifactRef | undefined;
}

export interface ArtifactRef {
  id: string;
  metadata: Record<string, string>;
}

/** One speaker's turn of a transcript, in our terms: seconds from the recording's start (null when unknown). */
export interface TranscriptSegment {
  speaker: string;
  text: string;
  start: number | null;
  end: number | null;
}

export interface MeetingsProvider {
  createBot(request: BotRequest): Promise<{ id: string }>;
  media(providerBotId: string, recording: RecordingKind): Promise<BotMedia>;
  /** The bot's transcript read from the provider and normalized; null while there is none. */
  transcript(providerBotId: string, recording: RecordingKind): Promise<TranscriptSegment[] | null>;
  /** Makes the bot leave; a bot that already left (or never joined) is no failure. */
  leaveCall(providerBotId: string): Promise<void>;
  /**
   * Verifies a webhook delivery on its raw bytes with the platform's webhook secret and returns its message id (the
   * idempotency key). Throws WebhookSignatureError when it does not verify.
   */
  verifyWebhook(body: Buffer, headers: WebhookHeaders, secret: string): string;
  /** The event a verified delivery's JSON payload carries; undefined: not an event about a bot. */
  parseEvent(payload: unknown): ProviderEvent | undefined;
}

/**
 * A provider call that failed: `status` is the provider's HTTP status (null: unreachable or timed out); `fields`
 * holds the provider's per-field complaints of a 400, named as our spawn body names them.
 */
export class MeetingsProviderError extends Error {
  readonly status: number | null;
  readonly fields: Readonly<Record<string, string>>;

  constructor(status: number | null, message: string, fields: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.fields = fields;
  }
}

/** A webhook delivery whose signature does not verify (missing headers, stale timestamp, no matching signature). */
export class WebhookSignatureError extends Error {}
