// Skeleton (being built): platform billing.
import type { PaymentEvent } from '../adapters/stripe.ts';
import type { PaymentEventOutcome } from './events.ts';

export class BillingService {
  async handleEvent(_event: PaymentEvent): Promise<PaymentEventOutcome> {
    return { received: true, handled: false };
  }
}
