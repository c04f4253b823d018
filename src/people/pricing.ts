// What a people call costs the account, from the operator's price table (SVC_PEOPLE_PRICES over the spec's typical
// pricing). Money is nano-dollars, as in the credit ledger.
import type { PeoplePrice, PeoplePrices } from '../config.ts';
import { NANOS_PER_USD } from '../core/money.ts';

export interface Charge {
  credits: number;
  nanos: number;
}

export const FREE: Charge = { credits: 0, nanos: 0 };

export const toNanos = (usd: number): number => Math.round(usd * NANOS_PER_USD);
export const toUsd = (nanos: number): number => nanos / NANOS_PER_USD;

export function flatCharge(price: PeoplePrice): Charge {
  return { credits: price.credits, nanos: toNanos(price.usd) };
}

/** A page of `results`: the base price up to includedResults, then the extra price per result. Empty pages are free. */
export function searchCharge(prices: PeoplePrices, results: number): Charge {
  if (results <= 0) return FREE;
  const p = prices.search;
  const extra = Math.max(0, results - p.includedResults);
  return { credits: p.credits + extra * p.extraResultCredits, nanos: toNanos(p.usd) + extra * toNanos(p.extraResultUsd) };
}
