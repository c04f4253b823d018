// POST {workspace_id}: the caller's calendar sync, now; the same run the cron makes.
import { syncCalendar } from '../lib/calendar.ts';
import { body, handler, uuid } from '../lib/http.ts';
import { syncCaller } from '../lib/sync.ts';

export default handler(async (request, ctx) => syncCaller(ctx, uuid(await body(request), 'workspace_id'), 'calendar', syncCalendar));
