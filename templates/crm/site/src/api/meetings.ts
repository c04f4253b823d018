// Meetings: read through the data API; bots, summaries and bookings through functions.
import type { Meeting } from '../types.ts';
import { db, fn, rows } from './core.ts';

export async function meetings(workspaceId: string): Promise<Meeting[]> {
  const q = (await db()).from('meetings').select('id,title,meeting_url,starts_at,ends_at,contact_id,deal_id,bot_id,bot_status,transcript_text,summary');
  return rows<Meeting>(await q.eq('workspace_id', workspaceId).order('starts_at', { ascending: false, nullsFirst: false }).limit(100));
}

export const sendBot = (meetingId: string) => fn('meeting-bot-send', { body: { meeting_id: meetingId } });
export const summarize = (meetingId: string) => fn('meeting-summarize', { body: { meeting_id: meetingId } });
export const leave = (meetingId: string) => fn('meeting-bot-leave', { body: { meeting_id: meetingId } });

export const book = (meeting: { contact_id: string; title: string; starts_at: string; ends_at: string; deal_id?: string }) => fn('calendar-event-create', { body: meeting });
