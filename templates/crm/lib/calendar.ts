// Members' Google Calendars (Composio's GOOGLECALENDAR_* tools): upcoming events with a video link become meetings
// rows (one per event and workspace: calendar_event_id is unique there) linked to the contact among the attendees,
// so a bot can be sent and the transcript lands on the right timeline.
import { addressesIn, contactsByEmail } from './addresses.ts';
import type { Ctx } from './ctx.ts';
import { rows } from './http.ts';
import type { SyncRun, SyncState } from './sync.ts';
import { runTool } from './tools.ts';

/** How far ahead a sync looks, and how far back (a meeting that started a moment ago still gets its bot). */
const AHEAD_DAYS = 14;
const BEHIND_HOURS = 1;
const MEETING_LINK = /https:\/\/[^\s"<>]*(?:zoom\.us|meet\.google\.com|teams\.microsoft\.com|teams\.live\.com|webex\.com|gotomeeting\.com|goto\.com)\/[^\s"<>]*/i;

/** A Google Calendar event as Composio returns it (the fields the CRM reads). */
export interface CalendarEvent {
  id: string;
  summary?: string;
  start?: { dateTime?: string; date?: string };
  end?: { dateTime?: string; date?: string };
  hangoutLink?: string;
  conferenceData?: { entryPoints?: Array<{ entryPointType?: string; uri?: string }> };
  location?: string;
  description?: string;
  attendees?: Array<{ email?: string }>;
  status?: string;
}

/** The event's video link: Meet's own, a conference entry point, else a known host's link in the location or notes. */
export function meetingLink(event: CalendarEvent): string | null {
  if (event.hangoutLink) return event.hangoutLink;
  const video = event.conferenceData?.entryPoints?.find((p) => p.entryPointType === 'video' && p.uri)?.uri;
  if (video) return video;
  return MEETING_LINK.exec(`${event.location ?? ''} ${event.description ?? ''}`)?.[0] ?? null;
}

const when = (t?: { dateTime?: string; date?: string }): string | null => t?.dateTime ?? (t?.date ? `${t.date}T00:00:00Z` : null);

/** The meetings row of an event (without deal or bot: those are the CRM's, kept when the row exists). */
export function meetingOf(event: CalendarEvent, workspaceId: string, userId: string, contactId: string | null): Record<string, unknown> {
  return {
    workspace_id: workspaceId,
    user_id: userId,
    title: event.summary?.trim() || 'Meeting',
    meeting_url: meetingLink(event),
    starts_at: when(event.start),
    ends_at: when(event.end),
    calendar_event_id: event.id,
    contact_id: contactId,
  };
}

/** One run of a member's calendar sync: the events of the coming two weeks with a meeting link, upserted. */
export async function syncCalendar(ctx: Ctx, state: SyncState): Promise<SyncRun> {
  const now = Date.now();
  const data = await runTool(ctx, state.user_id, 'GOOGLECALENDAR_EVENTS_LIST', {
    calendarId: 'primary',
    timeMin: new Date(now - BEHIND_HOURS * 3_600_000).toISOString(),
    timeMax: new Date(now + AHEAD_DAYS * 86_400_000).toISOString(),
    singleEvents: true,
    orderBy: 'startTime',
    maxResults: 100,
  });
  const events = ((data.items ?? data.events ?? []) as CalendarEvent[]).filter((e) => typeof e?.id === 'string' && e.status !== 'cancelled' && meetingLink(e));
  if (!events.length) return { items: 0, cursor: null };
  const contacts = await contactsByEmail(ctx, state.workspace_id, [...new Set(events.flatMap((e) => addressesIn(e.attendees ?? [])))]);
  const meetings = events.map((e) => {
    const contact = addressesIn(e.attendees ?? []).map((a) => contacts.get(a)).find((c) => c !== undefined);
    return meetingOf(e, state.workspace_id, state.user_id, contact?.id ?? null);
  });
  const saved = rows(
    await ctx.asApp.data.from('meetings').insert(meetings, { query: 'on_conflict=workspace_id,calendar_event_id', prefer: 'resolution=merge-duplicates,return=representation' }),
    'meetings',
  );
  return { items: saved.length, cursor: null };
}

/** Books an event on the member's calendar with a Meet room and the contact invited; the created event. */
export async function createEvent(ctx: Ctx, userId: string, event: { title: string; startsAt: Date; endsAt: Date; attendee: string | null; description?: string }): Promise<CalendarEvent> {
  const minutes = Math.round((event.endsAt.getTime() - event.startsAt.getTime()) / 60_000);
  return runTool(ctx, userId, 'GOOGLECALENDAR_CREATE_EVENT', {
    calendar_id: 'primary',
    summary: event.title,
    description: event.description ?? '',
    start_datetime: event.startsAt.toISOString(),
    timezone: 'UTC',
    event_duration_hour: Math.floor(minutes / 60),
    event_duration_minutes: minutes % 60,
    attendees: event.attendee ? [event.attendee] : [],
    create_meeting_room: true,
  });
}

