import { sql, type Kysely } from 'kysely';

/**
 * The AI gateway's per-app configuration and usage rows, and the account credit ledger that the AI gateway,
 * people search and meetings charge (src/credits/ledger.ts).
 *
 * Money is integer nano-dollars (1e-9 USD) everywhere: a cheap model's call costs fractions of a micro-dollar, and
 * integers add up exactly.
 * - `credit_balances`: one row per account: the sum of its ledger rows, and what calls in flight hold reserved. A
 *   reservation is one conditional UPDATE of this row (balance - reserved > 0), so concurrent calls cannot both
 *   spend the last credit.
 * - `credit_ledger`: grants (positive; a plan's grant once per `grant_key`, e.g. free:lifetime) and charges
 *   (negative, one per billed usage row, written in the same transaction as it).
 * - `credit_reservations`: the reservations behind `reserved_nanos`, settled (deleted) with the charge; those of a
 *   process that died are released by the credits_release_expired job once they expire.
 * - `ai_user_daily`: tokens per end user and UTC day, for the per-end-user daily budget.
 * - `ai_usage.metered`: the ai_tokens and ai_credits meters of usage_daily are rolled up from the rows by a job.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table ai_configs (
      app_id text primary key references apps(id) on delete cascade,
      default_model text,
      byok_key_sealed text,
      byok_key_hint text,
      max_tokens_per_request integer check (max_tokens_per_request between 1 and 100000),
      allowed_models text[],
      end_user_daily_token_limit integer check (end_user_daily_token_limit > 0),
      updated_at timestamptz not null default now()
    );
    create table ai_usage (
      id bigserial primary key,
      app_id text not null references apps(id) on delete cascade,
      account_id uuid not null,
      end_user_id uuid,
      kind text not null check (kind in ('chat', 'embedding')),
      model text not null,
      prompt_tokens integer not null default 0,
      completion_tokens integer not null default 0,
      total_tokens integer not null default 0,
      cost_nanos bigint not null default 0,
      own_key boolean not null,
      latency_ms integer not null,
      status text not null check (status in ('ok', 'error', 'aborted')),
      http_status integer,
      -- false until the ai_usage_meter job has added the row to usage_daily (kept out of the call's transaction:
      -- every call of an app would otherwise wait on the lock of the app's one meter row of the day).
      metered boolean not null default false,
      created_at timestamptz not null default now()
    );
    create index ai_usage_app_time_idx on ai_usage(app_id, created_at);
    create index ai_usage_unmetered_idx on ai_usage(id) where not metered;
    create table ai_user_daily (
      app_id text not null references apps(id) on delete cascade,
      end_user_id uuid not null,
      day date not null,
      tokens bigint not null default 0,
      primary key (app_id, end_user_id, day)
    );
    create table credit_balances (
      account_id uuid primary key references accounts(id) on delete cascade,
      balance_nanos bigint not null default 0,
      reserved_nanos bigint not null default 0 check (reserved_nanos >= 0)
    );
    create table credit_ledger (
      id bigserial primary key,
      account_id uuid not null references accounts(id) on delete cascade,
      kind text not null check (kind in ('grant', 'charge')),
      amount_nanos bigint not null,
      source text not null,
      grant_key text,
      usage_ref text,
      created_at timestamptz not null default now(),
      unique (account_id, grant_key)
    );
    create index credit_ledger_account_idx on credit_ledger(account_id, created_at);
    create table credit_reservations (
      id uuid primary key default gen_random_uuid(),
      account_id uuid not null references accounts(id) on delete cascade,
      amount_nanos bigint not null check (amount_nanos >= 0),
      expires_at timestamptz not null
    );
    create index credit_reservations_expiry_idx on credit_reservations(expires_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table credit_reservations, credit_ledger, credit_balances, ai_user_daily, ai_usage, ai_configs`.execute(db);
}
