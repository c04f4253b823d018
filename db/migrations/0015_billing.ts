import { sql, type Kysely } from 'kysely';

/**
 * Platform billing (src/billing/): what each account pays for and whether its apps may write.
 * - `accounts.status`: `active`, `soft_locked` (free plan over an allowance: writes refused, reads served), `grace`
 *   (a pro payment failed: everything works until `grace_ends_at`), `suspended` (grace ran out unpaid: the apps answer
 *   402 until the invoice is paid). "Restored" is `active` again, with `status_changed_at` and `status_reason`.
 * - The Stripe customer and subscription of the account (its pro plan), written by the platform's webhook.
 * - `apps.last_request_at` (written at most once a minute per app and process) and `paused_at`: free apps idle for
 *   SVC_APP_IDLE_PAUSE_DAYS are paused by a platform cron and answer 423 APP_PAUSED until apps_restore.
 * - `monthly_active_users`: one row per end user seen (token issued or used) in a UTC month; the first sighting also
 *   adds 1 to the app's `monthly_active_users` meter of that day in usage_daily.
 * - `payment_events`: every Stripe event id handled, per endpoint, so a redelivered event changes nothing.
 * - `billing_notifications`: e-mails to send (payment failed, suspended), enqueued with the change that causes them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table accounts
      add column status text not null default 'active' check (status in ('active', 'soft_locked', 'grace', 'suspended')),
      add column status_reason text,
      add column status_changed_at timestamptz not null default now(),
      add column grace_ends_at timestamptz,
      add column billing_email text,
      add column stripe_customer_id text unique,
      add column stripe_subscription_id text,
      add column subscription_status text,
      add column current_period_end timestamptz;

    alter table apps
      add column last_request_at timestamptz not null default now(),
      add column paused_at timestamptz;

    create table monthly_active_users (
      app_id text not null references apps(id) on delete cascade,
      month date not null,
      user_id uuid not null,
      primary key (app_id, month, user_id)
    );

    create table payment_events (
      endpoint text not null check (endpoint in ('platform', 'connect')),
      id text not null,
      type text not null,
      received_at timestamptz not null default now(),
      primary key (endpoint, id)
    );

    create table billing_notifications (
      id bigserial primary key,
      account_id uuid not null references accounts(id) on delete cascade,
      kind text not null,
      -- one e-mail per cause (e.g. the failed invoice's id), however often its event is delivered
      dedupe_key text not null,
      to_address text,
      subject text not null,
      body text not null,
      status text not null default 'pending' check (status in ('pending', 'sent', 'skipped', 'failed')),
      error text,
      created_at timestamptz not null default now(),
      sent_at timestamptz,
      unique (account_id, kind, dedupe_key)
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop table billing_notifications, payment_events, monthly_active_users;
    alter table apps drop column last_request_at, drop column paused_at;
    alter table accounts drop column status, drop column status_reason, drop column status_changed_at, drop column grace_ends_at,
      drop column billing_email, drop column stripe_customer_id, drop column stripe_subscription_id, drop column subscription_status,
      drop column current_period_end;
  `.execute(db);
}
