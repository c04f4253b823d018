// retire_principle: expires an active principle.
import { z } from 'zod';
import { sql } from 'kysely';
import { errors } from '../../core/errors.ts';
import type { Capability } from '../types.ts';
import { RefId, Text } from './shared.ts';

export const retirePrinciple: Capability<{ principle_id: string; reason: string }> = {
  name: 'retire_principle',
  payload: z.object({ principle_id: RefId, reason: Text(2000) }),
  policy: 'approval_required',
  reversible: false,
  sideEffecting: false,
  async execute(ctx, p) {
    const { rows } = await sql`update substrate_principles set status = 'expired', updated_at = now()
      where id = ${p.principle_id} and user_id = ${ctx.actor.userId} and status = 'active' returning id`.execute(ctx.tx);
    if (!rows[0]) throw errors.notFound(`Active principle '${p.principle_id}'`, 'List the principles; only an active one can be retired.');
    return { result: { principle_id: p.principle_id, status: 'expired' } };
  },
};
