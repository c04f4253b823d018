// record_commitment: something promised from one entity to another, with its status and due date.
import { z } from 'zod';
import { sql } from 'kysely';
import { newId } from '../ids.ts';
import type { Capability, PlannedExecution } from '../types.ts';
import { requireArtifactRef } from '../artifacts.ts';
import { RefId, Text, deleteRow, runPlanned } from './shared.ts';

const CommitmentStatus = z.enum(['proposed', 'tentative', 'confirmed', 'fulfilled', 'expired', 'broken']);

interface CommitmentPayload {
  description: string;
  status: z.infer<typeof CommitmentStatus>;
  from_entity?: string | undefined;
  to_entity?: string | undefined;
  amount?: number | undefined;
  unit?: string | undefined;
  due_at?: string | undefined;
  source_artifact_id?: string | undefined;
  attrs?: Record<string, unknown> | undefined;
}

/** The commitment's row, planned: its insert, the result and the undo. */
function commitmentRow(userId: string, p: CommitmentPayload): PlannedExecution {
  const id = newId('com');
  return {
    write: sql`insert into substrate_commitments (id, user_id, description, status, from_entity, to_entity, amount, unit, due_at, source_artifact_id, attrs)
      values (${id}, ${userId}, ${p.description}, ${p.status}, ${p.from_entity ?? null}, ${p.to_entity ?? null}, ${p.amount ?? null},
              ${p.unit ?? null}, ${p.due_at ?? null}, ${p.source_artifact_id ?? null}, ${JSON.stringify(p.attrs ?? {})})`,
    result: { commitment_id: id },
    undo: { table: 'substrate_commitments', id },
  };
}

export const recordCommitment: Capability<CommitmentPayload> = {
  name: 'record_commitment',
  payload: z.object({
    description: Text(20_000),
    status: CommitmentStatus,
    from_entity: RefId.optional(),
    to_entity: RefId.optional(),
    amount: z.number().finite().optional(),
    unit: Text(50).optional(),
    due_at: z.iso.datetime({ offset: true }).optional(),
    source_artifact_id: RefId.optional(),
    attrs: z.record(z.string(), z.unknown()).optional(),
  }),
  policy: 'auto',
  reversible: true,
  sideEffecting: false,
  // A source artifact is checked (and locked) by a read first; without one the row is all there is.
  plan: (actor, p) => (p.source_artifact_id === undefined ? commitmentRow(actor.userId, p) : undefined),
  async execute(ctx, p) {
    await requireArtifactRef(ctx.tx, ctx.actor.userId, p.source_artifact_id);
    return runPlanned(ctx, commitmentRow(ctx.actor.userId, p));
  },
  revert: deleteRow,
};
