// POST {meeting_id}: tells the meeting's bot to leave (the call goes on without the recording; the provider's
// events then bring the bot to done, and meeting-events stores what was recorded).
import { HttpError, body, handler, json, uuid } from '../lib/http.ts';
import { type Meeting } from '../lib/meetings.ts';
import { rowOf } from '../lib/workspace.ts';

export default handler(async (request, ctx) => {
  const { row } = await rowOf<Meeting>(ctx, 'meetings', uuid(await body(request), 'meeting_id'));
  if (!row.bot_id) throw new HttpError(409, 'no_bot', 'No bot was sent to this meeting.');
  await ctx.meetings.leave(row.bot_id);
  return json({ left: true, bot_id: row.bot_id });
});
