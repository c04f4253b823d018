// Inserts, updates and deletes: each one statement whose result row is shaped by src/data/output.ts.
import { errors } from '../core/errors.ts';
import type { Catalog, TableInfo } from '../schema/catalog.ts';
import { columnOf, selectSql, tableOf, whereSql } from './compile.ts';
import { lit, q } from './filters.ts';
import { countRow, resultRow, type OutputOptions } from './output.ts';
import type { Filter, ParsedQuery } from './query.ts';


export interface WriteOutput extends OutputOptions {
  /** The written rows come back (Prefer: return=representation); otherwise only their count. */
  rows: boolean;
}

/**
 * `returning ...; select <result row>` around a write: the rows only when asked for, else nothing but `1`. The
 * select list (embedded resources too) is rendered over the returned rows, aliased as the table.
 */
function writeStatement(catalog: Catalog, table: TableInfo, query: ParsedQuery, write: string, out: WriteOutput): string {
  if (!out.rows) return `with _w as (${write} returning 1) ${countRow('_w', out)}`;
  const level = selectSql(catalog, table, { ...query, filters: [], order: [] });
  return `with _w as (${write} returning *) ${resultRow(`(select ${level.columns} from _w _m ${level.joins} ${level.groupBy}) _r`, out)}`;
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
 *
 * PostgREST evaluates the defaults of the inserted columns for every row and lets a row's own values override them,
 * so a sequence (identity or serial) advances once per row even where the row brings its value; `sequenced` (the
 * columns whose default draws from a sequence) mirrors that, so the generated ids are the ones PostgREST gives.
 */
function valuesWithDefaults(table: TableInfo, names: readonly string[], rows: readonly Record<string, unknown>[], sequenced: ReadonlyMap<string, string>): string {
  const record = `null::public.${q(table.name)}`;
  const cell = (row: Record<string, unknown>, name: string) => {
    if (!Object.hasOwn(row, name)) return 'DEFAULT';
    const value = `(json_populate_record(${record}, ${lit(JSON.stringify({ [name]: row[name] }))})).${q(name)}`;
    const draw = sequenced.get(name);
    return draw ? `case when ${draw} is null then null else ${value} end` : value;
  };
  return `values ${rows.map((row) => `(${names.map((n) => cell(row, n)).join(', ')})`).join(', ')}`;
}

/** The inserted columns whose default draws from a sequence, each with the expression that draws it. */
function sequencedColumns(table: TableInfo, names: readonly string[]): Map<string, string> {
  const drawn = new Map<string, string>();
  for (const name of names) {
    const column = columnOf(table, name);
    if (column.identity) drawn.set(name, `nextval(pg_get_serial_sequence(${lit(`public.${q(table.name)}`)}, ${lit(name)}))`);
    else if (column.default !== null && /^nextval\(/.test(column.default)) drawn.set(name, column.default);
  }
  return drawn;
}

export function compileInsert(catalog: Catalog, tableName: string, query: ParsedQuery, opts: InsertOptions): string {
  const table = tableOf(catalog, tableName);
  const names = insertColumns(query, opts.rows).map((n) => columnOf(table, n).name);
  const cols = names.map(q);
  const complete = opts.rows.every((row) => names.every((n) => Object.hasOwn(row, n)));
  const sequenced = opts.missingDefault ? sequencedColumns(table, names) : new Map<string, string>();
  const source =
    opts.missingDefault && (!complete || sequenced.size > 0)
      ? valuesWithDefaults(table, names, opts.rows, sequenced)
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
        ? ` on conflict (${target.join(', ')}) do update set ${updates.join(', ')} where ${COUNT_UPDATED}`
        : ` on conflict (${target.join(', ')}) do nothing`;
  }
  const statement = writeStatement(catalog, table, query, `${insert}${conflict}`, opts.out);
  return opts.upsert === 'merge-duplicates' ? `${statement}; ${UPDATED_ROWS}` : statement;
}

/**
 * A merging upsert counts the rows it updates (its DO UPDATE's condition, always true, increments svc.updated), and
 * reports them after its result row: POST answers 200 instead of 201 when it inserted nothing, as PostgREST 12.
 */
const COUNT_UPDATED = `set_config('svc.updated', (coalesce(nullif(current_setting('svc.updated', true), '')::int, 0) + 1)::text, true) is not null`;
const UPDATED_ROWS = `select current_setting('svc.updated', true) as updated`;

/**
 * `set` from the body's keys, or with `columns=` from those columns only (other keys of the body are ignored); a
 * named column the body lacks is null, or its default with Prefer: missing=default (`missingDefault`).
 */
export function compileUpdate(
  catalog: Catalog,
  tableName: string,
  query: ParsedQuery,
  patch: Record<string, unknown>,
  out: WriteOutput,
  extra: Filter[] = [],
  missingDefault = false,
): string {
  const table = tableOf(catalog, tableName);
  const names = (query.columns ?? Object.keys(patch)).map((n) => columnOf(table, n).name);
  if (!names.length) throw errors.validation('The body must name at least one column to change.');
  const cols = names.map(q);
  const record = `json_populate_record(null::public.${q(table.name)}, ${lit(JSON.stringify(patch))})`;
  const set =
    missingDefault && !names.every((n) => Object.hasOwn(patch, n))
      ? names.map((n, i) => `${cols[i]} = ${Object.hasOwn(patch, n) ? `(select ${cols[i]} from ${record})` : 'default'}`).join(', ')
      : `(${cols.join(', ')}) = (select ${cols.join(', ')} from ${record})`;
  return writeStatement(catalog, table, query, `update public.${q(table.name)} as _m set ${set} ${whereSql(table, [...query.filters, ...extra])}`, out);
}

export function compileDelete(catalog: Catalog, tableName: string, query: ParsedQuery, out: WriteOutput, extra: Filter[] = []): string {
  const table = tableOf(catalog, tableName);
  return writeStatement(catalog, table, query, `delete from public.${q(table.name)} as _m ${whereSql(table, [...query.filters, ...extra])}`, out);
}
