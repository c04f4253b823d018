// Money is counted in integer nano-dollars everywhere (credits, usage rows, vendor prices): exact sums, no floats.

export const NANOS_PER_USD = 1_000_000_000;

/** Nano-dollars as dollars, for bodies and messages. */
export const usd = (nanos: number): number => nanos / NANOS_PER_USD;
