// End users paying an app: subscriptions to its plans and one-off orders of its products, both through Stripe
// Checkout on the owner's connected account. Rows start `pending`; the Connect webhook (events.ts) moves them.
import { sql, type Kysely, type Selectable } from 'kysely';
import type { AppRecord } from '../apps/types.ts';
import type { Catalog } from './catalog.ts';
import { newMonetizationId } from './catalog.ts';
import type { ConnectAccounts } from './connect.ts';
import { enqueueEntitlementSync } from './entitlement.ts';
import { subscriptionFacts } from './stripe-objects.ts';
import {
  iso,
  monetizationErrors,
  stamps,
  type EndUser,
  type MonetizationDeps,
  type OrderView,
  type SubscriptionView,
} from './types.ts';
import type { ControlDatabase } from '../db/types.ts';

export type SubscriptionRow = Selectable<ControlDatabase['app_subscriptions']>;
export type OrderRow = Selectable<ControlDatabase['app_orders']>;
type SubscriptionChange = Partial<Pick<SubscriptionRow, 'status' | 'current_period_end' | 'cancel_at_period_end' | 'stripe_subscription_id' | 'stripe_customer_id'>>;
type OrderChange = Partial<Pick<OrderRow, 'status' | 'stripe_payment_intent_id'>>;

export interface CheckoutUrls {
  successUrl: string;
  cancelUrl: string;
}

/** Subscriptions that stand in the way of another one (and that billing_cancel acts on). */
const STANDING: SubscriptionRow['status'][] = ['active', 'past_due'];

export class EndUserBilling {
  readonly #d: MonetizationDeps;
  readonly #accounts: ConnectAccounts;
  readonly #catalog: Catalog;

  constructor(deps: MonetizationDeps, accounts: ConnectAccounts, catalog: Catalog) {
    this.#d = deps;
    this.#accounts = accounts;
    this.#catalog = catalog;
  }

