// What every page of a signed-in user knows: who they are and which workspace they are in.
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { User } from './session.ts';
import type { Workspace } from './types.ts';

export interface Current {
  user: User;
  workspace: Workspace;
}

export const CurrentContext = createContext<Current | null>(null);

export function useCurrent(): Current {
  const current = useContext(CurrentContext);
  if (!current) throw new Error('useCurrent outside a workspace');
  return current;
}

/** Owners and admins decide proposals, invite and change roles. */
export const canManage = (w: Workspace): boolean => w.role === 'owner' || w.role === 'admin';
