// POST {meeting_id}: sends a recording bot to the meeting (lib/meetings.ts sendBot); its events come back signed to
// meeting-events, which stores the transcript and the summary.
import { body, handler, json, uuid } from '../lib/http.ts';
import { sendBot, type Meeting } from '../lib/meetings.ts';
import { rowOf } from '../lib/workspace.ts';

export default handler(async (request, ctx) => {
  const { row } = await rowOf<Meeting>(ctx, 'meetings', uuid(await body(request), 'meeting_id'));
  return json({ meeting: await sendBot(ctx, row) }, 201);
});
