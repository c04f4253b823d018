// The app owner's connected Stripe account: created once per platform account (by the first onboarding of any of
// the owner's apps) and shared by all of them, so the owner onboards and receives payouts in one place.
import { sql, type Selectable } from 'kysely';
import { paymentErrors } from '../billing/payments-port.ts';
import type { ConnectedAccountState, ConnectPayments } from './connect-port.ts';
import type { AppRecord } from '../apps/types.ts';
import type { ControlDatabase } from '../db/types.ts';
import { monetizationErrors, type ConnectStatusView, type MonetizationDeps } from './types.ts';

type AccountRow = Pick<Selectable<ControlDatabase['connected_accounts']>, 'stripe_account_id' | 'charges_enabled' | 'payouts_enabled' | 'details_submitted' | 'requirements_due'>;

export class ConnectAccounts {
  readonly #d: MonetizationDeps;

  constructor(deps: MonetizationDeps) {
    this.#d = deps;
  }

  /** The Connect client; 503 STRIPE_NOT_CONFIGURED without a secret key. */
  stripe(): ConnectPayments {
    if (!this.#d.stripe) throw paymentErrors.notConfigured();
    return this.#d.stripe;
  }

  /**
   * The owner's account (created on the first call) and a fresh onboarding link: links are single-use and expire,
   * so every call makes a new one. Stripe sends the owner to `returnUrl` when done, and back to it when the link has
   * expired (the app then calls this again).
   */
  async onboard(app: AppRecord, returnUrl: string | undefined): Promise<{ accountId: string; onboardingUrl: string }> {
    const stripe = this.stripe();
    let row = await this.#row(app.account_id);
    if (!row) row = await this.#record(app.account_id, await stripe.createAccount(app.account_id));
    const back = returnUrl ?? this.#d.baseUrl;
    return { accountId: row.stripe_account_id, onboardingUrl: await stripe.onboardingLink(row.stripe_account_id, back, back) };
  }

  /** Onboarding and payout readiness, read from Stripe (and kept, so checkouts need not ask). */
  async status(app: AppRecord): Promise<ConnectStatusView> {
    const stripe = this.stripe();
    const known = await this.#row(app.account_id);
    if (!known) {
      return { accountId: null, status: 'not_started', chargesEnabled: false, payoutsEnabled: false, detailsSubmitted: false, requirementsDue: [] };
    }
    const row = await this.#record(app.account_id, await stripe.retrieveAccount(known.stripe_account_id));
    return {
      accountId: row.stripe_account_id,
      status: row.charges_enabled ? 'enabled' : 'pending',
      chargesEnabled: row.charges_enabled,
      payoutsEnabled: row.payouts_enabled,
      detailsSubmitted: row.details_submitted,
      // Written by #record from Stripe's list of strings.
      requirementsDue: row.requirements_due as string[],
    };
  }

  /** The Stripe account id the app's catalog lives on; 409 before onboarding has started. */
  async forCatalog(app: AppRecord): Promise<string> {
    this.stripe();
    const row = await this.#row(app.account_id);
    if (!row) throw monetizationErrors.noConnectedAccount();
    return row.stripe_account_id;
  }

  /**
   * The Stripe account id end users pay on; 409 until it can take charges. A kept "not yet" is asked again, since
   * the owner may have finished onboarding without reading the status since.
   */
  async forCharges(app: AppRecord): Promise<string> {
    const stripe = this.stripe();
    let row = await this.#row(app.account_id);
    if (!row) throw monetizationErrors.noConnectedAccount();
    if (!row.charges_enabled) row = await this.#record(app.account_id, await stripe.retrieveAccount(row.stripe_account_id));
    if (!row.charges_enabled) throw monetizationErrors.chargesDisabled();
    return row.stripe_account_id;
  }

  async #row(accountId: string): Promise<AccountRow | undefined> {
    return this.#d.db
      .selectFrom('connected_accounts')
      .select(['stripe_account_id', 'charges_enabled', 'payouts_enabled', 'details_submitted', 'requirements_due'])
      .where('account_id', '=', accountId)
      .executeTakeFirst();
  }

  /**
   * Keeps Stripe's view of the account. The first account recorded for an owner wins: should two first onboardings
   * race past Stripe's idempotency, the loser's account is left unused rather than replacing the winner's.
   */
  async #record(accountId: string, state: ConnectedAccountState): Promise<AccountRow> {
    const values = {
      charges_enabled: state.chargesEnabled,
      payouts_enabled: state.payoutsEnabled,
      details_submitted: state.detailsSubmitted,
      requirements_due: JSON.stringify(state.requirementsDue),
    };
    await this.#d.db
      .insertInto('connected_accounts')
      .values({ account_id: accountId, stripe_account_id: state.id, ...values })
      .onConflict((oc) =>
        oc
          .column('account_id')
          .doUpdateSet({ ...values, updated_at: sql`now()` })
          .where('connected_accounts.stripe_account_id', '=', state.id),
      )
      .execute();
    const row = await this.#row(accountId);
    if (!row) throw new Error(`connected account of ${accountId} vanished while being recorded`);
    return row;
  }
}
