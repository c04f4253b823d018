// Meeting bots and what they bring back: a bot sent to a meeting's link (the platform's meetings API, as the app),
// the transcript read once the bot is done, and the summary the AI gateway writes, which goes on the deal's or
// contact's timeline as a 'meeting' activity. Shared by meeting-bot-send / meeting-bots-auto and by meeting-events /
// meeting-summarize, so a bot sent by hand or by the cron, and a summary made on the webhook or on request, are one.
import { chatText } from './ai.ts';
import type { Ctx } from './ctx.ts';
import { HttpError, eq, rows } from './http.ts';

export interface Meeting {
  id: string;
  workspace_id: string;
  user_id: string | null;
  title: string;
  meeting_url: string | null;
  starts_at: string | null;
  deal_id: string | null;
  contact_id: string | null;
  bot_id: string | null;
  bot_status: string | null;
  transcript: unknown;
  transcript_text: string | null;
  summary: string | null;
}

/** Bot statuses after which nothing changes (src/meetings/guide.ts): a new bot may be sent. */
export const FINAL_BOT_STATUSES: readonly string[] = ['done', 'fatal'];
/** How much transcript the summary prompt carries (the model's context is the limit; the start holds the agenda). */
const PROMPT_CHARS = 24_000;

/** Sends a recording bot to the meeting and records it on the row; 409 without a link or with a bot still there. */
export async function sendBot(ctx: Ctx, meeting: Meeting): Promise<Meeting> {
  if (!meeting.meeting_url) throw new HttpError(409, 'no_meeting_link', 'The meeting has no video link to send a bot to.');
  if (meeting.bot_id && !FINAL_BOT_STATUSES.includes(meeting.bot_status ?? '')) throw new HttpError(409, 'bot_already_sent', 'A bot is already on its way to this meeting.');
  const bot = await ctx.meetings.spawn({
    meetingUrl: meeting.meeting_url,
    botName: 'CRM notetaker',
    metadata: { meeting_id: meeting.id, workspace_id: meeting.workspace_id },
  });
  const patch = { bot_id: bot.id, bot_status: bot.status ?? 'joining', transcript: null, transcript_text: null };
  const [saved] = rows(await ctx.asApp.data.from('meetings').update<Meeting>(patch, `id=${eq(meeting.id)}`, { prefer: 'return=representation' }), 'meetings');
  return saved ?? { ...meeting, ...patch };
}

export interface TranscriptSegment {
  speaker: string;
  text: string;
  /** Seconds from the start of the recording, when the provider says. */
  start: number | null;
  end: number | null;
}

/** The done bot's transcript, normalized by the platform (meetings_transcript). Null while there is none. */
export async function fetchTranscript(ctx: Ctx, botId: string): Promise<{ segments: TranscriptSegment[]; text: string } | null> {
  try {
    const { segments, text } = await ctx.meetings.transcript(botId);
    return { segments, text };
  } catch (err) {
    if ((err as { code?: string }).code === 'TRANSCRIPT_NOT_READY') return null;
    throw err;
  }
}

/**
 * The AI gateway's summary of the transcript, saved on the meeting and on the timeline of its deal and contact (one
 * activity per meeting: external_id meeting:<id>, so summarizing again updates it).
 */
export async function summarizeMeeting(ctx: Ctx, meeting: Meeting): Promise<{ summary: string; activity: Record<string, unknown> }> {
  if (!meeting.transcript_text) throw new HttpError(409, 'no_transcript', 'The meeting has no transcript yet.');
  const summary = await chatText(
    ctx,
    [
      { role: 'system', content: 'You summarize sales meetings for a CRM: the key points, objections, decisions and agreed next steps, in a few short bullet points.' },
      { role: 'user', content: `Meeting: ${meeting.title}\n\n${meeting.transcript_text.slice(0, PROMPT_CHARS)}` },
    ],
    'a summary',
  );
  const activity = {
    workspace_id: meeting.workspace_id,
    user_id: meeting.user_id,
    kind: 'meeting',
    deal_id: meeting.deal_id,
    contact_id: meeting.contact_id,
    subject: `Meeting: ${meeting.title}`,
    body: summary,
    external_id: `meeting:${meeting.id}`,
    occurred_at: meeting.starts_at ?? new Date().toISOString(),
    // A changed summary must be indexed again (index-pending looks for indexed_at null).
    indexed_at: null,
  };
  const [saved] = rows(
    await ctx.asApp.data
      .from('activities')
      .insert<Record<string, unknown>>(activity, { query: 'on_conflict=workspace_id,external_id', prefer: 'resolution=merge-duplicates,return=representation' }),
    'activities',
  );
  // The meeting's summary last: whoever sees it there finds the timeline entry too.
  rows(await ctx.asApp.data.from('meetings').update({ summary }, `id=${eq(meeting.id)}`), 'meetings');
  return { summary, activity: saved ?? activity };
}

