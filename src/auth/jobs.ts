// The auth area's job: the rate-limit windows' cleanup.
import { defineCron } from '../core/jobs.ts';
import { PURGE_RATE_LIMITS_SQL } from './rate-limit.ts';

/**
 * Cron: drops rate-limit windows that can no longer count. graphile-worker runs on the control pool, so
 * its own query helper reaches the rate_limits table; deleting twice is harmless.
 */
export const rateLimitsPurge = defineCron({
  name: 'rate_limits_purge',
  cron: '*/5 * * * *',
  handler: async (_payload, { query, logger }) => {
    const { rowCount } = await query(PURGE_RATE_LIMITS_SQL);
    if (rowCount) logger.debug(`purged ${rowCount} old rate-limit windows`);
  },
});
