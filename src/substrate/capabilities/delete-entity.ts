// delete_entity: hard-deletes an entity.
import { z } from 'zod';
import { sql } from 'kysely';
import { requireEntity } from '../entities.ts';
import type { Capability } from '../types.ts';
import { EntityId } from './entity-writes.ts';

/** Hard-deletes the entity (an alias id deletes its winner) and the aliases that pointed at it. */
export const deleteEntity: Capability<{ id: string; reason: string }> = {
  name: 'delete_entity',
  payload: z.object({ id: EntityId, reason: z.string().trim().min(1).max(2000) }),
  policy: 'approval_required',
  reversible: false,
  sideEffecting: false,
  async execute(ctx, p) {
    const row = await requireEntity(ctx.tx, ctx.actor.userId, p.id, true);
    await sql`delete from substrate_entities where id = ${row.id} and user_id = ${ctx.actor.userId}`.execute(ctx.tx);
    return { result: { entity_id: row.id, deleted: true } };
  },
};
