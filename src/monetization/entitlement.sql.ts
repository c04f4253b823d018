// The entitlement side of an app database: what each end user's subscription entitles them to, copied from the
// control database's app_subscriptions by the billing_entitlement_sync job, and the functions that row-level
// security policies (the schema definition's `plans` option) call to ask about the end user of the transaction.

/** Subscription statuses that entitle an end user to their plan: past_due keeps access while Stripe retries. */
export const ENTITLED_STATUSES = ['active', 'past_due'] as const;
const ENTITLED_LIST = ENTITLED_STATUSES.map((s) => `'${s}'`).join(', ');

/**
 * Idempotent, so it serves apps created before monetization too; run under a transaction-scoped advisory lock, since
 * concurrent CREATE ... IF NOT EXISTS (or OR REPLACE) can still collide in the catalog.
 *
 * - `svc_billing.entitlements`: one row per entitled end user (status active or past_due); a user without one is
 *   entitled to nothing. Private: the data API reads only `public`.
 * - `public.current_user_plan()`: the plan id of the transaction's end user (public.current_user_id()) while entitled,
 *   else null. security definer: svc_anon and svc_user must not read svc_billing itself.
 * - `public.current_user_has_plan(text[])`: whether that plan is one of the given ids (false, never null).
 * - `svc_meta.table_access.plans`: the `plans` option of each table, beside its access (src/schema/plan.ts); added
 *   only when missing, since ALTER TABLE would lock the table every catalog read joins.
 */
export const ENTITLEMENT_SCHEMA_SQL = `
select pg_advisory_xact_lock(hashtext('svc_billing schema'));
create schema if not exists svc_billing;
revoke all on schema svc_billing from public;
create table if not exists svc_billing.entitlements (
  user_id uuid primary key,
  subscription_id text not null,
  plan_id text not null,
  status text not null check (status in (${ENTITLED_LIST})),
  current_period_end timestamptz,
  updated_at timestamptz not null default now()
);

create or replace function public.current_user_plan() returns text
  language sql stable security definer
  set search_path = pg_catalog, pg_temp
  as $$ select e.plan_id from svc_billing.entitlements e
        where e.user_id = public.current_user_id() and e.status in (${ENTITLED_LIST}) $$;
revoke all on function public.current_user_plan() from public;
grant execute on function public.current_user_plan() to svc_anon, svc_user, svc_service;

create or replace function public.current_user_has_plan(plan_ids text[]) returns boolean
  language sql stable
  as $$ select coalesce(public.current_user_plan() = any (plan_ids), false) $$;
revoke all on function public.current_user_has_plan(text[]) from public;
grant execute on function public.current_user_has_plan(text[]) to svc_anon, svc_user, svc_service;

do $$ begin
  if not exists (select 1 from pg_attribute
                 where attrelid = 'svc_meta.table_access'::regclass and attname = 'plans' and not attisdropped) then
    alter table svc_meta.table_access add column plans text[];
  end if;
end $$;
`;

/** The entitlement of one end user, or none: the upsert and the delete of the sync job. */
export const UPSERT_ENTITLEMENT_SQL = `
insert into svc_billing.entitlements (user_id, subscription_id, plan_id, status, current_period_end, updated_at)
values ($1, $2, $3, $4, $5, now())
on conflict (user_id) do update set subscription_id = excluded.subscription_id, plan_id = excluded.plan_id,
  status = excluded.status, current_period_end = excluded.current_period_end, updated_at = now()`;

export const DELETE_ENTITLEMENT_SQL = `delete from svc_billing.entitlements where user_id = $1`;

/** In the control database: the end user's newest subscription that entitles them, if any. */
export const ENTITLING_SUBSCRIPTION_SQL = `
select id, plan_id, status, current_period_end from app_subscriptions
where app_id = $1 and user_id = $2 and status = any ($3::text[])
order by created_at desc, id desc limit 1`;
