// upsert_entity: creates an entity or updates the one it dedupes to (capability rule 1).
import { z } from 'zod';
import { sql } from 'kysely';
import { newId } from '../ids.ts';
import { findEntity, type EntityRow } from '../entities.ts';
import type { Capability } from '../types.ts';
import { Attrs, BUMP, CanonicalKeys, DisplayName, Email, EntityId, EntityType, revertEntity, snapshot, type EntityUndo } from './entity-writes.ts';

type UpsertPayload = {
  type: z.infer<typeof EntityType>;
  display_name: string;
  id?: string | undefined;
  primary_email?: string | undefined;
  canonical_keys?: Record<string, string | number | boolean> | undefined;
  linked_app_user_id?: string | undefined;
  linked_app_id?: string | undefined;
  attrs?: Record<string, unknown> | undefined;
};

/**
 * Capability rule 1. Dedupe in order: `id` (an alias resolves to its winner), then the oldest entity of the same type
 * whose canonical_keys contain every pair sent (`@>`), then the oldest of the same type with the same primary_email
 * (case-insensitive); otherwise insert (a new id; a sent id that matches nothing is not reused), copying
 * primary_email into canonical_keys.email unless that key was sent. A match is updated: type and display_name set,
 * primary_email and the linked ids set when sent, canonical_keys and attrs merged key by key (sent keys win).
 * Upserts of one user and type are serialized, so two concurrent upserts of a new entity make one row.
 */
export const upsertEntity: Capability<UpsertPayload> = {
  name: 'upsert_entity',
  payload: z.object({
    type: EntityType,
    display_name: DisplayName,
    id: EntityId.optional(),
    primary_email: Email.optional(),
    canonical_keys: CanonicalKeys.optional(),
    linked_app_user_id: z.uuid().optional(),
    linked_app_id: z.string().min(1).max(100).optional(),
    attrs: Attrs.optional(),
  }),
  policy: 'auto',
  reversible: true,
  sideEffecting: false,
  async execute(ctx, p) {
    const user = ctx.actor.userId;
    await sql`select pg_advisory_xact_lock(hashtext(${`substrate_entity:${user}:${p.type}`}))`.execute(ctx.tx);
    const keys = p.canonical_keys ?? {};
    let row = p.id ? await findEntity(ctx.tx, user, p.id, true) : undefined;
    if (!row && Object.keys(keys).length > 0) {
      row = (
        await sql<EntityRow>`select * from substrate_entities where user_id = ${user} and type = ${p.type} and canonical_keys @> ${JSON.stringify(keys)}::jsonb
          order by created_at, id limit 1 for update`.execute(ctx.tx)
      ).rows[0];
    }
    if (!row && p.primary_email) {
      row = (
        await sql<EntityRow>`select * from substrate_entities where user_id = ${user} and type = ${p.type} and primary_email is not null
          and lower(primary_email) = lower(${p.primary_email}) order by created_at, id limit 1 for update`.execute(ctx.tx)
      ).rows[0];
    }
    if (!row) {
      const id = newId('ent');
      const stored = p.primary_email && keys.email === undefined ? { ...keys, email: p.primary_email } : keys;
      await sql`insert into substrate_entities (id, user_id, type, display_name, primary_email, canonical_keys, attrs, linked_app_user_id, linked_app_id)
        values (${id}, ${user}, ${p.type}, ${p.display_name}, ${p.primary_email ?? null}, ${JSON.stringify(stored)}::jsonb, ${JSON.stringify(p.attrs ?? {})}::jsonb,
                ${p.linked_app_user_id ?? null}, ${p.linked_app_id ?? null})`.execute(ctx.tx);
      return { result: { entity_id: id, was_insert: true }, undo: { op: 'delete', id } satisfies EntityUndo };
    }
    await sql`
      update substrate_entities set type = ${p.type}, display_name = ${p.display_name},
        primary_email = coalesce(${p.primary_email ?? null}, primary_email),
        canonical_keys = canonical_keys || ${JSON.stringify(keys)}::jsonb,
        attrs = attrs || ${JSON.stringify(p.attrs ?? {})}::jsonb,
        linked_app_user_id = coalesce(${p.linked_app_user_id ?? null}::uuid, linked_app_user_id),
        linked_app_id = coalesce(${p.linked_app_id ?? null}, linked_app_id),
        updated_at = ${BUMP}
      where id = ${row.id}`.execute(ctx.tx);
    return { result: { entity_id: row.id, was_insert: false }, undo: { op: 'restore', row: snapshot(row) } satisfies EntityUndo };
  },
  revert: revertEntity,
};
