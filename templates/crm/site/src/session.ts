// The end user's session: signed up or in through the app's auth routes, kept in localStorage, its access token
// refreshed a minute before it expires (a refresh token is single-use, so one refresh at a time).
import { env } from './env.ts';
import { ApiError, errorOf } from './api/errors.ts';

export interface User {
  id: string;
  email: string;
}

export interface Session {
  access_token: string;
  refresh_token: string;
  /** Epoch milliseconds. */
  expires_at: number;
  user: User;
}

const KEY = 'crm.session';
const EARLY_MS = 60_000;
const listeners = new Set<(s: Session | null) => void>();
let current: Session | null = load();
let refreshing: Promise<Session> | null = null;

function load(): Session | null {
  try {
    const saved = JSON.parse(localStorage.getItem(KEY) ?? 'null') as Session | null;
    return saved?.access_token && saved.refresh_token && saved.user?.id ? saved : null;
  } catch {
    return null;
  }
}

function set(session: Session | null): void {
  current = session;
  if (session) localStorage.setItem(KEY, JSON.stringify(session));
  else localStorage.removeItem(KEY);
  for (const l of listeners) l(session);
}

export const session = (): Session | null => current;

export function onSession(listener: (s: Session | null) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

async function authCall(url: string, body: unknown): Promise<Session> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = (await res.json().catch(() => null)) as { access_token?: string; refresh_token?: string; expires_in?: number; user?: User } | null;
  if (!res.ok || !json?.access_token || !json.refresh_token || !json.user) throw errorOf(res.status, json);
  return { access_token: json.access_token, refresh_token: json.refresh_token, expires_at: Date.now() + (json.expires_in ?? 3600) * 1000, user: json.user };
}

export async function signIn(mode: 'signup' | 'login', email: string, password: string): Promise<Session> {
  const s = await authCall(mode === 'signup' ? env.SVC_AUTH_SIGNUP_URL : env.SVC_AUTH_LOGIN_URL, { email, password });
  set(s);
  return s;
}

export function signOut(): void {
  set(null);
}

/** A valid access token, refreshed first when about to expire; a refused refresh signs the user out. */
export async function accessToken(): Promise<string> {
  const s = current;
  if (!s) throw new ApiError(401, 'not_signed_in', 'Sign in first.');
  if (s.expires_at - Date.now() > EARLY_MS) return s.access_token;
  refreshing ??= authCall(env.SVC_AUTH_REFRESH_URL, { refresh_token: s.refresh_token })
    .then((next) => (set(next), next))
    .catch((err: unknown) => {
      if (err instanceof ApiError && err.status < 500) set(null);
      throw err;
    })
    .finally(() => (refreshing = null));
  return (await refreshing).access_token;
}
