// The billing area's jobs: enforcement, idle pauses, measurements and overage invoicing on a schedule, and e-mails.
import { z } from 'zod';
import { defineCron, defineJob, type JobContext } from '../core/jobs.ts';
/** What the jobs call on the billing service, by shape: naming its type would tie this file into the service's imports. */
interface BillingJobs {
  enforce(): Promise<unknown>;
  pauseIdle(): Promise<unknown>;
  measureDatabases(): Promise<unknown>;
  invoiceOverage(): Promise<unknown>;
  deliverNotification(id: number): Promise<unknown>;
}

type Deps = JobContext<{ billing: BillingJobs }>;

/** A billing cron: one service call. */
function billingCron(name: string, cron: string, run: (billing: BillingJobs) => Promise<unknown>) {
  return defineCron({
    name,
    cron,
    handler: async (_payload, { deps }: Deps) => {
      await run(deps.billing);
    },
  });
}

/** Cron, every minute: soft locks and their lifting, and grace periods that ran out (src/billing/status.ts). */
export const billingEnforce = billingCron('billing_enforce', '* * * * *', (b) => b.enforce());

/** Cron, hourly: pauses the free plan's apps idle for SVC_APP_IDLE_PAUSE_DAYS. */
export const billingPauseIdle = billingCron('billing_pause_idle', '17 * * * *', (b) => b.pauseIdle());

/** Cron, every 15 minutes: the database_bytes level of every app. */
export const billingMeasureDatabases = billingCron('billing_measure_databases', '*/15 * * * *', (b) => b.measureDatabases());

/** Cron, hourly: the closed period's pro overage, as pending Stripe invoice items (src/billing/overage.ts). */
export const billingInvoiceOverage = billingCron('billing_invoice_overage', '23 * * * *', (b) => b.invoiceOverage());

/** Sends one billing e-mail (queued with the change that caused it); retried with backoff when SMTP fails. */
export const billingNotify = defineJob({
  name: 'billing_notify',
  payload: z.object({ id: z.number().int().positive() }),
  maxAttempts: 10,
  handler: async ({ id }, { deps }: Deps) => {
    await deps.billing.deliverNotification(id);
  },
});
