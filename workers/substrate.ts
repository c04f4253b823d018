import type { Task } from 'graphile-worker';
import type { WorkerServices } from './index.ts';
import { PRUNE_SUBSTRATE_SQL } from '../src/substrate/retention.ts';

/**
 * Cron, daily at 00:05 UTC (and whenever it is run again: it is idempotent): today's snapshot of every substrate user
 * with activity, refreshed if it exists. GET snapshots makes a missing one on demand, so nothing depends on this
 * having run.
 */
export const substrateSnapshots = (s: WorkerServices): Task => async (_payload, helpers) => {
  const { users } = await s.substrate.snapshots.takeAll();
  if (users) helpers.logger.debug(`took the daily substrate snapshot of ${users} users`);
};

/** One outbox delivery attempt (src/substrate/outbox.ts); graphile-worker retries a failed one with backoff. */
export const substrateOutboxDeliver = (s: WorkerServices): Task => async (payload, helpers) => {
  const deliveryId = (payload as { delivery_id?: unknown } | null)?.delivery_id;
  if (typeof deliveryId !== 'string') throw new Error('substrate_outbox_deliver: payload needs delivery_id');
  await s.substrate.outbox.deliver(deliveryId, { number: helpers.job.attempts, max: helpers.job.max_attempts });
};

/** Cron, daily: ended outbox deliveries past their retention, and rule firings that found nothing (src/substrate/retention.ts). */
export const substratePrune: Task = async (_payload, helpers) => {
  await helpers.query(PRUNE_SUBSTRATE_SQL);
};
