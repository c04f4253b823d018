// What monetization asks of its payment provider's Connect side: the owner's connected account and its onboarding,
// the app's catalog as products and prices on that account, and end users' checkouts on it. Implemented by
// src/adapters/stripe-connect.ts; the composition root (src/composition.ts) builds it from config and passes it in.

/** What onboarding and payout readiness are read from. */
export interface ConnectedAccountState {
  id: string;
  chargesEnabled: boolean;
  payoutsEnabled: boolean;
  detailsSubmitted: boolean;
  /** Stripe's requirements.currently_due: fields the owner still has to provide. */
  requirementsDue: string[];
  disabledReason: string | null;
}

export interface PriceTerms {
  unitAmount: number;
  currency: string;
  /** Set for a plan (a recurring price), absent for a one-off product. */
  interval?: 'day' | 'week' | 'month' | 'year' | undefined;
}

export interface CatalogItemInput extends PriceTerms {
  name: string;
  description?: string | null | undefined;
  metadata: Record<string, string>;
}

export interface CatalogItemChange {
  name?: string | undefined;
  description?: string | null | undefined;
  active?: boolean | undefined;
}

export interface CheckoutInput {
  /** Our row (subscription or order) the session pays for: its idempotency key and client_reference_id. */
  reference: string;
  priceId: string;
  quantity: number;
  successUrl: string;
  cancelUrl: string;
  metadata: Record<string, string>;
  /** The platform's share: a percent of every invoice (subscription) or an amount of the payment (one-off). */
  fee: { percent: number } | { amountCents: number };
}

/** A Stripe subscription as a plain object, read by the same code that reads webhook payloads. */
export type SubscriptionObject = Record<string, unknown>;

/** Every call but account creation runs on the connected account. */
export interface ConnectPayments {
  /** The owner's connected account; concurrent first onboardings of one owner create a single account. */
  createAccount(platformAccountId: string): Promise<ConnectedAccountState>;
  retrieveAccount(accountId: string): Promise<ConnectedAccountState>;
  /** A single-use onboarding link; `refreshUrl` is where the owner is sent when it has expired. */
  onboardingLink(accountId: string, returnUrl: string, refreshUrl: string): Promise<string>;
  /** A product with its default price on the connected account. */
  createCatalogItem(accountId: string, item: CatalogItemInput): Promise<{ productId: string; priceId: string }>;
  updateCatalogItem(accountId: string, productId: string, change: CatalogItemChange): Promise<void>;
  /** A new default price for new terms (prices are immutable), the old one archived; returns the new price's id. */
  replacePrice(accountId: string, productId: string, oldPriceId: string, terms: PriceTerms): Promise<string>;
  /** A checkout on the connected account: a subscription when the fee is a percent, a one-off payment otherwise. */
  checkout(accountId: string, input: CheckoutInput): Promise<{ id: string; url: string }>;
  retrieveSubscription(accountId: string, subscriptionId: string): Promise<SubscriptionObject>;
  cancelAtPeriodEnd(accountId: string, subscriptionId: string): Promise<SubscriptionObject>;
}
