// The templates area's job: one step of a clone (src/templates/clones.ts), enqueued by the request and by each step's end.
import { z } from 'zod';
import { defineJob, type JobContext } from '../core/jobs.ts';
import type { TemplatesService } from './service.ts';
import { CLONE_STEPS } from './types.ts';

/** Attempts beyond the first cover a worker killed mid-step (a crashed attempt counts as one) and passing failures. */
export const templatesCloneStep = defineJob({
  name: 'templates_clone_step',
  payload: z.object({ clone_id: z.string().uuid(), step: z.enum(CLONE_STEPS) }),
  maxAttempts: 3,
  handler: async ({ clone_id, step }, { deps, attempt }: JobContext<{ templates: TemplatesService }>) => {
    await deps.templates.clones.runStep(clone_id, step, attempt);
  },
});
