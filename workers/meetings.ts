import type { Task } from 'graphile-worker';
import type { WorkerServices } from './index.ts';

/** One forward of a provider event to the app's webhook (src/meetings/forwarding.ts); graphile-worker retries a failed one with backoff. */
export const meetingsForward = (s: WorkerServices): Task => async (payload, helpers) => {
  const forwardId = (payload as { forward_id?: unknown } | null)?.forward_id;
  if (typeof forwardId !== 'string') throw new Error('meetings_forward: payload needs forward_id');
  await s.meetings.forwarding.deliver(forwardId, { number: helpers.job.attempts, max: helpers.job.max_attempts });
};
