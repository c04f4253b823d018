// Compiles a parsed PostgREST query against the app's catalog into one SQL statement whose single row
// carries the response body as JSON text (built by Postgres) and a row count. Every identifier comes from
// the catalog and is quoted; every value is a quoted literal cast to its column's type, so the statement can
// travel in the same simple-protocol round trip as BEGIN / SET LOCAL ROLE / claims / COMMIT.
import { AppError } from '../core/errors.ts';
import type { Catalog, ColumnInfo, TableInfo } from '../schema/catalog.ts';
import { CatalogMiss, fieldSql, filterSql, q } from './filters.ts';
import { countPlan, resultRow, type CountKind, type OutputOptions } from './output.ts';
import type { Condition, EmbedParams, OrderTerm, ParsedQuery, SelectColumn, SelectCount, SelectEmbed, SelectItem } from './query.ts';
import { resolveRelationship } from './relationships.ts';

export { CatalogMiss, columnOf, whereSql } from './filters.ts';

/** Rows returned by one read when the client asks for more (or for no limit). */
export const MAX_ROWS = 1000;

export function tableOf(catalog: Catalog, name: string): TableInfo {
  const table = catalog.get(name);
  if (!table) {
    const miss = new CatalogMiss(404, 'RESOURCE_NOT_FOUND', `Table '${name}' not found.`, 'Create it with schema_apply, or list tables with schema_get.');
    miss.postgrest = { code: 'PGRST205', message: `Could not find the table 'public.${name}' in the schema cache`, details: null, hint: null };
    throw miss;
  }
  return table;
}

/** One select list over one table: its output columns, the lateral joins of its spreads, its conditions and grouping. */
export interface LevelSql {
  columns: string;
  /** The output names of `columns`, in order. */
  names: string[];
  joins: string;
  where: string[];
  groupBy: string;
  orderBy: string;
}

interface Output {
  expr: string;
  name: string;
  aggregate: boolean;
}

const NO_PARAMS: EmbedParams = { filters: [], order: [] };

/** Renders the select lists of one statement; aliases are numbered so that nested levels never shadow each other. */
class Renderer {
  readonly #catalog: Catalog;
  readonly #embedded: ReadonlyMap<string, EmbedParams> | undefined;
  /** The embed paths of the select, by alias and by relation name: an embedded filter naming any other is refused. */
  readonly embedPaths = new Set<string>();
  #aliases = 0;

  constructor(catalog: Catalog, embedded: ReadonlyMap<string, EmbedParams> | undefined) {
    this.#catalog = catalog;
    this.#embedded = embedded;
  }

  level(table: TableInfo, alias: string, items: readonly SelectItem[], params: EmbedParams, path: string): LevelSql {
    const outputs: Output[] = [];
    const joins: string[] = [];
    const where: string[] = [];
    const exists = new Map<string, string>();
    const keys = new Set<string>();
    for (const item of items) {
      if (item.kind === 'embed') {
        const key = item.alias ?? item.relation;
        if (!item.spread && !item.hidden && keys.has(key)) throw embeddedTwice(table, item);
        keys.add(key);
        const embed = this.#embed(table, alias, item, path);
        outputs.push(...embed.outputs);
        if (embed.join) joins.push(embed.join);
        if (item.inner) where.push(embed.exists);
        exists.set(item.alias ?? item.relation, embed.exists);
      } else {
        outputs.push(...this.#columns(table, alias, item));
      }
    }
    for (const f of params.filters) where.push(filterSql(table, alias, f, (name) => exists.get(name)));
    const grouped = outputs.some((o) => o.aggregate);
    const groupBy = grouped ? outputs.filter((o) => !o.aggregate).map((o) => o.expr) : [];
    return {
      columns: outputs.map((o) => `${o.expr} as ${q(o.name)}`).join(', '),
      names: outputs.map((o) => o.name),
      joins: joins.join(' '),
      where,
      groupBy: groupBy.length ? `group by ${groupBy.join(', ')}` : '',
      orderBy: this.#orderBy(table, alias, params.order),
    };
  }

  #columns(table: TableInfo, alias: string, item: SelectColumn | SelectCount | { kind: 'star' }): Output[] {
    if (item.kind === 'star') return table.columns.map((c) => ({ expr: outputExpr(`${alias}.${q(c.name)}`, c), name: c.name, aggregate: false }));
    // `rel(count)`: PostgREST reads a bare `count` that is not a column as count().
    if (item.kind === 'count' || (item.name === 'count' && !item.path && !item.aggregate && !table.columns.some((c) => c.name === 'count'))) {
      return [{ expr: cast('count(*)', item.cast), name: item.alias ?? 'count', aggregate: true }];
    }
    const field = fieldSql(table, alias, item.name, item.path);
    const value = cast(field.yields === 'column' ? outputExpr(field.sql, field.column) : field.sql, item.cast);
    const name = item.alias ?? (item.aggregate ? item.aggregate : (item.path?.at(-1)?.key ?? item.name));
    if (!item.aggregate) return [{ expr: value, name, aggregate: false }];
    return [{ expr: cast(`${item.aggregate}(${value})`, item.aggregateCast), name, aggregate: true }];
  }

