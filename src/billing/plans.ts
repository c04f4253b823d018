// The plan allowances of the platform (the spec's plan table), in one place: credits, meters and enforcement read it.

export type PlanId = 'free' | 'pro' | 'enterprise';

/** USD amounts are nano-dollars (1e-9 USD), the unit of the credit ledger. */
export const NANOS_PER_USD = 1_000_000_000;

export interface PlanAllowance {
  /** AI credits granted: once for the account's lifetime, or again each billing period; undefined: unlimited. */
  aiCredits: { nanos: number; per: 'lifetime' | 'period' } | undefined;
  monthlyActiveUsers: number | undefined;
  databaseBytes: number | undefined;
  bandwidthBytes: number | undefined;
  fileStorageBytes: number | undefined;
  functionInvocationsPerMonth: number | undefined;
}

const GB = 1024 ** 3;

export const PLANS: Readonly<Record<PlanId, PlanAllowance>> = {
  free: {
    aiCredits: { nanos: 0.1 * NANOS_PER_USD, per: 'lifetime' },
    monthlyActiveUsers: 50_000,
    databaseBytes: 500 * 1024 ** 2,
    bandwidthBytes: 5 * GB,
    fileStorageBytes: 1 * GB,
    functionInvocationsPerMonth: 50_000,
  },
  pro: {
    aiCredits: { nanos: 10 * NANOS_PER_USD, per: 'period' },
    monthlyActiveUsers: 100_000,
    databaseBytes: 8 * GB,
    bandwidthBytes: 250 * GB,
    fileStorageBytes: 100 * GB,
    functionInvocationsPerMonth: 500_000,
  },
  enterprise: {
    aiCredits: undefined,
    monthlyActiveUsers: undefined,
    databaseBytes: undefined,
    bandwidthBytes: undefined,
    fileStorageBytes: undefined,
    functionInvocationsPerMonth: undefined,
  },
};

export function isPlanId(value: string): value is PlanId {
  return value in PLANS;
}
