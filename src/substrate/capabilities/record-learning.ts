// record_learning: something learned, with the resolution taken and the decision it relates to.
import { z } from 'zod';
import { sql } from 'kysely';
import { newId } from '../ids.ts';
import type { Capability } from '../types.ts';
import { requireArtifactRef } from '../artifacts.ts';
import { RefId, Text, deleteRow } from './shared.ts';

export const recordLearning: Capability<{
  title: string;
  description: string;
  resolution_taken?: string | undefined;
  related_decision_id?: string | undefined;
  source_artifact_id?: string | undefined;
}> = {
  name: 'record_learning',
  payload: z.object({
    title: Text(500),
    description: Text(20_000),
    resolution_taken: Text(20_000).optional(),
    related_decision_id: RefId.optional(),
    source_artifact_id: RefId.optional(),
  }),
  policy: 'auto',
  reversible: true,
  sideEffecting: false,
  async execute(ctx, p) {
    await requireArtifactRef(ctx.tx, ctx.actor.userId, p.source_artifact_id);
    const id = newId('lrn');
    await sql`insert into substrate_learnings (id, user_id, title, description, resolution_taken, related_decision_id, source_artifact_id)
      values (${id}, ${ctx.actor.userId}, ${p.title}, ${p.description}, ${p.resolution_taken ?? null}, ${p.related_decision_id ?? null},
              ${p.source_artifact_id ?? null})`.execute(ctx.tx);
    return { result: { learning_id: id }, undo: { table: 'substrate_learnings', id } };
  },
  revert: deleteRow,
};
