// POST {meeting_id}: (re)writes the meeting's summary from its transcript with the AI gateway and puts it on the
// deal's and contact's timeline (lib/meetings.ts summarizeMeeting, as meeting-events does when a bot is done).
import { body, handler, json, uuid } from '../lib/http.ts';
import { summarizeMeeting, type Meeting } from '../lib/meetings.ts';
import { rowOf } from '../lib/workspace.ts';

export default handler(async (request, ctx) => {
  const { row } = await rowOf<Meeting>(ctx, 'meetings', uuid(await body(request), 'meeting_id'));
  return json(await summarizeMeeting(ctx, row));
});
