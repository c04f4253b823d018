// The workspace page: overview, members and invitations, connected accounts and sync.
import type { Member, Role } from '../types.ts';
import { fn } from './core.ts';

export interface Overview {
  workspace: { id: string; name: string };
  role: Role;
  members: Member[];
  counts: Record<string, number>;
  open_pipeline?: unknown;
  tasks_due?: Array<{ id: string; title: string; due_at: string | null }>;
  pending_invitations?: Array<{ id: string; email: string; role: Role; expires_at: string }>;
}

export interface ToolkitStatus {
  toolkit: string;
  purpose?: string;
  connected: boolean;
  connections: Array<{ id: string; status: string }>;
  members: Array<{ user_id: string; display_name: string | null; email: string | null; syncing: boolean; last_synced_at: string | null; last_error: string | null }>;
}

export const overview = (workspaceId: string) => fn<Overview>('workspace-overview', { method: 'GET', query: { workspace_id: workspaceId } });

export const invite = (workspaceId: string, email: string, role: 'admin' | 'member') =>
  fn<{ link: string; emailed: boolean; email_error?: string }>('member-invite', { body: { workspace_id: workspaceId, email, role } });

export const setRole = (workspaceId: string, userId: string, role: Role) => fn('member-role', { body: { workspace_id: workspaceId, user_id: userId, role } });

export const removeMember = (workspaceId: string, userId: string) => fn('member-remove', { body: { workspace_id: workspaceId, user_id: userId } });

export const integrations = async (workspaceId: string) => (await fn<{ toolkits: ToolkitStatus[] }>('integrations-status', { method: 'GET', query: { workspace_id: workspaceId } })).toolkits;

/** Starts connecting an account: the browser goes to the vendor's page and comes back here. */
export async function connect(toolkit: string): Promise<void> {
  const started = await fn<{ auth_url: string }>('integration-connect', { body: { toolkit, redirect_url: location.href } });
  location.assign(started.auth_url);
}

export const disconnect = (connectionId: string) => fn('integration-disconnect', { body: { connection_id: connectionId } });

export const enableSync = (workspaceId: string, kind: 'mail' | 'calendar') => fn('sync-enable', { body: { workspace_id: workspaceId, kind } });

export const syncNow = (workspaceId: string, kind: 'mail' | 'calendar') => fn<Record<string, unknown>>(kind === 'mail' ? 'mail-sync-now' : 'calendar-sync-now', { body: { workspace_id: workspaceId } });
