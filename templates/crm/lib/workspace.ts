// Workspaces: who belongs where and with which role. Row-level security keeps each member to their workspaces' rows;
// these checks say so early, and gate what only owners and admins may do.
import type { Ctx } from './ctx.ts';
import { HttpError, eq, requireUser, rows } from './http.ts';

export type Role = 'owner' | 'admin' | 'member';

export interface Member {
  id: string;
  workspace_id: string;
  user_id: string;
  email: string | null;
  display_name: string | null;
  role: Role;
}

/** The caller's membership of the workspace, or 403 (also for a workspace that does not exist: no probing). */
export async function requireMember(ctx: Ctx, workspaceId: string, roles?: readonly Role[]): Promise<Member> {
  const userId = requireUser(ctx);
  const [member] = rows(
    await ctx.asApp.data.from('workspace_members').select<Member>('*', { query: `workspace_id=${eq(workspaceId)}&user_id=${eq(userId)}` }),
    'membership',
  );
  if (!member) throw new HttpError(403, 'not_a_member', 'You are not a member of this workspace.');
  if (roles && !roles.includes(member.role)) throw new HttpError(403, 'role_required', `Only a workspace ${roles.join(' or ')} may do this.`);
  return member;
}

/** Every member of the workspace. */
export async function membersOf(ctx: Ctx, workspaceId: string): Promise<Member[]> {
  return rows(await ctx.asApp.data.from('workspace_members').select<Member>('*', { query: `workspace_id=${eq(workspaceId)}&order=created_at` }), 'members');
}

/** Every workspace id, for scheduled functions that work through all of them. */
export async function allWorkspaces(ctx: Ctx): Promise<Array<{ id: string; name: string }>> {
  return rows(await ctx.asApp.data.from('workspaces').select<{ id: string; name: string }>('id,name', { query: 'order=created_at' }), 'workspaces');
}

/** A row of a workspace table read as the app, checked to belong to the caller's workspace (404 otherwise). */
export async function rowOf<T extends { workspace_id: string }>(ctx: Ctx, table: string, id: string, columns = '*'): Promise<{ row: T; member: Member }> {
  const [row] = rows(await ctx.asApp.data.from(table).select<T>(columns === '*' ? '*' : `workspace_id,${columns}`, { query: `id=${eq(id)}` }), table);
  if (!row) throw new HttpError(404, 'not_found', `${table.replace(/s$/, '')} ${id} not found.`);
  const member = await requireMember(ctx, row.workspace_id).catch((err) => {
    throw err instanceof HttpError && err.code === 'not_a_member' ? new HttpError(404, 'not_found', `${table.replace(/s$/, '')} ${id} not found.`) : err;
  });
  return { row, member };
}

/** A row a request links to (its deal_id, contact_id, ...), which must exist in the same workspace: 400 otherwise. */
export async function requireInWorkspace(ctx: Ctx, table: string, id: string, workspaceId: string, field: string): Promise<void> {
  const [row] = rows(await ctx.asApp.data.from(table).select<{ workspace_id: string }>('workspace_id', { query: `id=${eq(id)}` }), table);
  if (row?.workspace_id !== workspaceId) throw new HttpError(400, 'invalid_field', `${field} is not a ${table.replace(/s$/, '')} of this workspace.`);
}

/**
 * Who belongs where now, as `${workspace_id}/${user_id}` keys: scheduled functions act in a member's name (their
 * mailbox, their social account) only while that member is still in the workspace.
 */
export async function currentMembers(ctx: Ctx): Promise<{ has(workspaceId: string, userId: string | null): boolean }> {
  const all = rows(await ctx.asApp.data.from('workspace_members').select<{ workspace_id: string; user_id: string }>('workspace_id,user_id'), 'members');
  const keys = new Set(all.map((m) => `${m.workspace_id}/${m.user_id}`));
  return { has: (workspaceId, userId) => userId !== null && keys.has(`${workspaceId}/${userId}`) };
}
