// Who is signed in, as GET /dashboard/session says: null when no session (401). The role decides which buttons a
// page shows; the API enforces the same roles whatever the page shows.
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { ApiError, roleAtLeast, session, type Role, type SessionInfo } from './api.ts';

export async function currentSession(): Promise<SessionInfo | null> {
  try {
    return await session.get();
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return null;
    throw err;
  }
}

export const SessionContext = createContext<SessionInfo | null>(null);

/** Whether the signed-in person's role reaches `needed` (a viewer sees no button it may not use). */
export function useCan(needed: Role): boolean {
  const s = useContext(SessionContext);
  return !!s && roleAtLeast(s.role, needed);
}

export function useSession(): SessionInfo {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside a signed-in page');
  return s;
}
