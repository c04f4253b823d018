// POST {workspace_id, user_id, role}: an owner or admin changes a member's role (lib/members.ts says who may grant and
// change what). The last owner cannot be demoted.
import { handler, json, body, uuid, oneOf, rows, eq } from '../lib/http.ts';
import { requireMember, type Member } from '../lib/workspace.ts';
import { ROLES, assertGrants, assertManages, assertNotLastOwner, memberOf, restoreIfOwnerless } from '../lib/members.ts';

export default handler(async (request, ctx) => {
  const input = await body(request);
  const workspaceId = uuid(input, 'workspace_id');
  const userId = uuid(input, 'user_id');
  const role = oneOf(input, 'role', ROLES);
  const actor = await requireMember(ctx, workspaceId, ['owner', 'admin']);
  const target = await memberOf(ctx, workspaceId, userId);
  if (target.role === role) return json({ member: target, changed: false });
  if (target.user_id !== actor.user_id) assertManages(actor, target);
  assertGrants(actor, role);
  if (role !== 'owner') await assertNotLastOwner(ctx, target);

  const table = ctx.asApp.data.from('workspace_members');
  const [member] = rows(await table.update<Member>({ role }, `id=${eq(target.id)}`), 'member');
  await restoreIfOwnerless(ctx, target, () => table.update({ role: 'owner' }, `id=${eq(target.id)}`));
  return json({ member, changed: true });
});
