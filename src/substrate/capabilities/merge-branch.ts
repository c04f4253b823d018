// merge_branch: a branch's merge into a protected app, proposed by the platform when an agent asks for it
// (src/branches/service.ts) and executed by a person's approval, which queues the merge job in the approval's
// transaction. Only the platform proposes it (platformOnly): a merge exists before its proposal, and approving binds
// to that merge, waiting, of the approver's account, and to an approver with the developer role in it.
import { z } from 'zod';
import { sql } from 'kysely';
import { AppError } from '../../core/errors.ts';
import { enqueue } from '../../core/jobs.ts';
import { branchesMerge } from '../../branches/jobs.ts';
import type { Capability } from '../types.ts';

export interface MergeBranchPayload {
  merge_id: string;
  app_id: string;
  branch_app_id: string;
  changes: string[];
  statements: string[];
  destructive: string[];
  notes: string[];
  /** The functions deployed, with the code the merge deploys. */
  functions: Array<{ name: string; code: string; sha256: string }>;
  deleted_functions: string[];
  /** The content digest of the site the merge makes live (src/branches/state.ts), or null. */
  site_digest: string | null;
  /** The AI settings production takes, or null. */
  ai: Record<string, unknown> | null;
}

export const mergeBranch: Capability<MergeBranchPayload> = {
  name: 'merge_branch',
  payload: z.object({
    merge_id: z.string().uuid(),
    app_id: z.string().max(16),
    branch_app_id: z.string().max(16),
    changes: z.array(z.string().max(500)).max(2000),
    statements: z.array(z.string().max(20_000)).max(2000),
    destructive: z.array(z.string().max(20_000)).max(2000),
    notes: z.array(z.string().max(1000)).max(200),
    functions: z.array(z.object({ name: z.string().max(128), code: z.string().max(2_000_000), sha256: z.string().length(64) })).max(200),
    deleted_functions: z.array(z.string().max(128)).max(200),
    site_digest: z.string().length(64).nullable(),
    ai: z.record(z.string(), z.unknown()).nullable(),
  }),
  policy: 'approval_required',
  reversible: false,
  sideEffecting: true,
  platformOnly: true,
  async execute(ctx, p) {
    const role = ctx.actor.personId
      ? (
          await sql<{ role: string }>`select m.role from account_members m join branch_merges b on b.account_id = m.account_id
            where b.id = ${p.merge_id} and m.person_id = ${ctx.actor.personId}`.execute(ctx.tx)
        ).rows[0]?.role
      : undefined;
    if (role === undefined || role === 'viewer') {
      throw new AppError(403, 'FORBIDDEN', 'Approving a merge takes a person with the developer role in the app\'s account.', 'Ask a developer, admin or owner of the account to approve it.');
    }
    const queued = await sql<{ id: string }>`update branch_merges set status = 'queued' where id = ${p.merge_id} and status = 'proposed'
      and account_id = ${ctx.actor.accountId} returning id`.execute(ctx.tx);
    if (!queued.rows[0]) throw new AppError(409, 'MERGE_NOT_WAITING', `Merge '${p.merge_id}' is not waiting for approval.`, 'Read it with branches_list; propose the merge again with branches_merge.');
    await enqueue(ctx.tx, branchesMerge, { merge_id: p.merge_id }, { jobKey: `merge:${p.merge_id}` });
    return { result: { merge_id: p.merge_id, status: 'queued' } };
  },
};
