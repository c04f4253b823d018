// The account's audit log: who (a person, a key, or the platform itself) did what to which resource, and from which
// address. An area that changes something in a transaction of its own records the entry in it (audit.record), so both
// commit or neither does; the tools that declare `audit` are recorded by invoke() once they succeed (AuditLog is the
// recorder the composition root installs). Entries are read newest first and kept SVC_AUDIT_RETENTION_DAYS (the
// audit_purge job).
import { isIP } from 'node:net';
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Caller } from '../core/caller.ts';
import { errors } from '../core/errors.ts';
import type { AuditedCall, CallAuditor } from '../core/invoke.ts';
import type { ControlDatabase } from '../db/types.ts';

type Db = Kysely<ControlDatabase> | Transaction<ControlDatabase>;

/** Who acted: a person (signed in, or through a client acting for them), a key, or the platform itself. */
export type AuditActor = { kind: 'person' | 'key'; id: string } | { kind: 'platform'; id: null };

/** Who acted and from which address (null when the call came through no HTTP peer of its own: MCP, a function). */
export interface AuditBy {
  actor: AuditActor;
  ip: string | null;
}

export interface AuditEntry extends AuditBy {
  accountId: string;
  /** `<resource>.<verb>`, e.g. member.role_change. */
  action: string;
  resourceType: string;
  resourceId: string | null;
  /** Facts worth keeping beside it; never a secret. */
  details?: Record<string, unknown>;
}

export const audit = {
  /** Writes one entry on `db`: pass the transaction of the change, so that both commit or neither does. */
  async record(db: Db, entry: AuditEntry): Promise<void> {
    await db
      .insertInto('audit_log')
      .values({
        account_id: entry.accountId,
        actor_kind: entry.actor.kind,
        actor_id: entry.actor.id,
        action: entry.action,
        resource_type: entry.resourceType,
        resource_id: entry.resourceId,
        ip: entry.ip,
        details: JSON.stringify(entry.details ?? {}),
      })
      .execute();
  },
};

type PlatformCaller = Extract<Caller, { kind: 'platform' }>;

/** A platform caller as an actor: the person behind it when there is one, else its key. */
export function platformActor(caller: PlatformCaller): AuditActor {
  if (caller.personId !== null) return { kind: 'person', id: caller.personId };
  return caller.keyId !== null ? { kind: 'key', id: caller.keyId } : { kind: 'platform', id: null };
}

/** The account a caller acts on and who it is there; undefined for end users and anonymous callers, which act on none. */
export function actingOn(caller: Caller): { accountId: string; actor: AuditActor } | undefined {
  if (caller.kind === 'platform') return { accountId: caller.accountId, actor: platformActor(caller) };
  if (caller.kind === 'service' || caller.kind === 'substrate') return { accountId: caller.accountId, actor: { kind: 'key', id: caller.keyId } };
  return undefined;
}

/** A call's client address: REST's peer; MCP and functions name themselves instead (mcp:<account>, function:<id>). */
export function clientAddress(clientId: string): string | null {
  return isIP(clientId) ? clientId : null;
}

export interface AuditQuery {
  /** The actor's id (a person's or a key's). */
  actor?: string | undefined;
  action?: string | undefined;
  resource_type?: string | undefined;
  resource_id?: string | undefined;
  /** ISO times: entries at or after `since`, before `until`. */
  since?: string | undefined;
  until?: string | undefined;
  limit: number;
  /** The previous page's next_cursor. */
  cursor?: string | undefined;
}

export interface AuditEntryView {
  id: string;
  actor_kind: AuditActor['kind'];
  actor_id: string | null;
  action: string;
  resource_type: string;
  resource_id: string | null;
  ip: string | null;
  details: Record<string, unknown>;
  created_at: string;
}

export interface AuditPage {
  entries: AuditEntryView[];
  /** Pass as cursor for the next (older) page; null on the last one. */
  next_cursor: string | null;
}

type AuditRow = Selectable<ControlDatabase['audit_log']> & { at_us: string };

function auditEntryView(row: AuditRow): AuditEntryView {
  return {
    id: row.id,
    actor_kind: row.actor_kind,
    actor_id: row.actor_id,
    action: row.action,
    resource_type: row.resource_type,
    resource_id: row.resource_id,
    ip: row.ip,
    // audit.record writes an object.
    details: row.details as Record<string, unknown>,
    created_at: row.created_at.toISOString(),
  };
}

/**
 * A page ends at (created_at, id) of its last entry. The time is kept in whole microseconds, as Postgres stores it: a
 * JavaScript Date would round it to milliseconds, and the next page would skip or repeat entries of that millisecond.
 */
const CURSOR = /^(\d{1,20})-(\d{1,20})$/;

function cursorOf(row: AuditRow): string {
  return `${row.at_us}-${row.id}`;
}

function parseCursor(cursor: string): { atUs: string; id: string } {
  const m = CURSOR.exec(cursor);
  if (!m) throw errors.validation("Invalid 'cursor': pass the next_cursor of the previous page.", [{ path: 'cursor', message: 'not a cursor of this list' }]);
  return { atUs: m[1]!, id: m[2]! };
}

/** Deletes the entries older than the retention (SVC_AUDIT_RETENTION_DAYS, the parameter). */
export const PURGE_AUDIT_SQL = 'delete from audit_log where created_at < now() - make_interval(days => $1)';

export class AuditLog implements CallAuditor {
  readonly #db: Kysely<ControlDatabase>;

  constructor(db: Kysely<ControlDatabase>) {
    this.#db = db;
  }

  /** invoke()'s entry for an audited tool that succeeded, in the account the caller acts on. */
  async recordCall(call: AuditedCall): Promise<void> {
    const acting = actingOn(call.caller);
    // Audited tools act on an account: end users and anonymous callers never reach one.
    if (!acting) return;
    await audit.record(this.#db, {
      ...acting,
      ip: clientAddress(call.clientId),
      action: call.action,
      resourceType: call.resourceType,
      resourceId: call.resourceId,
      details: call.details,
    });
  }

  /** The account's entries matching the query, newest first. */
  async list(accountId: string, query: AuditQuery): Promise<AuditPage> {
    let q = this.#db
      .selectFrom('audit_log')
      .selectAll()
      .select(sql<string>`(extract(epoch from created_at) * 1000000)::bigint::text`.as('at_us'))
      .where('account_id', '=', accountId);
    if (query.actor !== undefined) q = q.where('actor_id', '=', query.actor);
    if (query.action !== undefined) q = q.where('action', '=', query.action);
    if (query.resource_type !== undefined) q = q.where('resource_type', '=', query.resource_type);
    if (query.resource_id !== undefined) q = q.where('resource_id', '=', query.resource_id);
    if (query.since !== undefined) q = q.where('created_at', '>=', new Date(query.since));
    if (query.until !== undefined) q = q.where('created_at', '<', new Date(query.until));
    if (query.cursor !== undefined) {
      const after = parseCursor(query.cursor);
      q = q.where(sql<boolean>`(created_at, id) < (timestamptz 'epoch' + ${after.atUs}::bigint * interval '1 microsecond', ${after.id}::bigint)`);
    }
    const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit + 1).execute();
    const page = rows.slice(0, query.limit);
    return { entries: page.map(auditEntryView), next_cursor: rows.length > query.limit ? cursorOf(page.at(-1)!) : null };
  }
}
