// Every 5 minutes: timeline entries not indexed yet (indexed_at empty: new, or marked changed as a meeting summary is
// when rewritten) and meeting transcripts whose current recording has no document yet. A bounded batch per run, the
// oldest first; one entry failing does not stop the others.
import { eachLogged } from '../lib/batch.ts';
import type { Ctx } from '../lib/ctx.ts';
import { eq, handler, inList, json, rows } from '../lib/http.ts';
import { ACTIVITY_COLUMNS, INDEXED_KINDS, indexActivity, indexTranscript, type IndexableActivity, type LedgerRow, type TranscriptMeeting } from '../lib/search-index.ts';

const BATCH = 50;

/** Meetings with a transcript whose recording (bot) has no transcript document in the ledger. */
async function transcriptsToIndex(ctx: Ctx): Promise<TranscriptMeeting[]> {
  const withTranscript = rows(
    await ctx.asApp.data.from('meetings').select<{ id: string; bot_id: string | null }>('id,bot_id', { query: 'transcript_text=not.is.null&order=created_at' }),
    'meetings',
  );
  const indexed = rows(await ctx.asApp.data.from('search_documents').select<LedgerRow>('meeting_id,version', { query: `kind=${eq('transcript')}` }), 'search_documents');
  const have = new Set(indexed.map((l) => `${l.meeting_id}/${l.version}`));
  const ids = withTranscript.filter((m) => !have.has(`${m.id}/bot:${m.bot_id ?? ''}`)).slice(0, BATCH).map((m) => m.id);
  if (!ids.length) return [];
  return rows(
    await ctx.asApp.data.from('meetings').select<TranscriptMeeting>('id,workspace_id,title,bot_id,contact_id,deal_id,transcript_text', { query: `id=${inList(ids)}` }),
    'meetings',
  );
}

export default handler(async (_request, ctx) => {
  const activities = rows(
    await ctx.asApp.data
      .from('activities')
      .select<IndexableActivity>(ACTIVITY_COLUMNS, { query: `indexed_at=is.null&kind=${inList([...INDEXED_KINDS])}&order=occurred_at&limit=${BATCH}` }),
    'activities',
  );
  const a = await eachLogged(activities, (x) => `activity ${x.id}`, (x) => indexActivity(ctx, x));
  const t = await eachLogged(await transcriptsToIndex(ctx), (m) => `transcript of meeting ${m.id}`, (m) => indexTranscript(ctx, m));
  return json({ activities: a.done, transcripts: t.done, failed: a.failed + t.failed });
});
