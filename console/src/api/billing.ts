// The account's billing (GET /dashboard/billing, /dashboard/usage) and its owner's upgrade and portal links.
import { call, query } from '../api.ts';

export const METER_NAMES = ['monthly_active_users', 'database_bytes', 'bandwidth_bytes', 'storage_bytes', 'lambda_invocations', 'ai_credits'] as const;
export type LimitedMeter = (typeof METER_NAMES)[number];
/** Every meter the daily usage has: the limited ones and the AI gateway's tokens. */
export const DAILY_METERS = [...METER_NAMES, 'ai_tokens'] as const;
export type DailyMeter = (typeof DAILY_METERS)[number];

export interface BillingOverview {
  plan: 'free' | 'pro' | 'enterprise';
  status: 'active' | 'soft_locked' | 'grace' | 'suspended';
  statusReason: string | null;
  graceEndsAt: string | null;
  period: { start: string; end: string };
  appId: string | null;
  usage: Record<LimitedMeter, number>;
  limits: Record<LimitedMeter, number | null>;
  percentages: Record<LimitedMeter, number | null>;
  overageUsd: Record<string, number>;
  subscription: { status: string; currentPeriodEnd: string | null } | null;
}

export interface UsageRow {
  date: string;
  meterType: DailyMeter;
  quantity: number;
}

export const billing = {
  /** The account's plan and usage; with `appId`, that app's share of the usage. */
  get: (appId?: string) => call<BillingOverview>('GET', `/dashboard/billing${query({ appId })}`),
  daily: (p: { startDate: string; endDate: string; meterType: DailyMeter; appId?: string }) =>
    call<{ startDate: string; endDate: string; rows: UsageRow[] }>('GET', `/dashboard/usage${query(p)}`),
  /** Stripe Checkout for `planId`, coming back to this page. */
  checkout: (planId: string) => call<{ url: string }>('POST', '/dashboard/billing/checkout', { planId, successUrl: location.href, cancelUrl: location.href }),
  portal: () => call<{ url: string }>('POST', '/dashboard/billing/portal', { returnUrl: location.href }),
};
