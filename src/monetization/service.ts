// Apps charging their own end users through Stripe Connect: the owner's connected account (connect.ts), the app's
// catalog (catalog.ts), end users' checkouts, subscriptions and orders (checkout.ts), those listed app-wide or per
// user (listing.ts) and the Connect webhook's events (events.ts). Tables: db/migrations/0016_monetization.ts.
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { PaymentEventOutcome } from '../billing/events.ts';
import type { PaymentEvent } from '../billing/payments-port.ts';
import type { Config } from '../config.ts';
import type { ControlDatabase } from '../db/types.ts';
import { Catalog } from './catalog.ts';
import { EndUserBilling } from './checkout.ts';
import { ConnectAccounts } from './connect.ts';
import { ConnectEvents } from './events.ts';
import { AppListing } from './listing.ts';
import type { ConnectPayments } from './connect-port.ts';

export interface MonetizationServiceDeps {
  db: Kysely<ControlDatabase>;
  config: Config;
  /** Undefined without SVC_STRIPE_SECRET_KEY: the calls that need Stripe answer 503 STRIPE_NOT_CONFIGURED. */
  stripe: ConnectPayments | undefined;
  log: Logger;
}

export class MonetizationService {
  readonly connect: ConnectAccounts;
  readonly catalog: Catalog;
  readonly endUsers: EndUserBilling;
  /** Orders and subscriptions, the whole app's or one end user's. */
  readonly listing: AppListing;
  readonly #events: ConnectEvents;

  constructor({ db, config, stripe, log }: MonetizationServiceDeps) {
    const deps = {
      db,
      stripe,
      feePercent: config.billing.platformFeePercent,
      baseUrl: config.baseUrl,
      log,
    };
    this.connect = new ConnectAccounts(deps);
    this.catalog = new Catalog(deps, this.connect);
    this.endUsers = new EndUserBilling(deps, this.connect, this.catalog);
    this.listing = new AppListing(db);
    this.#events = new ConnectEvents(deps, this.connect);
  }

  /** An event of the Connect endpoint, already verified (src/transports/raw/webhooks.ts). */
  handleEvent(event: PaymentEvent): Promise<PaymentEventOutcome> {
    return this.#events.handle(event);
  }
}
