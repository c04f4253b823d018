// GET ?workspace_id: the toolkits the CRM uses, whether the caller connected each (their accounts, from the platform),
// and which members of the workspace use each: a member whose mail or calendar sync is on connected that toolkit
// (sync runs through their account). The platform lists one end user's connections to that end user only, so the
// other members' side is what the CRM itself records.
import { handler, json, params, uuid, rows, eq } from '../lib/http.ts';
import { membersOf, requireMember } from '../lib/workspace.ts';
import { CRM_TOOLKITS, SYNC_KIND, TOOLKIT_NAMES, myConnections } from '../lib/integrations.ts';

interface SyncRow {
  user_id: string;
  kind: 'mail' | 'calendar';
  last_synced_at: string | null;
  last_error: string | null;
}

export default handler(async (request, ctx) => {
  const workspaceId = uuid(params(request), 'workspace_id');
  const me = await requireMember(ctx, workspaceId);
  const [connections, members, syncs] = await Promise.all([
    myConnections(ctx),
    membersOf(ctx, workspaceId),
    ctx.data.from('sync_state').select<SyncRow>('user_id,kind,last_synced_at,last_error', { query: `workspace_id=${eq(workspaceId)}` }).then((r) => rows(r, 'sync_state')),
  ]);
  const toolkits = TOOLKIT_NAMES.map((toolkit) => {
    const mine = connections.filter((c) => c.toolkit === toolkit);
    const kind = SYNC_KIND[toolkit];
    const using = members.flatMap((m) => {
      const sync = kind ? syncs.find((s) => s.user_id === m.user_id && s.kind === kind) : undefined;
      const connected = m.user_id === me.user_id ? mine.some((c) => c.status === 'active') : sync !== undefined;
      if (!connected) return [];
      return [{ user_id: m.user_id, display_name: m.display_name, email: m.email, syncing: sync !== undefined, last_synced_at: sync?.last_synced_at ?? null, last_error: sync?.last_error ?? null }];
    });
    return {
      toolkit,
      purpose: CRM_TOOLKITS[toolkit],
      connected: mine.some((c) => c.status === 'active'),
      connections: mine.map(({ id, status, createdAt }) => ({ id, status, created_at: createdAt })),
      members: using,
    };
  });
  return json({ workspace_id: workspaceId, toolkits });
});
