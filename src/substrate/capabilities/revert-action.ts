// revert_action: undoes one executed action.
import { z } from 'zod';
import type { Capability } from '../types.ts';
import { ActionId } from './shared.ts';

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
