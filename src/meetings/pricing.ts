// What a session costs: the operator's prices per hour, charged per second, in whole micro-dollars so that the
// usage row's usd_charged (6 decimals) is exactly what the ledger was charged.
import { NANOS_PER_USD } from '../core/money.ts';

export type Dimension = 'recording' | 'transcription';

export interface MeetingPrices {
  recordingUsdPerHour: number;
  transcriptionUsdPerHour: number;
}

const NANOS_PER_MICRO = 1000;

/** Nano-dollars for `seconds` of one dimension, rounded to the micro-dollar. */
export function chargeNanos(prices: MeetingPrices, dimension: Dimension, seconds: number): number {
  const perHour = dimension === 'recording' ? prices.recordingUsdPerHour : prices.transcriptionUsdPerHour;
  return Math.round((seconds * perHour * 1e6) / 3600) * NANOS_PER_MICRO;
}

/** The spec's decimal string: "0.012500". */
export function usdString(nanos: number): string {
  return (Math.round(nanos / NANOS_PER_MICRO) / 1e6).toFixed(6);
}

/** The dimensions a session is billed for: recording always (the bot's time in the call), transcription when enabled. */
export function dimensionsOf(transcript: boolean): Dimension[] {
  return transcript ? ['recording', 'transcription'] : ['recording'];
}

/** Nano-dollars for `seconds` of a session, every dimension it is billed for together. */
export function sessionNanos(prices: MeetingPrices, transcript: boolean, seconds: number): number {
  return dimensionsOf(transcript).reduce((sum, d) => sum + chargeNanos(prices, d, seconds), 0);
}

/** `_estimate`: USD for a session of `minutes`, as done would charge it. */
export function estimateUsd(prices: MeetingPrices, minutes: number, transcript: boolean): number {
  return sessionNanos(prices, transcript, minutes * 60) / NANOS_PER_USD;
}
