// An app's orders as its owner sees them: every end user's, newest first, paged by cursor (`before` in, `next_before`
// out, the platform's paging convention). An end user reads the same list narrowed to themselves.
import { sql } from 'kysely';
import { errors } from '../core/errors.ts';
import { orderView, type OrderRow } from './checkout.ts';
import { monetizationErrors, type MonetizationDb, type OrderStatus, type OrderView } from './types.ts';

export interface OrderQuery {
  /** Only this end user's (null: every end user's). */
  userId: string | null;
  status?: OrderStatus | undefined;
  before?: string | undefined;
  limit: number;
}

export type OwnedOrder = OrderView & { userId: string };

export class AppOrders {
  readonly #db: MonetizationDb;

  constructor(db: MonetizationDb) {
    this.#db = db;
  }

  async list(appId: string, q: OrderQuery): Promise<{ orders: OwnedOrder[]; next_before: string | null }> {
    const rows = await this.#page(appId, q);
    const shown = rows.slice(0, q.limit);
    const last = shown.at(-1);
    return {
      orders: shown.map((r) => ({ ...orderView(r), userId: r.user_id })),
      next_before: rows.length > q.limit && last ? `${last.cursor_ts}~${last.id}` : null,
    };
  }

  /** One order of the app; when `userId` is given, only theirs (anyone else's is not found, exactly like a missing one). */
  async get(appId: string, orderId: string, userId: string | null): Promise<OwnedOrder> {
    let query = this.#db.selectFrom('app_orders').selectAll().where('app_id', '=', appId).where('id', '=', orderId);
    if (userId !== null) query = query.where('user_id', '=', userId);
    const row = await query.executeTakeFirst();
    if (!row) throw monetizationErrors.orderNotFound(orderId);
    return { ...orderView(row), userId: row.user_id };
  }

  /** `limit + 1` orders after the cursor, newest first (the app-wide index of 0031, or the per-user one of 0016). */
  async #page(appId: string, q: OrderQuery): Promise<Array<OrderRow & { cursor_ts: string }>> {
    const cursor = q.before === undefined ? null : parseCursor(q.before);
    const after = cursor === null ? sql`` : sql`and (created_at, id) < (${cursor.ts}::timestamptz, ${cursor.id})`;
    const { rows } = await sql<OrderRow & { cursor_ts: string }>`
      select *, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_ts from app_orders
      where app_id = ${appId} ${q.userId === null ? sql`` : sql`and user_id = ${q.userId}::uuid`} ${q.status === undefined ? sql`` : sql`and status = ${q.status}`} ${after}
      order by created_at desc, id desc limit ${q.limit + 1}
    `.execute(this.#db);
    return rows;
  }
}

/**
 * A cursor is the last order's `<created_at to the microsecond>~<id>`: orders sharing a timestamp at a page's edge are
 * neither repeated nor skipped.
 */
function parseCursor(before: string): { ts: string; id: string } {
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z)~(ord_[a-z0-9]{1,60})$/.exec(before);
  if (!match || Number.isNaN(Date.parse(match[1]!))) {
    throw errors.validation("'before' must be the next_before of a previous page.", [{ path: 'before', message: 'not a cursor' }]);
  }
  return { ts: match[1]!, id: match[2]! };
}
