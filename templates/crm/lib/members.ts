// Roles within a workspace: owner > admin > member. Owners and admins manage members; only owners make or unmake
// owners; a workspace always keeps an owner (the last one can neither leave, be removed nor be demoted).
import type { Ctx } from './ctx.ts';
import { HttpError, eq, rows } from './http.ts';
import type { Member, Role } from './workspace.ts';

export const ROLES = ['owner', 'admin', 'member'] as const satisfies readonly Role[];
const RANK: Record<Role, number> = { owner: 3, admin: 2, member: 1 };

/** The target's membership row, or 404. */
export async function memberOf(ctx: Ctx, workspaceId: string, userId: string): Promise<Member> {
  const [member] = rows(
    await ctx.asApp.data.from('workspace_members').select<Member>('*', { query: `workspace_id=${eq(workspaceId)}&user_id=${eq(userId)}` }),
    'member',
  );
  if (!member) throw new HttpError(404, 'not_found', 'That user is not a member of this workspace.');
  return member;
}

/**
 * Whether `actor` may change or remove `target`: owners manage everyone, admins manage members only (another admin
 * or an owner outranks or equals them), members manage no one. Acting on yourself is checked by the caller.
 */
export function assertManages(actor: Member, target: Member): void {
  if (actor.role === 'owner') return;
  if (RANK[actor.role] > RANK[target.role]) return;
  throw new HttpError(403, 'role_required', target.role === 'member' ? 'Only a workspace owner or admin may do this.' : `Only a workspace owner may change an ${target.role}.`);
}

/** Granting a role follows the same rule: owners grant any role, admins only member (what they may manage). */
export function assertGrants(actor: Member, role: Role): void {
  if (actor.role === 'owner' || RANK[actor.role] > RANK[role]) return;
  throw new HttpError(403, 'role_required', role === 'member' ? 'Only a workspace owner or admin may do this.' : `Only a workspace owner may make ${role}s.`);
}

async function ownerCount(ctx: Ctx, workspaceId: string): Promise<number> {
  const result = await ctx.asApp.data.from('workspace_members').select('id', { query: `workspace_id=${eq(workspaceId)}&role=eq.owner`, count: true });
  return result.count ?? rows(result, 'owners').length;
}

/** 409 when `target` is the workspace's only owner (and would stop being one). */
export async function assertNotLastOwner(ctx: Ctx, target: Member): Promise<void> {
  if (target.role === 'owner' && (await ownerCount(ctx, target.workspace_id)) <= 1) {
    throw new HttpError(409, 'last_owner', 'A workspace keeps at least one owner: make another member owner first.');
  }
}

/**
 * The data API has no transaction across calls, so two owners demoting each other at once could both pass the check
 * above. After the change, a workspace found without an owner gets `target` back as owner and the caller a 409.
 */
export async function restoreIfOwnerless(ctx: Ctx, target: Member, restore: () => Promise<unknown>): Promise<void> {
  if (target.role !== 'owner' || (await ownerCount(ctx, target.workspace_id)) > 0) return;
  await restore();
  throw new HttpError(409, 'last_owner', 'A workspace keeps at least one owner: make another member owner first.');
}
