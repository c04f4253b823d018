import type { Task } from 'graphile-worker';
import { z } from 'zod';
import { BOT_STATUSES } from '../src/meetings/states.ts';
import type { WorkerServices } from './index.ts';

/** One forward of a provider event to the app's webhook (src/meetings/forwarding.ts); graphile-worker retries a failed one with backoff. */
export const meetingsForward = (s: WorkerServices): Task => async (payload, helpers) => {
  const forwardId = (payload as { forward_id?: unknown } | null)?.forward_id;
  if (typeof forwardId !== 'string') throw new Error('meetings_forward: payload needs forward_id');
  await s.meetings.forwarding.deliver(forwardId, { number: helpers.job.attempts, max: helpers.job.max_attempts });
};

const OrphanPayload = z.object({
  bot_id: z.string(),
  provider_bot_id: z.string(),
  account_id: z.string(),
  reservation_id: z.string().nullable(),
  transcript: z.boolean(),
  status: z.enum(BOT_STATUSES),
  started_at: z.string().nullable(),
  completed_at: z.string().nullable(),
});

/** A bot of a deleted app leaves its call and its time is charged (enqueued by the app's delete, db/migrations/0021). */
export const meetingsLeaveOrphan = (s: WorkerServices): Task => async (payload) => {
  const p = OrphanPayload.parse(payload);
  await s.meetings.bots.leaveOrphan({
    botId: p.bot_id,
    providerBotId: p.provider_bot_id,
    accountId: p.account_id,
    reservationId: p.reservation_id,
    transcript: p.transcript,
    status: p.status,
    startedAt: p.started_at === null ? null : new Date(p.started_at),
    completedAt: p.completed_at === null ? null : new Date(p.completed_at),
  });
};
