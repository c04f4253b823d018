// Apps charging their own end users (Stripe Connect): the owner's connected account, the app's catalog, and end users'
// subscriptions, purchases and orders. Billing itself is never gated by the account's billing status.
import { z } from 'zod';
import { toolsUsing, type Ctx } from '../define.ts';
import { AppIdSchema } from '../../src/apps/types.ts';
import type { EndUser } from '../../src/monetization/types.ts';
import { errors } from '../../src/core/errors.ts';
import { appRoute, effectiveCaller, endUserCaller, UserTokenSchema } from '../shared.ts';

type Uses = 'endUserTokens' | 'monetization';
const defineTool = toolsUsing<Uses>();

const OWNER = ['platform', 'service'] as const;
const ANYONE = ['none', 'platform', 'service', 'user'] as const;
const END_USER = ['platform', 'service', 'user'] as const;

const route = appRoute('billing');

const HttpUrl = z.url({ protocol: /^https?$/ }).max(2000);
const Name = z.string().trim().min(1).max(200);
// Stripe's largest amount for most currencies (8 digits).
const Cents = z.number().int().min(1).max(99_999_999);
const Currency = z.string().regex(/^[a-z]{3}$/, 'a lowercase ISO 4217 code, e.g. usd').default('usd');
const Interval = z.enum(['day', 'week', 'month', 'year']);
const Features = z.array(z.string().min(1).max(200)).max(50);
const Metadata = z
  .record(z.string().min(1).max(40), z.string().max(500))
  .refine((m) => Object.keys(m).length <= 50, 'at most 50 keys');
const Description = z.string().max(2000);
const ItemId = z.string().max(100);
const Checkout = { successUrl: HttpUrl, cancelUrl: HttpUrl, user_token: UserTokenSchema };

const Stamps = { createdAt: z.string(), updatedAt: z.string() };
const Plan = z.object({
  id: z.string(),
  name: z.string(),
  priceCents: z.number().int(),
  currency: z.string(),
  interval: Interval,
  features: z.array(z.string()),
  active: z.boolean(),
  ...Stamps,
});
const Product = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  priceCents: z.number().int(),
  currency: z.string(),
  metadata: z.record(z.string(), z.string()),
  active: z.boolean(),
  ...Stamps,
});
const Subscription = z.object({
  id: z.string(),
  planId: z.string(),
  status: z.enum(['pending', 'active', 'past_due', 'canceled']),
  currentPeriodEnd: z.string().nullable(),
  cancelAtPeriodEnd: z.boolean(),
  ...Stamps,
});
const Order = z.object({
  id: z.string(),
  productId: z.string(),
  quantity: z.number().int(),
  amountCents: z.number().int(),
  currency: z.string(),
  status: z.enum(['pending', 'paid', 'failed', 'refunded']),
  ...Stamps,
});

/** The end user paying: their JWT, or a key with their user_token. */
async function payer(input: { app_id: string; user_token?: string | undefined }, ctx: Ctx<Uses>): Promise<EndUser> {
  const user = await endUserCaller(input, ctx);
  return { appId: user.appId, userId: user.userId };
}

// The account's billing status gates these as every app route: suspended answers nothing, soft-locked only reads.
const common = { appScoped: true } as const;
const reads = { ...common, annotations: { readOnlyHint: true } } as const;

export const billingConnectOnboard = defineTool({
  name: 'billing_connect_onboard',
  title: 'Connect onboarding',
  description:
    'Create (once per owner) the Stripe account end users pay into: { accountId, onboardingUrl }. Finish onboarding there ' +
    '(a fresh link per call); then billing_connect_status.',
  input: z.object({ app_id: AppIdSchema, returnUrl: HttpUrl.optional() }),
  output: z.object({ accountId: z.string(), onboardingUrl: z.string() }),
  auth: OWNER,
  ...common,
  http: route('POST', '/connect/onboard'),
  handler: async (input, ctx) => ctx.services.monetization.connect.onboard(ctx.app!, input.returnUrl),
});

export const billingConnectStatus = defineTool({
  name: 'billing_connect_status',
  title: 'Connect status',
  description:
    'Your connected Stripe account: status not_started | pending | enabled (end users can pay), payoutsEnabled, requirementsDue.',
  input: z.object({ app_id: AppIdSchema }),
  output: z.object({
    accountId: z.string().nullable(),
    status: z.enum(['not_started', 'pending', 'enabled']),
    chargesEnabled: z.boolean(),
    payoutsEnabled: z.boolean(),
    detailsSubmitted: z.boolean(),
    requirementsDue: z.array(z.string()),
  }),
  auth: OWNER,
  ...reads,
  http: route('GET', '/connect/status'),
  handler: async (_input, ctx) => ctx.services.monetization.connect.status(ctx.app!),
});

