// Hourly: removes search documents nobody can reach any more: those of deleted timeline entries and meetings, and
// those a re-index replaced but could not delete at the time. The ledger (search_documents) names every document,
// since a deleted row no longer does. It is read in pages, oldest first, up to a bound per run.
import { eachLogged } from '../lib/batch.ts';
import type { Ctx } from '../lib/ctx.ts';
import { handler, inList, json, rows } from '../lib/http.ts';
import { dropDocument, type LedgerRow } from '../lib/search-index.ts';

const PAGE = 500;
const MAX_PAGES = 20;
/** A document younger than this may be mid-index (ledger written, activity not yet pointing at it): left alone. */
const GRACE_MS = 10 * 60_000;

/** id -> the row's fields, for the ids still in the table. */
async function existing<T extends { id: string }>(ctx: Ctx, table: string, columns: string, ids: (string | null)[]): Promise<Map<string, T>> {
  const wanted = [...new Set(ids.filter((id): id is string => !!id))];
  if (!wanted.length) return new Map();
  return new Map(rows(await ctx.asApp.data.from(table).select<T>(columns, { query: `id=${inList(wanted)}` }), table).map((r) => [r.id, r]));
}

/** The ledger rows of one page whose document is no longer the current one of a live entry. */
async function staleOf(ctx: Ctx, page: LedgerRow[]): Promise<LedgerRow[]> {
  const [activities, meetings] = await Promise.all([
    existing<{ id: string; rag_document_id: string | null }>(ctx, 'activities', 'id,rag_document_id', page.map((l) => l.activity_id)),
    existing<{ id: string; bot_id: string | null; transcript_text: string | null }>(ctx, 'meetings', 'id,bot_id,transcript_text', page.filter((l) => !l.activity_id).map((l) => l.meeting_id)),
  ]);
  return page.filter((l) => {
    // An activity's current document is the one its row names; any other is gone or replaced.
    if (l.activity_id) return activities.get(l.activity_id)?.rag_document_id !== l.document_id;
    const meeting = l.meeting_id ? meetings.get(l.meeting_id) : undefined;
    return !meeting?.transcript_text || l.version !== `bot:${meeting.bot_id ?? ''}`;
  });
}

export default handler(async (_request, ctx) => {
  const before = encodeURIComponent(new Date(Date.now() - GRACE_MS).toISOString());
  let checked = 0;
  let removed = 0;
  let failed = 0;
  let after = '';
  for (let i = 0; i < MAX_PAGES; i++) {
    const page = rows(
      await ctx.asApp.data
        .from('search_documents')
        .select<LedgerRow & { created_at: string }>('*', { query: `created_at=lt.${before}${after ? `&created_at=gt.${encodeURIComponent(after)}` : ''}&order=created_at&limit=${PAGE}` }),
      'search_documents',
    );
    checked += page.length;
    const outcome = await eachLogged(await staleOf(ctx, page), (l) => `document ${l.document_id}`, (l) => dropDocument(ctx, l.document_id));
    removed += outcome.done;
    failed += outcome.failed;
    if (page.length < PAGE) break;
    after = page[page.length - 1]!.created_at;
  }
  return json({ checked, removed, failed });
});
