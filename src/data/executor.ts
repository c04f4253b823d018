import pg from 'pg';
import type { Caller } from '../core/define.ts';

/** Longest a data API statement may run before Postgres cancels it (57014 -> 504 STATEMENT_TIMEOUT). */
export const DATA_STATEMENT_TIMEOUT_MS = 5000;

export interface RoleContext {
  role: 'svc_anon' | 'svc_user' | 'svc_service';
  claims: string;
}

/** Rule 1 of the spec: no credential is svc_anon, an end user is svc_user with its claims, a key is svc_service. */
export function roleFor(caller: Caller): RoleContext {
  switch (caller.kind) {
    case 'user':
      return { role: 'svc_user', claims: JSON.stringify(caller.claims) };
    case 'service':
    case 'platform':
      return { role: 'svc_service', claims: '{}' };
    default:
      return { role: 'svc_anon', claims: '{}' };
  }
}

export interface StatementResult {
  /** The rows as a JSON array text; null when the statement returned only a count. */
  body: string | null;
  rows: number;
  total: number | null;
  /** '' or the reason the statement's result was refused (see compile.ts, resultRow). */
  abort: string;
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
 * the abort guard for writes) and COMMIT travel as a single simple-protocol query. Only a failure costs a second
 * trip (the ROLLBACK).
 */
export async function runAs(pool: pg.Pool, ctx: RoleContext, statement: string, opts: { write: boolean }): Promise<StatementResult> {
  const client = await pool.connect();
  const text =
    `begin; set local role ${ctx.role}; ` +
    `select set_config('request.jwt.claims', ${pg.escapeLiteral(ctx.claims)}, true), set_config('statement_timeout', '${DATA_STATEMENT_TIMEOUT_MS}', true); ` +
    `${statement}; ${opts.write ? `${ABORT_GUARD}; ` : ''}commit;`;
  let results: pg.QueryResult[];
  try {
    results = (await client.query(text)) as unknown as pg.QueryResult[];
  } catch (err) {
    await client.query('rollback').then(
      () => client.release(),
      (rollbackErr: Error) => client.release(rollbackErr),
    );
    const { code, message } = err as { code?: string; message?: string };
    if (code?.startsWith('SV') && message) throw new StatementAborted(message);
    throw err;
  }
  client.release();
  const row = results[3]!.rows[0] as { body: string | null; rows: string; total: string | null; abort: string };
  return { body: row.body, rows: Number(row.rows), total: row.total === null ? null : Number(row.total), abort: row.abort };
}
