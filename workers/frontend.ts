import { z } from 'zod';
import type { Task } from 'graphile-worker';
import type { WorkerServices } from './index.ts';

const BuildPayload = z.object({ deployment_id: z.string().uuid() });

/**
 * Enqueued by frontend_deploy_start in the same transaction that moves the deployment to BUILDING: extracts the
 * zip safely and publishes the site. Safe to run twice (a deployment no longer BUILDING is left alone); the
 * last attempt records ERROR instead of leaving the deployment BUILDING.
 */
export const frontendBuild = (s: WorkerServices): Task => async (payload, helpers) => {
  const { deployment_id } = BuildPayload.parse(payload);
  await s.frontend.build(deployment_id, { finalAttempt: helpers.job.attempts >= helpers.job.max_attempts });
};
