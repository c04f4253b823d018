// POST {workspace_id, user_id}: an owner or admin removes a member (lib/members.ts: whom), or any member leaves (their
// own user_id). The last owner can do neither: they hand ownership over first.
import { handler, json, body, uuid, rows, eq } from '../lib/http.ts';
import { requireMember } from '../lib/workspace.ts';
import { assertManages, assertNotLastOwner, memberOf, restoreIfOwnerless } from '../lib/members.ts';

export default handler(async (request, ctx) => {
  const input = await body(request);
  const workspaceId = uuid(input, 'workspace_id');
  const userId = uuid(input, 'user_id');
  const actor = await requireMember(ctx, workspaceId);
  const target = actor.user_id === userId ? actor : await memberOf(ctx, workspaceId, userId);
  if (target !== actor) assertManages(actor, target);
  await assertNotLastOwner(ctx, target);

  const table = ctx.asApp.data.from('workspace_members');
  rows(await table.delete(`id=${eq(target.id)}`), 'member');
  const { id: _id, ...row } = target;
  await restoreIfOwnerless(ctx, target, () => table.insert(row));
  // Their sync stops with their membership (the crons skip non-members too; this keeps the settings page honest).
  rows(await ctx.asApp.data.from('sync_state').delete(`workspace_id=${eq(workspaceId)}&user_id=${eq(userId)}`), 'sync_state');
  return json({ removed: { user_id: target.user_id, role: target.role }, left: target === actor });
});
