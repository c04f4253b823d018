// The headers every people reply carries (spec: People endpoints): which slot served it and what it cost; on
// profile also whether it came from the cache. Errors and 402s say 0 and 0.000000.
import type { PeopleSlot } from '../config.ts';
import type { AppError } from '../core/errors.ts';
import { PeopleError } from './errors.ts';

export interface ReplyCost {
  provider: PeopleSlot;
  creditsConsumed: number;
  usdCharged: number;
  /** Profile replies only. */
  cached?: boolean | undefined;
}

export function peopleHeaders(cost: ReplyCost): Record<string, string> {
  const headers: Record<string, string> = {
    'x-people-provider': cost.provider,
    'x-people-credits-consumed': String(cost.creditsConsumed),
    'x-people-usd-charged': cost.usdCharged.toFixed(6),
  };
  if (cost.cached !== undefined) headers['x-people-cached'] = String(cost.cached);
  return headers;
}

/**
 * The headers of an error reply. A refusal raised before the request was routed (credential, validation, unknown
 * app, body parsing) names the primary slot: the platform's default provider.
 */
export function peopleErrorHeaders(err: AppError, profile: boolean): Record<string, string> {
  const provider = err instanceof PeopleError ? err.slot : 'primary';
  return peopleHeaders({ provider, creditsConsumed: 0, usdCharged: 0, cached: profile ? false : undefined });
}
