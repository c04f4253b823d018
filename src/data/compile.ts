// Compiles a parsed PostgREST query against the app's catalog into one SQL statement whose single row
// carries the response body as JSON text (built by Postgres) and a row count. Every identifier comes from
// the catalog and is quoted; every value is a quoted literal cast to its column's type, so the statement can
// travel in the same simple-protocol round trip as BEGIN / SET LOCAL ROLE / claims / COMMIT.
import pg from 'pg';
import { AppError, errors } from '../core/errors.ts';
import type { Catalog, ColumnInfo, TableInfo } from '../schema/catalog.ts';
import type { Condition, Filter, OrderTerm, ParsedQuery, SelectColumn, SelectEmbed, SelectItem } from './query.ts';

/** Rows returned by one read when the client asks for more (or for no limit). */
export const MAX_ROWS = 1000;

const q = (name: string) => pg.escapeIdentifier(name);
const lit = (value: string) => pg.escapeLiteral(value);

/** Raised when a name is missing from the snapshot: the service re-reads the catalog once and retries. */
export class CatalogMiss extends AppError {}

export function tableOf(catalog: Catalog, name: string): TableInfo {
  const table = catalog.get(name);
  if (!table) {
    const miss = new CatalogMiss(404, 'RESOURCE_NOT_FOUND', `Table '${name}' not found.`, 'Create it with schema_apply, or list tables with schema_get.');
    miss.postgrest = { code: 'PGRST205', details: null };
    throw miss;
  }
  return table;
}

function columnOf(table: TableInfo, name: string): ColumnInfo {
  const column = table.columns.find((c) => c.name === name);
  if (!column) {
    throw new CatalogMiss(400, 'UNKNOWN_COLUMN', `Column '${name}' does not exist on table '${table.name}'.`, 'Check the column names with schema_get.');
  }
  return column;
}

/** A value cast to the column's declared type; Postgres's input function validates it (22xxx -> 400). */
function typed(column: ColumnInfo, value: string): string {
  return `${lit(value)}::${column.type}`;
}

/** How a column leaves the database: vectors as JSON number arrays, everything else as row_to_json renders it. */
function outputExpr(alias: string, column: ColumnInfo): string {
  const ref = `${alias}.${q(column.name)}`;
  return column.udt === 'vector' && !column.isArray ? `(${ref}::text)::json` : ref;
}

function columnList(alias: string, table: TableInfo, items: readonly (SelectColumn | { kind: 'star' })[]): string[] {
  return items.flatMap((item) =>
    item.kind === 'star'
      ? table.columns.map((c) => `${outputExpr(alias, c)} as ${q(c.name)}`)
      : [`${outputExpr(alias, columnOf(table, item.name))} as ${q(item.alias ?? item.name)}`],
  );
}

interface Join {
  target: TableInfo;
  /** many-to-one yields an object (or null), one-to-many an array. */
  toOne: boolean;
  on: string;
}

function resolveEmbed(catalog: Catalog, table: TableInfo, embed: SelectEmbed): Join {
  const target = tableOf(catalog, embed.relation);
  const matches = (name: string, columns: string[]) => !embed.hint || embed.hint === name || (columns.length === 1 && columns[0] === embed.hint);
  const forward = table.foreignKeys.filter((fk) => fk.refTable === target.name && matches(fk.name, fk.columns));
  const reverse = target.foreignKeys.filter((fk) => fk.refTable === table.name && matches(fk.name, fk.columns));
  const candidates = [
    ...forward.map((fk) => ({ toOne: true, pairs: fk.columns.map((c, i) => [`_e.${q(fk.refColumns[i]!)}`, `_m.${q(c)}`]) })),
    ...reverse.map((fk) => ({ toOne: false, pairs: fk.columns.map((c, i) => [`_e.${q(c)}`, `_m.${q(fk.refColumns[i]!)}`]) })),
  ];
  if (candidates.length === 0) {
    throw new AppError(400, 'UNKNOWN_RELATIONSHIP', `No foreign key links '${table.name}' and '${target.name}'.`, 'Embed only tables joined by a foreign key (declare one with references in schema_apply).');
  }
  if (candidates.length > 1) {
    throw new AppError(400, 'AMBIGUOUS_RELATIONSHIP', `Several foreign keys link '${table.name}' and '${target.name}'.`, `Name one: ${target.name}!<foreign key or column>(...).`);
  }
  const { toOne, pairs } = candidates[0]!;
  return { target, toOne, on: pairs.map(([a, b]) => `${a} = ${b}`).join(' and ') };
}

