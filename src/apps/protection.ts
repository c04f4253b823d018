// Protected apps (docs/branches.md): agents (platform keys, OAuth clients over MCP, service keys)
// do not change a protected app directly; they change a branch of it, whose merge a person approves. A person signed
// in with at least the developer role acts directly. Read from the row on every guarded write, not from a cache, so a
// protection set on one process holds on every other at once.
import { sql, type Kysely } from 'kysely';
import { AppError } from '../core/errors.ts';
import { roleAtLeast, type Caller } from '../core/caller.ts';
import type { ControlDatabase } from '../db/types.ts';

/** Whether the caller is a person acting directly (a browser session) with the role that changes an app. */
export function actsAsPerson(caller: Caller): boolean {
  return caller.kind === 'platform' && caller.via === 'session' && roleAtLeast(caller.role, 'developer');
}

export async function isProtected(db: Kysely<ControlDatabase>, appId: string): Promise<boolean> {
  const { rows } = await sql<{ protected: boolean }>`select protected from apps where id = ${appId}`.execute(db);
  return rows[0]?.protected ?? false;
}

/** 403 APP_PROTECTED: the change is refused, with the branch workflow as the way through. */
export function appProtected(appId: string, what: string): AppError {
  return new AppError(
    403,
    'APP_PROTECTED',
    `App '${appId}' is protected: ${what} by an agent is refused; a person approves changes to it.`,
    `Make the change on a branch: branches_create { app_id: "${appId}" }, change the branch app, then branches_merge, which a person approves in the console (Approvals). A person signed in to the console with the developer role may change it directly.`,
    { app_id: appId },
  );
}

/** Refuses `what` on a protected app unless a person with the role does it. */
export async function guardProtected(db: Kysely<ControlDatabase>, appId: string, caller: Caller, what: string): Promise<void> {
  if (actsAsPerson(caller)) return;
  if (await isProtected(db, appId)) throw appProtected(appId, what);
}
