// The branches area's jobs: a merge applied to production (enqueued by branches_merge, or by the approval of its
// proposal, in the transaction that queues it), and the hourly removal of branches idle past their idle_days.
import { z } from 'zod';
import { cronNow, defineCron, defineJob, type JobContext } from '../core/jobs.ts';

/** Attempts beyond the first cover a worker killed mid-merge: the merge resumes where it stopped (service.ts runMerge). */
/** What the jobs need of the branches service (its type is not imported: the substrate's merge_branch enqueues this job). */
interface MergeRunner {
  runMerge(id: string, attempt: { number: number; max: number }): Promise<void>;
  expireIdle(now: Date): Promise<number>;
}

export const branchesMerge = defineJob({
  name: 'branches_merge',
  payload: z.object({ merge_id: z.string().uuid() }),
  maxAttempts: 5,
  handler: async ({ merge_id }, { deps, attempt }: JobContext<{ branches: MergeRunner }>) => {
    await deps.branches.runMerge(merge_id, attempt);
  },
});

export const branchesExpire = defineCron({
  name: 'branches_expire',
  cron: '17 * * * *',
  handler: async (payload, { deps }: JobContext<{ branches: MergeRunner }>) => {
    await deps.branches.expireIdle(cronNow(payload));
  },
});
