// GET ?workspace_id&q&limit: semantic search over the workspace's notes, e-mails, calls, meeting summaries and
// transcripts. The collection holds every workspace, so it is queried as the app with the workspace as filter, after
// the caller's membership is checked (lib/search-index.ts).
import { HttpError, handler, json, params, uuid } from '../lib/http.ts';
import { searchWorkspace } from '../lib/search-index.ts';
import { requireMember } from '../lib/workspace.ts';

const MAX_RESULTS = 20;

export default handler(async (request, ctx) => {
  const query = params(request);
  const workspaceId = uuid(query, 'workspace_id');
  const q = query.get('q')?.trim() ?? '';
  if (!q) throw new HttpError(400, 'missing_field', 'q is required.');
  if (q.length > 1000) throw new HttpError(400, 'invalid_field', 'q is longer than 1000 characters.');
  const limit = Number(query.get('limit') ?? 10);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_RESULTS) throw new HttpError(400, 'invalid_field', `limit must be an integer from 1 to ${MAX_RESULTS}.`);
  await requireMember(ctx, workspaceId);
  return json({ query: q, results: await searchWorkspace(ctx, workspaceId, q, limit) });
});
