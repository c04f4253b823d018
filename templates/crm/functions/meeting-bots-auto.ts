// Every 5 minutes: a bot for each meeting with a link that starts within the next 10 minutes and has none yet, so
// calendar-synced meetings are recorded without anyone asking. One failure (no credit, a link the provider refuses)
// is logged, the others still get their bot, and the next run tries it again while the meeting is still near.
import { handler, json, rows } from '../lib/http.ts';
import { sendBot, type Meeting } from '../lib/meetings.ts';

const LEAD_MS = 10 * 60_000;
/** A meeting that began a moment ago (the cron runs every 5 minutes) still gets its bot. */
const GRACE_MS = 5 * 60_000;

export default handler(async (_request, ctx) => {
  const now = Date.now();
  const from = encodeURIComponent(new Date(now - GRACE_MS).toISOString());
  const to = encodeURIComponent(new Date(now + LEAD_MS).toISOString());
  const due = rows(
    await ctx.asApp.data.from('meetings').select<Meeting>('*', { query: `bot_id=is.null&meeting_url=not.is.null&starts_at=gte.${from}&starts_at=lte.${to}&order=starts_at` }),
    'meetings',
  );
  const sent: string[] = [];
  const failed: Array<{ meeting_id: string; error: string }> = [];
  for (const meeting of due) {
    try {
      await sendBot(ctx, meeting);
      sent.push(meeting.id);
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      console.error(`bot for meeting ${meeting.id}: ${error}`);
      failed.push({ meeting_id: meeting.id, error });
    }
  }
  return json({ sent, failed });
});
