// The AI area's job: metering the recorded calls.
import { defineCron } from '../core/jobs.ts';
import { METER_AI_USAGE_SQL } from './usage.ts';

const BATCH = 5000;

/**
 * Cron: adds the AI calls recorded since the last run to the ai_tokens and ai_credits meters of usage_daily. Each
 * batch marks its rows metered in the statement that counts them, so a run that dies, or two at once, count no row
 * twice.
 */
export const aiUsageMeter = defineCron({
  name: 'ai_usage_meter',
  cron: '* * * * *',
  handler: async (_payload, { query }) => {
    for (;;) {
      const { rows } = await query<{ taken: number }>(METER_AI_USAGE_SQL(BATCH));
      if ((rows[0]?.taken ?? 0) < BATCH) return;
    }
  },
});
