// Compiles a parsed PostgREST query against the app's catalog into one SQL statement whose single row
// carries the response body as JSON text (built by Postgres) and a row count. Every identifier comes from
// the catalog and is quoted; every value is a quoted literal cast to its column's type, so the statement can
// travel in the same simple-protocol round trip as BEGIN / SET LOCAL ROLE / claims / COMMIT.
import pg from 'pg';
import { AppError, errors } from '../core/errors.ts';
import type { Catalog, ColumnInfo, TableInfo } from '../schema/catalog.ts';
import { countPlan, resultRow, type CountKind, type OutputOptions } from './output.ts';
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

export function columnOf(table: TableInfo, name: string): ColumnInfo {
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

export function columnList(alias: string, table: TableInfo, items: readonly (SelectColumn | { kind: 'star' })[]): string[] {
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

export interface ReadOptions {
  count?: CountKind | undefined;
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
  const counting = countPlan(from, opts.count);
  return counting.before + resultRow(`(select ${columns} ${from} ${orderSql(table, query.order)} ${page}) _r`, opts.out, counting.total);
}

/** The primary key condition of a by-id route. */
export function idFilter(table: TableInfo, id: string): Condition {
  if (table.primaryKey.length !== 1) {
    throw new AppError(400, 'NO_SINGLE_PRIMARY_KEY', `Table '${table.name}' has no single-column primary key.`, 'Use the collection route with a filter instead, e.g. ?col=eq.value.');
  }
  return { kind: 'cond', column: table.primaryKey[0]!, op: 'eq', negate: false, value: id };
}

