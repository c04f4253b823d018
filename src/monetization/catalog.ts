// An app's catalog: plans (recurring) and products (one-off), each mirrored as a Stripe Product with a default Price
// on the owner's connected account. Rows are never deleted (subscriptions and orders point at them): `active: false`
// takes an item out of the public lists and out of sale.
import { sql, type Selectable } from 'kysely';
import type { PriceTerms } from './connect-port.ts';
import { randomId } from '../apps/service.ts';
import type { AppRecord } from '../apps/types.ts';
import type { ControlDatabase } from '../db/types.ts';
import type { ConnectAccounts } from './connect.ts';
import { monetizationErrors, stamps, type Interval, type MonetizationDeps, type PlanView, type ProductView } from './types.ts';

export interface PlanInput {
  name: string;
  priceCents: number;
  currency: string;
  interval: Interval;
  features: string[];
}

export interface ProductInput {
  name: string;
  priceCents: number;
  currency: string;
  description?: string | undefined;
  metadata: Record<string, string>;
}

/** PUT: any subset of the fields; `active` lists or hides the item. */
export type PlanChange = Partial<Omit<PlanInput, 'currency'>> & { active?: boolean | undefined };
export type ProductChange = Partial<Omit<ProductInput, 'currency' | 'description'>> & { description?: string | null | undefined; active?: boolean | undefined };

type PlanRow = Selectable<ControlDatabase['app_plans']>;
type ProductRow = Selectable<ControlDatabase['app_products']>;

/** What the Stripe side of an item needs to follow a change. */
interface MirroredItem {
  stripe_product_id: string;
  stripe_price_id: string;
  currency: string;
}

export const newMonetizationId = (prefix: 'pln' | 'prd' | 'sbn' | 'ord'): string => `${prefix}_${randomId(20)}`;

export class Catalog {
  readonly #d: MonetizationDeps;
  readonly #accounts: ConnectAccounts;

  constructor(deps: MonetizationDeps, accounts: ConnectAccounts) {
    this.#d = deps;
    this.#accounts = accounts;
  }

  async createPlan(app: AppRecord, input: PlanInput): Promise<PlanView> {
    const id = newMonetizationId('pln');
    const stripe = await this.#mirror(app, id, 'plan_id', input.name, undefined, { unitAmount: input.priceCents, currency: input.currency, interval: input.interval });
    const row = await this.#d.db
      .insertInto('app_plans')
      .values({ id, app_id: app.id, name: input.name, price_cents: input.priceCents, currency: input.currency, interval: input.interval, features: JSON.stringify(input.features), ...stripe })
      .returningAll()
      .executeTakeFirstOrThrow();
    return planView(row);
  }

