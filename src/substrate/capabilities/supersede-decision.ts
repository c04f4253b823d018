// supersede_decision: replaces an active decision with a new one that supersedes it.
import { z } from 'zod';
import { sql } from 'kysely';
import { errors } from '../../core/errors.ts';
import { newId } from '../ids.ts';
import type { Capability } from '../types.ts';
import { DecisionKind, RefId, Text } from './shared.ts';

export const supersedeDecision: Capability<{ old_decision_id: string; new_title: string; kind: z.infer<typeof DecisionKind>; new_rationale?: string | undefined }> = {
  name: 'supersede_decision',
  payload: z.object({ old_decision_id: RefId, new_title: Text(500), kind: DecisionKind, new_rationale: Text(20_000).optional() }),
  policy: 'approval_required',
  reversible: false,
  sideEffecting: false,
  async execute(ctx, p) {
    const old = await sql<{ salience: string }>`
      update substrate_decisions set status = 'superseded', updated_at = now()
      where id = ${p.old_decision_id} and user_id = ${ctx.actor.userId} and status = 'active' returning salience`.execute(ctx.tx);
    if (!old.rows[0]) throw errors.notFound(`Active decision '${p.old_decision_id}'`, 'Search memory for the decision to supersede (it must be active).');
    const id = newId('dec');
    await sql`insert into substrate_decisions (id, user_id, title, kind, rationale, salience, supersedes)
      values (${id}, ${ctx.actor.userId}, ${p.new_title}, ${p.kind}, ${p.new_rationale ?? null}, ${old.rows[0].salience}, ${p.old_decision_id})`.execute(ctx.tx);
    return { result: { decision_id: id, superseded: p.old_decision_id } };
  },
};
