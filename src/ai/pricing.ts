// What a call costs, in nano-dollars: the upstream's own report when it gives one, else the configured price table.
import type { Config, ModelPrice } from '../config.ts';
import type { TokenCounts } from './usage.ts';

type AiConfig = Config['ai'];

/** The table's own entry only: a model named like an Object property (`__proto__`, `constructor`) has none. */
export function priceOf(ai: AiConfig, model: string): ModelPrice {
  return Object.hasOwn(ai.prices, model) ? ai.prices[model]! : ai.defaultPrice;
}

/** USD per million tokens x tokens = nano-dollars x 1/1000. */
export function tableCostNanos(price: ModelPrice, tokens: TokenCounts): number {
  return Math.ceil(tokens.prompt * price.input * 1000 + tokens.completion * price.output * 1000);
}

/** The upstream's `usage.cost` (USD; OpenRouter reports it) when it is a usable number, else the table's price. */
export function callCostNanos(ai: AiConfig, model: string, tokens: TokenCounts, reportedUsd: unknown): number {
  if (typeof reportedUsd === 'number' && Number.isFinite(reportedUsd) && reportedUsd >= 0) return Math.round(reportedUsd * 1e9);
  return tableCostNanos(priceOf(ai, model), tokens);
}

/** A rough token count of text (about four characters per token), for reservations and for calls cut short. */
export function roughTokens(chars: number): number {
  return Math.ceil(chars / 4);
}
