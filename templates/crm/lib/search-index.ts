// Semantic search over the CRM's timeline: notes, e-mails, calls and meeting summaries (activities) and meeting
// transcripts, each one document of the private RAG collection `crm` carrying { workspace_id, kind, activity_id |
// meeting_id, contact_id?, deal_id? }. Only the app reads and writes the collection (ctx.asApp.rag) and every query is
// filtered by workspace_id: an end user querying it directly would see every workspace.
//
// search_documents (written by the app only) is the ledger of what was ingested: the collection cannot be listed by
// metadata, and once an activity is deleted its row no longer names its document, so the ledger is how index-cleanup
// finds what to remove. `version` is what the document was made from (a hash of the text, or the transcript's bot),
// so an unchanged entry is not ingested twice.
import type { Ctx } from './ctx.ts';
import { sha256Hex } from './hash.ts';
import { HttpError, eq, inList, rows } from './http.ts';

const COLLECTION = 'crm';
/** Timeline kinds worth searching; stage changes, tasks and system entries are the CRM's own bookkeeping. */
export const INDEXED_KINDS = ['note', 'email', 'call', 'meeting'] as const;
/** How much of a chunk a search hit or a citation shows. */
const SNIPPET_CHARS = 300;

export interface IndexableActivity {
  id: string;
  workspace_id: string;
  kind: string;
  subject: string | null;
  body: string;
  contact_id: string | null;
  deal_id: string | null;
  external_id: string | null;
  rag_document_id: string | null;
}

export const ACTIVITY_COLUMNS = 'id,workspace_id,kind,subject,body,contact_id,deal_id,external_id,rag_document_id';

export interface TranscriptMeeting {
  id: string;
  workspace_id: string;
  title: string;
  bot_id: string | null;
  contact_id: string | null;
  deal_id: string | null;
  transcript_text: string | null;
}

export interface LedgerRow {
  document_id: string;
  workspace_id: string;
  kind: string;
  activity_id: string | null;
  meeting_id: string | null;
  version: string;
}

/** One search result: the best chunk of one document, numbered for citations. */
export interface Hit {
  n: number;
  kind: string;
  activity_id?: string;
  meeting_id?: string;
  contact_id?: string;
  deal_id?: string;
  document_id: string;
  score: number;
  snippet: string;
}

const isIndexed = (kind: string): boolean => (INDEXED_KINDS as readonly string[]).includes(kind);

