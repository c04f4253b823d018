// bulk_revert_actions: undoes many executed actions, with per-action failures collected.
import { z } from 'zod';
import { sql } from 'kysely';
import { AppError } from '../../core/errors.ts';
import type { Capability } from '../types.ts';
import { ActionId } from './shared.ts';

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
