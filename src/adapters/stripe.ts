// The only modules that import the stripe SDK: this one (the client, errors, webhook verification and the platform's
// own subscription) and stripe-connect.ts (apps' connected accounts, catalog and end-user checkouts). The SDK talks to
// SVC_STRIPE_API_URL when set (a fake on loopback in tests, stripe-mock), else to api.stripe.com.
import Stripe from 'stripe';
import { AppError } from '../core/errors.ts';
import { paymentErrors, type PaymentEvent, type PlatformPayments } from '../billing/payments-port.ts';

export interface StripeSettings {
  secretKey: string | undefined;
  apiUrl: string | undefined;
}

/** The SDK client for the configured key and API address; undefined when no secret key is configured. */
export function stripeClient(settings: StripeSettings): Stripe | undefined {
  if (!settings.secretKey) return undefined;
  const options: Stripe.StripeConfig = { maxNetworkRetries: 1, timeout: 20_000, telemetry: false };
  if (settings.apiUrl) {
    const url = new URL(settings.apiUrl);
    options.host = url.hostname;
    options.port = url.port || (url.protocol === 'https:' ? 443 : 80);
    options.protocol = url.protocol === 'http:' ? 'http' : 'https';
  }
  return new Stripe(settings.secretKey, options);
}

/**
 * A Stripe failure as the caller's error: Stripe refusing the request (400 PAYMENT_PROVIDER_REJECTED, with Stripe's
 * message), a declined card (402), Stripe unreachable, failing or refusing the platform's key (502 or 503: the
 * operator's problem, retryable). Anything that is not a Stripe error is rethrown as it is.
 */
export function paymentProviderError(err: unknown): AppError {
  if (!(err instanceof Stripe.errors.StripeError)) throw err;
  const message = err.message.slice(0, 500);
  if (err instanceof Stripe.errors.StripeCardError) {
    return new AppError(402, 'PAYMENT_DECLINED', `The payment was declined: ${message}`, 'Use another payment method.');
  }
  if (err instanceof Stripe.errors.StripeInvalidRequestError) {
    return new AppError(400, 'PAYMENT_PROVIDER_REJECTED', `Stripe refused the request: ${message}`, 'Check the named values (and that the connected account finished onboarding), then retry.', {
      param: err.param ?? null,
    });
  }
  if (err instanceof Stripe.errors.StripeRateLimitError) {
    return new AppError(503, 'PAYMENT_PROVIDER_BUSY', 'Stripe is rate-limiting the platform.', 'Retry in a few seconds.', { retry_after_seconds: 2 });
  }
  return new AppError(502, 'PAYMENT_PROVIDER_UNAVAILABLE', `Stripe could not be reached or failed: ${message}`, 'Retry with backoff; if it persists, the operator checks the Stripe key and SVC_STRIPE_API_URL.');
}

/** Runs a Stripe call, turning its failures into the caller's errors (paymentProviderError). */
export async function callStripe<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw paymentProviderError(err);
  }
}

/**
 * Verifies a webhook delivery with the endpoint's signing secret (Stripe's scheme: HMAC-SHA256 of `t.body`, five
 * minutes of tolerance) and returns its event. A bad or missing signature is a 400, so Stripe shows the failure.
 */
export function verifyPaymentEvent(rawBody: Buffer, signature: string | undefined, secret: string): PaymentEvent {
  if (!signature) throw paymentErrors.signature('the header is missing.');
  let event: Stripe.Event;
  try {
    event = Stripe.webhooks.constructEvent(rawBody, signature, secret);
  } catch (err) {
    throw paymentErrors.signature(err instanceof Error ? err.message.slice(0, 200) : 'unreadable.');
  }
  const object = event.data.object as unknown as Record<string, unknown>;
  return { id: event.id, type: event.type, account: event.account ?? undefined, created: event.created, object };
}

/** The platform's own subscription (accounts paying for pro): Stripe Customers, Checkout and the billing portal. */
export class PlatformStripe implements PlatformPayments {
  readonly #stripe: Stripe;

  constructor(stripe: Stripe) {
    this.#stripe = stripe;
  }

  async createCustomer(accountId: string, name: string): Promise<string> {
    const customer = await callStripe(() => this.#stripe.customers.create({ name, metadata: { account_id: accountId } }, { idempotencyKey: `customer-${accountId}` }));
    return customer.id;
  }

  /** A Checkout Session for a subscription to `priceId`; the account rides along as client_reference_id and metadata. */
  async subscriptionCheckout(input: { accountId: string; customerId: string; priceId: string; planId: string; successUrl: string; cancelUrl: string }): Promise<{ id: string; url: string }> {
    const metadata = { account_id: input.accountId, plan_id: input.planId };
    const session = await callStripe(() =>
      this.#stripe.checkout.sessions.create({
        mode: 'subscription',
        customer: input.customerId,
        client_reference_id: input.accountId,
        line_items: [{ price: input.priceId, quantity: 1 }],
        success_url: input.successUrl,
        cancel_url: input.cancelUrl,
        metadata,
        subscription_data: { metadata },
      }),
    );
    if (!session.url) throw paymentProviderError(new Stripe.errors.StripeAPIError({ message: 'the Checkout Session has no url' }));
    return { id: session.id, url: session.url };
  }

  /**
   * A pending invoice item on the customer (overage of a closed period): Stripe adds it to the subscription's next
   * invoice. The idempotency key makes a retry after a crash the same item.
   */
  async addInvoiceItem(input: { customerId: string; amountCents: number; description: string; period: { start: Date; end: Date }; metadata: Record<string, string>; idempotencyKey: string }): Promise<string> {
    const item = await callStripe(() =>
      this.#stripe.invoiceItems.create(
        {
          customer: input.customerId,
          amount: input.amountCents,
          currency: 'usd',
          description: input.description,
          period: { start: Math.floor(input.period.start.getTime() / 1000), end: Math.floor(input.period.end.getTime() / 1000) },
          metadata: input.metadata,
        },
        { idempotencyKey: input.idempotencyKey },
      ),
    );
    return item.id;
  }

  async portal(customerId: string, returnUrl: string): Promise<string> {
    const session = await callStripe(() => this.#stripe.billingPortal.sessions.create({ customer: customerId, return_url: returnUrl }));
    return session.url;
  }
}
