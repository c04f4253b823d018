// POST {activity_id}: (re)indexes one timeline entry for search, e.g. after the site edited a note. Unchanged text keeps
// its document (200); changed text gets a new one, the old removed (202: the new document is embedded in the
// background, as RAG ingestion is asynchronous).
import { body, handler, json, uuid } from '../lib/http.ts';
import { ACTIVITY_COLUMNS, indexActivity, type IndexableActivity } from '../lib/search-index.ts';
import { rowOf } from '../lib/workspace.ts';

export default handler(async (request, ctx) => {
  const { row } = await rowOf<IndexableActivity>(ctx, 'activities', uuid(await body(request), 'activity_id'), ACTIVITY_COLUMNS);
  const indexed = await indexActivity(ctx, row);
  return json({ activity_id: row.id, ...indexed }, indexed.reindexed ? 202 : 200);
});
