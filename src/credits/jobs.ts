// The credits area's job: reservations left behind by calls that died.
import { defineCron } from '../core/jobs.ts';
import { RELEASE_EXPIRED_RESERVATIONS_SQL } from './ledger.ts';

/**
 * Cron: gives back the credit reservations of calls whose process died before settling them (a live call settles
 * its own long before its reservation expires). One statement, so running it twice at once releases nothing twice.
 */
export const creditsReleaseExpired = defineCron({
  name: 'credits_release_expired',
  cron: '* * * * *',
  handler: async (_payload, { query, logger }) => {
    const { rowCount } = await query(RELEASE_EXPIRED_RESERVATIONS_SQL);
    if (rowCount) logger.info(`released expired credit reservations of ${rowCount} accounts`);
  },
});
