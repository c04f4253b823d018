// Substrate entities: the reads (list, one) and what the entity capabilities share (row shape, alias resolution,
// the view the API returns). Writes go through the ledger: src/substrate/capabilities/ (upsert-entity.ts,
// update-entity.ts, patch-entity.ts, merge-entities.ts, delete-entity.ts; their shared pieces in entity-writes.ts).
import { sql, type Kysely, type Selectable } from 'kysely';
import { errors } from '../core/errors.ts';
import type { ControlDatabase } from '../db/types.ts';
import { afterCursor, cursorTs, page, parseCursor } from './cursor.ts';

export const ENTITY_TYPES = ['person', 'company', 'fund', 'workspace', 'team', 'project', 'event', 'agent', 'self', 'deal'] as const;
export type EntityType = (typeof ENTITY_TYPES)[number];

export type EntityRow = Selectable<ControlDatabase['substrate_entities']>;

/** An entity as the API returns it: the row without its owner, timestamps as ISO strings. */
export type EntityView = Omit<EntityRow, 'user_id' | 'canonical_keys' | 'attrs' | 'created_at' | 'updated_at'> & {
  canonical_keys: Record<string, unknown>;
  attrs: Record<string, unknown>;
  created_at: string;
  updated_at: string;
};

export interface EntityQuery {
  type?: EntityType | undefined;
  q?: string | undefined;
  limit: number;
  count?: boolean | undefined;
  before?: string | undefined;
}

export function entityView(r: EntityRow): EntityView {
  return {
    id: r.id,
    type: r.type,
    display_name: r.display_name,
    primary_email: r.primary_email,
    // The entity capabilities write both as objects (CanonicalKeys, Attrs in entity-writes.ts).
    canonical_keys: r.canonical_keys as Record<string, unknown>,
    attrs: r.attrs as Record<string, unknown>,
    linked_app_user_id: r.linked_app_user_id,
    linked_app_id: r.linked_app_id,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

export const entityNotFound = (id: string) =>
  errors.notFound(`Entity '${id.slice(0, 100)}'`, 'List the entities with GET /v1/me/substrate/entities (substrate_entities_list) to find a valid id.');

/**
 * The entity an id names for this user: itself, or the winner it was merged into (an alias). Undefined when neither.
 * `forUpdate` locks the row for the rest of the transaction.
 */
export async function findEntity(db: Kysely<ControlDatabase>, userId: string, id: string, forUpdate = false): Promise<EntityRow | undefined> {
  const lock = forUpdate ? sql`for update of e` : sql``;
  const { rows } = await sql<EntityRow>`
    select e.* from substrate_entities e
    where e.user_id = ${userId}
      and e.id = coalesce((select a.entity_id from substrate_entity_aliases a where a.user_id = ${userId} and a.alias_id = ${id}), ${id})
    ${lock}`.execute(db);
  return rows[0];
}

/** Like findEntity, but 404 RESOURCE_NOT_FOUND when the id names no entity of this user. */
export async function requireEntity(db: Kysely<ControlDatabase>, userId: string, id: string, forUpdate = false): Promise<EntityRow> {
  const row = await findEntity(db, userId, id, forUpdate);
  if (!row) throw entityNotFound(id);
  return row;
}

/** `%`, `_` and `\` of a search term taken literally by ILIKE. */
function likeLiteral(term: string): string {
  return term.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** Entity reads of one substrate user (the capabilities write). */
export class SubstrateEntities {
  readonly #db: Kysely<ControlDatabase>;

  constructor(db: Kysely<ControlDatabase>) {
    this.#db = db;
  }

  /** One entity; an alias id (a merged-away loser) answers its winner. */
  async get(userId: string, id: string): Promise<EntityView> {
    return entityView(await requireEntity(this.#db, userId, id));
  }

  /**
   * Newest updated first, paged by `before` (next_before: null on the last page). `q` matches display names
   * containing it (case-insensitive), exact and prefix matches first: one page of the best, no cursor (next_before
   * null, and `before` with `q` is refused). `count` adds the total matching `type` and `q`, ignoring `limit`.
   */
  async list(userId: string, query: EntityQuery): Promise<{ entities: EntityView[]; next_before: string | null; total?: number }> {
    const type = query.type ?? null;
    const q = query.q?.trim() ? query.q.trim() : null;
    if (q !== null && query.before !== undefined) {
      throw errors.validation("'before' pages the list without q; a search answers its best matches on one page.", [{ path: 'before', message: 'not with q' }]);
    }
    const contains = q === null ? null : `%${likeLiteral(q)}%`;
    const prefix = q === null ? null : `${likeLiteral(q)}%`;
    const where = sql`user_id = ${userId}
      and (${type}::text is null or type = ${type})
      and (${contains}::text is null or display_name ilike ${contains})`;
    const order =
      q === null
        ? sql`updated_at desc, id desc`
        : sql`(lower(display_name) = lower(${q})) desc, (display_name ilike ${prefix}) desc, updated_at desc, id desc`;
    const after = afterCursor('updated_at', query.before === undefined ? null : parseCursor(query.before));
    const { rows } = await sql<EntityRow & { cursor_ts: string }>`
      select *, ${cursorTs('updated_at')} as cursor_ts from substrate_entities where ${where} ${after} order by ${order} limit ${query.limit + 1}`.execute(this.#db);
    const shown = page(rows, query.limit);
    const out: { entities: EntityView[]; next_before: string | null; total?: number } = {
      entities: shown.rows.map(entityView),
      next_before: q === null ? shown.next_before : null,
    };
    if (query.count) {
      out.total = (await sql<{ n: number }>`select count(*)::int as n from substrate_entities where ${where}`.execute(this.#db)).rows[0]!.n;
    }
    return out;
  }
}
