// POST {name}: a workspace with the caller as its owner and the default pipeline. Workspaces, memberships and stages
// are read-only to end users (write "service"), so the rows are written as the app once the caller is known.
import { handler, json, body, text, rows, eq, requireUser } from '../lib/http.ts';
import type { Ctx } from '../lib/ctx.ts';

/** The pipeline a new workspace starts with; probabilities (%) weight the forecast. */
const DEFAULT_STAGES = [
  { name: 'Lead', probability: 10, kind: 'open' },
  { name: 'Qualified', probability: 25, kind: 'open' },
  { name: 'Proposal', probability: 50, kind: 'open' },
  { name: 'Negotiation', probability: 75, kind: 'open' },
  { name: 'Won', probability: 100, kind: 'won' },
  { name: 'Lost', probability: 0, kind: 'lost' },
] as const;

/** The name the timeline shows for the caller: their token's name claim, else their address's local part. */
function displayName(ctx: Ctx): string | null {
  const claims = ctx.user?.claims ?? {};
  if (typeof claims.name === 'string' && claims.name.trim()) return claims.name.trim();
  return typeof claims.email === 'string' ? (claims.email.split('@')[0] ?? null) : null;
}

export default handler(async (request, ctx) => {
  const userId = requireUser(ctx);
  const name = text(await body(request), 'name', { max: 100 });
  const db = ctx.asApp.data;
  const [workspace] = rows(await db.from('workspaces').insert<{ id: string; name: string; created_at: string }>({ name }), 'workspace');
  try {
    const [member] = rows(
      await db.from('workspace_members').insert({
        workspace_id: workspace!.id,
        user_id: userId,
        email: typeof ctx.user!.claims.email === 'string' ? ctx.user!.claims.email : null,
        display_name: displayName(ctx),
        role: 'owner',
      }),
      'owner membership',
    );
    const stages = rows(
      await db.from('pipeline_stages').insert(DEFAULT_STAGES.map((s, position) => ({ ...s, position, workspace_id: workspace!.id }))),
      'pipeline stages',
    );
    return json({ workspace, member, stages }, 201);
  } catch (err) {
    // Half a workspace (no owner, no pipeline) would be unreachable: remove it (members and stages cascade).
    await db.from('workspaces').delete(`id=${eq(workspace!.id)}`);
    throw err;
  }
});
