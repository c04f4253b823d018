import { z } from 'zod';
import type { Task } from 'graphile-worker';
import type { WorkerServices } from './index.ts';

/** graphile-worker's crontab payload carries the slot it was scheduled for; tests (and operators) may pass `now`. */
const TickPayload = z
  .object({
    now: z.string().datetime({ offset: true }).optional(),
    _cron: z.object({ ts: z.string() }).partial().optional(),
  })
  .passthrough();

/**
 * Cron, every minute: one substrate_rule_fire job per due slot of every enabled attention rule (job key
 * `rule:<rule id>:<slot>`), advancing each rule's cursor in the same transaction (src/substrate/rules.ts).
 */
export const substrateRulesTick = (s: WorkerServices): Task => async (payload, helpers) => {
  const p = TickPayload.parse(payload ?? {});
  const ts = p.now ?? p._cron?.ts;
  const now = ts && !Number.isNaN(Date.parse(ts)) ? new Date(ts) : new Date();
  const { enqueued } = await s.substrate.rules.dispatch(now);
  if (enqueued) helpers.logger.debug(`enqueued ${enqueued} attention rule slots`);
};

const FirePayload = z.object({ rule_id: z.string().min(1).max(100), slot: z.string().datetime({ offset: true }) });

/**
 * One slot of one attention rule: its bindings proposed with idempotency keys derived from the slot, so a retry or a
 * second run of the slot replays instead of proposing again.
 */
export const substrateRuleFire = (s: WorkerServices): Task => async (payload) => {
  const p = FirePayload.parse(payload);
  await s.substrate.rules.fire(p.rule_id, p.slot);
};
