// The shapes the meetings code shares: bot rows and the bot object of the spec, and the spawn request.
import type { AutomaticLeave, RecordingKind } from './provider.ts';
import type { BotStatus } from './states.ts';

/** Metadata keys the platform keeps for itself on the provider's bot; callers may not use the prefix. */
export const RESERVED_METADATA_PREFIX = 'svc_';

/** What the spec calls the default subscription of every app: only these events are forwarded. */
export const FORWARDED_EVENTS: ReadonlySet<string> = new Set([
  'bot.in_call_recording',
  'bot.done',
  'bot.fatal',
  'recording.done',
  'transcript.done',
  'transcript.failed',
]);

export interface SpawnRequest {
  meetingUrl: string;
  transcript: boolean;
  recording: 'mp4' | 'audio_only' | false;
  botName?: string | undefined;
  metadata: Record<string, string>;
  automaticLeave: AutomaticLeave;
}

export interface BotRow {
  id: string;
  app_id: string;
  provider_bot_id: string;
  status: BotStatus;
  status_at: Date | null;
  bot_name: string;
  meeting_url: string;
  metadata: Record<string, string>;
  transcript: boolean;
  recording: RecordingKind;
  reservation_id: string | null;
  started_at: Date | null;
  completed_at: Date | null;
  duration_seconds: number | null;
  created_at: Date;
}

export interface BotView {
  id: string;
  status: BotStatus;
  startedAt: string | null;
  completedAt: string | null;
  durationSeconds: number | null;
  recordingUrl: string | null;
  transcriptUrl: string | null;
  botName: string;
  metadata: Record<string, string>;
  meetingUrl: string;
  transcript: boolean;
  recording: 'mp4' | 'audio_only' | false;
  createdAt: string;
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

export function botView(row: BotRow, media: { recordingUrl: string | null; transcriptUrl: string | null }): BotView {
  return {
    id: row.id,
    status: row.status,
    startedAt: iso(row.started_at),
    completedAt: iso(row.completed_at),
    durationSeconds: row.duration_seconds,
    recordingUrl: media.recordingUrl,
    transcriptUrl: media.transcriptUrl,
    botName: row.bot_name,
    metadata: row.metadata,
    meetingUrl: row.meeting_url,
    transcript: row.transcript,
    recording: row.recording === 'none' ? false : row.recording,
    createdAt: row.created_at.toISOString(),
  };
}

export const NO_MEDIA = { recordingUrl: null, transcriptUrl: null } as const;
