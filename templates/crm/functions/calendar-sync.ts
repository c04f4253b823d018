// Every 15 minutes: each syncing member's upcoming calendar events with a video link become meetings linked to
// contacts (lib/calendar.ts), ready for meeting-bots-auto.
import { syncCalendar } from '../lib/calendar.ts';
import { handler } from '../lib/http.ts';
import { syncEveryone } from '../lib/sync.ts';

export default handler(async (_request, ctx) => syncEveryone(ctx, 'calendar', syncCalendar));
