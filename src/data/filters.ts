// Filters: column (or JSON path) expressions and the SQL of each PostgREST operator. Values are quoted literals
// cast to the column's type, so Postgres's input functions validate them (22xxx -> 400).
import pg from 'pg';
import { AppError } from '../core/errors.ts';
import type { ColumnInfo, TableInfo } from '../schema/catalog.ts';
import type { Condition, Filter, JsonStep } from './query.ts';

export const q = (name: string) => pg.escapeIdentifier(name);
export const lit = (value: string) => pg.escapeLiteral(value);

/** Raised when a name is missing from the snapshot: the service re-reads the catalog once and retries. */
export class CatalogMiss extends AppError {}

export function columnOf(table: TableInfo, name: string): ColumnInfo {
  const column = table.columns.find((c) => c.name === name);
  if (!column) {
    const miss = new CatalogMiss(400, 'UNKNOWN_COLUMN', `Column '${name}' does not exist on table '${table.name}'.`, 'Check the column names with schema_get.');
    miss.postgrest = { code: '42703', message: `column ${table.name}.${name} does not exist`, details: null, hint: null };
    throw miss;
  }
  return column;
}

/** A column, or a JSON path into one: its SQL and what it yields ('column' keeps the column's type). */
export interface FieldSql {
  sql: string;
  column: ColumnInfo;
  yields: 'column' | 'jsonb' | 'text';
}

export function fieldSql(table: TableInfo, alias: string, name: string, path: readonly JsonStep[] | undefined): FieldSql {
  const column = columnOf(table, name);
  const ref = `${alias}.${q(column.name)}`;
  if (!path?.length) return { sql: ref, column, yields: 'column' };
  if (column.isArray || (column.udt !== 'json' && column.udt !== 'jsonb')) {
    throw new AppError(400, 'INVALID_QUERY', `'${name}' is not a json or jsonb column, so it has no JSON path.`, 'Use -> and ->> only on json and jsonb columns.');
  }
  // jsonb throughout: json has no equality operator, and both print the same.
  let sql = column.udt === 'json' ? `${ref}::jsonb` : ref;
  for (const step of path) sql = `(${sql}${step.arrow}${/^-?\d+$/.test(step.key) ? step.key : lit(step.key)})`;
  return { sql, column, yields: path[path.length - 1]!.arrow === '->>' ? 'text' : 'jsonb' };
}

/** A literal of the field's type: the column's, jsonb for `->`, text for `->>`. */
function typed(field: FieldSql, value: string): string {
  if (field.yields === 'text') return lit(value);
  if (field.yields === 'jsonb') return `${lit(value)}::jsonb`;
  return `${lit(value)}::${field.column.type}`;
}

const COMPARISON: Record<string, string> = { eq: '=', neq: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=', match: '~', imatch: '~*', like: 'like', ilike: 'ilike' };
const CONTAINMENT: Record<string, string> = { cs: '@>', cd: '<@', ov: '&&', sl: '<<', sr: '>>', nxr: '&<', nxl: '&>', adj: '-|-' };
const TSQUERY: Record<string, string> = { fts: 'to_tsquery', plfts: 'plainto_tsquery', phfts: 'phraseto_tsquery', wfts: 'websearch_to_tsquery' };
const IS: Record<string, string> = { null: 'null', not_null: 'not null', true: 'true', false: 'false', unknown: 'unknown' };
const PATTERN = new Set(['like', 'ilike', 'match', 'imatch']);

/** A condition whose column is an embedded resource (`rel=is.null`, `rel=not.is.null`): its existence test. */
export type EmbedExists = (name: string) => string | undefined;

function conditionSql(table: TableInfo, alias: string, cond: Condition, embedExists: EmbedExists | undefined): string {
  if (!cond.path && embedExists && !table.columns.some((c) => c.name === cond.column)) {
    const exists = embedExists(cond.column);
    if (exists !== undefined) return embedNullTest(cond, exists);
  }
  const field = fieldSql(table, alias, cond.column, cond.path);
  const sql = operatorSql(field, cond);
  return cond.negate ? `not (${sql})` : sql;
}

function embedNullTest(cond: Condition, exists: string): string {
  const value = cond.value.toLowerCase();
  if (cond.op !== 'is' || (value !== 'null' && value !== 'not_null')) {
    throw new AppError(400, 'INVALID_QUERY', `An embedded resource can only be tested with is.null or not.is.null, in '${cond.column}'.`, `Filter its columns instead: ${cond.column}.<column>=eq.<value>.`);
  }
  const present = (value === 'not_null') !== cond.negate;
  return present ? exists : `not ${exists}`;
}

function operatorSql(field: FieldSql, cond: Condition): string {
  const { op } = cond;
  // Patterns match the text form of any column, as PostgREST's do.
  const ref = PATTERN.has(op) && field.yields !== 'text' ? `${field.sql}::text` : field.sql;
  const pattern = (v: string) => lit(op === 'like' || op === 'ilike' ? v.replaceAll('*', '%') : v);
  if (cond.quantifier) {
    const values = cond.list!.map((v) => (PATTERN.has(op) ? pattern(v) : typed(field, v)));
    return `${ref} ${COMPARISON[op]} ${cond.quantifier} (array[${values.join(', ')}])`;
  }
  if (PATTERN.has(op)) return `${ref} ${COMPARISON[op]} ${pattern(cond.value)}`;
  if (op in COMPARISON) return `${ref} ${COMPARISON[op]} ${typed(field, cond.value)}`;
  if (op in CONTAINMENT) return `${ref} ${CONTAINMENT[op]} ${typed(field, cond.value)}`;
  if (op === 'is') return `${ref} is ${IS[cond.value.toLowerCase()]}`;
  if (op === 'isdistinct') return `${ref} is distinct from ${typed(field, cond.value)}`;
  if (op === 'in') return cond.list!.length ? `${ref} in (${cond.list!.map((v) => typed(field, v)).join(', ')})` : 'false';
  const config = cond.language ? `${lit(cond.language)}::regconfig, ` : '';
  const vector = field.column.udt === 'tsvector' && field.yields === 'column' ? ref : `to_tsvector(${config}${ref}::text)`;
  return `${vector} @@ ${TSQUERY[op]}(${config}${lit(cond.value)})`;
}

export function filterSql(table: TableInfo, alias: string, filter: Filter, embedExists?: EmbedExists): string {
  if (filter.kind === 'cond') return conditionSql(table, alias, filter, embedExists);
  const inner = filter.items.map((f) => filterSql(table, alias, f, embedExists)).join(` ${filter.kind} `) || (filter.kind === 'and' ? 'true' : 'false');
  return filter.negate ? `not (${inner})` : `(${inner})`;
}

/** `where ...` of the table aliased `_m`, or '' when nothing filters. */
export function whereSql(table: TableInfo, filters: readonly Filter[], extra: readonly string[] = []): string {
  const parts = [...filters.map((f) => filterSql(table, '_m', f)), ...extra];
  return parts.length ? `where ${parts.join(' and ')}` : '';
}