export const billingPlansCreate = defineTool({
  name: 'billing_plans_create',
  title: 'Create a plan',
  description: 'A subscription plan on your connected account (billing_connect_onboard first). End users: billing_subscribe.',
  input: z.object({ app_id: AppIdSchema, name: Name, priceCents: Cents, currency: Currency, interval: Interval.default('month'), features: Features.default([]) }),
  output: Plan,
  auth: OWNER,
  ...common,
  http: route('POST', '/plans', { status: 201 }),
  handler: async ({ app_id: _a, ...input }, ctx) => ctx.services.monetization.catalog.createPlan(ctx.app!, input),
});

export const billingPlansList = defineTool({
  name: 'billing_plans_list',
  title: 'List plans',
  description: "The app's plans on sale, oldest first (public).",
  input: z.object({ app_id: AppIdSchema }),
  output: z.object({ plans: z.array(Plan) }),
  auth: ANYONE,
  ...reads,
  http: route('GET', '/plans'),
  handler: async (input, ctx) => ({ plans: await ctx.services.monetization.catalog.listPlans(input.app_id) }),
});

export const billingPlansUpdate = defineTool({
  name: 'billing_plans_update',
  title: 'Update a plan',
  description: 'Change the given fields. A new price or interval applies to new subscriptions; active: false takes it off sale.',
  input: z.object({
    app_id: AppIdSchema,
    plan_id: ItemId,
    name: Name.optional(),
    priceCents: Cents.optional(),
    interval: Interval.optional(),
    features: Features.optional(),
    active: z.boolean().optional(),
  }),
  output: Plan,
  auth: OWNER,
  ...common,
  http: route('PUT', '/plans/{plan_id}'),
  annotations: { idempotentHint: true },
  handler: async ({ app_id: _a, plan_id, ...change }, ctx) => ctx.services.monetization.catalog.updatePlan(ctx.app!, plan_id, change),
});

export const billingProductsCreate = defineTool({
  name: 'billing_products_create',
  title: 'Create a product',
  description: 'A one-off product on your connected account (billing_connect_onboard first). End users: billing_purchase.',
  input: z.object({ app_id: AppIdSchema, name: Name, priceCents: Cents, currency: Currency, description: Description.optional(), metadata: Metadata.default({}) }),
  output: Product,
  auth: OWNER,
  ...common,
  http: route('POST', '/products', { status: 201 }),
  handler: async ({ app_id: _a, ...input }, ctx) => ctx.services.monetization.catalog.createProduct(ctx.app!, input),
});

export const billingProductsList = defineTool({
  name: 'billing_products_list',
  title: 'List products',
  description: "The app's products on sale, oldest first (public).",
  input: z.object({ app_id: AppIdSchema }),
  output: z.object({ products: z.array(Product) }),
  auth: ANYONE,
  ...reads,
  http: route('GET', '/products'),
  handler: async (input, ctx) => ({ products: await ctx.services.monetization.catalog.listProducts(input.app_id) }),
});

export const billingProductsUpdate = defineTool({
  name: 'billing_products_update',
  title: 'Update a product',
  description: 'Change the given fields (description null clears it). A new price applies to new orders; active: false takes it off sale.',
  input: z.object({
    app_id: AppIdSchema,
    product_id: ItemId,
    name: Name.optional(),
    priceCents: Cents.optional(),
    description: Description.nullable().optional(),
    metadata: Metadata.optional(),
    active: z.boolean().optional(),
  }),
  output: Product,
  auth: OWNER,
  ...common,
  http: route('PUT', '/products/{product_id}'),
  annotations: { idempotentHint: true },
  handler: async ({ app_id: _a, product_id, ...change }, ctx) => ctx.services.monetization.catalog.updateProduct(ctx.app!, product_id, change),
});

export const billingSubscribe = defineTool({
  name: 'billing_subscribe',
  title: 'Subscribe',
  description:
    'For an end user: a Stripe Checkout { url } for a plan. Pending until paid, then active (billing_subscription_get); 409 if they have one.',
  input: z.object({ app_id: AppIdSchema, planId: ItemId, ...Checkout }),
  output: z.object({ url: z.string() }),
  auth: END_USER,
  ...common,
  http: route('POST', '/subscribe'),
  handler: async ({ app_id, user_token, ...input }, ctx) => ctx.services.monetization.endUsers.subscribe(ctx.app!, await payer({ app_id, user_token }, ctx), input),
});

export const billingSubscriptionGet = defineTool({
  name: 'billing_subscription_get',
  title: 'Get subscription',
  description: "The end user's subscription (status pending | active | past_due | canceled, currentPeriodEnd), or null.",
  input: z.object({ app_id: AppIdSchema, user_token: UserTokenSchema }),
  output: z.object({ subscription: Subscription.nullable() }),
  auth: END_USER,
  ...reads,
  http: route('GET', '/subscription'),
  handler: async (input, ctx) => ({ subscription: await ctx.services.monetization.endUsers.subscription(await payer(input, ctx)) }),
});

