import { sql, type Kysely } from 'kysely';

/**
 * Monetization (src/monetization/): apps charging their own end users through Stripe Connect.
 * - `connected_accounts`: the app owner's Stripe connected account, one per platform account, created by the first
 *   onboarding of any of the owner's apps and reused by all of them (payouts go to one place). Readiness
 *   (`charges_enabled`, `payouts_enabled`, outstanding requirements) is refreshed from Stripe on status reads.
 * - `app_plans` / `app_products`: an app's catalog, mirrored as a Stripe Product with a default Price on the connected
 *   account. A price change makes a new Price (Stripe prices are immutable), so `stripe_price_id` follows it.
 *   Nothing is deleted (orders and subscriptions keep pointing at them); `active = false` hides an item.
 * - `app_subscriptions`: an end user's subscription to a plan: `pending` from subscribe until the checkout completes,
 *   then moved by Connect webhooks. `plan_id` has no foreign key so the entitlement side may read rows on its own.
 * - `app_orders`: one-off purchases of a product: `pending` (checkout created), `paid`, `failed`, `refunded`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table connected_accounts (
      account_id uuid primary key references accounts(id) on delete cascade,
      stripe_account_id text not null unique,
      charges_enabled boolean not null default false,
      payouts_enabled boolean not null default false,
      details_submitted boolean not null default false,
      -- Stripe's requirements.currently_due: what the owner still has to provide
      requirements_due jsonb not null default '[]',
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );

    create table app_plans (
      id text primary key,
      app_id text not null references apps(id) on delete cascade,
      name text not null,
      price_cents integer not null check (price_cents >= 0),
      currency text not null default 'usd',
      interval text not null check (interval in ('day', 'week', 'month', 'year')),
      features jsonb not null default '[]',
      active boolean not null default true,
      stripe_product_id text not null,
      stripe_price_id text not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index app_plans_app_idx on app_plans (app_id, created_at, id);

    create table app_products (
      id text primary key,
      app_id text not null references apps(id) on delete cascade,
      name text not null,
      description text,
      price_cents integer not null check (price_cents >= 0),
      currency text not null default 'usd',
      metadata jsonb not null default '{}',
      active boolean not null default true,
      stripe_product_id text not null,
      stripe_price_id text not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index app_products_app_idx on app_products (app_id, created_at, id);

    create table app_subscriptions (
      id text primary key,
      app_id text not null references apps(id) on delete cascade,
      user_id uuid not null,
      plan_id text not null,
      status text not null check (status in ('pending', 'active', 'past_due', 'canceled')),
      current_period_end timestamptz,
      cancel_at_period_end boolean not null default false,
      stripe_checkout_session_id text unique,
      stripe_subscription_id text unique,
      stripe_customer_id text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index app_subscriptions_user_idx on app_subscriptions (app_id, user_id, created_at desc);

    create table app_orders (
      id text primary key,
      app_id text not null references apps(id) on delete cascade,
      user_id uuid not null,
      product_id text not null references app_products(id) on delete cascade,
      quantity integer not null check (quantity between 1 and 100),
      amount_cents integer not null check (amount_cents >= 0),
      currency text not null default 'usd',
      status text not null check (status in ('pending', 'paid', 'failed', 'refunded')),
      stripe_checkout_session_id text unique,
      stripe_payment_intent_id text unique,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index app_orders_user_idx on app_orders (app_id, user_id, created_at desc, id desc);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table app_orders, app_subscriptions, app_products, app_plans, connected_accounts`.execute(db);
}
