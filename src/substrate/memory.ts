// Memory reads over one substrate user's decisions, commitments, learnings and source artifacts: full-text search
// (GET memory) and the chronological browse with a cursor (GET memory/list). Both return the spec's memory row.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { errors } from '../core/errors.ts';
import { tsQuery } from './artifacts.ts';
import { afterCursor, cursorTs, page, parseCursor } from './cursor.ts';
import type { ControlDatabase } from '../db/types.ts';

export const MEMORY_KINDS = ['decisions', 'commitments', 'learnings', 'source_artifacts'] as const;
export type MemoryKind = (typeof MEMORY_KINDS)[number];
export type MatchMode = 'and' | 'or' | 'phrase';

/** The memory result row of the spec. */
export interface MemoryView {
  id: string;
  kind: 'decision' | 'commitment' | 'learning' | 'source_artifact';
  title: string;
  body_text: string | null;
  rank: number | null;
  updated_at: string;
  source_artifact_id: string | null;
  supersedes: string | null;
  status: string | null;
}

export interface MemorySearchQuery {
  q?: string | undefined;
  kinds?: readonly MemoryKind[] | undefined;
  limit: number;
  match?: MatchMode | undefined;
}

export interface MemoryListQuery {
  kinds?: readonly MemoryKind[] | undefined;
  source_artifact_id?: string | undefined;
  superseded?: boolean | undefined;
  before?: string | undefined;
  limit: number;
}

/**
 * `kinds` as the query string carries it ("decisions,learnings"; empty: all) or as a list; 400 naming the unknown ones.
 */
export function parseKinds(value: string | readonly string[] | undefined): MemoryKind[] | undefined {
  if (value === undefined) return undefined;
  const parts = (typeof value === 'string' ? value.split(',') : value.map(String)).map((k) => k.trim()).filter(Boolean);
  if (parts.length === 0) return undefined;
  const unknown = parts.filter((k) => !(MEMORY_KINDS as readonly string[]).includes(k));
  if (unknown.length > 0) {
    throw errors.validation(`Unknown memory kinds: ${unknown.join(', ').slice(0, 200)}; kinds is a comma-separated subset of ${MEMORY_KINDS.join(', ')}.`, [
      { path: 'kinds', message: `one of ${MEMORY_KINDS.join(', ')}` },
    ]);
  }
  return [...new Set(parts)] as MemoryKind[];
}

/**
 * Each kind as memory rows: its table and how its columns map onto the row. Commitments have no title: theirs is the
 * description's first line (at most 200 characters) and the description is the body. A learning's body is its
 * description and resolution; an artifact's its summary, else the first 1,000 characters of its content.
 */
const SOURCES: Record<MemoryKind, { table: string; columns: RawBuilder<unknown> }> = {
  decisions: {
    table: 'substrate_decisions',
    columns: sql`id, 'decision'::text as kind, title, rationale as body_text, updated_at, source_artifact_id, supersedes, status`,
  },
  commitments: {
    table: 'substrate_commitments',
    columns: sql`id, 'commitment'::text as kind, left(split_part(description, E'\n', 1), 200) as title, description as body_text, updated_at,
      source_artifact_id, null::text as supersedes, status`,
  },
  learnings: {
    table: 'substrate_learnings',
    columns: sql`id, 'learning'::text as kind, title,
      description || coalesce(E'\n\nResolution: ' || resolution_taken, '') as body_text, updated_at, source_artifact_id, null::text as supersedes, null::text as status`,
  },
  source_artifacts: {
    table: 'substrate_artifacts',
    columns: sql`id, 'source_artifact'::text as kind, title, coalesce(summary, left(content, 1000)) as body_text, updated_at,
      null::text as source_artifact_id, null::text as supersedes, null::text as status`,
  },
};

/**
 * A row of the union of SOURCES: every column is computed per kind (no one table has this shape), so it is the view
 * with the timestamp as pg returns it, plus the cursor's timestamp where memory/list selects it.
 */
type MemoryRow = Omit<MemoryView, 'updated_at'> & { updated_at: Date; cursor_ts: string };

