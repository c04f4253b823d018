// record_learning: something learned, with the resolution taken and the decision it relates to.
import { z } from 'zod';
import { sql } from 'kysely';
import { newId } from '../ids.ts';
import type { Capability, PlannedExecution } from '../types.ts';
import { requireArtifactRef } from '../artifacts.ts';
import { RefId, Text, deleteRow, runPlanned } from './shared.ts';

interface LearningPayload {
  title: string;
  description: string;
  resolution_taken?: string | undefined;
  related_decision_id?: string | undefined;
  source_artifact_id?: string | undefined;
}

/** The learning's row, planned: its insert, the result and the undo. */
function learningRow(userId: string, p: LearningPayload): PlannedExecution {
  const id = newId('lrn');
  return {
    write: sql`insert into substrate_learnings (id, user_id, title, description, resolution_taken, related_decision_id, source_artifact_id)
      values (${id}, ${userId}, ${p.title}, ${p.description}, ${p.resolution_taken ?? null}, ${p.related_decision_id ?? null},
              ${p.source_artifact_id ?? null})`,
    result: { learning_id: id },
    undo: { table: 'substrate_learnings', id },
  };
}

export const recordLearning: Capability<LearningPayload> = {
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
  // A source artifact is checked (and locked) by a read first; without one the row is all there is.
  plan: (actor, p) => (p.source_artifact_id === undefined ? learningRow(actor.userId, p) : undefined),
  async execute(ctx, p) {
    await requireArtifactRef(ctx.tx, ctx.actor.userId, p.source_artifact_id);
    return runPlanned(ctx, learningRow(ctx.actor.userId, p));
  },
  revert: deleteRow,
};
