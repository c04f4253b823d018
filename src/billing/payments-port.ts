// What platform billing asks of its payment provider (the platform's own subscription), and the verified payment
// event both webhook endpoints hand to billing and monetization. Implemented by src/adapters/stripe.ts; the
// composition root (src/composition.ts) builds it from config and passes it in.
import { AppError } from '../core/errors.ts';

/** A Stripe event as the billing code reads it: the SDK's types stay in the adapters. */
export interface PaymentEvent {
  id: string;
  type: string;
  /** The connected account the event happened on (Connect events); undefined for the platform's own. */
  account: string | undefined;
  created: number;
  object: Record<string, unknown>;
}

export const paymentErrors = {
  notConfigured: () =>
    new AppError(
      503,
      'STRIPE_NOT_CONFIGURED',
      'Payments are not configured on this platform.',
      'The operator sets SVC_STRIPE_SECRET_KEY (and SVC_STRIPE_API_URL for a Stripe-compatible server); plans, meters and limits work without it.',
    ),
  signature: (why: string) =>
    new AppError(400, 'WEBHOOK_SIGNATURE_INVALID', `The Stripe-Signature header does not verify: ${why}`, 'Send the raw body Stripe signed, with its Stripe-Signature header, to the endpoint whose secret signed it.'),
  secretMissing: (variable: string) =>
    new AppError(503, 'WEBHOOK_NOT_CONFIGURED', 'This webhook endpoint has no signing secret configured.', `The operator sets ${variable} to the endpoint's signing secret (whsec_...).`),
};

/** The platform's own subscription (accounts paying for pro): customers, checkout, overage invoice items, the portal. */
export interface PlatformPayments {
  createCustomer(accountId: string, name: string): Promise<string>;
  /** A checkout for a subscription to `priceId`; the account rides along as client_reference_id and metadata. */
  subscriptionCheckout(input: { accountId: string; customerId: string; priceId: string; planId: string; successUrl: string; cancelUrl: string }): Promise<{ id: string; url: string }>;
  /** A pending invoice item on the customer (overage of a closed period); the idempotency key makes a retry the same item. */
  addInvoiceItem(input: { customerId: string; amountCents: number; description: string; period: { start: Date; end: Date }; metadata: Record<string, string>; idempotencyKey: string }): Promise<string>;
  /** The billing portal's url for the customer. */
  portal(customerId: string, returnUrl: string): Promise<string>;
}