export const billingCancel = defineTool({
  name: 'billing_cancel',
  title: 'Cancel subscription',
  description: "Cancel the end user's subscription at period end (active until currentPeriodEnd).",
  input: z.object({ app_id: AppIdSchema, user_token: UserTokenSchema }),
  output: Subscription,
  auth: END_USER,
  ...common,
  // An end user can stop paying even while the owner's account is soft-locked (as deleting is allowed then).
  billingGate: 'session',
  http: route('POST', '/cancel'),
  annotations: { idempotentHint: true },
  handler: async (input, ctx) => ctx.services.monetization.endUsers.cancel(ctx.app!, await payer(input, ctx)),
});

export const billingPurchase = defineTool({
  name: 'billing_purchase',
  title: 'Buy a product',
  description: 'For an end user: a Stripe Checkout { url, orderId } for a product; pending until paid (billing_orders_get).',
  input: z.object({ app_id: AppIdSchema, productId: ItemId, quantity: z.number().int().min(1).max(100).default(1), ...Checkout }),
  output: z.object({ url: z.string(), orderId: z.string() }),
  auth: END_USER,
  ...common,
  http: route('POST', '/purchase', { status: 201 }),
  handler: async ({ app_id, user_token, ...input }, ctx) => ctx.services.monetization.endUsers.purchase(ctx.app!, await payer({ app_id, user_token }, ctx), input),
});

/** Whose records a call reads: an end user (their JWT, or user_token) their own; a key userId's, or the whole app's. */
async function listedUser(input: { app_id: string; user_token?: string | undefined; userId?: string | undefined }, ctx: Ctx<Uses>): Promise<string | null> {
  const caller = await effectiveCaller(input, ctx);
  if (caller.kind !== 'user') return input.userId ?? null;
  if (input.userId !== undefined) throw errors.validation("'userId' is for keys: an end user reads their own.", [{ path: 'userId', message: 'only with a key' }]);
  return caller.userId;
}

/** The inputs of an app-wide list: keys may narrow it to one end user; end users read their own. */
const Listing = {
  app_id: AppIdSchema,
  userId: z.uuid().optional().describe("Keys: one end user's"),
  before: z.string().max(100).optional().describe('A page\'s next_before'),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  user_token: UserTokenSchema,
};
const LISTED = " next_before }, newest first: for keys the whole app's (or userId's), for end users their own.";

export const billingOrdersList = defineTool({
  name: 'billing_orders_list',
  title: 'List orders',
  description: `{ orders: [{ id, userId, productId, status, ... }],${LISTED}`,
  input: z.object({ ...Listing, status: z.enum(['pending', 'paid', 'failed', 'refunded']).optional() }),
  output: z.object({ orders: z.array(Order.extend({ userId: z.string() })), next_before: z.string().nullable() }),
  auth: END_USER,
  ...reads,
  http: route('GET', '/orders'),
  handler: async ({ app_id, status, before, limit, ...who }, ctx) =>
    ctx.services.monetization.listing.orders(app_id, { userId: await listedUser({ app_id, ...who }, ctx), status, before, limit }),
});

export const billingSubscriptionsList = defineTool({
  name: 'billing_subscriptions_list',
  title: 'List subscriptions',
  description: `{ subscriptions: [{ id, userId, planId, status, ... }],${LISTED}`,
  input: z.object({ ...Listing, status: z.enum(['pending', 'active', 'past_due', 'canceled']).optional() }),
  output: z.object({ subscriptions: z.array(Subscription.extend({ userId: z.string() })), next_before: z.string().nullable() }),
  auth: END_USER,
  ...reads,
  http: route('GET', '/subscriptions'),
  handler: async ({ app_id, status, before, limit, ...who }, ctx) =>
    ctx.services.monetization.listing.subscriptions(app_id, { userId: await listedUser({ app_id, ...who }, ctx), status, before, limit }),
});

export const billingOrdersGet = defineTool({
  name: 'billing_orders_get',
  title: 'Get an order',
  description: "One order; end users see only their own (another's is 404).",
  input: z.object({ app_id: AppIdSchema, order_id: ItemId, user_token: UserTokenSchema }),
  output: Order.extend({ userId: z.string() }),
  auth: END_USER,
  ...reads,
  http: route('GET', '/orders/{order_id}'),
  handler: async (input, ctx) => ctx.services.monetization.listing.order(input.app_id, input.order_id, await listedUser(input, ctx)),
});

export const monetizationTools = [
  billingConnectOnboard,
  billingConnectStatus,
  billingPlansCreate,
  billingPlansList,
  billingPlansUpdate,
  billingProductsCreate,
  billingProductsList,
  billingProductsUpdate,
  billingSubscribe,
  billingSubscriptionGet,
  billingCancel,
  billingPurchase,
  billingOrdersList,
  billingOrdersGet,
  billingSubscriptionsList,
];
