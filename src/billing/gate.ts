// Where an account's billing status and an app's pause are enforced: every app-scoped tool call (invoke), and the
// raw routes that serve an app (function invocations, sites).
import { sql, type Kysely } from 'kysely';
import { AppError } from '../core/errors.ts';
import type { AnyTool } from '../core/define.ts';
import type { AppRecord } from '../apps/types.ts';
import type { AccountStatus } from './status.ts';
import type { ControlDatabase } from '../db/types.ts';

/** How long an account's status is trusted in this process; a change made here is seen at once (forget()). */
const STATUS_TTL_MS = 5000;
const STATUS_CACHE_MAX = 10_000;

interface KnownStatus {
  status: AccountStatus;
  reason: string | null;
  expiresMs: number;
}

/** What a request does to an app, for the gate: writes are refused under a soft lock, reads are not. */
export type Access = 'read' | 'write' | 'session' | 'exempt';

/**
 * A call's access: its tool's billingGate when that says (for this input, when it depends on it), else a write unless
 * the tool only reads or only deletes.
 */
export function toolAccess(tool: Pick<AnyTool, 'billingGate' | 'annotations'>, input: Record<string, unknown>): Access {
  const declared = typeof tool.billingGate === 'function' ? tool.billingGate(input) : tool.billingGate;
  if (declared) return declared;
  return tool.annotations?.readOnlyHint || tool.annotations?.destructiveHint ? 'read' : 'write';
}

export const gateErrors = {
  paused: (appId: string) =>
    new AppError(
      423,
      'APP_PAUSED',
      `App '${appId}' is paused: free apps pause after 7 days without requests.`,
      'Restore it with apps_restore (POST /apps/{app_id}/restore) and retry; apps on the pro plan never pause (billing_checkout).',
    ),
  softLocked: (reason: string | null) =>
    new AppError(
      402,
      'ACCOUNT_SOFT_LOCKED',
      `Writes are refused: the account is ${reason ?? 'over its plan'}. Reads still work.`,
      'Upgrade with billing_checkout (POST /dashboard/billing/checkout {"planId":"pro"}), or bring usage back within the plan (delete files or rows); see billing_get (GET /dashboard/billing).',
    ),
  suspended: (reason: string | null) =>
    new AppError(
      402,
      'ACCOUNT_SUSPENDED',
      `The account is suspended (${reason ?? 'unpaid invoice'}); its apps answer nothing until it is paid.`,
      'Pay the open invoice in the billing portal: billing_portal (POST /dashboard/billing/portal) returns its URL.',
    ),
};

export class BillingGate {
  readonly #db: Kysely<ControlDatabase>;
  readonly #statuses = new Map<string, KnownStatus>();

  constructor(db: Kysely<ControlDatabase>) {
    this.#db = db;
  }

  /** Refuses the request when the app is paused or its account's status does not allow `access`. */
  async check(app: Pick<AppRecord, 'id' | 'account_id' | 'paused_at'>, access: Access): Promise<void> {
    if (access === 'exempt') return;
    if (app.paused_at) throw gateErrors.paused(app.id);
    const { status, reason } = await this.status(app.account_id);
    if (status === 'suspended') throw gateErrors.suspended(reason);
    if (status === 'soft_locked' && access === 'write') throw gateErrors.softLocked(reason);
  }

  async status(accountId: string): Promise<{ status: AccountStatus; reason: string | null }> {
    const hit = this.#statuses.get(accountId);
    if (hit && hit.expiresMs > Date.now()) return hit;
    const { rows } = await sql<{ status: AccountStatus; status_reason: string | null }>`
      select status, status_reason from accounts where id = ${accountId}
    `.execute(this.#db);
    const known = { status: rows[0]?.status ?? 'active', reason: rows[0]?.status_reason ?? null, expiresMs: Date.now() + STATUS_TTL_MS };
    if (this.#statuses.size >= STATUS_CACHE_MAX) this.#statuses.delete(this.#statuses.keys().next().value as string);
    this.#statuses.set(accountId, known);
    return known;
  }

  /** After a status change made in this process. */
  forget(accountId: string): void {
    this.#statuses.delete(accountId);
  }
}
