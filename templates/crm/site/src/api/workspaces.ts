// The workspace switcher: the caller's workspaces, making one, joining one by invitation.
import type { Role, Workspace } from '../types.ts';
import { db, fn, rows } from './core.ts';

/** The workspaces the user belongs to, with their role (row-level security shows members of these only). */
export async function listWorkspaces(userId: string): Promise<Workspace[]> {
  const sb = await db();
  const [spaces, mine] = await Promise.all([
    sb.from('workspaces').select('id,name').order('name').then((r) => rows<{ id: string; name: string }>(r)),
    sb.from('workspace_members').select('workspace_id,role').eq('user_id', userId).then((r) => rows<{ workspace_id: string; role: Role }>(r)),
  ]);
  const role = new Map(mine.map((m) => [m.workspace_id, m.role]));
  return spaces.filter((s) => role.has(s.id)).map((s) => ({ ...s, role: role.get(s.id)! }));
}

export async function createWorkspace(name: string): Promise<string> {
  const made = await fn<{ workspace: { id: string } }>('workspace-create', { body: { name } });
  return made.workspace.id;
}

export async function acceptInvite(token: string): Promise<string> {
  return (await fn<{ workspace_id: string }>('invite-accept', { body: { token } })).workspace_id;
}
