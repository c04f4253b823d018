-- App-database migration 3: end users' entitlements (src/monetization/entitlement.ts), copied from the control
-- database's app_subscriptions by the billing_entitlement_sync job, and the functions row-level security policies
-- (the schema definition's `plans` option) call. Until versioned migrations these were created on first use, so an
-- app database of the previous release may already have them: every statement is idempotent.
-- 'active', 'past_due' is ENTITLED_STATUSES (src/monetization/entitlement.sql.ts); a change of it is a new migration.
--
-- - svc_billing.entitlements: one row per entitled end user; a user without one is entitled to nothing. Private: the
--   data API reads only `public`.
-- - public.current_user_plan(): the plan id of the transaction's end user (public.current_user_id()) while entitled,
--   else null. security definer: svc_anon and svc_user must not read svc_billing itself.
-- - public.current_user_has_plan(text[]): whether that plan is one of the given ids (false, never null).
-- - svc_meta.table_access.plans: the `plans` option of each table, beside its access (src/schema/plan.ts).

-- Processes of the previous release may still create these lazily during a rolling upgrade, under this same
-- transaction-scoped lock; taking it too keeps the two from colliding in the catalog.
select pg_advisory_xact_lock(hashtext('svc_billing schema'));
create schema if not exists svc_billing;
revoke all on schema svc_billing from public;
create table if not exists svc_billing.entitlements (
  user_id uuid primary key,
  subscription_id text not null,
  plan_id text not null,
  status text not null check (status in ('active', 'past_due')),
  current_period_end timestamptz,
  updated_at timestamptz not null default now()
);

create or replace function public.current_user_plan() returns text
  language sql stable security definer
  set search_path = pg_catalog, pg_temp
  as $$ select e.plan_id from svc_billing.entitlements e
        where e.user_id = public.current_user_id() and e.status in ('active', 'past_due') $$;
revoke all on function public.current_user_plan() from public;
grant execute on function public.current_user_plan() to svc_anon, svc_user, svc_service;

create or replace function public.current_user_has_plan(plan_ids text[]) returns boolean
  language sql stable
  as $$ select coalesce(public.current_user_plan() = any (plan_ids), false) $$;
revoke all on function public.current_user_has_plan(text[]) from public;
grant execute on function public.current_user_has_plan(text[]) to svc_anon, svc_user, svc_service;

-- Added only when missing: even ADD COLUMN IF NOT EXISTS takes the table's exclusive lock, and every catalog read joins it.
do $$ begin
  if not exists (select 1 from pg_attribute
                 where attrelid = 'svc_meta.table_access'::regclass and attname = 'plans' and not attisdropped) then
    alter table svc_meta.table_access add column plans text[];
  end if;
end $$;
