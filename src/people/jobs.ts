// The people area's job: the expiry of an e-mail lookup at its deadline.
import { z } from 'zod';
import { defineJob, type JobContext } from '../core/jobs.ts';
import type { PeopleService } from './service.ts';

/**
 * Queued with each e-mail lookup to run at its deadline (src/people/lookups.ts): a lookup still pending then becomes
 * `expired` and gives back the credit held for its resolution. A resolved, failed or already expired one is left as
 * it is, so running twice or late changes nothing.
 */
export const peopleEmailExpire = defineJob({
  name: 'people_email_expire',
  payload: z.object({ lookup_id: z.guid() }),
  maxAttempts: 10,
  handler: async ({ lookup_id }, { deps, logger }: JobContext<{ people: PeopleService }>) => {
    if (await deps.people.expire(lookup_id)) logger.info(`people e-mail lookup ${lookup_id} expired`);
  },
});
