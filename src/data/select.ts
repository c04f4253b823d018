// The `select=` parameter: columns, JSON paths, casts, aggregates, and embedded resources nested to any depth.
import { AppError } from '../core/errors.ts';
import { badQuery, parseField, splitList, type JsonStep } from './query.ts';

export type AggregateFn = 'count' | 'sum' | 'avg' | 'min' | 'max';

export interface SelectColumn {
  kind: 'column';
  name: string;
  path?: JsonStep[];
  alias?: string;
  /** `col::text`: the column's value cast before the aggregate (if any). */
  cast?: string;
  /** `col.sum()`: the aggregate over the column; the other selected columns are the grouping. */
  aggregate?: AggregateFn;
  /** `col.sum()::int`: the aggregate's result cast. */
  aggregateCast?: string;
}

/** `count()`: the number of rows of the group. */
export interface SelectCount {
  kind: 'count';
  alias?: string;
  cast?: string;
}

export interface SelectEmbed {
  kind: 'embed';
  /** A table, a foreign key's column, or a foreign key's name. */
  relation: string;
  alias?: string;
  /** `!hint`: a foreign key name or column, or the join table of a many-to-many relationship. */
  hint?: string;
  /** `!inner` keeps only the rows that have a match; `!left` (the default) keeps them all. */
  inner: boolean;
  /** `...rel(cols)`: the columns are spread into the parent object. */
  spread: boolean;
  /** `rel()`: embedded only to filter by, absent from the output. */
  hidden: boolean;
  columns: SelectItem[];
}

export type SelectItem = SelectColumn | SelectCount | SelectEmbed | { kind: 'star' };

/** Per request: embedded resources, and items of one select list (columns and embeds). Beyond them planning alone can outlast the statement timeout. */
export const MAX_EMBEDS = 20;
export const MAX_SELECT_ITEMS = 200;

const NAME = '[A-Za-z_][A-Za-z0-9_]*';
/**
 * Types a value may be cast to (`col::text`): a fixed list, so that the name written into the statement is never
 * more than a type name (with a length or precision and `[]`) and cannot reach the catalog (regclass, regrole, ...).
 */
const CAST_TYPES = [
  'text', 'varchar', 'char', 'bpchar', 'name', 'citext', 'int', 'int2', 'int4', 'int8', 'integer', 'smallint', 'bigint',
  'numeric', 'decimal', 'real', 'float4', 'float8', 'bool', 'boolean', 'json', 'jsonb', 'uuid', 'date', 'time', 'timetz',
  'timestamp', 'timestamptz', 'interval', 'bytea', 'money', 'inet', 'cidr', 'int4range', 'int8range', 'numrange',
  'tsrange', 'tstzrange', 'daterange', 'tsvector', 'tsquery', 'vector',
].join('|');
const CAST = String.raw`(?:${CAST_TYPES})(?:\(\d{1,4}(?:,\d{1,4})?\))?(?:\[\])?`;
const EMBED = new RegExp(String.raw`^(?:(${NAME}):)?(\.\.\.)?(${NAME})((?:!${NAME})*)\(([\s\S]*)\)$`);
const COUNT = new RegExp(String.raw`^(?:(${NAME}):)?count\(\)(?:::(${CAST}))?$`);
const COLUMN = new RegExp(String.raw`^(?:(${NAME}):)?([^:.]+)(?:::(${CAST}))?(?:\.(count|sum|avg|min|max)\(\)(?:::(${CAST}))?)?$`);

export function parseSelect(value: string): SelectItem[] {
  if (value.trim() === '') return [{ kind: 'star' }];
  const items = parseList(value, 0);
  const embeds = countEmbeds(items);
  if (embeds > MAX_EMBEDS) throw tooWide(`${embeds} embedded resources`, `at most ${MAX_EMBEDS}`);
  return items;
}

function parseList(value: string, depth: number): SelectItem[] {
  // Each level is an embedded resource: deeper than the embed limit is refused before it is parsed (and recursed into).
  if (depth > MAX_EMBEDS) throw tooWide(`more than ${MAX_EMBEDS} embedded resources`, `at most ${MAX_EMBEDS}`);
  const items = splitList(value).map((item) => parseSelectItem(item, depth));
  if (items.length > MAX_SELECT_ITEMS) throw tooWide(`${items.length} items in one select list`, `at most ${MAX_SELECT_ITEMS}`);
  return items;
}

function countEmbeds(items: readonly SelectItem[]): number {
  return items.reduce((n, i) => (i.kind === 'embed' ? n + 1 + countEmbeds(i.columns) : n), 0);
}

const tooWide = (found: string, limit: string) =>
  new AppError(400, 'QUERY_TOO_COMPLEX', `The select has ${found}; ${limit} are allowed per request.`, 'Split the read into several requests, or select only the columns you need.');

function parseSelectItem(item: string, depth: number): SelectItem {
  if (item === '*') return { kind: 'star' };
  const count = COUNT.exec(item);
  if (count) return withOptional({ kind: 'count' } as SelectCount, { alias: count[1], cast: count[2] });
  const embed = EMBED.exec(item);
  if (embed) return parseEmbed(item, embed, depth);
  const col = COLUMN.exec(item);
  if (!col) throw badQuery(`Cannot read select item '${item}'; use col, alias:col, col->key, col::type, col.sum(), count() or relation(cols).`);
  const field = parseField(col[2]!, `select=${item}`);
  const column: SelectColumn = { kind: 'column', name: field.column };
  return withOptional(column, { path: field.path, alias: col[1], cast: col[3], aggregate: col[4] as AggregateFn | undefined, aggregateCast: col[5] });
}

function parseEmbed(item: string, m: RegExpExecArray, depth: number): SelectEmbed {
  const [, alias, spread, relation, bangs, inside] = m;
  const embed: SelectEmbed = { kind: 'embed', relation: relation!, inner: false, spread: !!spread, hidden: inside!.trim() === '', columns: [] };
  if (spread && alias) throw badQuery(`A spread takes no alias, in '${item}'.`);
  for (const mark of bangs!.split('!').slice(1)) {
    if (mark === 'inner') embed.inner = true;
    else if (mark === 'left') embed.inner = false;
    else if (embed.hint === undefined) embed.hint = mark;
    else throw badQuery(`Only one hint is allowed per embedded resource, in '${item}'.`);
  }
  if (alias) embed.alias = alias;
  if (!embed.hidden) embed.columns = parseList(inside!, depth + 1);
  return embed;
}

/** Sets only the keys whose value is defined (exactOptionalPropertyTypes). */
function withOptional<T extends object>(target: T, values: Record<string, unknown>): T {
  for (const [k, v] of Object.entries(values)) if (v !== undefined) (target as Record<string, unknown>)[k] = v;
  return target;
}
