// Inbound Stripe events, shared by the platform's endpoint (src/billing) and apps' Connect endpoint (src/monetization).
import { sql, type Kysely } from 'kysely';
import type { PaymentEvent } from './payments-port.ts';
import type { ControlDatabase } from '../db/types.ts';

export type PaymentEndpoint = 'platform' | 'connect';

/**
 * Records the event as handled, inside the transaction that applies it: true the first time, false for a redelivery
 * (whose effects are then skipped). A failure rolls the record back with the effects, so Stripe's retry applies both.
 */
export async function claimPaymentEvent(tx: Kysely<ControlDatabase>, endpoint: PaymentEndpoint, event: PaymentEvent): Promise<boolean> {
  const { rows } = await sql`
    insert into payment_events (endpoint, id, type) values (${endpoint}, ${event.id}, ${event.type})
    on conflict (endpoint, id) do nothing returning id
  `.execute(tx);
  return rows.length === 1;
}

/** What an endpoint's handler reports back to Stripe (the 200 body): whether the event changed anything. */
export interface PaymentEventOutcome {
  received: true;
  /** false: a redelivery (already handled) or an event type this endpoint does not act on. */
  handled: boolean;
}