  #embed(table: TableInfo, parentAlias: string, embed: SelectEmbed, parentPath: string): { outputs: Output[]; join?: string; exists: string } {
    const rel = resolveRelationship(this.#catalog, table, embed.relation, embed.hint);
    const alias = `_e${++this.#aliases}`;
    const name = embed.alias ?? embed.relation;
    const path = parentPath ? `${parentPath}.${name}` : name;
    const byRelation = parentPath ? `${parentPath}.${embed.relation}` : embed.relation;
    this.embedPaths.add(path).add(byRelation);
    const params = this.#embedded?.get(path) ?? (embed.alias ? this.#embedded?.get(byRelation) : undefined) ?? NO_PARAMS;
    const child = this.#embeddedLevel(rel.target, alias, embed.columns, params, path);
    const conditions = [rel.on(parentAlias, alias), ...child.where].join(' and ');
    const from = `from public.${q(rel.target.name)} ${alias}`;
    const exists = `exists (select 1 ${from} where ${conditions})`;
    if (embed.hidden) return { outputs: [], exists };
    const body = `select ${child.columns} ${from} ${child.joins} where ${conditions} ${child.groupBy} ${child.orderBy} ${page(params.limit, params.offset)}`;
    if (!embed.spread) {
      const expr = rel.toOne ? `(select row_to_json(_x) from (${body}) _x)` : `coalesce((select json_agg(_x) from (${body}) _x), '[]'::json)`;
      return { outputs: [{ expr, name, aggregate: false }], exists };
    }
    const spread = `_s${this.#aliases}`;
    const names = child.names;
    const lateral = rel.toOne
      ? body
      : `select ${names.map((n) => `coalesce(json_agg(_x.${q(n)}), '[]'::json) as ${q(n)}`).join(', ')} from (${body}) _x`;
    return {
      outputs: names.map((n) => ({ expr: `${spread}.${q(n)}`, name: n, aggregate: false })),
      join: `left join lateral (${lateral}) ${spread} on true`,
      exists,
    };
  }

  /** An embedded level; a column missing from it is named as PostgREST names its alias there: `messages_1.sum`. */
  #embeddedLevel(table: TableInfo, alias: string, items: readonly SelectItem[], params: EmbedParams, path: string): LevelSql {
    try {
      return this.level(table, alias, items, params, path);
    } catch (err) {
      const named = err instanceof CatalogMiss ? err.postgrest : undefined;
      if (named?.message?.startsWith(`column ${table.name}.`)) {
        named.message = named.message.replace(`column ${table.name}.`, `column ${table.name}_${path.split('.').length}.`);
      }
      throw err;
    }
  }

  #orderBy(table: TableInfo, alias: string, order: readonly OrderTerm[]): string {
    if (!order.length) return '';
    const terms = order.map((o) => {
      const expr = o.relation ? this.#relatedColumn(table, alias, o) : fieldSql(table, alias, o.column, o.path).sql;
      return `${expr} ${o.descending ? 'desc' : 'asc'}${o.nulls ? ` nulls ${o.nulls}` : ''}`;
    });
    return `order by ${terms.join(', ')}`;
  }

  /** `order=rel(col)`: the column of the one row a to-one relationship yields. */
  #relatedColumn(table: TableInfo, alias: string, order: OrderTerm): string {
    const rel = resolveRelationship(this.#catalog, table, order.relation!);
    if (!rel.toOne) {
      throw new AppError(400, 'INVALID_QUERY', `'${order.relation}' is a to-many relationship of '${table.name}', so its columns cannot order the rows.`, 'Order by a column of a many-to-one or one-to-one relationship, or order the embedded rows with <relation>.order=.');
    }
    const related = `_o${++this.#aliases}`;
    return `(select ${fieldSql(rel.target, related, order.column, order.path).sql} from public.${q(rel.target.name)} ${related} where ${rel.on(alias, related)})`;
  }
}