function memoryView(r: MemoryRow): MemoryView {
  return {
    id: r.id,
    kind: r.kind,
    title: r.title,
    body_text: r.body_text,
    rank: r.rank,
    updated_at: r.updated_at.toISOString(),
    source_artifact_id: r.source_artifact_id,
    supersedes: r.supersedes,
    status: r.status,
  };
}

export class SubstrateMemory {
  readonly #db: Kysely<ControlDatabase>;

  constructor(db: Kysely<ControlDatabase>) {
    this.#db = db;
  }

  /**
   * Full-text search (english configuration) over the chosen kinds, best `ts_rank` first (ties: newest first).
   * `q` omitted, empty or `*`: the most recently updated rows, rank null. See tsQuery for the match modes.
   */
  async search(userId: string, query: MemorySearchQuery): Promise<{ results: MemoryView[] }> {
    const kinds = query.kinds?.length ? query.kinds : MEMORY_KINDS;
    const q = query.q?.trim() ?? '';
    const limit = query.limit;
    if (q === '' || q === '*') {
      const branches = kinds.map(
        (k) => sql`(select ${SOURCES[k].columns}, null::real as rank from ${sql.table(SOURCES[k].table)}
          where user_id = ${userId} order by updated_at desc, id desc limit ${limit})`,
      );
      const { rows } = await sql<MemoryRow>`select * from (${sql.join(branches, sql` union all `)}) m order by updated_at desc, id desc limit ${limit}`.execute(this.#db);
      return { results: rows.map(memoryView) };
    }
    const tsq = tsQuery(q, query.match ?? 'and');
    // Each kind's best `limit` matches (through its GIN index), then the best `limit` of those.
    const branches = kinds.map(
      (k) => sql`(select ${SOURCES[k].columns}, ts_rank(tsv, fts.q) as rank from ${sql.table(SOURCES[k].table)}, fts
        where user_id = ${userId} and tsv @@ fts.q order by rank desc, updated_at desc, id desc limit ${limit})`,
    );
    const { rows } = await sql<MemoryRow>`
      with fts as (select ${tsq} as q)
      select * from (${sql.join(branches, sql` union all `)}) m
      order by rank desc, updated_at desc, id desc limit ${limit}`.execute(this.#db);
    return { results: rows.map(memoryView) };
  }

  /**
   * Newest first by `(updated_at, id)`; `next_before` is the cursor after the last row, null on the last page.
   * `source_artifact_id` keeps the decisions, commitments and learnings that cite it (artifacts are left out);
   * `superseded: false` leaves out superseded decisions and expired commitments.
   */
  async list(userId: string, query: MemoryListQuery): Promise<{ results: MemoryView[]; next_before: string | null }> {
    let kinds = query.kinds?.length ? query.kinds : MEMORY_KINDS;
    if (query.source_artifact_id !== undefined) kinds = kinds.filter((k) => k !== 'source_artifacts');
    if (kinds.length === 0) return { results: [], next_before: null };
    const after = afterCursor('updated_at', query.before === undefined ? null : parseCursor(query.before));
    const linked = query.source_artifact_id === undefined ? sql`` : sql`and source_artifact_id = ${query.source_artifact_id}`;
    const current = (k: MemoryKind) =>
      query.superseded !== false ? sql`` : k === 'decisions' ? sql`and status <> 'superseded'` : k === 'commitments' ? sql`and status <> 'expired'` : sql``;
    const take = query.limit + 1;
    const branches = kinds.map(
      (k) => sql`(select ${SOURCES[k].columns}, null::real as rank, ${cursorTs('updated_at')} as cursor_ts from ${sql.table(SOURCES[k].table)}
        where user_id = ${userId} ${after} ${linked} ${current(k)} order by updated_at desc, id desc limit ${take})`,
    );
    const { rows } = await sql<MemoryRow>`select * from (${sql.join(branches, sql` union all `)}) m order by updated_at desc, id desc limit ${take}`.execute(
      this.#db,
    );
    const shown = page(rows, query.limit);
    return { results: shown.rows.map(memoryView), next_before: shown.next_before };
  }
}
