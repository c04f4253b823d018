import type { Task } from 'graphile-worker';
import { PURGE_RATE_LIMITS_SQL } from '../src/auth/rate-limit.ts';

/**
 * Cron: drops rate-limit windows that can no longer count. graphile-worker runs on the control pool, so
 * its own query helper reaches the rate_limits table; deleting twice is harmless.
 */
export const rateLimitsPurge: Task = async (_payload, helpers) => {
  const { rowCount } = await helpers.query(PURGE_RATE_LIMITS_SQL);
  if (rowCount) helpers.logger.debug(`purged ${rowCount} old rate-limit windows`);
};
