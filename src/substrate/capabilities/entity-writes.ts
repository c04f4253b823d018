// Pieces shared by the capabilities that write entities: upsert (with the dedupe order of capability rule 1), update,
// patch (RFC 7396 merge patch with an optimistic lock), merge (loser deleted, alias recorded) and delete.
import { z } from 'zod';
import { sql, type Kysely } from 'kysely';
import { AppError } from '../../core/errors.ts';
import { ENTITY_TYPES, type EntityRow } from '../entities.ts';
import type { CapabilityContext } from '../types.ts';
import type { ControlDatabase } from '../../db/types.ts';

export const EntityType = z.enum(ENTITY_TYPES);
export const EntityId = z.string().regex(/^ent_[a-z2-7]{20}$/, 'an entity id is ent_ followed by 20 characters (a merged-away id still works)');
export const DisplayName = z.string().trim().min(1).max(500);
export const Email = z.email().max(320);
/** Identifiers of the entity elsewhere (`{ email, linkedin, domain, crm_id, ... }`): flat, scalar values. */
export const CanonicalKeys = z
  .record(z.string().min(1).max(100), z.union([z.string().max(1000), z.number().finite(), z.boolean()]))
  .refine((v) => Object.keys(v).length <= 50, { message: 'at most 50 canonical keys' });
export const Attrs = z.record(z.string(), z.unknown());

/** `updated_at` of a write: now at millisecond precision, and always later than before (the lock relies on it). */
export const BUMP = sql`greatest(date_trunc('milliseconds', now()), updated_at + interval '1 millisecond')`;

export type Snapshot = Omit<EntityRow, 'user_id' | 'created_at' | 'updated_at'>;
export type EntityUndo = { op: 'delete'; id: string } | { op: 'restore'; row: Snapshot };

export function snapshot(r: EntityRow): Snapshot {
  const { user_id: _user, created_at: _created, updated_at: _updated, ...kept } = r;
  return kept;
}

/**
 * Undo of an entity write: delete the row an upsert inserted, or put back the fields of the row as it was (its
 * `updated_at` moves forward: a revert is a write too). Refused when the entity is gone (deleted or merged away) or
 * when an inserted entity has since absorbed others in a merge (deleting it would lose them).
 */
export async function revertEntity(ctx: CapabilityContext, undo: EntityUndo): Promise<void> {
  const user = ctx.actor.userId;
  if (undo.op === 'delete') {
    const aliases = await sql<{ n: number }>`select count(*)::int as n from substrate_entity_aliases where user_id = ${user} and entity_id = ${undo.id}`.execute(ctx.tx);
    if (aliases.rows[0]!.n > 0) {
      throw new AppError(
        409,
        'ENTITY_MERGED_INTO',
        `Entity '${undo.id}' has since absorbed other entities in a merge; undoing its creation would delete them too.`,
        'Delete it deliberately with delete_entity (approval) if that is what you want.',
      );
    }
    await sql`delete from substrate_entities where id = ${undo.id} and user_id = ${user}`.execute(ctx.tx);
    return;
  }
  const r = undo.row;
  const { rows } = await sql`
    update substrate_entities set type = ${r.type}, display_name = ${r.display_name}, primary_email = ${r.primary_email},
      canonical_keys = ${JSON.stringify(r.canonical_keys)}::jsonb, attrs = ${JSON.stringify(r.attrs)}::jsonb,
      linked_app_user_id = ${r.linked_app_user_id}, linked_app_id = ${r.linked_app_id}, updated_at = ${BUMP}
    where id = ${r.id} and user_id = ${user} returning id`.execute(ctx.tx);
  if (!rows[0]) {
    throw new AppError(409, 'ENTITY_GONE', `Entity '${r.id}' no longer exists (deleted or merged into another): there is nothing to restore.`, 'Nothing to do; upsert it again if it is needed.');
  }
}

/** The fields set by update and patch; undefined leaves a field as it is, null clears primary_email. */
export async function writeFields(
  tx: Kysely<ControlDatabase>,
  row: EntityRow,
  fields: { display_name?: string | undefined; primary_email?: string | null | undefined; attrs?: Record<string, unknown> | undefined },
): Promise<EntityRow> {
  const { rows } = await sql<EntityRow>`
    update substrate_entities set
      display_name = ${fields.display_name ?? row.display_name},
      primary_email = ${fields.primary_email === undefined ? row.primary_email : fields.primary_email},
      attrs = ${JSON.stringify(fields.attrs ?? row.attrs)}::jsonb,
      updated_at = ${BUMP}
    where id = ${row.id} and user_id = ${row.user_id} returning *`.execute(tx);
  return rows[0]!;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * RFC 7396 JSON Merge Patch: an object patch merges key by key (null deletes a key, objects merge recursively); any
 * other patch value (arrays, scalars) replaces the target. Inputs are not modified.
 */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    // defineProperty: a key "__proto__" (JSON.parse makes it an own key) stays data, never a prototype.
    else Object.defineProperty(out, key, { value: mergePatch(out[key], value), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

export const atLeastOne =
  (fields: string[]) =>
  (p: Record<string, unknown>): boolean =>
    fields.some((f) => p[f] !== undefined);
