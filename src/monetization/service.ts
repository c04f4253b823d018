// Skeleton: apps charging their own end users through Stripe Connect (being built).
import type { PaymentEvent } from '../adapters/stripe.ts';
import type { PaymentEventOutcome } from '../billing/events.ts';

export class MonetizationService {
  async handleEvent(_event: PaymentEvent): Promise<PaymentEventOutcome> {
    return { received: true, handled: false };
  }
}
