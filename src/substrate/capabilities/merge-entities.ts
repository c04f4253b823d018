// merge_entities: merges a loser entity into a winner (capability rule 4).
import { z } from 'zod';
import { sql } from 'kysely';
import { AppError } from '../../core/errors.ts';
import { requireEntity } from '../entities.ts';
import type { Capability } from '../types.ts';
import { BUMP, EntityId } from './entity-writes.ts';

/**
 * Capability rule 4: the loser is hard-deleted and an alias loser -> winner recorded (aliases that pointed at the
 * loser now point at the winner), so the loser's id keeps answering with the winner. References held elsewhere
 * (commitments' from_entity, ...) are not rewritten. The winner keeps its fields and gains the loser's canonical
 * keys, attrs keys, primary_email and linked ids that it lacks.
 */
export const mergeEntities: Capability<{ loser_id: string; winner_id: string; reason: string }> = {
  name: 'merge_entities',
  payload: z
    .object({ loser_id: EntityId, winner_id: EntityId, reason: z.string().trim().min(1).max(2000) })
    .refine((p) => p.loser_id !== p.winner_id, { message: 'loser_id and winner_id must differ', path: ['winner_id'] }),
  policy: 'approval_required',
  reversible: false,
  sideEffecting: false,
  async execute(ctx, p) {
    const user = ctx.actor.userId;
    const loser = await requireEntity(ctx.tx, user, p.loser_id, true);
    const winner = await requireEntity(ctx.tx, user, p.winner_id, true);
    if (loser.id === winner.id) {
      throw new AppError(409, 'CONFLICT', `'${p.loser_id}' and '${p.winner_id}' are already the same entity ('${winner.id}').`, 'Nothing to merge.');
    }
    await sql`
      update substrate_entities set
        canonical_keys = ${JSON.stringify(loser.canonical_keys)}::jsonb || canonical_keys,
        attrs = ${JSON.stringify(loser.attrs)}::jsonb || attrs,
        primary_email = coalesce(primary_email, ${loser.primary_email}),
        linked_app_user_id = coalesce(linked_app_user_id, ${loser.linked_app_user_id}::uuid),
        linked_app_id = coalesce(linked_app_id, ${loser.linked_app_id}),
        updated_at = ${BUMP}
      where id = ${winner.id}`.execute(ctx.tx);
    await sql`update substrate_entity_aliases set entity_id = ${winner.id} where user_id = ${user} and entity_id = ${loser.id}`.execute(ctx.tx);
    await sql`insert into substrate_entity_aliases (user_id, alias_id, entity_id, action_id) values (${user}, ${loser.id}, ${winner.id}, ${ctx.actionId})
      on conflict (user_id, alias_id) do update set entity_id = excluded.entity_id, action_id = excluded.action_id`.execute(ctx.tx);
    await sql`delete from substrate_entities where id = ${loser.id} and user_id = ${user}`.execute(ctx.tx);
    return { result: { winner_id: winner.id, loser_id: loser.id } };
  },
};
