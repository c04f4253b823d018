import { z } from 'zod';
import type { Task } from 'graphile-worker';
import { AppIdSchema } from '../src/apps/types.ts';
import { syncEntitlement } from '../src/monetization/entitlement.ts';
import type { WorkerServices } from './index.ts';

const EntitlementPayload = z.object({ app_id: AppIdSchema, user_id: z.guid() });

/**
 * Enqueued with every change of an end user's subscription (src/monetization/entitlement.ts): copies what the user is
 * entitled to into the app database. It reads the current state rather than the event's, so running twice, late or
 * after a retry writes the same row; a deleted app ends it quietly.
 */
export const billingEntitlementSync = (s: WorkerServices): Task => async (payload, helpers) => {
  const p = EntitlementPayload.parse(payload);
  const outcome = await syncEntitlement({ databases: s.databases, control: (text, values) => helpers.query(text, values) }, p.app_id, p.user_id);
  helpers.logger.debug(`entitlement of ${p.user_id} in ${p.app_id}: ${outcome}`);
};
