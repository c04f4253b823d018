// The platform's billing of its customers (the account behind the platform key): plan, usage, checkout, portal.
import { z } from 'zod';
import { toolsUsing, type Ctx } from '../define.ts';
import { METERS, LIMITED_METERS } from '../../src/billing/plans.ts';
import { ACCOUNT_STATUSES } from '../../src/billing/status.ts';
import { accountOf } from '../caller.ts';

type Uses = 'billing' | 'admission';
const defineTool = toolsUsing<Uses>();

const meterRecord = <T extends z.ZodType>(value: T) =>
  z.object(Object.fromEntries([...LIMITED_METERS, 'ai_credits'].map((m) => [m, value])) as Record<(typeof LIMITED_METERS)[number] | 'ai_credits', T>);

/** The app an `appId` input names, refused as app-scoped tools refuse it: 404 when there is none, 403 when another account's. */
async function appOf(appId: string | undefined, ctx: Ctx<Uses>): Promise<string | undefined> {
  return appId === undefined ? undefined : (await ctx.services.admission.resolve(appId, ctx.caller)).id;
}

const HttpUrl = z.url({ protocol: /^https?$/ }).max(2000);

export const billingGet = defineTool({
  name: 'billing_get',
  title: 'Get the account billing',
  description:
    "The account's plan, status (active, soft_locked, grace, suspended), and each meter's usage over its apps (appId: one app's), limit and percentage. " +
    'Monthly meters: this UTC month; ai_credits in USD. soft_locked: writes refused until usage drops or billing_checkout upgrades.',
  input: z.object({ appId: z.string().max(64).optional() }),
  output: z.object({
    plan: z.enum(['free', 'pro', 'enterprise']),
    status: z.enum(ACCOUNT_STATUSES),
    statusReason: z.string().nullable(),
    graceEndsAt: z.string().nullable(),
    period: z.object({ start: z.string(), end: z.string() }),
    appId: z.string().nullable(),
    usage: meterRecord(z.number()),
    limits: meterRecord(z.number().nullable()),
    percentages: meterRecord(z.number().nullable()),
    overageUsd: z.record(z.string(), z.number()),
    subscription: z.object({ status: z.string(), currentPeriodEnd: z.string().nullable() }).nullable(),
  }),
  auth: ['platform'],
  http: { method: 'GET', path: '/dashboard/billing' },
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ctx.services.billing.overview(accountOf(ctx.caller), await appOf(input.appId, ctx)),
});

const Day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a date YYYY-MM-DD').refine((d) => !Number.isNaN(Date.parse(d)), 'not a calendar date');

export const billingUsage = defineTool({
  name: 'billing_usage',
  title: 'Daily usage',
  description:
    'Daily usage of the account (appId: one app), oldest first; default the last 30 days, at most 366. ' +
    'storage_bytes and database_bytes rows are the day\'s change; billing_get has their levels.',
  input: z.object({
    startDate: Day.optional(),
    endDate: Day.optional(),
    meterType: z.enum(METERS).optional(),
    appId: z.string().max(64).optional(),
  }),
  output: z.object({
    startDate: z.string(),
    endDate: z.string(),
    rows: z.array(z.object({ date: z.string(), meterType: z.enum(METERS), quantity: z.number() })),
  }),
  auth: ['platform'],
  http: { method: 'GET', path: '/dashboard/usage' },
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ctx.services.billing.usage(accountOf(ctx.caller), { ...input, appId: await appOf(input.appId, ctx) }),
});

export const billingCheckout = defineTool({
  name: 'billing_checkout',
  title: 'Upgrade the plan',
  description:
    'A Stripe Checkout URL for the pro plan, to open in a browser. The plan changes when Stripe confirms (see billing_get).',
  input: z.object({
    planId: z.string().min(1).max(40).describe("'pro'"),
    successUrl: HttpUrl.optional().describe('Where the browser goes after paying (default: the dashboard)'),
    cancelUrl: HttpUrl.optional(),
  }),
  output: z.object({ url: z.string(), sessionId: z.string() }),
  // The account's plan and payment method are its owners' to change.
  role: 'owner',
  auth: ['platform'],
  http: { method: 'POST', path: '/dashboard/billing/checkout' },
  annotations: { idempotentHint: false },
  handler: async (input, ctx) => ctx.services.billing.checkout(accountOf(ctx.caller), input.planId, input),
});

export const billingPortal = defineTool({
  name: 'billing_portal',
  title: 'Billing portal',
  description: "A Stripe billing portal URL for the account: payment method, invoices, cancellation. Needs a past checkout.",
  input: z.object({ returnUrl: HttpUrl.optional() }),
  output: z.object({ url: z.string() }),
  // The account's plan and payment method are its owners' to change.
  role: 'owner',
  auth: ['platform'],
  http: { method: 'POST', path: '/dashboard/billing/portal' },
  annotations: { idempotentHint: false },
  handler: async (input, ctx) => ctx.services.billing.portal(accountOf(ctx.caller), input.returnUrl),
});

export const platformBillingTools = [billingGet, billingUsage, billingCheckout, billingPortal];
