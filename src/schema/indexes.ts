// Partial and expression indexes of a schema definition. An index key is a column, or lower(col), upper(col) or
// col->>'key'; a partial index's `where` is PostgREST filters joined by & (status=eq.active&deleted_at=is.null). Both
// are parsed here into SQL with quoted names and literal values, never spliced from the definition's text. Postgres
// prints them back its own way, so such an index also carries its definition in its comment (COMMENT ON INDEX), which
// the catalog reads for schema_get and the diff.
import pg from 'pg';
import { errors } from '../core/errors.ts';
import { checkIdentifier } from './identifiers.ts';

/** What a definition says of an index, as its comment keeps it. */
export interface IndexShape {
  columns: string[];
  unique: boolean;
  where?: string;
}

/** How an index's comment starts when it carries its definition. */
const COMMENT_PREFIX = 'svc:index:';
const MAX_CONDITIONS = 10;
const MAX_VALUE_LENGTH = 200;
const IDENT = /^[a-z_][a-z0-9_]{0,62}$/;
/** What reads as a plain name (so a bad one is refused as a name, not as an expression). */
const NAME_LIKE = /^[A-Za-z_][A-Za-z0-9_$]*$/;
const FUNCTION_KEY = /^(lower|upper)\(([a-z_][a-z0-9_]{0,62})\)$/;
const JSON_KEY = /^([a-z_][a-z0-9_]{0,62})->>'([A-Za-z0-9_ .-]{1,63})'$/;
const OPERATORS: Record<string, string> = { eq: '=', neq: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' };

const q = (name: string) => pg.escapeIdentifier(name);

/** An index key: the column it reads and its SQL. */
export function indexKey(entry: string, label: string): { column: string; sql: string } {
  if (NAME_LIKE.test(entry)) {
    checkIdentifier(entry, label);
    return { column: entry, sql: q(entry) };
  }
  const fn = FUNCTION_KEY.exec(entry);
  if (fn) return { column: fn[2]!, sql: `${fn[1]}(${q(fn[2]!)})` };
  const json = JSON_KEY.exec(entry);
  if (json) return { column: json[1]!, sql: `(${q(json[1]!)} ->> ${pg.escapeLiteral(json[2]!)})` };
  throw errors.validation(`${label}: '${entry.slice(0, 80)}' is not an index key; use a column name, lower(column), upper(column) or column->>'key'.`);
}

/** A partial index's condition: the columns it reads and its SQL (conditions ANDed). */
export function indexWhere(where: string, label: string): { columns: string[]; sql: string } {
  const parts = where.split('&');
  if (parts.length > MAX_CONDITIONS) throw errors.validation(`${label}: at most ${MAX_CONDITIONS} conditions.`);
  const conditions = parts.map((part) => indexCondition(part, label));
  return { columns: conditions.map((c) => c.column), sql: conditions.map((c) => c.sql).join(' AND ') };
}

function indexCondition(part: string, label: string): { column: string; sql: string } {
  const bad = (why: string) => errors.validation(`${label}: '${part.slice(0, 80)}' ${why}; write column=op.value (eq, neq, gt, gte, lt, lte, in.(a,b), is.null, not.is.null, is.true, is.false) joined by &.`);
  const eq = part.indexOf('=');
  if (eq <= 0) throw bad('is not a condition');
  const column = part.slice(0, eq);
  if (!IDENT.test(column)) throw bad('does not start with a column name');
  checkIdentifier(column, label);
  const test = part.slice(eq + 1);
  const c = q(column);
  if (test === 'is.null') return { column, sql: `${c} IS NULL` };
  if (test === 'not.is.null') return { column, sql: `${c} IS NOT NULL` };
  if (test === 'is.true' || test === 'is.false') return { column, sql: `${c} IS ${test.slice(3).toUpperCase()}` };
  const dot = test.indexOf('.');
  const op = dot < 0 ? '' : test.slice(0, dot);
  const value = test.slice(dot + 1);
  if (value.length > MAX_VALUE_LENGTH) throw bad(`has a value over ${MAX_VALUE_LENGTH} characters`);
  if (op === 'in') {
    if (!value.startsWith('(') || !value.endsWith(')') || value.length < 3) throw bad('lists no values');
    const values = value.slice(1, -1).split(',');
    return { column, sql: `${c} IN (${values.map((v) => pg.escapeLiteral(v)).join(', ')})` };
  }
  const sqlOp = OPERATORS[op];
  if (!sqlOp) throw bad('has no known operator');
  return { column, sql: `${c} ${sqlOp} ${pg.escapeLiteral(value)}` };
}

/** Whether an index needs its definition kept in its comment (Postgres alone cannot give it back as written). */
export const needsComment = (shape: IndexShape): boolean => shape.where !== undefined || shape.columns.some((c) => !IDENT.test(c));

export function indexCommentSql(name: string, shape: IndexShape): string {
  return `COMMENT ON INDEX ${q(name)} IS ${pg.escapeLiteral(COMMENT_PREFIX + JSON.stringify(shape))}`;
}

/** The definition an index's comment carries, if it carries one. */
export function shapeFromComment(comment: string | null | undefined): IndexShape | undefined {
  if (!comment?.startsWith(COMMENT_PREFIX)) return undefined;
  try {
    const shape = JSON.parse(comment.slice(COMMENT_PREFIX.length)) as IndexShape;
    return Array.isArray(shape.columns) && typeof shape.unique === 'boolean' ? shape : undefined;
  } catch {
    return undefined;
  }
}

/** A declared index's definition as its comment keeps it (`where` only on a partial index). */
export function indexShape(index: IndexShape): IndexShape {
  return index.where === undefined ? { columns: index.columns, unique: index.unique } : { columns: index.columns, unique: index.unique, where: index.where };
}

/** What a live index is, as a definition would write it: its comment's definition, else its plain columns. */
export function liveShape(index: { columns: string[]; unique: boolean; comment?: string | null }): IndexShape {
  return shapeFromComment(index.comment) ?? { columns: index.columns, unique: index.unique };
}

export const sameShape = (a: IndexShape, b: IndexShape): boolean => a.unique === b.unique && a.columns.join('\n') === b.columns.join('\n') && (a.where ?? '') === (b.where ?? '');