  /** A Checkout Session for the plan, with the platform's fee on every invoice; the row waits in `pending`. */
  async subscribe(app: AppRecord, user: EndUser, input: { planId: string } & CheckoutUrls): Promise<{ url: string }> {
    const stripe = this.#accounts.stripe();
    const plan = await this.#catalog.plan(app.id, input.planId, { activeOnly: true });
    const standing = await this.#current(user, STANDING);
    if (standing) throw monetizationErrors.alreadySubscribed(standing.id);
    const account = await this.#accounts.forCharges(app);
    const id = newMonetizationId('sbn');
    const session = await stripe.checkout(account, {
      reference: id,
      priceId: plan.stripe_price_id,
      quantity: 1,
      successUrl: input.successUrl,
      cancelUrl: input.cancelUrl,
      metadata: { app_id: app.id, user_id: user.userId, plan_id: plan.id, subscription_id: id },
      fee: { percent: this.#d.feePercent },
    });
    await this.#d.db.transaction().execute(async (tx) => {
      await tx
        .insertInto('app_subscriptions')
        .values({ id, app_id: app.id, user_id: user.userId, plan_id: plan.id, status: 'pending', stripe_checkout_session_id: session.id })
        .execute();
      await enqueueEntitlementSync(tx, app.id, user.userId);
    });
    return { url: session.url };
  }

  /** The user's subscription that counts: a standing one, else their latest (pending or canceled); null if none. */
  async subscription(user: EndUser): Promise<SubscriptionView | null> {
    const row = await this.#current(user);
    return row ? subscriptionView(row) : null;
  }

  /** Cancels at the end of the paid period: the subscription stays active until then. Repeating it changes nothing. */
  async cancel(app: AppRecord, user: EndUser): Promise<SubscriptionView> {
    const stripe = this.#accounts.stripe();
    const row = await this.#current(user, STANDING);
    if (!row) throw (await this.#current(user, ['pending'])) ? monetizationErrors.subscriptionPending() : monetizationErrors.noSubscription();
    if (row.cancel_at_period_end) return subscriptionView(row);
    if (!row.stripe_subscription_id) throw monetizationErrors.subscriptionPending();
    const account = await this.#accounts.forCatalog(app);
    const facts = subscriptionFacts(await stripe.cancelAtPeriodEnd(account, row.stripe_subscription_id));
    const updated = await this.#d.db
      .transaction()
      .execute((tx) => updateSubscription(tx, row, { cancel_at_period_end: true, current_period_end: facts.currentPeriodEnd ?? row.current_period_end }));
    return subscriptionView(updated);
  }

  /** A Checkout Session for `quantity` of the product, the platform's fee taken from the total; the order waits in `pending`. */
  async purchase(app: AppRecord, user: EndUser, input: { productId: string; quantity: number } & CheckoutUrls): Promise<{ url: string; orderId: string }> {
    const stripe = this.#accounts.stripe();
    const product = await this.#catalog.product(app.id, input.productId, { activeOnly: true });
    const account = await this.#accounts.forCharges(app);
    const id = newMonetizationId('ord');
    const amount = product.price_cents * input.quantity;
    const session = await stripe.checkout(account, {
      reference: id,
      priceId: product.stripe_price_id,
      quantity: input.quantity,
      successUrl: input.successUrl,
      cancelUrl: input.cancelUrl,
      metadata: { app_id: app.id, user_id: user.userId, order_id: id },
      fee: { amountCents: Math.round((amount * this.#d.feePercent) / 100) },
    });
    await this.#d.db
      .insertInto('app_orders')
      .values({
        id,
        app_id: app.id,
        user_id: user.userId,
        product_id: product.id,
        quantity: input.quantity,
        amount_cents: amount,
        currency: product.currency,
        status: 'pending',
        stripe_checkout_session_id: session.id,
      })
      .execute();
    return { url: session.url, orderId: id };
  }

  /** The user's latest subscription among `statuses` (any status when omitted), standing ones first. */
  async #current(user: EndUser, statuses?: SubscriptionRow['status'][]): Promise<SubscriptionRow | undefined> {
    let query = this.#d.db.selectFrom('app_subscriptions').selectAll().where('app_id', '=', user.appId).where('user_id', '=', user.userId);
    if (statuses) query = query.where('status', 'in', statuses);
    return query
      .orderBy(sql`status in ('active', 'past_due')`, 'desc')
      .orderBy('created_at', 'desc')
      .limit(1)
      .executeTakeFirst();
  }
}

/** Every change of a subscription row goes through here: the user's entitlements are recomputed in the same transaction. */
export async function updateSubscription(tx: Kysely<ControlDatabase>, row: SubscriptionRow, change: SubscriptionChange): Promise<SubscriptionRow> {
  const updated = await tx.updateTable('app_subscriptions').set({ ...change, updated_at: sql`now()` }).where('id', '=', row.id).returningAll().executeTakeFirstOrThrow();
  await enqueueEntitlementSync(tx, row.app_id, row.user_id);
  return updated;
}

export async function updateOrder(tx: Kysely<ControlDatabase>, row: OrderRow, change: OrderChange): Promise<void> {
  await tx.updateTable('app_orders').set({ ...change, updated_at: sql`now()` }).where('id', '=', row.id).execute();
}

export function subscriptionView(row: SubscriptionRow): SubscriptionView {
  return {
    id: row.id,
    planId: row.plan_id,
    status: row.status,
    currentPeriodEnd: iso(row.current_period_end),
    cancelAtPeriodEnd: row.cancel_at_period_end,
    ...stamps(row),
  };
}

export function orderView(row: OrderRow): OrderView {
  return {
    id: row.id,
    productId: row.product_id,
    quantity: row.quantity,
    amountCents: row.amount_cents,
    currency: row.currency,
    status: row.status,
    ...stamps(row),
  };
}
