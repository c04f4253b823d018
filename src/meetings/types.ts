// The shapes the meetings code shares: bot rows and the bot object of the spec, and the spawn request.
import type { Selectable } from 'kysely';
import type { ControlDatabase } from '../db/types.ts';
import type { AutomaticLeave } from './provider.ts';
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

export type BotRow = Selectable<ControlDatabase['meeting_bots']>;

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
    // spawn stores SpawnRequest.metadata: strings by key.
    metadata: row.metadata as Record<string, string>,
    meetingUrl: row.meeting_url,
    transcript: row.transcript,
    recording: row.recording === 'none' ? false : row.recording,
    createdAt: row.created_at.toISOString(),
  };
}

export const NO_MEDIA = { recordingUrl: null, transcriptUrl: null } as const;
