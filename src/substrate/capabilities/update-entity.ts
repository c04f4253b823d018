// update_entity: sets an entity's display_name, primary_email or attrs.
import { z } from 'zod';
import { requireEntity } from '../entities.ts';
import type { Capability } from '../types.ts';
import { Attrs, DisplayName, Email, EntityId, atLeastOne, revertEntity, snapshot, writeFields, type EntityUndo } from './entity-writes.ts';

export const updateEntity: Capability<{ id: string; display_name?: string | undefined; primary_email?: string | null | undefined; attrs?: Record<string, unknown> | undefined }> = {
  name: 'update_entity',
  payload: z
    .object({ id: EntityId, display_name: DisplayName.optional(), primary_email: Email.nullable().optional(), attrs: Attrs.optional() })
    .refine(atLeastOne(['display_name', 'primary_email', 'attrs']), { message: 'send at least one of display_name, primary_email, attrs' }),
  policy: 'auto',
  reversible: true,
  sideEffecting: false,
  async execute(ctx, p) {
    const row = await requireEntity(ctx.tx, ctx.actor.userId, p.id, true);
    const next = await writeFields(ctx.tx, row, p);
    return { result: { entity_id: row.id, updated_at: next.updated_at.toISOString() }, undo: { op: 'restore', row: snapshot(row) } satisfies EntityUndo };
  },
  revert: revertEntity,
};
