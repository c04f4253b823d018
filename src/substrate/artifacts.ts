// Source artifacts: the reads (list with full-text search, one with content) and what upsert_source_artifact shares
// (row shape, views). Writes go through the ledger: src/substrate/capabilities/upsert-source-artifact.ts.
import { sql, type Kysely, type Selectable } from 'kysely';
import { errors } from '../core/errors.ts';
import type { ControlDatabase } from '../db/types.ts';

export interface ArtifactLinks {
  entity_ids?: string[];
  project_tags?: string[];
}

/** Every column but the search vector (`tsv`), which no read returns. */
export type ArtifactRow = Omit<Selectable<ControlDatabase['substrate_artifacts']>, 'tsv'>;

/** An artifact as lists return it (no `content`). */
export interface ArtifactView {
  id: string;
  kind: string;
  external_system: string | null;
  external_id: string | null;
  title: string;
  summary: string | null;
  url: string | null;
  storage_object_id: string | null;
  links: ArtifactLinks;
  attrs: Record<string, unknown>;
  source_app_id: string | null;
  created_at: string;
  updated_at: string;
}

/** One artifact (GET source-artifacts/{artifact_id}, and `before` of an upsert): the list view plus `content`. */
export interface ArtifactDetail extends ArtifactView {
  content: string | null;
}

export interface ArtifactQuery {
  kind?: string | undefined;
  q?: string | undefined;
  limit: number;
  count?: boolean | undefined;
}

/** The columns every read selects (never `tsv`; `content` only where a detail is built). */
export const ARTIFACT_COLUMNS = sql.raw(
  'id, user_id, kind, external_system, external_id, title, summary, url, storage_object_id, links, attrs, source_app_id, created_at, updated_at',
);

export function artifactView(r: Omit<ArtifactRow, 'content'>): ArtifactView {
  return {
    id: r.id,
    kind: r.kind,
    external_system: r.external_system,
    external_id: r.external_id,
    title: r.title,
    summary: r.summary,
    url: r.url,
    storage_object_id: r.storage_object_id,
    // upsert_source_artifact writes both as objects (links validated as ArtifactLinks).
    links: r.links as ArtifactLinks,
    attrs: r.attrs as Record<string, unknown>,
    source_app_id: r.source_app_id,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

export function artifactDetail(r: ArtifactRow): ArtifactDetail {
  return { ...artifactView(r), content: r.content };
}

export const artifactNotFound = (id: string) =>
  errors.notFound(`Source artifact '${id.slice(0, 100)}'`, 'List the artifacts with GET /v1/me/substrate/source-artifacts (substrate_artifacts_list) to find a valid id.');

/** The artifact row of this user, or undefined. `forUpdate` locks it for the rest of the transaction. */
export async function findArtifact(db: Kysely<ControlDatabase>, userId: string, id: string, forUpdate = false): Promise<ArtifactRow | undefined> {
  const lock = forUpdate ? sql`for update` : sql``;
  const { rows } = await sql<ArtifactRow>`select ${ARTIFACT_COLUMNS}, content from substrate_artifacts where id = ${id} and user_id = ${userId} ${lock}`.execute(db);
  return rows[0];
}

/**
 * A memory capability's `source_artifact_id` must name an artifact of the same user (capability rule 3): 404 naming
 * it otherwise. The row is share-locked so a concurrent delete waits for the reference (then nulls it).
 */
export async function requireArtifactRef(db: Kysely<ControlDatabase>, userId: string, id: string | undefined | null): Promise<void> {
  if (id === undefined || id === null) return;
  const { rows } = await sql`select 1 from substrate_artifacts where id = ${id} and user_id = ${userId} for key share`.execute(db);
  if (!rows[0]) throw artifactNotFound(id);
}

/**
 * The full-text query of `q` (english configuration): `and` (default) is websearch_to_tsquery (every word;
 * "quoted phrases", `or` between words and `-word` work as on search engines), `or` any of the words, `phrase` the
 * words adjacent and in order (phraseto_tsquery). Words that are all stop words make an empty query, which matches
 * nothing.
 */
export function tsQuery(q: string, match: 'and' | 'or' | 'phrase' = 'and') {
  switch (match) {
    case 'phrase':
      return sql`phraseto_tsquery('english', ${q})`;
    case 'or':
      // The normalized lexemes of q (as plainto_tsquery would make them), joined with | instead of &.
      // Each lexeme quoted for tsquery input (backslashes and quotes escaped), so nothing in q is read as an operator.
      return sql`coalesce((select string_agg('''' || replace(replace(lexeme, '\\', '\\\\'), '''', '''''') || '''', ' | ')
        from unnest(to_tsvector('english', ${q}))), '')::tsquery`;
    default:
      return sql`websearch_to_tsquery('english', ${q})`;
  }
}

/** Artifact reads of one substrate user (upsert_source_artifact writes). */
export class SubstrateArtifacts {
  readonly #db: Kysely<ControlDatabase>;

  constructor(db: Kysely<ControlDatabase>) {
    this.#db = db;
  }

  async get(userId: string, id: string): Promise<ArtifactDetail> {
    const row = await findArtifact(this.#db, userId, id);
    if (!row) throw artifactNotFound(id);
    return artifactDetail(row);
  }

  /**
   * Without `q`: most recently updated first. With `q`: full-text matches over title, summary and content (every word,
   * websearch syntax), best ts_rank first. `count` adds the number of matches, ignoring `limit`.
   */
  async list(userId: string, query: ArtifactQuery): Promise<{ artifacts: ArtifactView[]; total?: number }> {
    const kind = query.kind ?? null;
    const q = query.q?.trim() ? query.q.trim() : null;
    const tsq = q === null ? null : tsQuery(q);
    const where = sql`user_id = ${userId}
      and (${kind}::text is null or kind = ${kind})
      ${tsq === null ? sql`` : sql`and tsv @@ ${tsq}`}`;
    const order = tsq === null ? sql`updated_at desc, id desc` : sql`ts_rank(tsv, ${tsq}) desc, updated_at desc, id desc`;
    const { rows } = await sql<ArtifactRow>`select ${ARTIFACT_COLUMNS} from substrate_artifacts where ${where} order by ${order} limit ${query.limit}`.execute(
      this.#db,
    );
    const out: { artifacts: ArtifactView[]; total?: number } = { artifacts: rows.map(artifactView) };
    if (query.count) out.total = (await sql<{ n: number }>`select count(*)::int as n from substrate_artifacts where ${where}`.execute(this.#db)).rows[0]!.n;
    return out;
  }
}
