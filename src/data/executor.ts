import pg from 'pg';
import type { Caller } from '../core/caller.ts';

/** Longest a data API statement may run before Postgres cancels it (57014 -> 504 STATEMENT_TIMEOUT). */
export const DATA_STATEMENT_TIMEOUT_MS = 5000;

export interface RoleContext {
  role: 'svc_anon' | 'svc_user' | 'svc_service';
  claims: string;
  /** `claims` as a quoted SQL literal, when written once for many requests (roleFor's). */
  claimsLiteral?: string;
}

const SERVICE_ROLE: RoleContext = Object.freeze(roleContext('svc_service', '{}'));
const ANON_ROLE: RoleContext = Object.freeze(roleContext('svc_anon', '{}'));

/**
 * An end user's role context by their verified claims: the verified-token cache hands every request of a token the
 * same claims object, so their JSON and its literal are written once per token, not per request.
 */
const userRoles = new WeakMap<object, RoleContext>();

/** Rule 1 of the spec: no credential is svc_anon, an end user is svc_user with its claims, a key is svc_service. */
export function roleFor(caller: Caller): RoleContext {
  switch (caller.kind) {
    case 'user': {
      let role = userRoles.get(caller.claims);
      if (!role) userRoles.set(caller.claims, (role = Object.freeze(roleContext('svc_user', JSON.stringify(caller.claims)))));
      return role;
    }
    case 'service':
    case 'platform':
      return SERVICE_ROLE;
    default:
      return ANON_ROLE;
  }
}

function roleContext(role: RoleContext['role'], claims: string): RoleContext {
  return { role, claims, claimsLiteral: flat(pg.escapeLiteral(claims)) };
}

/**
 * `text` as one flat string. V8 keeps a concatenation as a tree of its pieces (escapeLiteral's, one per character),
 * and every statement that embeds a kept piece walks that tree again when its bytes are written to the socket;
 * converting the string to a number flattens it once, in place.
 */
export function flat(text: string): string {
  Number(text);
  return text;
}

export interface StatementResult {
  /** The rows as JSON array (or CSV) text; null when the statement returned only a count. */
  body: string | null;
  rows: number;
  total: number | null;
  /** '' or the reason the statement's result was refused (see output.ts, resultRow). */
  abort: string;
  /** The planner's row estimate, when the statement sent an EXPLAIN (FORMAT JSON) ahead (count=planned|estimated). */
  planned?: number;
  /** Rows an upsert updated instead of inserting, when the statement reports them (see write.ts, UPDATED_ROWS). */
  updated?: number;
}

export interface RunOptions {
  write: boolean;
  /** Prefer: tx=rollback: the statement runs and answers, then the transaction rolls back (deferred constraints checked first). */
  rollback?: boolean;
  /** Prefer: timezone=...: the transaction's TimeZone. */
  timezone?: string | undefined;
  /** BEGIN READ ONLY: a write in it fails with 25006 (/rpc's GET and HEAD, and stable functions). */
  readOnly?: boolean;
}

/** Raised by the guard when a write's result was refused: the transaction rolls back and nothing stays written. */
export class StatementAborted extends Error {
  readonly abort: string;

  constructor(abort: string) {
    super(`statement aborted: ${abort}`);
    this.abort = abort;
  }
}

/**
 * Runs after a write's statement, before COMMIT: a refused result (svc.abort set by the statement) becomes an
 * error, so the whole transaction rolls back in the same round trip.
 */
const ABORT_GUARD = `do $$ declare a text := current_setting('svc.abort', true);
  begin if a <> '' then raise exception '%', a using errcode = split_part(a, ':', 1); end if; end $$`;

/**
 * One request, one transaction, one round trip: BEGIN, the role, the claims and timeout, the statement (with
 * the abort guard for writes) and COMMIT (or, for Prefer: tx=rollback, ROLLBACK) travel as a single simple-protocol
 * query. Only a failure costs a second trip (the ROLLBACK). The statement may send other statements ahead of its
 * result row (an EXPLAIN for a planned count) and after it (an upsert's updated rows); the result row is the first
 * result that has an `abort` column.
 */