/** Two embeds under one name would yield one key twice: PostgREST refuses it as Postgres does a repeated table name. */
function embeddedTwice(table: TableInfo, embed: SelectEmbed): AppError {
  const name = embed.alias ?? embed.relation;
  const err = new AppError(400, 'INVALID_QUERY', `'${name}' is embedded twice in the select of '${table.name}'.`, `Give each embedding its own alias, e.g. first:${embed.relation}!<hint>(...), second:${embed.relation}!<hint>(...).`);
  err.postgrest = { code: '42712', message: `table name "${table.name}_${name}_1" specified more than once`, details: null, hint: null };
  return err;
}

function cast(expr: string, type: string | undefined): string {
  return type ? `(${expr})::${type}` : expr;
}

function page(limit: number | undefined, offset: number | undefined): string {
  return `${limit === undefined ? '' : `limit ${limit}`}${offset ? ` offset ${offset}` : ''}`;
}

/** How a column leaves the database: vectors as JSON number arrays, everything else as row_to_json renders it. */
function outputExpr(ref: string, column: ColumnInfo): string {
  return column.udt === 'vector' && !column.isArray ? `(${ref}::text)::json` : ref;
}

/** The select list of the table aliased `_m` (a read's, or a write's over its returned rows), with its spreads' joins. */
export function selectSql(catalog: Catalog, table: TableInfo, query: ParsedQuery): LevelSql {
  const renderer = new Renderer(catalog, query.embedded);
  const level = renderer.level(table, '_m', query.select, { filters: query.filters, order: query.order }, '');
  for (const path of query.embedded?.keys() ?? []) if (!renderer.embedPaths.has(path)) throw notEmbedded(path);
  return level;
}

/** `rel.col=eq.1` for a `rel` the select does not embed: silently ignoring it would widen the read. */
function notEmbedded(path: string): AppError {
  const err = new AppError(400, 'INVALID_QUERY', `'${path}' is not an embedded resource of this request.`, `Embed it in select (e.g. select=*,${path.split('.').at(-1)}(*)) or filter a column of the table itself.`);
  err.postgrest = { code: 'PGRST108', message: `'${path}' is not an embedded resource in this request`, details: null, hint: `Verify that '${path}' is included in the 'select' query parameter.` };
  return err;
}

export interface ReadOptions {
  count?: CountKind | undefined;
  limit?: number;
  offset?: number;
  out: OutputOptions;
}

/** One row: body is the JSON array of rows (capped in size), total the count when asked (else null). */
export function compileRead(catalog: Catalog, tableName: string, query: ParsedQuery, opts: ReadOptions): string {
  const table = tableOf(catalog, tableName);
  return compileReadFrom(catalog, table, `public.${q(table.name)} _m`, query, opts);
}

/** A read of `table`'s rows as `source` yields them (a from-item aliased `_m`: the table, or a function's call). */
export function compileReadFrom(catalog: Catalog, table: TableInfo, source: string, query: ParsedQuery, opts: ReadOptions): string {
  const level = selectSql(catalog, table, query);
  const where = level.where.length ? `where ${level.where.join(' and ')}` : '';
  const limit = Math.min(opts.limit ?? MAX_ROWS, MAX_ROWS);
  const counting = countPlan(`from ${source} ${where}`, opts.count);
  const rows = `select ${level.columns} from ${source} ${level.joins} ${where} ${level.groupBy} ${level.orderBy} ${page(limit, opts.offset)}`;
  return counting.before + resultRow(`(${rows}) _r`, opts.out, counting.total);
}

/** The primary key condition of a by-id route. */
export function idFilter(table: TableInfo, id: string): Condition {
  if (table.primaryKey.length !== 1) {
    throw new AppError(400, 'NO_SINGLE_PRIMARY_KEY', `Table '${table.name}' has no single-column primary key.`, 'Use the collection route with a filter instead, e.g. ?col=eq.value.');
  }
  return { kind: 'cond', column: table.primaryKey[0]!, op: 'eq', negate: false, value: id };
}

