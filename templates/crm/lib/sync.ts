// Mail and calendar sync: which members sync what (sync_state, written by the app only) and one run of a member's
// sync, recorded on their row whether it worked or not, so the site can show when it last ran and why it failed.
import type { Ctx } from './ctx.ts';
import { HttpError, eq, json, one, rows } from './http.ts';
import { errorText } from './tools.ts';
import { currentMembers, requireMember } from './workspace.ts';

export type SyncKind = 'mail' | 'calendar';

/** The toolkit each sync reads through: the member must have connected it. */
export const SYNC_TOOLKIT = { mail: 'gmail', calendar: 'googlecalendar' } as const satisfies Record<SyncKind, string>;

export interface SyncState {
  id: string;
  workspace_id: string;
  user_id: string;
  kind: SyncKind;
  cursor: string | null;
  last_synced_at: string | null;
  last_error: string | null;
  items: number;
}

/** What one run did: rows logged and where the next run starts (null: no cursor, e.g. a time window). */
export interface SyncRun {
  items: number;
  cursor: string | null;
}

/** One member's sync work for one kind (lib/mail.ts syncMail, lib/calendar.ts syncCalendar). */
export type SyncWork = (ctx: Ctx, state: SyncState) => Promise<SyncRun>;

export interface SyncOutcome {
  state: SyncState;
  logged: number;
  error: string | null;
  /** The failure itself, for a caller who answers with it. */
  cause?: unknown;
}

/** Turns a member's sync on (idempotent: the existing row is kept with its cursor) or off (the row removed). */
export async function setSync(ctx: Ctx, workspaceId: string, userId: string, kind: SyncKind, enabled: boolean): Promise<SyncState | null> {
  const table = ctx.asApp.data.from('sync_state');
  const key = `workspace_id=${eq(workspaceId)}&user_id=${eq(userId)}&kind=${eq(kind)}`;
  if (!enabled) {
    rows(await table.delete(key), 'sync_state');
    return null;
  }
  const row = { workspace_id: workspaceId, user_id: userId, kind };
  rows(await table.insert(row, { query: 'on_conflict=workspace_id,user_id,kind', prefer: 'resolution=ignore-duplicates,return=representation' }), 'sync_state');
  return one(await table.select<SyncState>('*', { query: key }), 'sync_state');
}

/** Runs the work and records it on the member's row: the cursor and count moved on, or the error kept. */
export async function runSync(ctx: Ctx, state: SyncState, work: SyncWork): Promise<SyncOutcome> {
  let patch: Partial<SyncState>;
  let logged = 0;
  let error: string | null = null;
  let cause: unknown;
  try {
    const run = await work(ctx, state);
    logged = run.items;
    patch = { cursor: run.cursor ?? state.cursor, items: state.items + run.items, last_synced_at: new Date().toISOString(), last_error: null };
  } catch (err) {
    cause = err;
    error = errorText(err);
    patch = { last_error: error };
  }
  const [saved] = rows(await ctx.asApp.data.from('sync_state').update<SyncState>(patch, `id=${eq(state.id)}`, { prefer: 'return=representation' }), 'sync_state');
  return { state: saved ?? { ...state, ...patch }, logged, error, ...(error ? { cause } : {}) };
}

/** The cron's run: every syncing member of this kind who still belongs to their workspace, one after another. */
export async function syncEveryone(ctx: Ctx, kind: SyncKind, work: SyncWork): Promise<Response> {
  const states = rows(await ctx.asApp.data.from('sync_state').select<SyncState>('*', { query: `kind=${eq(kind)}&order=last_synced_at.asc.nullsfirst` }), 'sync_state');
  const members = await currentMembers(ctx);
  let logged = 0;
  let failed = 0;
  for (const state of states.filter((s) => members.has(s.workspace_id, s.user_id))) {
    const outcome = await runSync(ctx, state, work);
    logged += outcome.logged;
    if (outcome.error) {
      failed++;
      console.error(`${kind} sync of ${state.user_id} in ${state.workspace_id}: ${outcome.error}`);
    }
  }
  return json({ members: states.length, logged, failed });
}

/** POST {workspace_id}: the caller's own sync of this kind, now; 409 when they have not turned it on. */
export async function syncCaller(ctx: Ctx, workspaceId: string, kind: SyncKind, work: SyncWork): Promise<Response> {
  const member = await requireMember(ctx, workspaceId);
  const query = `workspace_id=${eq(workspaceId)}&user_id=${eq(member.user_id)}&kind=${eq(kind)}`;
  const [state] = rows(await ctx.asApp.data.from('sync_state').select<SyncState>('*', { query }), 'sync_state');
  if (!state) throw new HttpError(409, 'sync_not_enabled', `Turn on ${kind} sync first (sync-enable).`);
  const outcome = await runSync(ctx, state, work);
  // The platform's refusal (not connected: 400, tool failed: 422, vendor down: 502) is the answer; it is on the row too.
  if (outcome.error) throw outcome.cause;
  return json({ logged: outcome.logged, state: outcome.state });
}
