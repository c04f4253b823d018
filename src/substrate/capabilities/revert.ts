// Undoing executed actions: one (revert_action) or many with per-action failures collected (bulk_revert_actions).
import { z } from 'zod';
import { sql } from 'kysely';
import { AppError } from '../../core/errors.ts';
import type { Capability } from '../types.ts';

const ActionId = z.string().regex(/^act_[a-z2-7]{20}$/, 'an action id is act_ followed by 20 characters');

export const revertAction: Capability<{ action_id: string }> = {
  name: 'revert_action',
  payload: z.object({ action_id: ActionId }),
  policy: 'auto',
  reversible: false,
  sideEffecting: false,
  async execute(ctx, p) {
    await ctx.revert(p.action_id);
    return { result: { reverted: p.action_id } };
  },
};

export const bulkRevertActions: Capability<{ action_ids: string[]; reason: string }> = {
  name: 'bulk_revert_actions',
  payload: z.object({ action_ids: z.array(ActionId).min(1).max(200), reason: z.string().trim().min(1).max(2000) }),
  policy: 'approval_required',
  reversible: false,
  sideEffecting: false,
  async execute(ctx, p) {
    const reverted: string[] = [];
    const failed: { action_id: string; code: string; message: string }[] = [];
    for (const id of new Set(p.action_ids)) {
      // Each revert in its own savepoint: one that fails is undone alone, the others and the ledger row stay.
      await sql`savepoint bulk_revert`.execute(ctx.tx);
      try {
        await ctx.revert(id);
        await sql`release savepoint bulk_revert`.execute(ctx.tx);
        reverted.push(id);
      } catch (err) {
        await sql`rollback to savepoint bulk_revert`.execute(ctx.tx);
        if (!(err instanceof AppError)) throw err;
        failed.push({ action_id: id, code: err.code, message: err.message });
      }
    }
    return { result: { reverted, failed } };
  },
};
