// The platform's meeting events, forwarded here (meetings_webhook_set with this function's URL) and signed with the
// app's wsec_ secret, kept as MEETINGS_WEBHOOK_SECRET. A bot's status is stored as it moves; when the bot is done its
// transcript is read, stored and summarized onto the timeline. Unknown bots are acknowledged (a 2xx) so the platform
// does not retry what will never match; a failure to read the transcript is a 502, which the platform retries.
import { eq, handler, json, rows } from '../lib/http.ts';
import { FINAL_BOT_STATUSES, fetchTranscript, summarizeMeeting, type Meeting } from '../lib/meetings.ts';
import { verifiedJson } from '../lib/signature.ts';

interface MeetingEvent {
  event?: string;
  data?: { bot?: { id?: string }; data?: { code?: string } };
}

export default handler(async (request, ctx) => {
  const payload = await verifiedJson<MeetingEvent>(request, 'meetings', ctx.env.MEETINGS_WEBHOOK_SECRET, 'MEETINGS_WEBHOOK_SECRET');
  const botId = payload.data?.bot?.id;
  const code = payload.data?.data?.code;
  if (!botId || !payload.event?.startsWith('bot.') || !code) return json({ ignored: payload.event ?? null });
  const [meeting] = rows(await ctx.asApp.data.from('meetings').select<Meeting>('*', { query: `bot_id=${eq(botId)}` }), 'meetings');
  if (!meeting) return json({ ignored: 'unknown bot' });

  // Statuses only move forward; a late event after done or fatal changes nothing.
  const status = FINAL_BOT_STATUSES.includes(meeting.bot_status ?? '') ? meeting.bot_status : code;
  const patch: Partial<Meeting> = { bot_status: status };
  if (code === 'done' && !meeting.transcript_text) {
    const transcript = await fetchTranscript(ctx, botId);
    if (transcript) Object.assign(patch, { transcript: transcript.segments, transcript_text: transcript.text });
  }
  rows(await ctx.asApp.data.from('meetings').update(patch, `id=${eq(meeting.id)}`), 'meetings');
  const stored = { ...meeting, ...patch };
  let summarized = false;
  if (code === 'done' && stored.transcript_text && !stored.summary) {
    // The transcript is kept whatever the AI gateway does; meeting-summarize can write the summary later.
    summarized = await summarizeMeeting(ctx, stored).then(
      () => true,
      (err) => (console.error(`summary of meeting ${meeting.id}: ${err instanceof Error ? err.message : String(err)}`), false),
    );
  }
  return json({ meeting_id: meeting.id, bot_status: status, transcript: Boolean(stored.transcript_text), summarized });
});
