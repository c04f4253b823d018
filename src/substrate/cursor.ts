// The substrate lists' paging cursor (memory/list, the ledger, entities): `before` in, `next_before` out, the last
// row's `<timestamp, ISO 8601 to the microsecond>~<id>`, so rows sharing a timestamp at a page boundary are neither
// repeated nor skipped. A bare ISO timestamp is accepted as `before` too (rows strictly older), as the first callers sent.
import { sql, type RawBuilder } from 'kysely';
import { errors } from '../core/errors.ts';

export interface Cursor {
  ts: string;
  id: string | null;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;
const ID = /^[a-z]{3}_[a-z0-9]{1,60}$/;

export function parseCursor(before: string): Cursor {
  const [ts, id, ...rest] = before.split('~');
  if (rest.length > 0 || !ts || !ISO.test(ts) || Number.isNaN(Date.parse(ts)) || (id !== undefined && !ID.test(id))) {
    throw errors.validation("'before' must be the next_before of a previous page (or an ISO 8601 timestamp).", [{ path: 'before', message: 'not a cursor' }]);
  }
  return { ts, id: id ?? null };
}

/** `column` to the microsecond, UTC, as text: the timestamp half of a cursor (select it `as cursor_ts`). */
export const cursorTs = (column: string): RawBuilder<string> => sql<string>`to_char(${sql.ref(column)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** The `and ...` condition keeping the rows after `cursor` in `(column desc, id desc)` order; empty without one. */
export function afterCursor(column: string, cursor: Cursor | null): RawBuilder<unknown> {
  if (cursor === null) return sql``;
  if (cursor.id === null) return sql`and ${sql.ref(column)} < ${cursor.ts}::timestamptz`;
  return sql`and (${sql.ref(column)}, id) < (${cursor.ts}::timestamptz, ${cursor.id}::text)`;
}

/**
 * A page of `limit` rows out of the `limit + 1` read, and the cursor after its last row (null when no row was left
 * over: the last page).
 */
export function page<R extends { id: string; cursor_ts: string }>(rows: R[], limit: number): { rows: R[]; next_before: string | null } {
  const shown = rows.slice(0, limit);
  const last = shown.at(-1);
  return { rows: shown, next_before: rows.length > limit && last ? `${last.cursor_ts}~${last.id}` : null };
}
