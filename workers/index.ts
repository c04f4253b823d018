import type { JobHelpers, Task, TaskList } from 'graphile-worker';
import type { AppPurger } from '../src/apps/types.ts';
import type { Services } from '../src/services.ts';
import { crontabOf, type RunnableJob } from '../src/core/jobs.ts';
import { aiUsageMeter } from '../src/ai/jobs.ts';
import { appsDropDatabase, appsPurgeFiles, appsReap } from '../src/apps/jobs.ts';
import { authUserMail, rateLimitsPurge } from '../src/auth/jobs.ts';
import { billingEnforce, billingInvoiceOverage, billingMeasureDatabases, billingNotify, billingPauseIdle } from '../src/billing/jobs.ts';
import { creditsReleaseExpired } from '../src/credits/jobs.ts';
import { frontendBuild } from '../src/frontend/jobs.ts';
import { auditPurge, identityMail, identitySignupMail, oauthPrune, signupRequestsPrune } from '../src/identity/jobs.ts';
import { functionsCronTick, functionsLogsTrim, functionsRunCron } from '../src/functions/jobs.ts';
import { integrationsPrune } from '../src/integrations/jobs.ts';
import { meetingsForward, meetingsLeaveOrphan } from '../src/meetings/jobs.ts';
import { billingEntitlementSync } from '../src/monetization/jobs.ts';
import { peopleEmailExpire } from '../src/people/jobs.ts';
import { ragIngest } from '../src/rag/jobs.ts';
import { storageDeleteObject, storageSettlePending } from '../src/storage/jobs.ts';
import { templatesCloneStep } from '../src/templates/jobs.ts';
import { branchesExpire, branchesMerge } from '../src/branches/jobs.ts';
import { substrateOutboxDeliver, substratePrune, substrateRuleFire, substrateRulesTick, substrateSnapshots } from '../src/substrate/jobs.ts';

/** Tasks reach the same services as tool handlers, plus everything that keeps app data outside the app database. */
export interface WorkerServices extends Services {
  purgers: readonly AppPurger[];
}

/**
 * Every job the worker runs. The element type makes TypeScript check that the worker services satisfy each job's
 * dependencies. The order of the scheduled ones is the crontab's.
 */
export const jobs: readonly RunnableJob<WorkerServices>[] = [
  appsDropDatabase,
  appsReap,
  appsPurgeFiles,
  rateLimitsPurge,
  authUserMail,
  creditsReleaseExpired,
  ragIngest,
  aiUsageMeter,
  frontendBuild,
  storageDeleteObject,
  storageSettlePending,
  functionsCronTick,
  functionsRunCron,
  functionsLogsTrim,
  substrateSnapshots,
  substrateOutboxDeliver,
  substrateRulesTick,
  substrateRuleFire,
  billingEnforce,
  billingPauseIdle,
  billingMeasureDatabases,
  billingInvoiceOverage,
  billingNotify,
  billingEntitlementSync,
  identityMail,
  identitySignupMail,
  auditPurge,
  oauthPrune,
  signupRequestsPrune,
  integrationsPrune,
  substratePrune,
  peopleEmailExpire,
  meetingsForward,
  meetingsLeaveOrphan,
  templatesCloneStep,
  branchesMerge,
  branchesExpire,
];

/** graphile-worker's task for one job: the job's schema parses the stored payload, then its handler runs. */
export function toTask<D>(job: RunnableJob<D>, deps: D): Task {
  return (payload, helpers: JobHelpers) =>
    job.run(payload, {
      deps,
      attempt: { number: helpers.job.attempts, max: helpers.job.max_attempts },
      logger: helpers.logger,
      query: (text, values) => helpers.query(text, values),
    });
}

export function taskList(s: WorkerServices): TaskList {
  return Object.fromEntries(jobs.map((job) => [job.name, toTask(job, s)]));
}

/** Platform crons (graphile-worker crontab syntax; UTC), from each job's schedule. */
export const crontab = crontabOf(jobs);
