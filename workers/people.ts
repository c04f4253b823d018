import type { Task } from 'graphile-worker';
import { z } from 'zod';
import type { Services } from '../src/services.ts';

const ExpirePayload = z.object({ lookup_id: z.guid() });

/**
 * Queued with each e-mail lookup to run at its deadline (src/people/lookups.ts): a lookup still pending then becomes
 * `expired` and gives back the credit held for its resolution. A resolved, failed or already expired one is left as
 * it is, so running twice or late changes nothing.
 */
export const peopleEmailExpire =
  (s: Services): Task =>
  async (payload, helpers) => {
    const { lookup_id } = ExpirePayload.parse(payload);
    if (await s.people.expire(lookup_id)) helpers.logger.info(`people e-mail lookup ${lookup_id} expired`);
  };
