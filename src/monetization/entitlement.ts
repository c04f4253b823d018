// End users' entitlements in their app's database. The control database's app_subscriptions is the truth (moved by
// Connect webhooks and end-user calls); whenever a row changes, billing_entitlement_sync copies what that user is
// entitled to into the app database (svc_billing.entitlements), where public.current_user_plan() lets row-level
// security gate "premium rows" (the schema definition's `plans` option) without a round trip to the control database.
import type { Kysely } from 'kysely';
import type pg from 'pg';
import type { AppDatabases } from '../apps/app-databases.ts';
import { AppError, errors } from '../core/errors.ts';
import type { SchemaDefinitionInput } from '../schema/definition.ts';
import type { Catalog } from './catalog.ts';
import { DELETE_ENTITLEMENT_SQL, ENTITLED_STATUSES, ENTITLING_SUBSCRIPTION_SQL, UPSERT_ENTITLEMENT_SQL } from './entitlement.sql.ts';
import { enqueue } from '../core/jobs.ts';
import { billingEntitlementSync } from './jobs.ts';
import type { ControlDatabase } from '../db/types.ts';

/**
 * Enqueues the sync of one end user's entitlement in the caller's transaction (the outbox: no change is committed
 * without its sync). The job_key per app and user folds a burst of events into one run.
 */
export async function enqueueEntitlementSync(tx: Kysely<ControlDatabase>, appId: string, userId: string): Promise<void> {
  await enqueue(tx, billingEntitlementSync, { app_id: appId, user_id: userId }, { jobKey: `entitlement:${appId}:${userId}` });
}

/** The fields of a subscription view (billing_subscription_get) that say what it entitles its user to. */
export interface SubscriptionLike {
  planId: string;
  status: string;
}

/** The plan a subscription entitles its user to: the rule public.current_user_plan() applies in the app database. */
export function entitledPlan(subscription: SubscriptionLike | null): string | null {
  return subscription && (ENTITLED_STATUSES as readonly string[]).includes(subscription.status) ? subscription.planId : null;
}

/**
 * What a schema apply that gates tables by plan needs first: every named plan is one of the app's. (The functions the
 * gate calls are in every app database: app migration 0003 made them before the pool's first connection.) Retired
 * plans count, since their subscribers keep access; an unknown id, a typo, would close the table to every end user.
 */
export async function preparePlanGates(catalog: Pick<Catalog, 'plan'>, appId: string, input: SchemaDefinitionInput): Promise<void> {
  const checked = new Set<string>();
  for (const [table, spec] of Object.entries(input.tables)) {
    for (const planId of spec.plans ?? []) {
      if (checked.has(planId)) continue;
      if (!(await isPlanOfApp(catalog, appId, planId))) {
        throw errors.validation(
          `Table '${table}': plans names '${planId}', which is not a plan of this app. Use the ids billing_plans_list returns (billing_plans_create makes one).`,
        );
      }
      checked.add(planId);
    }
  }
}

async function isPlanOfApp(catalog: Pick<Catalog, 'plan'>, appId: string, planId: string): Promise<boolean> {
  try {
    await catalog.plan(appId, planId, { activeOnly: false });
    return true;
  } catch (err) {
    if (err instanceof AppError && err.status === 404) return false;
    throw err;
  }
}

/** A query on the control database: the worker's own (graphile-worker's helpers.query) or any pool's. */
export type ControlQuery = (text: string, values?: unknown[]) => Promise<{ rows: unknown[] }>;

export interface EntitlementSyncDeps {
  databases: AppDatabases;
  control: ControlQuery;
}

export type EntitlementSyncOutcome = 'entitled' | 'not_entitled' | 'app_gone';

interface EntitlingSubscription {
  id: string;
  plan_id: string;
  status: (typeof ENTITLED_STATUSES)[number];
  current_period_end: Date | null;
}

/**
 * Makes the app database's entitlement row of one end user match the control database: the newest subscription that
 * entitles them (active or past_due) is upserted, none deletes the row. Running it twice, or again after a failure,
 * writes the same row. An app deleted before or while it runs ends it quietly ('app_gone').
 */
export async function syncEntitlement(deps: EntitlementSyncDeps, appId: string, userId: string): Promise<EntitlementSyncOutcome> {
  if (!(await appExists(deps.control, appId))) return 'app_gone';
  try {
    return await deps.databases.sql(appId).transaction((client) => writeEntitlement(client, deps.control, appId, userId));
  } catch (err) {
    // Deleting an app drops its database (with force): connections fail, and there is nothing left to sync.
    if (!(await appExists(deps.control, appId))) return 'app_gone';
    throw err;
  }
}

async function writeEntitlement(client: pg.PoolClient, control: ControlQuery, appId: string, userId: string): Promise<EntitlementSyncOutcome> {
  // Syncs of one user run one at a time and read the control database under the lock, so a run that read an older
  // state can never commit after (and over) a run that read a newer one.
  await client.query(`select pg_advisory_xact_lock(hashtext('svc_billing entitlement'), hashtext($1))`, [userId]);
  const subscription = await entitlingSubscription(control, appId, userId);
  if (!subscription) {
    await client.query(DELETE_ENTITLEMENT_SQL, [userId]);
    return 'not_entitled';
  }
  await client.query(UPSERT_ENTITLEMENT_SQL, [userId, subscription.id, subscription.plan_id, subscription.status, subscription.current_period_end]);
  return 'entitled';
}

async function entitlingSubscription(control: ControlQuery, appId: string, userId: string): Promise<EntitlingSubscription | undefined> {
  const { rows } = await control(ENTITLING_SUBSCRIPTION_SQL, [appId, userId, ENTITLED_STATUSES]);
  return rows[0] as EntitlingSubscription | undefined;
}

async function appExists(control: ControlQuery, appId: string): Promise<boolean> {
  const { rows } = await control(`select 1 from apps where id = $1 and status = 'ready'`, [appId]);
  return rows.length > 0;
}
