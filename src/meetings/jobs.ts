// The meetings area's jobs: forwards of provider events to the app, and bots left behind by a deleted app.
import { z } from 'zod';
import { defineJob, type JobContext } from '../core/jobs.ts';
import type { MeetingsService } from './service.ts';
import { BOT_STATUSES } from './states.ts';

type Deps = JobContext<{ meetings: MeetingsService }>;

/** One forward of a provider event to the app's webhook (src/meetings/forwarding.ts); graphile-worker retries a failed one with backoff. */
export const meetingsForward = defineJob({
  name: 'meetings_forward',
  payload: z.object({ forward_id: z.string() }),
  handler: async ({ forward_id }, { deps, attempt }: Deps) => {
    await deps.meetings.forwarding.deliver(forward_id, attempt);
  },
});

/** A bot of a deleted app leaves its call and its time is charged (enqueued by the app's delete, db/migrations/0021). */
export const meetingsLeaveOrphan = defineJob({
  name: 'meetings_leave_orphan',
  payload: z.object({
    bot_id: z.string(),
    provider_bot_id: z.string(),
    account_id: z.string(),
    reservation_id: z.string().nullable(),
    transcript: z.boolean(),
    status: z.enum(BOT_STATUSES),
    started_at: z.string().nullable(),
    completed_at: z.string().nullable(),
  }),
  handler: async (p, { deps }: Deps) => {
    await deps.meetings.bots.leaveOrphan({
      botId: p.bot_id,
      providerBotId: p.provider_bot_id,
      accountId: p.account_id,
      reservationId: p.reservation_id,
      transcript: p.transcript,
      status: p.status,
      startedAt: p.started_at === null ? null : new Date(p.started_at),
      completedAt: p.completed_at === null ? null : new Date(p.completed_at),
    });
  },
});
