import type { Task } from 'graphile-worker';
import { PRUNE_INTEGRATIONS_SQL } from '../src/integrations/service.ts';

/** Cron: drops connect requests a day past their expiry and executions past the log's 90 days; deleting twice is harmless. */
export const integrationsPrune: Task = async (_payload, helpers) => {
  await helpers.query(PRUNE_INTEGRATIONS_SQL);
};
