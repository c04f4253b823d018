import type { Task } from 'graphile-worker';
import { z } from 'zod';
import type { Services } from '../src/services.ts';

/** Cron, every minute: soft locks and their lifting, and grace periods that ran out (src/billing/status.ts). */
export const billingEnforce =
  (s: Services): Task =>
  async () => {
    await s.billing.enforce();
  };

/** Cron, hourly: pauses the free plan's apps idle for SVC_APP_IDLE_PAUSE_DAYS. */
export const billingPauseIdle =
  (s: Services): Task =>
  async () => {
    await s.billing.pauseIdle();
  };

/** Cron, every 15 minutes: the database_bytes level of every app. */
export const billingMeasureDatabases =
  (s: Services): Task =>
  async () => {
    await s.billing.measureDatabases();
  };

/** Cron, hourly: the closed period's pro overage, as pending Stripe invoice items (src/billing/overage.ts). */
export const billingInvoiceOverage =
  (s: Services): Task =>
  async () => {
    await s.billing.invoiceOverage();
  };

const NotifyPayload = z.object({ id: z.number().int().positive() });

/** Sends one billing e-mail (queued with the change that caused it); retried with backoff when SMTP fails. */
export const billingNotify =
  (s: Services): Task =>
  async (payload) => {
    await s.billing.deliverNotification(NotifyPayload.parse(payload).id);
  };