  async createProduct(app: AppRecord, input: ProductInput): Promise<ProductView> {
    const id = newMonetizationId('prd');
    const stripe = await this.#mirror(app, id, 'product_id', input.name, input.description, { unitAmount: input.priceCents, currency: input.currency });
    const row = await this.#d.db
      .insertInto('app_products')
      .values({
        id,
        app_id: app.id,
        name: input.name,
        description: input.description ?? null,
        price_cents: input.priceCents,
        currency: input.currency,
        metadata: JSON.stringify(input.metadata),
        ...stripe,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return productView(row);
  }

  async updatePlan(app: AppRecord, planId: string, change: PlanChange): Promise<PlanView> {
    this.#accounts.stripe();
    const row = await this.plan(app.id, planId, { activeOnly: false });
    const priceMoves = differs(change.priceCents, row.price_cents) || differs(change.interval, row.interval);
    const terms = { unitAmount: change.priceCents ?? row.price_cents, currency: row.currency, interval: change.interval ?? row.interval };
    const priceId = await this.#follow(app, row, change, priceMoves ? terms : undefined);
    const columns = given({ ...commonColumns(change), interval: change.interval, features: json(change.features) });
    const updated = await this.#d.db
      .updateTable('app_plans')
      .set({ ...columns, stripe_price_id: priceId, updated_at: sql`now()` })
      .where('id', '=', row.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return planView(updated);
  }

  async updateProduct(app: AppRecord, productId: string, change: ProductChange): Promise<ProductView> {
    this.#accounts.stripe();
    const row = await this.product(app.id, productId, { activeOnly: false });
    const terms = { unitAmount: change.priceCents ?? row.price_cents, currency: row.currency };
    const priceId = await this.#follow(app, row, change, differs(change.priceCents, row.price_cents) ? terms : undefined);
    const columns = given({ ...commonColumns(change), description: change.description, metadata: json(change.metadata) });
    const updated = await this.#d.db
      .updateTable('app_products')
      .set({ ...columns, stripe_price_id: priceId, updated_at: sql`now()` })
      .where('id', '=', row.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return productView(updated);
  }

  /** The public catalog: items on sale, oldest first. */
  async listPlans(appId: string): Promise<PlanView[]> {
    return (await this.#items('app_plans', appId, undefined, true)).map(planView);
  }

  async listProducts(appId: string): Promise<ProductView[]> {
    return (await this.#items('app_products', appId, undefined, true)).map(productView);
  }

  /** A plan of the app; with activeOnly, only one on sale (what end users may subscribe to). */
  async plan(appId: string, planId: string, { activeOnly }: { activeOnly: boolean }): Promise<PlanRow> {
    const [row] = await this.#items('app_plans', appId, planId, activeOnly);
    if (!row) throw monetizationErrors.planNotFound(planId);
    return row;
  }

  async product(appId: string, productId: string, { activeOnly }: { activeOnly: boolean }): Promise<ProductRow> {
    const [row] = await this.#items('app_products', appId, productId, activeOnly);
    if (!row) throw monetizationErrors.productNotFound(productId);
    return row;
  }

  /** The app's items of one kind (one of them when `id` is given), oldest first. */
  async #items<T extends 'app_plans' | 'app_products'>(table: T, appId: string, id: string | undefined, activeOnly: boolean): Promise<Selectable<ControlDatabase[T]>[]> {
    let query = this.#d.db.selectFrom(table as 'app_plans').selectAll().where('app_id', '=', appId);
    if (id !== undefined) query = query.where('id', '=', id);
    if (activeOnly) query = query.where('active', '=', true);
    return (await query.orderBy('created_at').orderBy('id').execute()) as Selectable<ControlDatabase[T]>[];
  }

  /** Creates the item's Stripe Product and Price; its metadata names the app and our id, for anyone reading Stripe. */
  async #mirror(app: AppRecord, id: string, idKey: 'plan_id' | 'product_id', name: string, description: string | undefined, terms: PriceTerms) {
    const account = await this.#accounts.forCatalog(app);
    const { productId, priceId } = await this.#accounts
      .stripe()
      .createCatalogItem(account, { name, description, metadata: { app_id: app.id, [idKey]: id }, ...terms });
    return { stripe_product_id: productId, stripe_price_id: priceId };
  }

  /** Brings the Stripe Product in line with a change; returns the item's price id (a new one when `terms` is given). */
  async #follow(app: AppRecord, item: MirroredItem, change: { name?: string | undefined; description?: string | null | undefined; active?: boolean | undefined }, terms: PriceTerms | undefined): Promise<string> {
    const account = await this.#accounts.forCatalog(app);
    const stripe = this.#accounts.stripe();
    await stripe.updateCatalogItem(account, item.stripe_product_id, change);
    return terms ? stripe.replacePrice(account, item.stripe_product_id, item.stripe_price_id, terms) : item.stripe_price_id;
  }
}

/** The columns both kinds share, as a change sets them. */
function commonColumns(change: { name?: string | undefined; priceCents?: number | undefined; active?: boolean | undefined }) {
  return { name: change.name, price_cents: change.priceCents, active: change.active };
}

/** Only the fields a change gives (PUT is partial): undefined means "keep", null means "clear". */
function given<T extends Record<string, unknown>>(values: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> };
}

const json = (value: unknown): string | undefined => (value === undefined ? undefined : JSON.stringify(value));

function differs<T>(next: T | undefined, current: T): boolean {
  return next !== undefined && next !== current;
}

// features and metadata are written from the validated input only (a list of strings, a map of strings).

/** What plans and products show alike. */
function itemView(row: PlanRow | ProductRow) {
  return { id: row.id, name: row.name, priceCents: row.price_cents, currency: row.currency, active: row.active, ...stamps(row) };
}

function planView(row: PlanRow): PlanView {
  return { ...itemView(row), interval: row.interval, features: row.features as string[] };
}

function productView(row: ProductRow): ProductView {
  return { ...itemView(row), description: row.description, metadata: row.metadata as Record<string, string> };
}
