// A meeting bot's status and how the provider's status codes move it. Events can arrive late and out of order (Svix
// retries each delivery on its own schedule), so a move is decided by the phase it reaches and, inside a phase, by
// the provider's own timestamps: a bot never goes back to an earlier phase, and a terminal bot never moves.

export const BOT_STATUSES = ['joining', 'waiting_room', 'in_call', 'recording', 'ended', 'done', 'fatal'] as const;
export type BotStatus = (typeof BOT_STATUSES)[number];

export const TERMINAL: ReadonlySet<BotStatus> = new Set(['done', 'fatal']);

/** How far along a session a status is; in_call and recording alternate when recording is paused and resumed. */
const PHASE: Readonly<Record<BotStatus, number>> = { joining: 0, waiting_room: 1, in_call: 2, recording: 2, ended: 3, done: 4, fatal: 4 };

/** Recall's status codes that are ours; the rest (ready, participant_in_waiting_room, analysis_*, media_expired) move nothing. */
const FROM_PROVIDER: Readonly<Record<string, BotStatus>> = {
  joining_call: 'joining',
  in_waiting_room: 'waiting_room',
  in_call_not_recording: 'in_call',
  recording_permission_allowed: 'in_call',
  recording_permission_denied: 'in_call',
  in_call_recording: 'recording',
  call_ended: 'ended',
  recording_done: 'ended',
  done: 'done',
  fatal: 'fatal',
};

export function statusOfCode(code: string): BotStatus | undefined {
  return Object.hasOwn(FROM_PROVIDER, code) ? FROM_PROVIDER[code] : undefined;
}

/**
 * Whether a bot in `current` (set by an event of time `currentAt`) moves to `next` (an event of time `nextAt`):
 * forward to a later phase always; between in_call and recording only when the event is newer; never from done or
 * fatal, never back to an earlier phase.
 */
export function moves(current: BotStatus, currentAt: Date | null, next: BotStatus, nextAt: Date): boolean {
  if (TERMINAL.has(current) || next === current) return false;
  if (PHASE[next] !== PHASE[current]) return PHASE[next] > PHASE[current];
  return currentAt === null || nextAt > currentAt;
}

/** The session is running from its first in-call status, and over once the call ended (or the bot stopped). */
export const inCall = (status: BotStatus): boolean => PHASE[status] === 2;
export const pastCall = (status: BotStatus): boolean => PHASE[status] >= 3;