function embedExpr(catalog: Catalog, table: TableInfo, embed: SelectEmbed): { select: string; inner?: string } {
  const join = resolveEmbed(catalog, table, embed);
  const cols = columnList('_e', join.target, embed.columns).join(', ');
  const from = `from public.${q(join.target.name)} _e where ${join.on}`;
  const select = join.toOne
    ? `(select row_to_json(_x) from (select ${cols} ${from}) _x)`
    : `coalesce((select json_agg(_x) from (select ${cols} ${from}) _x), '[]'::json)`;
  const result: { select: string; inner?: string } = { select: `${select} as ${q(embed.alias ?? embed.relation)}` };
  if (embed.inner) result.inner = `exists (select 1 ${from})`;
  return result;
}

function selectList(catalog: Catalog, table: TableInfo, items: SelectItem[]): { columns: string; inner: string[] } {
  const parts: string[] = [];
  const inner: string[] = [];
  for (const item of items) {
    if (item.kind === 'embed') {
      const e = embedExpr(catalog, table, item);
      parts.push(e.select);
      if (e.inner) inner.push(e.inner);
    } else {
      parts.push(...columnList('_m', table, [item]));
    }
  }
  return { columns: parts.join(', '), inner };
}

const COMPARISON: Record<string, string> = { eq: '=', neq: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' };
const TSQUERY: Record<string, string> = { fts: 'to_tsquery', plfts: 'plainto_tsquery', phfts: 'phraseto_tsquery', wfts: 'websearch_to_tsquery' };

function conditionSql(table: TableInfo, cond: Condition): string {
  const column = columnOf(table, cond.column);
  const ref = `_m.${q(column.name)}`;
  let sql: string;
  if (cond.op in COMPARISON) sql = `${ref} ${COMPARISON[cond.op]} ${typed(column, cond.value)}`;
  else if (cond.op === 'like' || cond.op === 'ilike') sql = `${ref}::text ${cond.op} ${lit(cond.value.replaceAll('*', '%'))}`;
  else if (cond.op === 'is') sql = `${ref} is ${cond.value.toLowerCase()}`;
  else if (cond.op === 'in') sql = cond.list!.length ? `${ref} in (${cond.list!.map((v) => typed(column, v)).join(', ')})` : 'false';
  else {
    const config = cond.language ? `${lit(cond.language)}::regconfig, ` : '';
    const vector = column.udt === 'tsvector' ? ref : `to_tsvector(${config}${ref}::text)`;
    sql = `${vector} @@ ${TSQUERY[cond.op]}(${config}${lit(cond.value)})`;
  }
  return cond.negate ? `not (${sql})` : sql;
}

function filterSql(table: TableInfo, filter: Filter): string {
  if (filter.kind === 'cond') return conditionSql(table, filter);
  const inner = filter.items.map((f) => filterSql(table, f)).join(` ${filter.kind} `) || (filter.kind === 'and' ? 'true' : 'false');
  return filter.negate ? `not (${inner})` : `(${inner})`;
}

export function whereSql(table: TableInfo, filters: readonly Filter[], extra: readonly string[] = []): string {
  const parts = [...filters.map((f) => filterSql(table, f)), ...extra];
  return parts.length ? `where ${parts.join(' and ')}` : '';
}

function orderSql(table: TableInfo, order: readonly OrderTerm[]): string {
  if (!order.length) return '';
  const terms = order.map((o) => {
    const col = `_m.${q(columnOf(table, o.column).name)}`;
    return `${col} ${o.descending ? 'desc' : 'asc'}${o.nulls ? ` nulls ${o.nulls}` : ''}`;
  });
  return `order by ${terms.join(', ')}`;
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
function resultRow(source: string, out: OutputOptions, total = 'null::bigint'): string {
  const notSingle = out.single ? `when count(*) <> 1 then 'SV406:' || count(*)` : '';
  return `select case when bool_or(_j.over) then null else coalesce('[' || string_agg(_j.t, ',') filter (where not _j.over) || ']', '[]') end as body,
    count(*) as rows, ${total} as total,
    set_config('svc.abort', case when bool_or(_j.over) then 'SV413' ${notSingle} else '' end, true) as abort
    from (select _t.t, sum(octet_length(_t.t)) over (rows unbounded preceding) > ${out.maxBytes} as over
      from (select row_to_json(_r)::text as t from ${source}) _t) _j`;
}

/** A write's result row when the client asked for no rows back: only the count (and the single-row check). */
function countRow(source: string, out: OutputOptions): string {
  const abort = out.single ? `case when count(*) <> 1 then 'SV406:' || count(*) else '' end` : `''`;
  return `select null::text as body, count(*) as rows, null::bigint as total, set_config('svc.abort', ${abort}, true) as abort from ${source}`;
}

export interface ReadOptions {
  count: boolean;
  limit?: number;
  offset?: number;
  out: OutputOptions;
}

/** One row: body is the JSON array of rows (capped in size), total the exact count when asked (else null). */
export function compileRead(catalog: Catalog, tableName: string, query: ParsedQuery, opts: ReadOptions): string {
  const table = tableOf(catalog, tableName);
  const { columns, inner } = selectList(catalog, table, query.select);
  const where = whereSql(table, query.filters, inner);
  const from = `from public.${q(table.name)} _m ${where}`;
  const limit = Math.min(opts.limit ?? MAX_ROWS, MAX_ROWS);
  const page = `limit ${limit}${opts.offset ? ` offset ${opts.offset}` : ''}`;
  const total = opts.count ? `(select count(*) ${from})` : undefined;
  return resultRow(`(select ${columns} ${from} ${orderSql(table, query.order)} ${page}) _r`, opts.out, total);
}

/** The primary key condition of a by-id route. */
export function idFilter(table: TableInfo, id: string): Condition {
  if (table.primaryKey.length !== 1) {
    throw new AppError(400, 'NO_SINGLE_PRIMARY_KEY', `Table '${table.name}' has no single-column primary key.`, 'Use the collection route with a filter instead, e.g. ?col=eq.value.');
  }
  return { kind: 'cond', column: table.primaryKey[0]!, op: 'eq', negate: false, value: id };
}

export interface WriteOutput extends OutputOptions {
  /** The written rows come back (Prefer: return=representation); otherwise only their count. */
  rows: boolean;
}

/** `returning ...; select <result row>` around a write: the rows only when asked for, else nothing but `1`. */
function writeStatement(table: TableInfo, query: ParsedQuery, write: string, out: WriteOutput): string {
  if (!out.rows) return `with _w as (${write} returning 1) ${countRow('_w', out)}`;
  if (query.select.some((s) => s.kind === 'embed')) {
    throw new AppError(400, 'INVALID_QUERY', 'Embedding is not supported on writes.', 'Select plain columns, then read the embedded rows with a GET.');
  }
  const columns = columnList('_m', table, query.select as (SelectColumn | { kind: 'star' })[]).join(', ');
  return `with _w as (${write} returning ${columns}) ${resultRow('_w _r', out)}`;
}

export interface InsertOptions {
  rows: Record<string, unknown>[];
  upsert?: 'merge-duplicates' | 'ignore-duplicates';
  /** Prefer: missing=default: a key a row lacks takes the column's default instead of null. */
  missingDefault?: boolean;
  out: WriteOutput;
}

/** The columns an insert writes: `columns=` when given, else every key of any row, in first-seen order. */
export function insertColumns(query: ParsedQuery, rows: readonly Record<string, unknown>[]): string[] {
  return query.columns ?? [...new Set(rows.flatMap((r) => Object.keys(r)))];
}

/**
 * With missing=default, rows that lack some of the columns cannot go through json_populate_recordset (it yields
 * null for a missing key, and an expression cannot name a column's default). They become one multi-row VALUES
 * list instead, where a missing key is the keyword DEFAULT: still one INSERT (so RETURNING keeps the rows' order
 * and ON CONFLICT sees them all), each present value converted by json_populate_record as in the bulk path.
 */
function valuesWithDefaults(table: TableInfo, names: readonly string[], rows: readonly Record<string, unknown>[]): string {
  const record = `null::public.${q(table.name)}`;
  const cell = (row: Record<string, unknown>, name: string) =>
    Object.hasOwn(row, name) ? `(json_populate_record(${record}, ${lit(JSON.stringify({ [name]: row[name] }))})).${q(name)}` : 'DEFAULT';
  return `values ${rows.map((row) => `(${names.map((n) => cell(row, n)).join(', ')})`).join(', ')}`;
}

export function compileInsert(catalog: Catalog, tableName: string, query: ParsedQuery, opts: InsertOptions): string {
  const table = tableOf(catalog, tableName);
  const names = insertColumns(query, opts.rows).map((n) => columnOf(table, n).name);
  const cols = names.map(q);
  const complete = opts.rows.every((row) => names.every((n) => Object.hasOwn(row, n)));
  const source =
    opts.missingDefault && !complete
      ? valuesWithDefaults(table, names, opts.rows)
      : `select ${cols.join(', ')} from json_populate_recordset(null::public.${q(table.name)}, ${lit(JSON.stringify(opts.rows))})`;
  // Rows naming no column at all are rows of defaults only.
  const insert = cols.length
    ? `insert into public.${q(table.name)} as _m (${cols.join(', ')}) ${source}`
    : opts.rows.length === 1
      ? `insert into public.${q(table.name)} as _m default values`
      : `insert into public.${q(table.name)} as _m select from generate_series(1, ${opts.rows.length})`;
  let conflict = '';
  if (opts.upsert) {
    const target = (query.onConflict ?? table.primaryKey).map((n) => q(columnOf(table, n).name));
    if (!target.length) throw errors.validation(`Upsert on '${table.name}' needs on_conflict=<unique columns>; the table has no primary key.`);
    // With nothing but the key to merge, still "update" the key so the existing row is returned.
    const merged = cols.filter((c) => !target.includes(c));
    const updates = (merged.length ? merged : target).map((c) => `${c} = excluded.${c}`);
    conflict =
      opts.upsert === 'merge-duplicates'
        ? ` on conflict (${target.join(', ')}) do update set ${updates.join(', ')}`
        : ` on conflict (${target.join(', ')}) do nothing`;
  }
  return writeStatement(table, query, `${insert}${conflict}`, opts.out);
}

export function compileUpdate(catalog: Catalog, tableName: string, query: ParsedQuery, patch: Record<string, unknown>, out: WriteOutput, extra: Filter[] = []): string {
  const table = tableOf(catalog, tableName);
  const cols = Object.keys(patch).map((n) => q(columnOf(table, n).name));
  if (!cols.length) throw errors.validation('The body must name at least one column to change.');
  const source = `(select ${cols.join(', ')} from json_populate_record(null::public.${q(table.name)}, ${lit(JSON.stringify(patch))}))`;
  return writeStatement(table, query, `update public.${q(table.name)} as _m set (${cols.join(', ')}) = ${source} ${whereSql(table, [...query.filters, ...extra])}`, out);
}

export function compileDelete(catalog: Catalog, tableName: string, query: ParsedQuery, out: WriteOutput, extra: Filter[] = []): string {
  const table = tableOf(catalog, tableName);
  return writeStatement(table, query, `delete from public.${q(table.name)} as _m ${whereSql(table, [...query.filters, ...extra])}`, out);
}
