// Rows, views and errors of monetization (tables of db/migrations/0016_monetization.ts).
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { AppError, errors } from '../core/errors.ts';
import type { ControlDatabase } from '../db/types.ts';
import type { ConnectPayments } from './connect-port.ts';

export type Interval = 'day' | 'week' | 'month' | 'year';
export type SubscriptionStatus = 'pending' | 'active' | 'past_due' | 'canceled';
export type OrderStatus = 'pending' | 'paid' | 'failed' | 'refunded';

export type MonetizationDb = Kysely<ControlDatabase>;

export interface MonetizationDeps {
  db: MonetizationDb;
  /** Undefined without SVC_STRIPE_SECRET_KEY: the calls that need Stripe answer 503 STRIPE_NOT_CONFIGURED. */
  stripe: ConnectPayments | undefined;
  /** SVC_PLATFORM_FEE_PERCENT: the platform's application fee on every end-user payment. */
  feePercent: number;
  /** Where Stripe sends the owner back after onboarding when they name no URL. */
  baseUrl: string;
  log: Logger;
}

// ---- views (the tools' outputs) --------------------------------------------------------------------------

export interface PlanView {
  id: string;
  name: string;
  priceCents: number;
  currency: string;
  interval: Interval;
  features: string[];
  active: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface ProductView {
  id: string;
  name: string;
  description: string | null;
  priceCents: number;
  currency: string;
  metadata: Record<string, string>;
  active: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface SubscriptionView {
  id: string;
  planId: string;
  status: SubscriptionStatus;
  currentPeriodEnd: string | null;
  cancelAtPeriodEnd: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface OrderView {
  id: string;
  productId: string;
  quantity: number;
  amountCents: number;
  currency: string;
  status: OrderStatus;
  createdAt: string;
  updatedAt: string;
}

export interface ConnectStatusView {
  accountId: string | null;
  /** not_started: no connected account; pending: it cannot take payments yet; enabled: it can. */
  status: 'not_started' | 'pending' | 'enabled';
  chargesEnabled: boolean;
  payoutsEnabled: boolean;
  detailsSubmitted: boolean;
  requirementsDue: string[];
}

/** An end user of one app: who subscribes, buys and reads their own orders. */
export interface EndUser {
  appId: string;
  userId: string;
}

// ---- errors ----------------------------------------------------------------------------------------------

const ONBOARD = 'billing_connect_onboard (POST /v1/{app_id}/billing/connect/onboard)';
const STATUS = 'billing_connect_status (GET /v1/{app_id}/billing/connect/status)';

export const monetizationErrors = {
  noConnectedAccount: () =>
    new AppError(409, 'CONNECT_ACCOUNT_MISSING', "The app's owner has no connected Stripe account yet.", `The owner calls ${ONBOARD} and completes the returned onboardingUrl.`),
  chargesDisabled: () =>
    new AppError(
      409,
      'CONNECT_CHARGES_DISABLED',
      "The app's connected Stripe account cannot take payments yet.",
      `The app's owner completes Stripe onboarding (${ONBOARD} returns a fresh onboardingUrl); ${STATUS} shows chargesEnabled and what is still due.`,
    ),
  planNotFound: (id: string) => errors.notFound(`Plan '${id}'`, "List the app's plans with billing_plans_list."),
  productNotFound: (id: string) => errors.notFound(`Product '${id}'`, "List the app's products with billing_products_list."),
  orderNotFound: (id: string) => errors.notFound(`Order '${id}'`, "List this user's orders with billing_orders_list."),
  alreadySubscribed: (id: string) =>
    new AppError(409, 'ALREADY_SUBSCRIBED', `This user already has a subscription in this app (${id}).`, 'Read it with billing_subscription_get; billing_cancel ends it at the end of its period.'),
  noSubscription: () => errors.notFound('Active subscription', 'billing_subscribe starts one; billing_subscription_get shows the current one.'),
  subscriptionPending: () =>
    new AppError(409, 'SUBSCRIPTION_PENDING', "The subscription's checkout has not completed.", 'Complete the checkout url from billing_subscribe; the subscription turns active once Stripe confirms it.'),
};

export const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

export const stamps = (row: { created_at: Date; updated_at: Date }) => ({ createdAt: row.created_at.toISOString(), updatedAt: row.updated_at.toISOString() });
