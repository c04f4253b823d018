// Capabilities that write entities: upsert (with the dedupe order of capability rule 1), update, patch (RFC 7396
// merge patch with an optimistic lock), merge (loser deleted, alias recorded) and delete.
import { z } from 'zod';
import { sql, type Kysely } from 'kysely';
import { AppError } from '../../core/errors.ts';
import { newId } from '../ids.ts';
import { ENTITY_TYPES, findEntity, requireEntity, type EntityRow } from '../entities.ts';
import type { Capability, CapabilityContext } from '../types.ts';

const EntityType = z.enum(ENTITY_TYPES);
const EntityId = z.string().regex(/^ent_[a-z2-7]{20}$/, 'an entity id is ent_ followed by 20 characters (a merged-away id still works)');
const DisplayName = z.string().trim().min(1).max(500);
const Email = z.email().max(320);
/** Identifiers of the entity elsewhere (`{ email, linkedin, domain, crm_id, ... }`): flat, scalar values. */
const CanonicalKeys = z
  .record(z.string().min(1).max(100), z.union([z.string().max(1000), z.number().finite(), z.boolean()]))
  .refine((v) => Object.keys(v).length <= 50, { message: 'at most 50 canonical keys' });
const Attrs = z.record(z.string(), z.unknown());

/** `updated_at` of a write: now at millisecond precision, and always later than before (the lock relies on it). */
const BUMP = sql`greatest(date_trunc('milliseconds', now()), updated_at + interval '1 millisecond')`;

type Snapshot = Omit<EntityRow, 'user_id' | 'created_at' | 'updated_at'>;
type EntityUndo = { op: 'delete'; id: string } | { op: 'restore'; row: Snapshot };

function snapshot(r: EntityRow): Snapshot {
  return {
    id: r.id,
    type: r.type,
    display_name: r.display_name,
    primary_email: r.primary_email,
    canonical_keys: r.canonical_keys,
    attrs: r.attrs,
    linked_app_user_id: r.linked_app_user_id,
    linked_app_id: r.linked_app_id,
  };
}

/**
 * Undo of an entity write: delete the row an upsert inserted, or put back the fields of the row as it was (its
 * `updated_at` moves forward: a revert is a write too). Refused when the entity is gone (deleted or merged away) or
 * when an inserted entity has since absorbed others in a merge (deleting it would lose them).
 */
async function revertEntity(ctx: CapabilityContext, undo: EntityUndo): Promise<void> {
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
async function writeFields(
  tx: Kysely<any>,
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

const atLeastOne =
  (fields: string[]) =>
  (p: Record<string, unknown>): boolean =>
    fields.some((f) => p[f] !== undefined);

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

export const entityCapabilities = [upsertEntity, updateEntity, patchEntity, mergeEntities, deleteEntity];
