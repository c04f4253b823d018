import type { Task } from 'graphile-worker';
import { METER_AI_USAGE_SQL } from '../src/ai/usage.ts';

const BATCH = 5000;

/**
 * Cron: adds the AI calls recorded since the last run to the ai_tokens and ai_credits meters of usage_daily. Each
 * batch marks its rows metered in the statement that counts them, so a run that dies, or two at once, count no row
 * twice.
 */
export const aiUsageMeter: Task = async (_payload, helpers) => {
  for (;;) {
    const { rows } = await helpers.query<{ taken: number }>(METER_AI_USAGE_SQL(BATCH));
    if ((rows[0]?.taken ?? 0) < BATCH) return;
  }
};
