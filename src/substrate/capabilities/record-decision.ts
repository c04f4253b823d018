// record_decision: a decision the user made, with its kind and rationale.
import { z } from 'zod';
import { sql } from 'kysely';
import { newId } from '../ids.ts';
import type { Capability } from '../types.ts';
import { requireArtifactRef } from '../artifacts.ts';
import { DecisionKind, RefId, Salience, Text, deleteRow } from './shared.ts';

export const recordDecision: Capability<{
  title: string;
  kind: z.infer<typeof DecisionKind>;
  rationale?: string | undefined;
  salience: z.infer<typeof Salience>;
  source_artifact_id?: string | undefined;
}> = {
  name: 'record_decision',
  payload: z.object({ title: Text(500), kind: DecisionKind, rationale: Text(20_000).optional(), salience: Salience.default('normal'), source_artifact_id: RefId.optional() }),
  policy: 'auto',
  reversible: true,
  sideEffecting: false,
  async execute(ctx, p) {
    await requireArtifactRef(ctx.tx, ctx.actor.userId, p.source_artifact_id);
    const id = newId('dec');
    await sql`insert into substrate_decisions (id, user_id, title, kind, rationale, salience, source_artifact_id)
      values (${id}, ${ctx.actor.userId}, ${p.title}, ${p.kind}, ${p.rationale ?? null}, ${p.salience}, ${p.source_artifact_id ?? null})`.execute(ctx.tx);
    return { result: { decision_id: id }, undo: { table: 'substrate_decisions', id } };
  },
  revert: deleteRow,
};