/** Metadata keys with a value only: a query filter matches exact values, and null would match nothing useful. */
function metadata(fields: Record<string, string | null | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(fields).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/** A meeting summary's activity names its meeting (lib/meetings.ts writes external_id meeting:<id>). */
const meetingOfActivity = (a: IndexableActivity): string | null => (a.kind === 'meeting' && a.external_id?.startsWith('meeting:') ? a.external_id.slice(8) : null);

/** Ingests a new document and records it in the ledger; the old one (if any) is removed after, so search never gaps. */
async function replaceDocument(ctx: Ctx, text: string, meta: Record<string, string>, ledger: Omit<LedgerRow, 'document_id'>, previous: string[]): Promise<string> {
  const ingested = await ctx.asApp.rag.ingest(COLLECTION, { text, metadata: meta });
  const documentId = String(ingested?.documentId ?? '');
  if (!documentId) throw new HttpError(502, 'rag_ingest_failed', 'The RAG ingest answered without a document id.');
  rows(await ctx.asApp.data.from('search_documents').insert({ document_id: documentId, ...ledger }), 'search_documents');
  for (const old of previous.filter((id) => id !== documentId)) await dropDocument(ctx, old);
  return documentId;
}

/** Removes a document from the collection and the ledger; one already gone counts as removed. */
export async function dropDocument(ctx: Ctx, documentId: string): Promise<void> {
  try {
    await ctx.asApp.rag.deleteDocument(COLLECTION, documentId);
  } catch (err) {
    if ((err as { status?: unknown })?.status !== 404) throw err;
  }
  rows(await ctx.asApp.data.from('search_documents').delete(`document_id=${eq(documentId)}`), 'search_documents');
}

async function ledgerOf(ctx: Ctx, column: 'activity_id' | 'meeting_id', id: string): Promise<LedgerRow[]> {
  return rows(await ctx.asApp.data.from('search_documents').select<LedgerRow>('*', { query: `${column}=${eq(id)}&order=created_at` }), 'search_documents');
}

/**
 * (Re)indexes one timeline entry: skipped when its text is what the current document was made from, else a new
 * document replaces the old. The activity records indexed_at and rag_document_id either way.
 */
export async function indexActivity(ctx: Ctx, activity: IndexableActivity): Promise<{ document_id: string | null; reindexed: boolean }> {
  if (!isIndexed(activity.kind)) throw new HttpError(409, 'not_indexed_kind', `${activity.kind} entries are not indexed for search (only ${INDEXED_KINDS.join(', ')}).`);
  const text = [activity.subject, activity.body].filter((t) => t?.trim()).join('\n\n');
  const version = await sha256Hex(text);
  const ledger = await ledgerOf(ctx, 'activity_id', activity.id);
  const current = ledger.find((l) => l.document_id === activity.rag_document_id);
  let documentId: string | null;
  let reindexed = false;
  if (!text.trim()) {
    // Nothing to search (an e-mail without text): marked done so the cron does not try again, an old document removed.
    for (const l of ledger) await dropDocument(ctx, l.document_id);
    documentId = null;
  } else if (current?.version === version) documentId = current.document_id;
  else {
    const meetingId = meetingOfActivity(activity);
    const meta = metadata({ workspace_id: activity.workspace_id, kind: activity.kind, activity_id: activity.id, meeting_id: meetingId, contact_id: activity.contact_id, deal_id: activity.deal_id });
    const entry = { workspace_id: activity.workspace_id, kind: activity.kind, activity_id: activity.id, meeting_id: meetingId, version };
    documentId = await replaceDocument(ctx, text, meta, entry, ledger.map((l) => l.document_id));
    reindexed = true;
  }
  rows(await ctx.asApp.data.from('activities').update({ indexed_at: new Date().toISOString(), rag_document_id: documentId }, `id=${eq(activity.id)}`), 'activities');
  return { document_id: documentId, reindexed };
}

/** Indexes a meeting's transcript (kind transcript) unless the document of this bot's transcript is there already. */
export async function indexTranscript(ctx: Ctx, meeting: TranscriptMeeting): Promise<{ document_id: string; reindexed: boolean } | null> {
  if (!meeting.transcript_text?.trim()) return null;
  const version = `bot:${meeting.bot_id ?? ''}`;
  const ledger = await ledgerOf(ctx, 'meeting_id', meeting.id);
  const transcripts = ledger.filter((l) => l.kind === 'transcript');
  const current = transcripts.find((l) => l.version === version);
  if (current) return { document_id: current.document_id, reindexed: false };
  const meta = metadata({ workspace_id: meeting.workspace_id, kind: 'transcript', meeting_id: meeting.id, contact_id: meeting.contact_id, deal_id: meeting.deal_id });
  const entry = { workspace_id: meeting.workspace_id, kind: 'transcript', activity_id: null, meeting_id: meeting.id, version };
  const text = `Transcript of the meeting "${meeting.title}"\n\n${meeting.transcript_text}`;
  return { document_id: await replaceDocument(ctx, text, meta, entry, transcripts.map((l) => l.document_id)), reindexed: true };
}

/** The ids among `ids` that still exist in the workspace, read as the app (a deleted entry's chunks may linger). */
async function liveIds(ctx: Ctx, table: string, ids: string[], workspaceId: string, columns: string): Promise<Map<string, Record<string, unknown>>> {
  if (!ids.length) return new Map();
  const found = rows(await ctx.asApp.data.from(table).select<Record<string, unknown>>(columns, { query: `id=${inList(ids)}&workspace_id=${eq(workspaceId)}` }), table);
  return new Map(found.map((r) => [String(r.id), r]));
}

/**
 * The workspace's best matches for `query`: one hit per document (its best chunk), numbered from 1, leaving out
 * documents whose entry was deleted or replaced since (index-cleanup removes them later).
 */
export async function searchWorkspace(ctx: Ctx, workspaceId: string, query: string, limit: number): Promise<Hit[]> {
  const answer = await ctx.asApp.rag.query(COLLECTION, { query, topK: Math.min(limit * 3, 50), filter: { workspace_id: workspaceId } });
  const chunks: Array<{ text: string; score: number; documentId: string; metadata: Record<string, unknown> }> = answer?.chunks ?? [];
  const best = new Map<string, (typeof chunks)[number]>();
  // Belt and braces: the filter already keeps other workspaces out.
  for (const c of chunks) if (c.metadata?.workspace_id === workspaceId && !best.has(c.documentId)) best.set(c.documentId, c);
  const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
  const picked = [...best.values()];
  const activityIds = [...new Set(picked.map((c) => str(c.metadata.activity_id)).filter((v): v is string => !!v))];
  const meetingIds = [...new Set(picked.filter((c) => !c.metadata.activity_id).map((c) => str(c.metadata.meeting_id)).filter((v): v is string => !!v))];
  const [activities, meetings] = await Promise.all([
    liveIds(ctx, 'activities', activityIds, workspaceId, 'id,rag_document_id'),
    liveIds(ctx, 'meetings', meetingIds, workspaceId, 'id'),
  ]);
  const live = (c: (typeof chunks)[number]): boolean => {
    const activityId = str(c.metadata.activity_id);
    if (activityId) return activities.get(activityId)?.rag_document_id === c.documentId;
    const meetingId = str(c.metadata.meeting_id);
    return !!meetingId && meetings.has(meetingId);
  };
  return picked
    .filter(live)
    .slice(0, limit)
    .map((c, i) => {
      const hit: Hit = { n: i + 1, kind: str(c.metadata.kind) ?? 'note', document_id: c.documentId, score: c.score, snippet: c.text.replace(/\s+/g, ' ').trim().slice(0, SNIPPET_CHARS) };
      for (const key of ['activity_id', 'meeting_id', 'contact_id', 'deal_id'] as const) {
        const value = str(c.metadata[key]);
        if (value) hit[key] = value;
      }
      return hit;
    });
}
