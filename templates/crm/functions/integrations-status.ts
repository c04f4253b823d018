// GET ?workspace_id: the toolkits the CRM uses and, for each, the caller's own accounts and which members of the
// workspace connected it (the app's view of its end users' connections, ctx.asApp.integrations: no tokens, only which
// toolkit is connected and since when), with their mail or calendar sync state.
import type { Ctx } from '../lib/ctx.ts';
import { handler, json, params, uuid, rows, eq } from '../lib/http.ts';
import { membersOf, requireMember } from '../lib/workspace.ts';
import { CRM_TOOLKITS, SYNC_KIND, TOOLKIT_NAMES, type Connection } from '../lib/integrations.ts';

interface SyncRow {
  user_id: string;
  kind: 'mail' | 'calendar';
  last_synced_at: string | null;
  last_error: string | null;
}

/** Every end user's active connections, as the app sees them. */
async function appConnections(ctx: Ctx): Promise<Connection[]> {
  return (await ctx.asApp.integrations.connections()).connections.filter((c) => c.status === 'active');
}

export default handler(async (request, ctx) => {
  const workspaceId = uuid(params(request), 'workspace_id');
  const me = await requireMember(ctx, workspaceId);
  const [connections, members, syncs] = await Promise.all([
    appConnections(ctx),
    membersOf(ctx, workspaceId),
    ctx.data.from('sync_state').select<SyncRow>('user_id,kind,last_synced_at,last_error', { query: `workspace_id=${eq(workspaceId)}` }).then((r) => rows(r, 'sync_state')),
  ]);
  const toolkits = TOOLKIT_NAMES.map((toolkit) => {
    const mine = connections.filter((c) => c.toolkit === toolkit && c.userId === me.user_id);
    const kind = SYNC_KIND[toolkit];
    const using = members.flatMap((m) => {
      if (!connections.some((c) => c.toolkit === toolkit && c.userId === m.user_id)) return [];
      const sync = kind ? syncs.find((s) => s.user_id === m.user_id && s.kind === kind) : undefined;
      return [{ user_id: m.user_id, display_name: m.display_name, email: m.email, syncing: sync !== undefined, last_synced_at: sync?.last_synced_at ?? null, last_error: sync?.last_error ?? null }];
    });
    return {
      toolkit,
      purpose: CRM_TOOLKITS[toolkit],
      connected: mine.length > 0,
      connections: mine.map(({ id, status, createdAt }) => ({ id, status, created_at: createdAt })),
      members: using,
    };
  });
  return json({ workspace_id: workspaceId, toolkits });
});
