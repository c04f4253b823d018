import type { Task } from 'graphile-worker';
import { RELEASE_EXPIRED_RESERVATIONS_SQL } from '../src/credits/ledger.ts';

/**
 * Cron: gives back the credit reservations of calls whose process died before settling them (a live call settles
 * its own long before its reservation expires). One statement, so running it twice at once releases nothing twice.
 */
export const creditsReleaseExpired: Task = async (_payload, helpers) => {
  const { rowCount } = await helpers.query(RELEASE_EXPIRED_RESERVATIONS_SQL);
  if (rowCount) helpers.logger.info(`released expired credit reservations of ${rowCount} accounts`);
};
