// upsert_source_artifact: the documents, mails and transcripts memory rows cite, resolved by their id in the system
// they come from (capability rule 2).
import { z } from 'zod';
import { sql } from 'kysely';
import { AppError } from '../../core/errors.ts';
import { newId } from '../ids.ts';
import { artifactDetail, findArtifact, type ArtifactDetail, type ArtifactRow } from '../artifacts.ts';
import type { Capability, CapabilityContext } from '../types.ts';
import { Text } from './shared.ts';

/** Optional text that `null` clears on an update (omitted: left as it is). */
const Clearable = (max: number) => z.string().max(max).nullable().optional();

const Links = z.object({
  entity_ids: z.array(z.string().min(1).max(100)).max(500).optional(),
  project_tags: z.array(z.string().min(1).max(200)).max(200).optional(),
});

type UpsertPayload = {
  kind: string;
  title: string;
  id?: string | undefined;
  external_system?: string | undefined;
  external_id?: string | undefined;
  summary?: string | null | undefined;
  content?: string | null | undefined;
  storage_object_id?: string | null | undefined;
  url?: string | null | undefined;
  links?: z.infer<typeof Links> | undefined;
  attrs?: Record<string, unknown> | undefined;
};

type ArtifactUndo = { op: 'delete'; id: string } | { op: 'restore'; row: ArtifactDetail };

/**
 * Capability rule 2. The artifact is, in order: the one `id` names (of this user); else the one with the same
 * `(external_system, external_id)`; else a new one with a generated `art_` id (a sent id that names nothing is not
 * reused). A match is updated: kind and title set; summary, content, url, storage_object_id and the external ids set
 * when sent (null clears); links and attrs merged key by key (sent keys win). `source_app_id` is the proposing app's
 * when there is one (kept otherwise). Returns `{ artifact_id, was_insert, before }`, `before` being the artifact as it
 * was (with content) or null; the undo deletes an inserted artifact or puts the previous fields back.
 */
