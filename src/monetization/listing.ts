// An app's orders and subscriptions as its owner sees them: every end user's, newest first, paged by cursor
// (`before` in, `next_before` out, the platform's paging convention). An end user reads the same lists narrowed to
// themselves.
import { sql } from 'kysely';
import { errors } from '../core/errors.ts';
import { orderView, subscriptionView, type OrderRow, type SubscriptionRow } from './checkout.ts';
import { monetizationErrors, type MonetizationDb, type OrderStatus, type OrderView, type SubscriptionStatus, type SubscriptionView } from './types.ts';

export interface ListQuery<S extends string> {
  /** Only this end user's (null: every end user's). */
  userId: string | null;
  status?: S | undefined;
  before?: string | undefined;
  limit: number;
}

type Owned<V> = V & { userId: string };
export type OwnedOrder = Owned<OrderView>;
export type OwnedSubscription = Owned<SubscriptionView>;

interface Page<V> {
  items: Owned<V>[];
  next_before: string | null;
}

export class AppListing {
  readonly #db: MonetizationDb;

  constructor(db: MonetizationDb) {
    this.#db = db;
  }

  async orders(appId: string, q: ListQuery<OrderStatus>): Promise<{ orders: OwnedOrder[]; next_before: string | null }> {
    const { items, next_before } = await this.#page<OrderRow, OrderView>('app_orders', appId, q, orderView);
    return { orders: items, next_before };
  }

  async subscriptions(appId: string, q: ListQuery<SubscriptionStatus>): Promise<{ subscriptions: OwnedSubscription[]; next_before: string | null }> {
    const { items, next_before } = await this.#page<SubscriptionRow, SubscriptionView>('app_subscriptions', appId, q, subscriptionView);
    return { subscriptions: items, next_before };
  }

  /** One order of the app; when `userId` is given, only theirs (anyone else's is not found, exactly like a missing one). */
  async order(appId: string, orderId: string, userId: string | null): Promise<OwnedOrder> {
    let query = this.#db.selectFrom('app_orders').selectAll().where('app_id', '=', appId).where('id', '=', orderId);
    if (userId !== null) query = query.where('user_id', '=', userId);
    const row = await query.executeTakeFirst();
    if (!row) throw monetizationErrors.orderNotFound(orderId);
    return { ...orderView(row), userId: row.user_id };
  }

  /**
   * `limit` rows after the cursor, newest first (the app-wide indexes of 0031, or the per-user ones of 0016), one
   * more read to know whether a page follows.
   */
  async #page<R extends { id: string; user_id: string }, V>(table: 'app_orders' | 'app_subscriptions', appId: string, q: ListQuery<string>, view: (row: R) => V): Promise<Page<V>> {
    const cursor = q.before === undefined ? null : parseCursor(q.before);
    const { rows } = await sql<R & { cursor_ts: string }>`
      select *, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_ts from ${sql.table(table)}
      where app_id = ${appId}
        ${q.userId === null ? sql`` : sql`and user_id = ${q.userId}::uuid`}
        ${q.status === undefined ? sql`` : sql`and status = ${q.status}`}
        ${cursor === null ? sql`` : sql`and (created_at, id) < (${cursor.ts}::timestamptz, ${cursor.id})`}
      order by created_at desc, id desc limit ${q.limit + 1}
    `.execute(this.#db);
    const shown = rows.slice(0, q.limit);
    const last = shown.at(-1);
    return {
      items: shown.map((r) => ({ ...view(r), userId: r.user_id })),
      next_before: rows.length > q.limit && last ? `${last.cursor_ts}~${last.id}` : null,
    };
  }
}

/**
 * A cursor is the last row's `<created_at to the microsecond>~<id>`: rows sharing a timestamp at a page's edge are
 * neither repeated nor skipped.
 */
function parseCursor(before: string): { ts: string; id: string } {
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z)~((?:ord|sbn)_[a-z0-9]{1,60})$/.exec(before);
  if (!match || Number.isNaN(Date.parse(match[1]!))) {
    throw errors.validation("'before' must be the next_before of a previous page.", [{ path: 'before', message: 'not a cursor' }]);
  }
  return { ts: match[1]!, id: match[2]! };
}
