import type { TaskList } from 'graphile-worker';
import type { AppPurger } from '../src/apps/types.ts';
import type { Services } from '../src/services.ts';
import { appsDropDatabase, appsPurgeFiles, appsReap } from './apps.ts';
import { rateLimitsPurge } from './rate-limits.ts';
import { creditsReleaseExpired } from './credits.ts';
import { ragIngest } from './rag.ts';
import { aiUsageMeter } from './ai.ts';
import { frontendBuild } from './frontend.ts';
import { storageDeleteObject, storageSettlePending } from './storage.ts';
import { functionsCronTick, functionsLogsTrim, functionsRunCron } from './functions.ts';
import { substrateOutboxDeliver, substratePrune, substrateSnapshots } from './substrate.ts';
import { substrateRuleFire, substrateRulesTick } from './rules.ts';
import { billingEnforce, billingInvoiceOverage, billingMeasureDatabases, billingNotify, billingPauseIdle } from './billing.ts';
import { billingEntitlementSync } from './monetization.ts';
import { integrationsPrune } from './integrations.ts';
import { peopleEmailExpire } from './people.ts';
import { meetingsForward, meetingsLeaveOrphan } from './meetings.ts';

/** Tasks reach the same services as tool handlers, plus everything that keeps app data outside the app database. */
export interface WorkerServices extends Services {
  purgers: readonly AppPurger[];
}

export function taskList(s: WorkerServices): TaskList {
  return {
    apps_drop_database: appsDropDatabase(s),
    apps_reap: appsReap(s),
    apps_purge_files: appsPurgeFiles(s),
    rate_limits_purge: rateLimitsPurge,
    credits_release_expired: creditsReleaseExpired,
    rag_ingest: ragIngest(s),
    ai_usage_meter: aiUsageMeter,
    frontend_build: frontendBuild(s),
    storage_delete_object: storageDeleteObject(s),
    storage_settle_pending: storageSettlePending(s),
    functions_cron_tick: functionsCronTick(s),
    functions_run_cron: functionsRunCron(s),
    functions_logs_trim: functionsLogsTrim(s),
    substrate_snapshots: substrateSnapshots(s),
    substrate_prune: substratePrune,
    substrate_outbox_deliver: substrateOutboxDeliver(s),
    substrate_rules_tick: substrateRulesTick(s),
    substrate_rule_fire: substrateRuleFire(s),
    billing_enforce: billingEnforce(s),
    billing_invoice_overage: billingInvoiceOverage(s),
    billing_pause_idle: billingPauseIdle(s),
    billing_measure_databases: billingMeasureDatabases(s),
    billing_notify: billingNotify(s),
    billing_entitlement_sync: billingEntitlementSync(s),
    integrations_prune: integrationsPrune,
    people_email_expire: peopleEmailExpire(s),
    meetings_forward: meetingsForward(s),
    meetings_leave_orphan: meetingsLeaveOrphan(s),
  };
}

/** Platform crons (graphile-worker crontab syntax; UTC). */
export const crontab = ['*/10 * * * * apps_reap ?max=1', '*/5 * * * * rate_limits_purge ?max=1', '* * * * * credits_release_expired ?max=1', '* * * * * ai_usage_meter ?max=1', '*/5 * * * * storage_settle_pending ?max=1', '* * * * * functions_cron_tick ?max=1', '*/5 * * * * functions_logs_trim ?max=1', '5 0 * * * substrate_snapshots ?fill=1d&max=1', '* * * * * substrate_rules_tick ?max=1', '* * * * * billing_enforce ?max=1', '17 * * * * billing_pause_idle ?max=1', '*/15 * * * * billing_measure_databases ?max=1', '23 * * * * billing_invoice_overage ?max=1', '41 3 * * * integrations_prune ?max=1', '53 3 * * * substrate_prune ?max=1'].join('\n');
