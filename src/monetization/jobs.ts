// The monetization area's job: end users' entitlements copied into their app database.
import { z } from 'zod';
import type { AppDatabases } from '../apps/app-databases.ts';
import { AppIdSchema } from '../apps/types.ts';
import { defineJob, type JobContext } from '../core/jobs.ts';
import { syncEntitlement } from './entitlement.ts';

/**
 * Enqueued with every change of an end user's subscription (src/monetization/entitlement.ts): copies what the user is
 * entitled to into the app database. It reads the current state rather than the event's, so running twice, late or
 * after a retry writes the same row; a deleted app ends it quietly.
 */
export const billingEntitlementSync = defineJob({
  name: 'billing_entitlement_sync',
  payload: z.object({ app_id: AppIdSchema, user_id: z.guid() }),
  handler: async (p, { deps, query, logger }: JobContext<{ databases: AppDatabases }>) => {
    const outcome = await syncEntitlement({ databases: deps.databases, control: (text, values) => query(text, values) }, p.app_id, p.user_id);
    logger.debug(`entitlement of ${p.user_id} in ${p.app_id}: ${outcome}`);
  },
});
