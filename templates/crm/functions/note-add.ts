// POST {workspace_id, body, subject?, contact_id?, deal_id?, company_id?}: a note on the timeline, written as the caller
// (row-level security) and indexed for search at once. Should indexing fail, the note is kept: index-pending picks
// up entries whose indexed_at is still empty.
import { body, handler, json, one, text, uuid } from '../lib/http.ts';
import { ACTIVITY_COLUMNS, indexActivity, type IndexableActivity } from '../lib/search-index.ts';
import { requireInWorkspace, requireMember } from '../lib/workspace.ts';

const LINKS = [
  ['contact_id', 'contacts'],
  ['deal_id', 'deals'],
  ['company_id', 'companies'],
] as const;

export default handler(async (request, ctx) => {
  const input = await body(request);
  const workspaceId = uuid(input, 'workspace_id');
  const note = { workspace_id: workspaceId, kind: 'note', body: text(input, 'body', { max: 20_000 }), subject: text(input, 'subject', { optional: true, max: 200 }) ?? null };
  const member = await requireMember(ctx, workspaceId);
  const links: Record<string, string | null> = {};
  for (const [field, table] of LINKS) {
    const id = uuid(input, field, { optional: true });
    if (id) await requireInWorkspace(ctx, table, id, workspaceId, field);
    links[field] = id ?? null;
  }
  const activity = one(
    await ctx.data.from('activities').insert<IndexableActivity>({ ...note, ...links, user_id: member.user_id }, { query: `select=${ACTIVITY_COLUMNS},occurred_at,user_id,company_id,created_at`, prefer: 'return=representation' }),
    'note',
  );
  const indexed = await indexActivity(ctx, activity).catch((err: unknown) => {
    console.error(`indexing note ${activity.id}: ${err instanceof Error ? err.message : String(err)}`);
    return null;
  });
  return json({ activity: { ...activity, rag_document_id: indexed?.document_id ?? null }, indexed: indexed !== null }, 201);
});