export const upsertSourceArtifact: Capability<UpsertPayload> = {
  name: 'upsert_source_artifact',
  payload: z
    .object({
      kind: Text(100),
      title: Text(1000),
      id: z.string().regex(/^art_[a-z2-7]{20}$/, 'an artifact id is art_ followed by 20 characters').optional(),
      external_system: Text(100).optional(),
      external_id: Text(500).optional(),
      summary: Clearable(20_000),
      content: Clearable(1_000_000),
      storage_object_id: Clearable(200),
      url: z.url().max(4000).nullable().optional(),
      links: Links.optional(),
      attrs: z.record(z.string(), z.unknown()).optional(),
    })
    .refine((p) => (p.external_system === undefined) === (p.external_id === undefined), {
      message: 'send external_system and external_id together (the artifact is resolved by the pair)',
      path: ['external_id'],
    }),
  policy: 'auto',
  reversible: true,
  sideEffecting: false,
  async execute(ctx, p) {
    const user = ctx.actor.userId;
    const external = p.external_system !== undefined && p.external_id !== undefined;
    let row = p.id ? await findArtifact(ctx.tx, user, p.id, true) : undefined;
    if (!row && external) row = await byExternal(ctx, p.external_system!, p.external_id!);
    if (!row) {
      const id = newId('art');
      // A concurrent upsert of the same external ids may insert first: then this one updates the row it made.
      const { rows } = await sql<{ id: string }>`
        insert into substrate_artifacts (id, user_id, kind, external_system, external_id, title, summary, content, url, storage_object_id, links, attrs, source_app_id)
        values (${id}, ${user}, ${p.kind}, ${p.external_system ?? null}, ${p.external_id ?? null}, ${p.title}, ${p.summary ?? null}, ${p.content ?? null},
                ${p.url ?? null}, ${p.storage_object_id ?? null}, ${JSON.stringify(p.links ?? {})}::jsonb, ${JSON.stringify(p.attrs ?? {})}::jsonb,
                ${ctx.actor.sourceAppId})
        on conflict (user_id, external_system, external_id) where external_system is not null and external_id is not null do nothing
        returning id`.execute(ctx.tx);
      if (rows[0]) return { result: { artifact_id: id, was_insert: true, before: null }, undo: { op: 'delete', id } satisfies ArtifactUndo };
      row = (await byExternal(ctx, p.external_system!, p.external_id!))!;
    }
    if (external) await externalIdsFree(ctx, p.external_system!, p.external_id!, row.id);
    const before = artifactDetail(row);
    await sql`
      update substrate_artifacts set kind = ${p.kind}, title = ${p.title},
        external_system = ${external ? p.external_system! : row.external_system},
        external_id = ${external ? p.external_id! : row.external_id},
        summary = ${pick(p.summary, row.summary)}, content = ${pick(p.content, row.content)}, url = ${pick(p.url, row.url)},
        storage_object_id = ${pick(p.storage_object_id, row.storage_object_id)},
        links = links || ${JSON.stringify(p.links ?? {})}::jsonb, attrs = attrs || ${JSON.stringify(p.attrs ?? {})}::jsonb,
        source_app_id = coalesce(${ctx.actor.sourceAppId}, source_app_id),
        updated_at = now()
      where id = ${row.id} and user_id = ${user}`.execute(ctx.tx);
    return { result: { artifact_id: row.id, was_insert: false, before }, undo: { op: 'restore', row: before } satisfies ArtifactUndo };
  },
  /** Deletes an inserted artifact (its references become null), or puts back every field it had; updated_at moves on. */
  async revert(ctx, undo: ArtifactUndo) {
    const user = ctx.actor.userId;
    if (undo.op === 'delete') {
      await sql`delete from substrate_artifacts where id = ${undo.id} and user_id = ${user}`.execute(ctx.tx);
      return;
    }
    const r = undo.row;
    if (r.external_system !== null && r.external_id !== null) await externalIdsFree(ctx, r.external_system, r.external_id, r.id);
    const { rows } = await sql`
      update substrate_artifacts set kind = ${r.kind}, external_system = ${r.external_system}, external_id = ${r.external_id}, title = ${r.title},
        summary = ${r.summary}, content = ${r.content}, url = ${r.url}, storage_object_id = ${r.storage_object_id},
        links = ${JSON.stringify(r.links)}::jsonb, attrs = ${JSON.stringify(r.attrs)}::jsonb, source_app_id = ${r.source_app_id}, updated_at = now()
      where id = ${r.id} and user_id = ${user} returning id`.execute(ctx.tx);
    if (!rows[0]) {
      throw new AppError(409, 'ARTIFACT_GONE', `Source artifact '${r.id}' no longer exists: there is nothing to restore.`, 'Nothing to do; upsert it again if it is needed.');
    }
  },
};

async function byExternal(ctx: CapabilityContext, system: string, externalId: string): Promise<ArtifactRow | undefined> {
  const { rows } = await sql<ArtifactRow>`
    select id, user_id, kind, external_system, external_id, title, summary, content, url, storage_object_id, links, attrs, source_app_id, created_at, updated_at
    from substrate_artifacts where user_id = ${ctx.actor.userId} and external_system = ${system} and external_id = ${externalId}
    for update`.execute(ctx.tx);
  return rows[0];
}

/** 409 when another artifact of the user already has these external ids (an artifact sent by id that would take them). */
async function externalIdsFree(ctx: CapabilityContext, system: string, externalId: string, id: string): Promise<void> {
  const { rows } = await sql<{ id: string }>`select id from substrate_artifacts
    where user_id = ${ctx.actor.userId} and external_system = ${system} and external_id = ${externalId} and id <> ${id}`.execute(ctx.tx);
  if (rows[0]) {
    throw new AppError(
      409,
      'CONFLICT',
      `Source artifact '${rows[0].id}' already has external_system '${system}' and external_id '${externalId}'.`,
      'Upsert that artifact instead (send the external ids without an id), or choose other external ids.',
    );
  }
}

/** A sent value (null included) replaces; an omitted one keeps the current value. */
function pick<T>(sent: T | null | undefined, current: T | null): T | null {
  return sent === undefined ? current : sent;
}
