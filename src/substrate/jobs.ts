// The substrate area's jobs: outbox deliveries, attention rules (the tick and one slot), snapshots and retention.
import { z } from 'zod';
import { cronNow, defineCron, defineJob, type JobContext } from '../core/jobs.ts';
import { PRUNE_SUBSTRATE_SQL } from './retention.ts';
import type { SubstrateService } from './service.ts';

type Deps = JobContext<{ substrate: SubstrateService }>;

/** One outbox delivery attempt (src/substrate/outbox.ts); graphile-worker retries a failed one with backoff. */
export const substrateOutboxDeliver = defineJob({
  name: 'substrate_outbox_deliver',
  payload: z.object({ delivery_id: z.string() }),
  handler: async ({ delivery_id }, { deps, attempt }: Deps) => {
    await deps.substrate.outbox.deliver(delivery_id, attempt);
  },
});

/**
 * Cron, every minute: one substrate_rule_fire job per due slot of every enabled attention rule (job key
 * `rule:<rule id>:<slot>`), advancing each rule's cursor in the same transaction (src/substrate/rules.ts).
 */
export const substrateRulesTick = defineCron({
  name: 'substrate_rules_tick',
  cron: '* * * * *',
  handler: async (p, { deps, logger }: Deps) => {
    const { enqueued } = await deps.substrate.rules.dispatch(cronNow(p));
    if (enqueued) logger.debug(`enqueued ${enqueued} attention rule slots`);
  },
});

/**
 * One slot of one attention rule: its bindings proposed with idempotency keys derived from the slot, so a retry or a
 * second run of the slot replays instead of proposing again.
 */
export const substrateRuleFire = defineJob({
  name: 'substrate_rule_fire',
  payload: z.object({ rule_id: z.string().min(1).max(100), slot: z.string().datetime({ offset: true }) }),
  maxAttempts: 3,
  handler: async (p, { deps }: Deps) => {
    await deps.substrate.rules.fire(p.rule_id, p.slot);
  },
});

/**
 * Cron, daily at 00:05 UTC (and whenever it is run again: it is idempotent): today's snapshot of every substrate user
 * with activity, refreshed if it exists. GET snapshots makes a missing one on demand, so nothing depends on this
 * having run.
 */
export const substrateSnapshots = defineCron({
  name: 'substrate_snapshots',
  cron: '5 0 * * *',
  backfill: '1d',
  handler: async (_payload, { deps, logger }: Deps) => {
    const { users } = await deps.substrate.snapshots.takeAll();
    if (users) logger.debug(`took the daily substrate snapshot of ${users} users`);
  },
});

/** Cron, daily: ended outbox deliveries past their retention, and rule firings that found nothing (src/substrate/retention.ts). */
export const substratePrune = defineCron({
  name: 'substrate_prune',
  cron: '53 3 * * *',
  handler: async (_payload, { query }) => {
    await query(PRUNE_SUBSTRATE_SQL);
  },
});
