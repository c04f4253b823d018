// The statement's one result row: the response body built by Postgres (JSON or CSV), with the size ceiling, the
// single-row check and max-affected; and the counts of a read.
import { JsonText } from '../core/json-text.ts';
import { MAX_ROWS } from './compile.ts';

/** Prefer: count=... of a read. */
export type CountKind = 'exact' | 'planned' | 'estimated';

/**
 * How a read counts its matching rows: `before` runs ahead of the result row in the same round trip, `total` is the
 * SQL expression of the result row's total. `rowsFrom` is `from <table> _m where ...`, the unpaged rows the read
 * selects. exact: count(*). planned: the planner's estimate, from an EXPLAIN (FORMAT JSON) of the count query sent
 * ahead (the executor reads its "Plan Rows"); the result row's total stays null. estimated: as PostgREST, the exact
 * count up to the read cap (counting stops one row past MAX_ROWS) and, past it, the larger of that and the planned
 * count (see countTotal).
 */
export function countPlan(rowsFrom: string, kind: CountKind | undefined): { before: string; total: string } {
  if (kind === undefined) return { before: '', total: 'null::bigint' };
  if (kind === 'exact') return { before: '', total: `(select count(*) ${rowsFrom})` };
  const explain = `explain (format json) select 1 ${rowsFrom}; `;
  if (kind === 'planned') return { before: explain, total: 'null::bigint' };
  return { before: explain, total: `(select count(*) from (select 1 ${rowsFrom} limit ${MAX_ROWS + 1}) _c)` };
}

/** The total a read reports for its count kind, from the result row's total and the planner's estimate. */
export function countTotal(kind: CountKind | undefined, total: number | null, planned: number | undefined): number | null {
  if (kind === 'planned') return planned ?? null;
  if (kind === 'estimated' && total !== null && total > MAX_ROWS) return Math.max(total, planned ?? 0);
  return total;
}

/** How the statement's one result row is shaped; see `resultRow`. */
export interface OutputOptions {
  /** Ceiling on the body's bytes: rows are aggregated only up to it, past it the statement aborts with 413. */
  maxBytes: number;
  /** Exactly one row is required (Accept: application/vnd.pgrst.object+json); otherwise abort with 406. */
  single: boolean;
  /** The body: a JSON array (default), or CSV as PostgREST writes it (Accept: text/csv). */
  format?: 'json' | 'csv';
  /** Leave out the fields whose value is null (`;nulls=stripped`): json_strip_nulls. */
  stripNulls?: boolean;
  /** A write that affects more rows than this aborts (Prefer: max-affected with handling=strict). */
  maxAffected?: number;
}

/** The `when ...` branches of the abort reason that depend on the row count; `''` when there are none. */
function countChecks(out: OutputOptions): string {
  const single = out.single ? ` when count(*) <> 1 then 'SV406:' || count(*)` : '';
  const affected = out.maxAffected !== undefined ? ` when count(*) > ${out.maxAffected} then 'SV124:' || count(*)` : '';
  return single + affected;
}

/**
 * The statement's one result row over the rows of `source` (a from-item aliased `_r`): `body` (the rows as a
 * JSON array or CSV text, or null), `rows`, `total` and `abort`. Each row is rendered once; a running byte count
 * stops the aggregation at the ceiling, so no response larger than `maxBytes` is ever built or sent. `abort` is ''
 * or 'SV413' (too large), 'SV406:<rows>' (not exactly one row when one was required) or 'SV124:<rows>' (more rows
 * than max-affected); it is also stored in the transaction setting svc.abort, which the executor's guard turns
 * into an error that rolls a write back.
 *
 * CSV is PostgREST's: a header line of the first row's keys, then one line per row, the row's record text without
 * its parentheses (Postgres quotes a value that needs it, doubling its quotes; null is empty); no final newline.
 */
export function resultRow(source: string, out: OutputOptions, total = 'null::bigint'): string {
  const csv = out.format === 'csv';
  const text = csv ? `substr(_r::text, 2, length(_r::text) - 2)` : out.stripNulls ? `json_strip_nulls(row_to_json(_r))::text` : `row_to_json(_r)::text`;
  const header = csv ? `, case when row_number() over () = 1 then (select string_agg(case when _k ~ '[",\r\n]' then '"' || replace(_k, '"', '""') || '"' else _k end, ',') from json_object_keys(row_to_json(_r)) _k) end as h` : '';
  const body = csv
    ? `coalesce(max(_j.h), '') || E'\\n' || coalesce(string_agg(_j.t, E'\\n') filter (where not _j.over), '')`
    : `coalesce('[' || string_agg(_j.t, ',') filter (where not _j.over) || ']', '[]')`;
  return `select case when bool_or(_j.over) then null else ${body} end as body,
    count(*) as rows, ${total} as total,
    set_config('svc.abort', case when bool_or(_j.over) then 'SV413'${countChecks(out)} else '' end, true) as abort
    from (select _t.t${csv ? ', _t.h' : ''}, sum(octet_length(_t.t)) over (rows unbounded preceding) > ${out.maxBytes} as over
      from (select ${text} as t${header} from ${source}) _t) _j`;
}

/** A write's result row when the client asked for no rows back: only the count (and the single-row and max-affected checks). */
export function countRow(source: string, out: OutputOptions): string {
  const checks = countChecks(out);
  const abort = checks ? `case${checks} else '' end` : `''`;
  return `select null::text as body, count(*) as rows, null::bigint as total, set_config('svc.abort', ${abort}, true) as abort from ${source}`;
}

/**
 * A body of another media type than plain application/json, with its Content-Type: the vnd.pgrst JSON types (still
 * JSON for MCP results) and CSV (a string in MCP results).
 */
export class MediaText extends JsonText {
  readonly contentType: string;
  readonly json: boolean;

  constructor(text: string, contentType: string, json: boolean) {
    super(text);
    this.contentType = contentType;
    this.json = json;
  }

  override toJSON(): unknown {
    return this.json ? super.toJSON() : this.text;
  }
}
