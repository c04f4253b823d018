import { sql, type Kysely } from 'kysely';

/**
 * The app's orders and subscriptions newest first, every end user's (billing_orders_list and
 * billing_subscriptions_list for the app's keys and its owner's console): the per-user indexes of 0016 lead with
 * user_id and cannot serve a page of the whole app.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create index app_orders_app_idx on app_orders (app_id, created_at desc, id desc);
    create index app_subscriptions_app_idx on app_subscriptions (app_id, created_at desc, id desc);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index app_orders_app_idx, app_subscriptions_app_idx`.execute(db);
}
