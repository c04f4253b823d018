// record_commitment: something promised from one entity to another, with its status and due date.
import { z } from 'zod';
import { sql } from 'kysely';
import { newId } from '../ids.ts';
import type { Capability } from '../types.ts';
import { requireArtifactRef } from '../artifacts.ts';
import { RefId, Text, deleteRow } from './shared.ts';

const CommitmentStatus = z.enum(['proposed', 'tentative', 'confirmed', 'fulfilled', 'expired', 'broken']);

export const recordCommitment: Capability<{
  description: string;
  status: z.infer<typeof CommitmentStatus>;
  from_entity?: string | undefined;
  to_entity?: string | undefined;
  amount?: number | undefined;
  unit?: string | undefined;
  due_at?: string | undefined;
  source_artifact_id?: string | undefined;
  attrs?: Record<string, unknown> | undefined;
}> = {
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
  async execute(ctx, p) {
    await requireArtifactRef(ctx.tx, ctx.actor.userId, p.source_artifact_id);
    const id = newId('com');
    await sql`insert into substrate_commitments (id, user_id, description, status, from_entity, to_entity, amount, unit, due_at, source_artifact_id, attrs)
      values (${id}, ${ctx.actor.userId}, ${p.description}, ${p.status}, ${p.from_entity ?? null}, ${p.to_entity ?? null}, ${p.amount ?? null},
              ${p.unit ?? null}, ${p.due_at ?? null}, ${p.source_artifact_id ?? null}, ${JSON.stringify(p.attrs ?? {})})`.execute(ctx.tx);
    return { result: { commitment_id: id }, undo: { table: 'substrate_commitments', id } };
  },
  revert: deleteRow,
};
