// An app charging its end users (Stripe Connect): the owner's connected account, plans, products and every end
// user's orders and subscriptions (/v1/{app_id}/billing/...).
import { call, query, seg } from '../api.ts';

export const INTERVALS = ['month', 'year', 'week', 'day'] as const;
export type Interval = (typeof INTERVALS)[number];
export const ORDER_STATUSES = ['pending', 'paid', 'failed', 'refunded'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];
export const SUBSCRIPTION_STATUSES = ['pending', 'active', 'past_due', 'canceled'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

export interface ConnectStatus {
  accountId: string | null;
  status: 'not_started' | 'pending' | 'enabled';
  chargesEnabled: boolean;
  payoutsEnabled: boolean;
  detailsSubmitted: boolean;
  requirementsDue: string[];
}

interface Priced {
  id: string;
  name: string;
  priceCents: number;
  currency: string;
  active: boolean;
  createdAt: string;
}
export interface Plan extends Priced {
  interval: Interval;
  features: string[];
}
export interface Product extends Priced {
  description: string | null;
}

export interface Order {
  id: string;
  userId: string;
  productId: string;
  quantity: number;
  amountCents: number;
  currency: string;
  status: OrderStatus;
  createdAt: string;
}

export interface Subscription {
  id: string;
  userId: string;
  planId: string;
  status: SubscriptionStatus;
  currentPeriodEnd: string | null;
  cancelAtPeriodEnd: boolean;
  createdAt: string;
}

/** A page of an app-wide list; next_before is the following page's cursor (null: the last page). */
export interface ListPage<T> {
  items: T[];
  next_before: string | null;
}

export const LIST_PAGE = 50;

const base = (appId: string) => `/v1/${seg(appId)}/billing`;

export const monetization = {
  status: (appId: string) => call<ConnectStatus>('GET', `${base(appId)}/connect/status`),
  onboard: (appId: string, returnUrl: string) => call<{ accountId: string; onboardingUrl: string }>('POST', `${base(appId)}/connect/onboard`, { returnUrl }),
  plans: async (appId: string) => (await call<{ plans: Plan[] }>('GET', `${base(appId)}/plans`)).plans,
  createPlan: (appId: string, input: { name: string; priceCents: number; currency: string; interval: Interval; features: string[] }) =>
    call<Plan>('POST', `${base(appId)}/plans`, input),
  updatePlan: (appId: string, id: string, change: Partial<Pick<Plan, 'name' | 'priceCents' | 'active'>>) => call<Plan>('PUT', `${base(appId)}/plans/${seg(id)}`, change),
  products: async (appId: string) => (await call<{ products: Product[] }>('GET', `${base(appId)}/products`)).products,
  createProduct: (appId: string, input: { name: string; priceCents: number; currency: string; description?: string }) =>
    call<Product>('POST', `${base(appId)}/products`, input),
  updateProduct: (appId: string, id: string, change: Partial<Pick<Product, 'name' | 'priceCents' | 'active'>>) =>
    call<Product>('PUT', `${base(appId)}/products/${seg(id)}`, change),
  orders: async (appId: string, filter: { status?: OrderStatus; before?: string }): Promise<ListPage<Order>> => {
    const page = await call<{ orders: Order[]; next_before: string | null }>('GET', `${base(appId)}/orders${query({ ...filter, limit: String(LIST_PAGE) })}`);
    return { items: page.orders, next_before: page.next_before };
  },
  subscriptions: async (appId: string, filter: { status?: SubscriptionStatus; before?: string }): Promise<ListPage<Subscription>> => {
    const page = await call<{ subscriptions: Subscription[]; next_before: string | null }>('GET', `${base(appId)}/subscriptions${query({ ...filter, limit: String(LIST_PAGE) })}`);
    return { items: page.subscriptions, next_before: page.next_before };
  },
};
