// The billing area's hand-written guide (GET /llms.txt?area=billing); src/platform/area-guides.ts lists it.
import type { AreaGuide } from '../platform/area-guide.ts';

export const BILLING_GUIDE: AreaGuide = {
  summary:
    "The account's plan, usage and status, upgrading through Stripe, and apps charging their end users through Stripe Connect (plans, products, subscriptions, orders, entitlements).",
  reference: `
**Platform billing** (platform key): \`billing_get\` (GET /dashboard/billing) answers \`{ plan, status, statusReason,
graceEndsAt, period: { start, end }, usage, limits, percentages, overageUsd, subscription }\`; usage, limits and
percentages are keyed by meter: \`monthly_active_users\`, \`database_bytes\`, \`bandwidth_bytes\`, \`storage_bytes\`,
\`lambda_invocations\` (summed over the account's apps) and \`ai_credits\` (USD); overageUsd holds what this period's use
beyond the allowance costs so far, by meter (ai_credits: credit spent beyond the balance). Monthly meters count the current UTC
month; storage and database size are levels. \`billing_usage\` (GET /dashboard/usage?startDate&endDate&meterType)
answers \`{ startDate, endDate, rows: [{ date, meterType, quantity }] }\` (also \`ai_tokens\`, \`ai_credits\` in USD).
Plans: free ($0.10 AI credits once, 50,000 MAU, 500 MB database, 5 GB bandwidth, 1 GB files, 50,000 invocations a
month), pro ($25/month: $10 AI credits a month, 100,000 MAU, 8 GB, 250 GB, 100 GB, 500,000; overage per MAU $0.00325,
per GB $0.125 database, $0.09 bandwidth, $0.021 files), enterprise (unlimited, arranged with the operator).

Account \`status\`: \`active\`; \`soft_locked\` (free plan over an allowance: app writes answer 402
ACCOUNT_SOFT_LOCKED naming the meter, reads, sign-in and deletes still work) back to \`active\` ("restored", with
\`statusReason\`) when usage drops or the plan is paid; \`grace\` (a pro payment failed: everything works for 7 days,
e-mail sent) then \`suspended\` (every app call answers 402 ACCOUNT_SUSPENDED; e-mail) until the invoice is paid.
Free apps without requests for 7 days are paused: their calls answer 423 APP_PAUSED until \`apps_restore\`.
\`billing_checkout\` \`{ planId: "pro" }\` returns a Stripe Checkout \`url\`; \`billing_portal\` the self-service portal.
Without Stripe on the platform these answer 503 STRIPE_NOT_CONFIGURED; plans, meters and limits still apply.

**Monetization** (an app charging its end users; Stripe Connect, the platform keeps SVC_PLATFORM_FEE_PERCENT):
1. \`billing_connect_onboard\` (once per owner) returns \`{ accountId, onboardingUrl }\`: the owner completes it in a
   browser; \`billing_connect_status\` shows \`chargesEnabled\` and \`payoutsEnabled\`.
2. \`billing_plans_create\` \`{ name, priceCents, interval, features }\` and \`billing_products_create\` \`{ name,
   priceCents, description, metadata }\`; lists are public (the app's catalog, no credential).
3. End users (their JWT, or a key with \`user_token\`): \`billing_subscribe\` \`{ planId, successUrl, cancelUrl }\` and
   \`billing_purchase\` \`{ productId, quantity?, successUrl, cancelUrl }\` return a checkout \`url\` (purchase also
   \`orderId\`); \`billing_subscription_get\`, \`billing_cancel\` (at period end), \`billing_orders_list\`,
   \`billing_orders_get\` show the caller's own only.
4. Keys naming no end user: \`billing_orders_list\` and \`billing_subscriptions_list\` list every end user's, newest
   first (\`userId\`, \`status\`, \`limit\` up to 200; the next page with \`before\` = \`next_before\`, null on the
   last); \`billing_orders_get\` reads any order of the app.
Subscription \`status\`: \`pending\` (checkout open), \`active\`, \`past_due\` (a renewal failed; still entitled),
\`canceled\`. Order \`status\`: \`pending\`, \`paid\`, \`failed\`, \`refunded\` (a partial refund stays paid).
Entitlements: the table option \`plans: ["pln_..."]\` (1-20 plan ids) in schema_apply gates a \`user\` or \`public\`
table: end users and anonymous callers reach its rows, as its access allows, only while the end user's subscription
to one of those plans is active or past_due (keys see all). It is a restrictive row-level security policy calling SQL
\`public.current_user_plan()\` (the caller's entitled plan id, else null), which your own policies and views may use.
A table keeps its plans unless a definition sets them; \`plans: null\` removes the gate; schema_get shows them. Stripe's events reach POST /webhooks/payments/connect; entitlements
follow within seconds.

## From functions

\`ctx.billing\` tells what the calling end user pays for: \`await ctx.billing.subscription()\` is their current
subscription (as billing_subscription_get returns it) and \`await ctx.billing.plan()\` the plan id it entitles them to
(status active or past_due), each null without an end user; a refusal rejects with a BillingError (code, status).
`,
};
