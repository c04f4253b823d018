// The entitlement side of an app database: what each end user's subscription entitles them to, copied from the
// control database's app_subscriptions by the billing_entitlement_sync job, and the functions that row-level
// security policies (the schema definition's `plans` option) call to ask about the end user of the transaction.
// The table and functions are made by the app-database migration db/app-migrations/0003_entitlements.sql.

/**
 * Subscription statuses that entitle an end user to their plan: past_due keeps access while Stripe retries. 0003 spells
 * the same list in svc_billing.entitlements' check and in public.current_user_plan(): a change needs a migration too.
 */
export const ENTITLED_STATUSES = ['active', 'past_due'] as const;

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
