// The statement's one result row: the response body built by Postgres, with the size ceiling and the single-row check.
/** Prefer: count=... of a read. */
export type CountKind = 'exact' | 'planned' | 'estimated';

/**
 * How a read counts its matching rows: `before` runs ahead of the result row in the same round trip (empty for an
 * exact count), `total` is the SQL expression of the result row's total. `rowsFrom` is `from <table> _m where ...`,
 * the unpaged rows the read selects.
 */
export function countPlan(rowsFrom: string, kind: CountKind | undefined): { before: string; total: string } {
  if (kind === undefined) return { before: '', total: 'null::bigint' };
  return { before: '', total: `(select count(*) ${rowsFrom})` };
}

/** How the statement's one result row is shaped; see `resultRow`. */
export interface OutputOptions {
  /** Ceiling on the body's bytes: rows are aggregated only up to it, past it the statement aborts with 413. */
  maxBytes: number;
  /** Exactly one row is required (Accept: application/vnd.pgrst.object+json); otherwise abort with 406. */
  single: boolean;
}

/**
 * The statement's one result row over the rows of `source` (a from-item aliased `_r`): `body` (the rows as a
 * JSON array, or null), `rows`, `total` and `abort`. Each row is rendered once; a running byte count stops the
 * aggregation at the ceiling, so no response larger than `maxBytes` is ever built or sent. `abort` is '' or
 * 'SV413' (too large) or 'SV406:<rows>' (not exactly one row when one was required); it is also stored in the
 * transaction setting svc.abort, which the executor's guard turns into an error that rolls a write back.
 */
export function resultRow(source: string, out: OutputOptions, total = 'null::bigint'): string {
  const notSingle = out.single ? `when count(*) <> 1 then 'SV406:' || count(*)` : '';
  return `select case when bool_or(_j.over) then null else coalesce('[' || string_agg(_j.t, ',') filter (where not _j.over) || ']', '[]') end as body,
    count(*) as rows, ${total} as total,
    set_config('svc.abort', case when bool_or(_j.over) then 'SV413' ${notSingle} else '' end, true) as abort
    from (select _t.t, sum(octet_length(_t.t)) over (rows unbounded preceding) > ${out.maxBytes} as over
      from (select row_to_json(_r)::text as t from ${source}) _t) _j`;
}

/** A write's result row when the client asked for no rows back: only the count (and the single-row check). */
export function countRow(source: string, out: OutputOptions): string {
  const abort = out.single ? `case when count(*) <> 1 then 'SV406:' || count(*) else '' end` : `''`;
  return `select null::text as body, count(*) as rows, null::bigint as total, set_config('svc.abort', ${abort}, true) as abort from ${source}`;
}

