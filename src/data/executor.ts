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
  body: string;
  rows: number;
  total: number | null;
}

/**
 * One request, one transaction, one round trip: BEGIN, the role, the claims and timeout, the statement and
 * COMMIT travel as a single simple-protocol query. Only a failure costs a second trip (the ROLLBACK).
 */
export async function runAs(pool: pg.Pool, ctx: RoleContext, statement: string): Promise<StatementResult> {
  const client = await pool.connect();
  const text =
    `begin; set local role ${ctx.role}; ` +
    `select set_config('request.jwt.claims', ${pg.escapeLiteral(ctx.claims)}, true), set_config('statement_timeout', '${DATA_STATEMENT_TIMEOUT_MS}', true); ` +
    `${statement}; commit;`;
  let results: pg.QueryResult[];
  try {
    results = (await client.query(text)) as unknown as pg.QueryResult[];
  } catch (err) {
    await client.query('rollback').then(
      () => client.release(),
      (rollbackErr: Error) => client.release(rollbackErr),
    );
    throw err;
  }
  client.release();
  const row = results[3]!.rows[0] as { body: string; rows: string; total: string | null };
  return { body: row.body, rows: Number(row.rows), total: row.total === null ? null : Number(row.total) };
}
