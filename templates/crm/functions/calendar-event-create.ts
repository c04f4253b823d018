// POST {contact_id, title, starts_at, ends_at, deal_id?}: books a meeting with the contact on the caller's Google
// Calendar (with a Meet room) and records it as a meeting of the workspace, so a bot can join it and its summary
// lands on the deal. The row is keyed by the calendar event, as calendar-sync keys it, so the next sync updates it.
import { createEvent, meetingLink, meetingOf } from '../lib/calendar.ts';
import { HttpError, body, handler, json, rows, text, uuid } from '../lib/http.ts';
import { requireInWorkspace, rowOf } from '../lib/workspace.ts';

interface Contact {
  id: string;
  workspace_id: string;
  email: string | null;
}

/** An ISO 8601 time field, or 400. */
function time(input: Record<string, unknown>, key: string): Date {
  const value = text(input, key, { max: 40 });
  const at = new Date(value);
  if (Number.isNaN(at.getTime()) || !/^\d{4}-\d{2}-\d{2}T/.test(value)) throw new HttpError(400, 'invalid_field', `${key} must be an ISO 8601 date and time.`);
  return at;
}

export default handler(async (request, ctx) => {
  const input = await body(request);
  const contactId = uuid(input, 'contact_id');
  const title = text(input, 'title', { max: 300 });
  const startsAt = time(input, 'starts_at');
  const endsAt = time(input, 'ends_at');
  if (endsAt <= startsAt) throw new HttpError(400, 'invalid_field', 'ends_at must be after starts_at.');
  const dealId = uuid(input, 'deal_id', { optional: true });
  const { row: contact, member } = await rowOf<Contact>(ctx, 'contacts', contactId);
  if (dealId) await requireInWorkspace(ctx, 'deals', dealId, contact.workspace_id, 'deal_id');
  const event = await createEvent(ctx, member.user_id, { title, startsAt, endsAt, attendee: contact.email });
  if (typeof event?.id !== 'string') throw new HttpError(502, 'vendor_failed', 'The calendar did not return the created event.');
  // The calendar's own times win when it returns them; ours otherwise (the tool answers with the event it made).
  const meeting = { ...meetingOf({ start: { dateTime: startsAt.toISOString() }, end: { dateTime: endsAt.toISOString() }, summary: title, ...event }, contact.workspace_id, member.user_id, contact.id), deal_id: dealId ?? null };
  const [saved] = rows(
    await ctx.asApp.data.from('meetings').insert(meeting, { query: 'on_conflict=workspace_id,calendar_event_id', prefer: 'resolution=merge-duplicates,return=representation' }),
    'meetings',
  );
  return json({ meeting: saved ?? meeting, meeting_url: meetingLink(event) }, 201);
});
