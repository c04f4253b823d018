// Stripe Connect for apps' monetization (src/monetization/): the owner's connected account and its onboarding, the
// app's catalog as Products and Prices on that account, and end users' checkouts as direct charges on it (the
// platform takes an application fee). Every call but account creation runs on the connected account (stripeAccount).
import Stripe from 'stripe';
import { callStripe, paymentProviderError } from './stripe.ts';
import type { CatalogItemChange, CatalogItemInput, CheckoutInput, ConnectedAccountState, ConnectPayments, PriceTerms, SubscriptionObject } from '../monetization/connect-port.ts';

export class ConnectStripe implements ConnectPayments {
  readonly #stripe: Stripe;

  constructor(stripe: Stripe) {
    this.#stripe = stripe;
  }

  /**
   * A Standard-like account (full Stripe dashboard, the account pays Stripe's fees and Stripe carries losses): the
   * owner is the merchant of record for direct charges. The idempotency key makes concurrent first onboardings of
   * one owner (two of their apps at once) create a single account.
   */
  async createAccount(platformAccountId: string): Promise<ConnectedAccountState> {
    const account = await callStripe(() =>
      this.#stripe.accounts.create(
        {
          controller: { stripe_dashboard: { type: 'full' }, fees: { payer: 'account' }, losses: { payments: 'stripe' }, requirement_collection: 'stripe' },
          metadata: { platform_account_id: platformAccountId },
        },
        { idempotencyKey: `connect-account-${platformAccountId}` },
      ),
    );
    return accountState(account);
  }

  async retrieveAccount(accountId: string): Promise<ConnectedAccountState> {
    return accountState(await callStripe(() => this.#stripe.accounts.retrieve(accountId)));
  }

  /** A single-use onboarding link; `refreshUrl` is where Stripe sends the owner when it has expired. */
  async onboardingLink(accountId: string, returnUrl: string, refreshUrl: string): Promise<string> {
    const link = await callStripe(() =>
      this.#stripe.accountLinks.create({ account: accountId, type: 'account_onboarding', return_url: returnUrl, refresh_url: refreshUrl }),
    );
    return link.url;
  }

  /** A Product with its default Price on the connected account. */
  async createCatalogItem(accountId: string, item: CatalogItemInput): Promise<{ productId: string; priceId: string }> {
    const product = await callStripe(() =>
      this.#stripe.products.create(
        { name: item.name, ...(item.description ? { description: item.description } : {}), metadata: item.metadata },
        { stripeAccount: accountId },
      ),
    );
    return { productId: product.id, priceId: await this.#newDefaultPrice(accountId, product.id, item) };
  }

  async updateCatalogItem(accountId: string, productId: string, change: CatalogItemChange): Promise<void> {
    const params: Stripe.ProductUpdateParams = {};
    if (change.name !== undefined) params.name = change.name;
    // Stripe clears a field with an empty string.
    if (change.description !== undefined) params.description = change.description ?? '';
    if (change.active !== undefined) params.active = change.active;
    if (Object.keys(params).length === 0) return;
    await callStripe(() => this.#stripe.products.update(productId, params, { stripeAccount: accountId }));
  }

  /**
   * Prices are immutable: a new amount or interval is a new Price, made the product's default before the old one is
   * archived (Stripe refuses to archive a default price). Existing subscriptions keep the price they were sold at.
   */
  async replacePrice(accountId: string, productId: string, oldPriceId: string, terms: PriceTerms): Promise<string> {
    const priceId = await this.#newDefaultPrice(accountId, productId, terms);
    await callStripe(() => this.#stripe.prices.update(oldPriceId, { active: false }, { stripeAccount: accountId }));
    return priceId;
  }

  async #newDefaultPrice(accountId: string, productId: string, terms: PriceTerms): Promise<string> {
    const options = { stripeAccount: accountId };
    const price = await callStripe(() =>
      this.#stripe.prices.create(
        { product: productId, currency: terms.currency, unit_amount: terms.unitAmount, ...(terms.interval ? { recurring: { interval: terms.interval } } : {}) },
        options,
      ),
    );
    await callStripe(() => this.#stripe.products.update(productId, { default_price: price.id }, options));
    return price.id;
  }

  /** A Checkout Session on the connected account: mode subscription when the fee is a percent, payment otherwise. */
  async checkout(accountId: string, input: CheckoutInput): Promise<{ id: string; url: string }> {
    const params: Stripe.Checkout.SessionCreateParams = {
      client_reference_id: input.reference,
      line_items: [{ price: input.priceId, quantity: input.quantity }],
      success_url: input.successUrl,
      cancel_url: input.cancelUrl,
      metadata: input.metadata,
    };
    if ('percent' in input.fee) {
      params.mode = 'subscription';
      params.subscription_data = { metadata: input.metadata, ...(input.fee.percent > 0 ? { application_fee_percent: input.fee.percent } : {}) };
    } else {
      params.mode = 'payment';
      params.payment_intent_data = { metadata: input.metadata, ...(input.fee.amountCents > 0 ? { application_fee_amount: input.fee.amountCents } : {}) };
    }
    const session = await callStripe(() => this.#stripe.checkout.sessions.create(params, { stripeAccount: accountId, idempotencyKey: `checkout-${input.reference}` }));
    if (!session.url) throw paymentProviderError(new Stripe.errors.StripeAPIError({ message: 'the Checkout Session has no url' }));
    return { id: session.id, url: session.url };
  }

  async retrieveSubscription(accountId: string, subscriptionId: string): Promise<SubscriptionObject> {
    const subscription = await callStripe(() => this.#stripe.subscriptions.retrieve(subscriptionId, {}, { stripeAccount: accountId }));
    return subscription as unknown as SubscriptionObject;
  }

  async cancelAtPeriodEnd(accountId: string, subscriptionId: string): Promise<SubscriptionObject> {
    const subscription = await callStripe(() => this.#stripe.subscriptions.update(subscriptionId, { cancel_at_period_end: true }, { stripeAccount: accountId }));
    return subscription as unknown as SubscriptionObject;
  }
}

function accountState(account: Stripe.Account): ConnectedAccountState {
  return {
    id: account.id,
    chargesEnabled: account.charges_enabled === true,
    payoutsEnabled: account.payouts_enabled === true,
    detailsSubmitted: account.details_submitted === true,
    requirementsDue: account.requirements?.currently_due ?? [],
    disabledReason: account.requirements?.disabled_reason ?? null,
  };
}
