// The integrations area's job: retention of connect requests and the execution log.
import { defineCron } from '../core/jobs.ts';
import { PRUNE_INTEGRATIONS_SQL } from './service.ts';

/** Cron: drops connect requests a day past their expiry and executions past the log's 90 days; deleting twice is harmless. */
export const integrationsPrune = defineCron({
  name: 'integrations_prune',
  cron: '41 3 * * *',
  handler: async (_payload, { query }) => {
    await query(PRUNE_INTEGRATIONS_SQL);
  },
});
