// The frontend area's job: the build of a started deployment.
import { z } from 'zod';
import { defineJob, type JobContext } from '../core/jobs.ts';
import type { FrontendService } from './service.ts';

/**
 * Enqueued by frontend_deploy_start in the same transaction that moves the deployment to BUILDING: extracts the
 * zip safely and publishes the site. Safe to run twice (a deployment no longer BUILDING is left alone); the
 * last attempt records ERROR instead of leaving the deployment BUILDING.
 */
export const frontendBuild = defineJob({
  name: 'frontend_build',
  payload: z.object({ deployment_id: z.string().uuid() }),
  maxAttempts: 3,
  handler: async ({ deployment_id }, { deps, attempt }: JobContext<{ frontend: FrontendService }>) => {
    await deps.frontend.build(deployment_id, { finalAttempt: attempt.number >= attempt.max });
  },
});