export async function runAs(pool: pg.Pool, ctx: RoleContext, statement: string, opts: RunOptions): Promise<StatementResult> {
  const client = await pool.connect();
  const end = opts.rollback ? 'set constraints all immediate; rollback;' : 'commit;';
  const text = `${beginAs(ctx, timezoneSetting(opts.timezone), opts.readOnly)}; ${statement}; ${opts.write ? `${ABORT_GUARD}; ` : ''}${end}`;
  let results: pg.QueryResult[];
  try {
    results = (await client.query(text)) as unknown as pg.QueryResult[];
  } catch (err) {
    await client.query('rollback').then(
      () => client.release(),
      (rollbackErr: Error) => client.release(rollbackErr),
    );
    throw aborted(err);
  }
  client.release();
  return resultOf(results, 3);
}

/**
 * BEGIN, the role and its claims, and the statement timeout: three results. `settings` adds set_config(...) calls to
 * the same select.
 */
export function beginAs(ctx: RoleContext, settings = '', readOnly = false): string {
  return (
    `begin${readOnly ? ' read only' : ''}; set local role ${ctx.role}; ` +
    `select set_config('request.jwt.claims', ${ctx.claimsLiteral ?? pg.escapeLiteral(ctx.claims)}, true), set_config('statement_timeout', '${DATA_STATEMENT_TIMEOUT_MS}', true)${settings}`
  );
}

const timezoneSetting = (timezone: string | undefined) => (timezone === undefined ? '' : `, set_config('timezone', ${pg.escapeLiteral(timezone)}, true)`);

/** A guard's refusal (SQLSTATE SVnnn) is the statement's own verdict, not a database failure. */
function aborted(err: unknown): unknown {
  const { code, message } = err as { code?: string; message?: string };
  return code?.startsWith('SV') && message ? new StatementAborted(message) : err;
}

export interface StepOptions {
  write: boolean;
  timezone?: string | undefined;
  /** The statement timeout: the transaction's remaining time when that is below DATA_STATEMENT_TIMEOUT_MS. */
  timeoutMs: number;
}

/**
 * One statement of a transaction its holder keeps open on `client` (begun with beginAs; see transaction.ts). The
 * refusal an earlier statement stored in svc.abort is cleared first so that this one's guard judges only its own
 * result, and a timezone applies to this statement alone. A failure throws as in runAs and leaves the transaction
 * aborted: the holder rolls it back.
 */
export async function runStep(client: pg.ClientBase, statement: string, opts: StepOptions): Promise<StatementResult> {
  const settings = `select set_config('svc.abort', '', true), set_config('statement_timeout', '${Math.max(1, Math.ceil(opts.timeoutMs))}', true)${timezoneSetting(opts.timezone)}`;
  const after = `${opts.write ? `${ABORT_GUARD}; ` : ''}${opts.timezone === undefined ? '' : 'set local timezone to default;'}`;
  try {
    return resultOf((await client.query(`${settings}; ${statement}; ${after}`)) as unknown as pg.QueryResult[], 1);
  } catch (err) {
    throw aborted(err);
  }
}

type ResultRow = { body: string | null; rows: string; total: string | null; abort: string };

/**
 * The result row among the statement's results (the one at `first`, where the statement starts, unless statements
 * were sent ahead of it), and what came with it.
 */
function resultOf(results: pg.QueryResult[], first: number): StatementResult {
  let planned: number | undefined;
  let i = first;
  let row = results[i]!.rows[0] as ResultRow | undefined;
  while (row === undefined || !('abort' in row)) {
    const plan = (row as { 'QUERY PLAN'?: [{ Plan: { 'Plan Rows': number } }] } | undefined)?.['QUERY PLAN'];
    if (plan) planned = plan[0].Plan['Plan Rows'];
    row = results[++i]!.rows[0] as ResultRow | undefined;
  }
  const result: StatementResult = { body: row.body, rows: Number(row.rows), total: row.total === null ? null : Number(row.total), abort: row.abort };
  if (planned !== undefined) result.planned = planned;
  const after = results[i + 1]?.rows[0] as { updated?: string | null } | undefined;
  if (after && 'updated' in after) result.updated = Number(after.updated || 0);
  return result;
}
