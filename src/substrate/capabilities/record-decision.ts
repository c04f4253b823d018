// record_decision: a decision the user made, with its kind and rationale.
import { z } from 'zod';
import { sql } from 'kysely';
import { newId } from '../ids.ts';
import type { Capability, PlannedExecution } from '../types.ts';
import { requireArtifactRef } from '../artifacts.ts';
import { DecisionKind, RefId, Salience, Text, deleteRow, runPlanned } from './shared.ts';

interface DecisionPayload {
  title: string;
  kind: z.infer<typeof DecisionKind>;
  rationale?: string | undefined;
  salience: z.infer<typeof Salience>;
  source_artifact_id?: string | undefined;
}

/** The decision's row, planned: its insert, the result and the undo. */
function decisionRow(userId: string, p: DecisionPayload): PlannedExecution {
  const id = newId('dec');
  return {
    write: sql`insert into substrate_decisions (id, user_id, title, kind, rationale, salience, source_artifact_id)
      values (${id}, ${userId}, ${p.title}, ${p.kind}, ${p.rationale ?? null}, ${p.salience}, ${p.source_artifact_id ?? null})`,
    result: { decision_id: id },
    undo: { table: 'substrate_decisions', id },
  };
}

export const recordDecision: Capability<DecisionPayload> = {
  name: 'record_decision',
  payload: z.object({ title: Text(500), kind: DecisionKind, rationale: Text(20_000).optional(), salience: Salience.default('normal'), source_artifact_id: RefId.optional() }),
  policy: 'auto',
  reversible: true,
  sideEffecting: false,
  // A source artifact is checked (and locked) by a read first; without one the row is all there is.
  plan: (actor, p) => (p.source_artifact_id === undefined ? decisionRow(actor.userId, p) : undefined),
  async execute(ctx, p) {
    await requireArtifactRef(ctx.tx, ctx.actor.userId, p.source_artifact_id);
    return runPlanned(ctx, decisionRow(ctx.actor.userId, p));
  },
  revert: deleteRow,
};
