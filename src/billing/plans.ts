// The plan allowances of the platform (the spec's plan table), in one place: credits, meters and enforcement read it.
import { NANOS_PER_USD } from '../core/money.ts';

export type PlanId = 'free' | 'pro' | 'enterprise';

/** USD amounts are nano-dollars (1e-9 USD), the unit of the credit ledger. */

/**
 * The metered quantities a plan bounds, by their usage_daily meter name. Levels (what exists now: the sum of every
 * recorded change) for storage and database size; totals of the current UTC calendar month for the others.
 */
export const LIMITED_METERS = ['monthly_active_users', 'database_bytes', 'bandwidth_bytes', 'storage_bytes', 'lambda_invocations'] as const;
export type LimitedMeter = (typeof LIMITED_METERS)[number];
export const LEVEL_METERS: ReadonlySet<LimitedMeter> = new Set(['database_bytes', 'storage_bytes']);

/** Every meter recorded in usage_daily, as the usage route accepts them (ai_tokens and ai_credits come from the AI gateway). */
export const METERS = [...LIMITED_METERS, 'ai_tokens', 'ai_credits'] as const;
export type Meter = (typeof METERS)[number];

export interface PlanAllowance {
  /**
   * AI credits granted: once for the account's lifetime, or again each billing period; undefined: unlimited.
   * `overage`: the price of credit spent beyond the balance (nano-dollars per `per` nano-dollars of credit), billed
   * after the period closes; absent: the balance is a hard limit (402).
   */
  aiCredits: { nanos: number; per: 'lifetime' | 'period'; overage?: { nanos: number; per: number } } | undefined;
  /** Allowance per meter; undefined: unlimited. */
  limits: Readonly<Record<LimitedMeter, number | undefined>>;
  /** Price of each unit beyond the allowance (nano-dollars per unit of `per`); absent: the allowance is a hard limit. */
  overage: Readonly<Partial<Record<LimitedMeter, { nanos: number; per: number }>>>;
  /** Whether going over an allowance soft-locks the account (free) rather than being charged as overage. */
  lockWhenOver: boolean;
  /** Branches one app may have at once (branches_create); undefined: unlimited. */
  branchesPerApp: number | undefined;
}

/** One AI credit, the unit the plan table prices AI overage in: $0.10 of usage. */
const AI_CREDIT_NANOS = 0.1 * NANOS_PER_USD;

/** Plans that bill AI credit spent beyond the balance as overage rather than refusing it. */
export function billsAiOverage(plan: PlanId): boolean {
  return PLANS[plan].aiCredits?.overage !== undefined;
}

const MB = 1024 ** 2;
const GB = 1024 ** 3;

export const PLANS: Readonly<Record<PlanId, PlanAllowance>> = {
  free: {
    aiCredits: { nanos: 0.1 * NANOS_PER_USD, per: 'lifetime' },
    limits: {
      monthly_active_users: 50_000,
      database_bytes: 500 * MB,
      bandwidth_bytes: 5 * GB,
      storage_bytes: 1 * GB,
      lambda_invocations: 50_000,
    },
    overage: {},
    lockWhenOver: true,
    branchesPerApp: 3,
  },
  pro: {
    // "$10/mo, then $0.10/credit": a credit is $0.10 of AI usage (the free plan's lifetime allowance is one), so
    // credit spent beyond the $10 is charged at what it is worth.
    aiCredits: { nanos: 10 * NANOS_PER_USD, per: 'period', overage: { nanos: AI_CREDIT_NANOS, per: AI_CREDIT_NANOS } },
    limits: {
      monthly_active_users: 100_000,
      database_bytes: 8 * GB,
      bandwidth_bytes: 250 * GB,
      storage_bytes: 100 * GB,
      lambda_invocations: 500_000,
    },
    overage: {
      monthly_active_users: { nanos: 3_250_000, per: 1 },
      database_bytes: { nanos: 0.125 * NANOS_PER_USD, per: GB },
      bandwidth_bytes: { nanos: 0.09 * NANOS_PER_USD, per: GB },
      storage_bytes: { nanos: 0.021 * NANOS_PER_USD, per: GB },
    },
    lockWhenOver: false,
    branchesPerApp: 20,
  },
  enterprise: {
    aiCredits: undefined,
    limits: {
      monthly_active_users: undefined,
      database_bytes: undefined,
      bandwidth_bytes: undefined,
      storage_bytes: undefined,
      lambda_invocations: undefined,
    },
    overage: {},
    lockWhenOver: false,
    branchesPerApp: undefined,
  },
};

/** Plans an account can buy itself through Checkout (enterprise is arranged by contract). */
export const SELF_SERVE_PLANS: readonly PlanId[] = ['pro'];

export function isPlanId(value: string): value is PlanId {
  return value in PLANS;
}
