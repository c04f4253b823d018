// patch_entity: an RFC 7396 merge patch of an entity's attrs, with an optimistic lock on updated_at.
import { z } from 'zod';
import { AppError } from '../../core/errors.ts';
import { requireEntity } from '../entities.ts';
import type { Capability } from '../types.ts';
import { Attrs, DisplayName, Email, EntityId, atLeastOne, mergePatch, revertEntity, snapshot, writeFields, type EntityUndo } from './entity-writes.ts';

export const patchEntity: Capability<{
  id: string;
  display_name?: string | undefined;
  primary_email?: string | null | undefined;
  attrs_patch?: Record<string, unknown> | undefined;
  if_updated_at?: string | undefined;
}> = {
  name: 'patch_entity',
  payload: z
    .object({
      id: EntityId,
      display_name: DisplayName.optional(),
      primary_email: Email.nullable().optional(),
      attrs_patch: Attrs.optional(),
      if_updated_at: z.iso.datetime({ offset: true }).optional(),
    })
    .refine(atLeastOne(['display_name', 'primary_email', 'attrs_patch']), { message: 'send at least one of display_name, primary_email, attrs_patch' }),
  policy: 'auto',
  reversible: true,
  sideEffecting: false,
  async execute(ctx, p) {
    const row = await requireEntity(ctx.tx, ctx.actor.userId, p.id, true);
    if (p.if_updated_at !== undefined && Date.parse(p.if_updated_at) !== row.updated_at.getTime()) {
      const current = row.updated_at.toISOString();
      throw new AppError(
        409,
        'STALE_ENTITY',
        `Entity '${row.id}' was changed since you read it: its updated_at is ${current}, your if_updated_at is ${p.if_updated_at}. Nothing was written.`,
        'Read the entity again (GET /v1/me/substrate/entities/{entity_id}), reapply your change to what it holds now, and send its current updated_at as if_updated_at.',
        { entity_id: row.id, updated_at: current, if_updated_at: p.if_updated_at },
      );
    }
    const attrs = p.attrs_patch === undefined ? undefined : (mergePatch(row.attrs, p.attrs_patch) as Record<string, unknown>);
    const next = await writeFields(ctx.tx, row, { display_name: p.display_name, primary_email: p.primary_email, attrs });
    return { result: { entity_id: row.id, updated_at: next.updated_at.toISOString() }, undo: { op: 'restore', row: snapshot(row) } satisfies EntityUndo };
  },
  revert: revertEntity,
};
