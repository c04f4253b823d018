// The OpenAPI document of an app's data API, as PostgREST serves one at its root: Swagger 2.0 with a definition per
// table, a path per table with the operations the caller's role may use, and the shared parameters (a row filter
// per column, select, order, Range, limit, offset, Prefer, the body), and a path /rpc/{fn} per declared function the
// role may call. A pure function of the catalog and the functions: the route (tools/data/openapi.ts) hands it the live
// snapshot, its functions and the caller's role.
import { isGroupAccess, isRulesAccess, type Catalog, type ColumnInfo, type TableInfo } from '../schema/catalog.ts';
import type { RoleContext } from './executor.ts';
import type { DeclaredFunction } from './rpc.ts';

export type DataRole = RoleContext['role'];

export interface DataOpenApiOptions {
  /** The data API's base, e.g. https://api.example.com/v1/<app_id>: host, basePath and schemes come from it. */
  baseUrl: string;
  /** info.title: the app's name. */
  title: string;
  /** Whose reach the document describes: the tables and methods that role may use (default svc_service, all). */
  role?: DataRole;
  /** externalDocs.url: the reference of the query syntax. */
  docsUrl?: string;
  /** The app's declared functions (svc_meta.functions), each shown at /rpc/{fn} where the role may call it. */
  functions?: Iterable<DeclaredFunction>;
}

/** The parts of a Swagger 2.0 document we generate; the values are plain JSON. */
export type SwaggerDocument = {
  swagger: '2.0';
  info: { title: string; description: string; version: string };
  externalDocs?: { description: string; url: string };
  host: string;
  basePath: string;
  schemes: string[];
  consumes: string[];
  produces: string[];
  paths: Record<string, Record<string, unknown>>;
  definitions: Record<string, unknown>;
  parameters: Record<string, unknown>;
  securityDefinitions: Record<string, unknown>;
  security: Array<Record<string, string[]>>;
};

/** The media types of the data API's bodies (PostgREST's, less those it does not serve). */
const MEDIA_TYPES = ['application/json', 'application/vnd.pgrst.object+json'];
export const OPENAPI_MEDIA_TYPE = 'application/openapi+json';

type SwaggerType = 'string' | 'boolean' | 'integer' | 'number' | 'array' | undefined;

/** PostgREST's mapping of a column type (format_type without modifiers) to a Swagger type; json has none. */
function swaggerType(format: string): SwaggerType {
  switch (format) {
    case 'character varying':
    case 'character':
    case 'text':
      return 'string';
    case 'boolean':
      return 'boolean';
    case 'smallint':
    case 'integer':
    case 'bigint':
      return 'integer';
    case 'numeric':
    case 'real':
    case 'double precision':
      return 'number';
    case 'json':
    case 'jsonb':
      return undefined;
    default:
      return format.endsWith('[]') ? 'array' : 'string';
  }
}

/** format_type() without its modifiers: `character varying(20)` -> `character varying`, `timestamp(3) with time zone` too. */
const formatOf = (column: ColumnInfo) => column.type.replace(/\(\s*\d+(?:\s*,\s*\d+)?\s*\)/g, '');

/** The declared length of a (non-array) varchar(n) or char(n) column, as PostgREST's maxLength. */
function maxLengthOf(column: ColumnInfo): number | undefined {
  if (column.isArray) return undefined;
  const m = /^(?:character varying|character)\((\d+)\)$/.exec(column.type);
  return m ? Number(m[1]) : undefined;
}

/**
 * The default as a JSON value, as PostgREST reads it: for string types the expression itself (a literal without its
 * quotes and cast: `'todo'::text` -> "todo", `now()` -> "now()"), for numbers and booleans the literal. Beyond
 * PostgREST: a json/jsonb literal is given as its value, and `'-1'::integer` as -1. Arrays and sequences have none.
 */
function defaultOf(column: ColumnInfo, format: string, type: SwaggerType): unknown {
  const expr = column.default;
  if (expr === null || type === 'array') return undefined;
  const cast = `::${format}`;
  const literal = /^'((?:[^']|'')*)'$/.exec(expr.endsWith(cast) ? expr.slice(0, -cast.length) : expr);
  const text = literal ? literal[1]!.replaceAll("''", "'") : expr;
  if (type === 'string') return text;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** What a role may do with a table: the row-level security policies schema_apply makes for its access level. */
export function tableReach(table: TableInfo, role: DataRole): { read: boolean; write: boolean } {
  if (role === 'svc_service') return { read: true, write: true };
  // A table made outside schema_apply: without row-level security the grants decide (anon reads, end users write);
  // with it, policies we do not know of, so it is left out.
  if (table.access === null) return table.rls ? { read: false, write: false } : { read: true, write: role === 'svc_user' };
  if (isRulesAccess(table.access)) {
    if (role === 'svc_anon') return { read: table.access.read.includes('public'), write: false };
    return { read: table.access.read.length > 0, write: table.access.write.length > 0 };
  }
  if (role === 'svc_anon') return { read: table.access === 'public', write: false };
  if (table.access === 'authenticated') return { read: true, write: table.columns.some((c) => c.name === 'user_id' && c.udt === 'uuid') };
  if (isGroupAccess(table.access)) return { read: true, write: table.access.write === 'members' };
  if (table.access === 'user') return { read: true, write: true };
  if (table.access === 'public') return { read: true, write: table.columns.some((c) => c.name === 'user_id' && c.udt === 'uuid') };
  return { read: false, write: false };
}

/** Readers or writers of rules in words: 'nobody' for keys only. */
function whoWords(who: readonly string[], owners: readonly string[]): string {
  if (!who.length) return 'nobody (keys only)';
  return who.map((w) => (w === 'owner' ? `the owner (${owners.join(' or ')})` : w === 'group' ? 'group members' : w === 'public' ? 'anyone' : 'any signed-in user')).join(', ');
}

/** The table's description: its access level in words (PostgREST shows a table's comment; ours have none). */
function describeTable(table: TableInfo): string {
  const ownRows = table.columns.some((c) => c.name === 'user_id' && c.udt === 'uuid');
  const group = isGroupAccess(table.access) ? table.access : null;
  const access = isRulesAccess(table.access)
    ? `Access: rules (end users read: ${whoWords(table.access.read, table.access.owners)}; write: ${whoWords(table.access.write, table.access.owners)}; keys reach every row).`
    : table.access === 'authenticated'
      ? `Access: authenticated (signed-in end users read every row; ${ownRows ? 'they write their own rows' : 'only keys write'}; keys reach every row).`
      : group
    ? `Access: group (end users ${group.write === 'members' ? 'read and write' : 'read'} the rows whose ${group.column} is the ${group.key} of one of their ${group.members} rows; keys reach every row).`
    : table.access === 'user'
      ? 'Access: user (each end user reads and writes only the rows whose user_id is theirs; keys reach every row).'
      : table.access === 'public'
        ? `Access: public (anyone reads; ${ownRows ? 'end users write their own rows' : 'only keys write'}; keys reach every row).`
        : table.access === 'service'
          ? 'Access: service (service and platform keys only).'
          : `Access: not set by schema_apply (row-level security ${table.rls ? 'on' : 'off'}).`;
  const plans = table.plans?.length ? ` Plans: ${table.plans.join(', ')} (end users reach the rows only while subscribed to one).` : '';
  return access + plans;
}

/** The CHECK constraints the catalog reads (a definition's enum is one, with its values); older snapshots lack them. */
type Checks = { checks?: ReadonlyArray<{ columns: readonly string[]; values: readonly string[] | null }> };

/** A column's allowed values: those of a one-column enum-shaped CHECK (PostgREST lists an enum type's labels). */
function enumOf(table: TableInfo, column: ColumnInfo): readonly string[] | undefined {
  const check = (table as Checks).checks?.find((c) => c.values !== null && c.columns.length === 1 && c.columns[0] === column.name);
  return check?.values ?? undefined;
}

function property(table: TableInfo, column: ColumnInfo, visible: (name: string) => boolean): Record<string, unknown> {
  const format = formatOf(column);
  const type = column.udt === 'vector' && !column.isArray ? 'array' : swaggerType(format);
  const notes: string[] = [];
  if (table.primaryKey.includes(column.name)) notes.push('This is a Primary Key.<pk/>');
  // As PostgREST: single-column foreign keys only; here also only to a table the document shows.
  const fk = table.foreignKeys.find((k) => k.columns.length === 1 && k.columns[0] === column.name && visible(k.refTable));
  if (fk) notes.push(`This is a Foreign Key to \`${fk.refTable}.${fk.refColumns[0]}\`.<fk table='${fk.refTable}' column='${fk.refColumns[0]}'/>`);
  const out: Record<string, unknown> = {};
  const fallback = defaultOf(column, format, type);
  if (fallback !== undefined) out.default = fallback;
  if (notes.length) out.description = ['Note:', ...notes].join('\n');
  const values = enumOf(table, column);
  if (values) out.enum = [...values];
  out.format = format;
  const maxLength = maxLengthOf(column);
  if (maxLength !== undefined) out.maxLength = maxLength;
  if (type) out.type = type;
  // Vectors travel as JSON number arrays here (PostgREST sends their text).
  if (column.udt === 'vector' && !column.isArray) out.items = { type: 'number' };
  else if (type === 'array') {
    const itemType = swaggerType(format.slice(0, -2));
    out.items = itemType ? { type: itemType } : {};
  }
  return out;
}

function definition(table: TableInfo, visible: (name: string) => boolean): Record<string, unknown> {
  const required = table.columns.filter((c) => !c.nullable).map((c) => c.name);
  return {
    description: describeTable(table),
    ...(required.length ? { required } : {}),
    properties: Object.fromEntries(table.columns.map((c) => [c.name, property(table, c, visible)])),
    type: 'object',
  };
}

const queryParam = (name: string, description: string) => ({ name, description, required: false, in: 'query', type: 'string' });
const preferParam = (values: string[]) => ({ name: 'Prefer', description: 'Preference', required: false, enum: values, in: 'header', type: 'string' });

const RETURN = ['return=representation', 'return=minimal', 'return=headers-only'];

/** The parameters every table shares, under PostgREST's names. */
function sharedParameters(): Record<string, unknown> {
  return {
    preferReturn: preferParam(RETURN),
    preferCount: preferParam(['count=exact', 'count=planned', 'count=estimated']),
    preferPost: preferParam([...RETURN, 'resolution=ignore-duplicates', 'resolution=merge-duplicates', 'missing=default']),
    select: queryParam('select', 'Filtering Columns'),
    on_conflict: queryParam('on_conflict', 'On Conflict'),
    order: queryParam('order', 'Ordering'),
    range: { name: 'Range', description: 'Limiting and Pagination', required: false, in: 'header', type: 'string' },
    offset: queryParam('offset', 'Limiting and Pagination'),
    limit: queryParam('limit', 'Limiting and Pagination'),
  };
}

const ref = (name: string) => ({ $ref: `#/parameters/${name}` });

function pathItem(table: TableInfo, write: boolean): Record<string, unknown> {
  const name = table.name;
  const summary = describeTable(table);
  const op = { tags: [name], summary };
  const rowFilters = table.columns.map((c) => ref(`rowFilter.${name}.${c.name}`));
  const item: Record<string, unknown> = {
    get: {
      ...op,
      parameters: [...rowFilters, ...['select', 'order', 'range', 'offset', 'limit', 'preferCount'].map(ref)],
      responses: {
        '200': { description: 'OK', schema: { items: { $ref: `#/definitions/${name}` }, type: 'array' } },
        '206': { description: 'Partial Content' },
      },
    },
  };
  if (!write) return item;
  const filterRequired = 'Needs at least one row filter (400 FILTER_REQUIRED otherwise).';
  item.post = { ...op, parameters: [ref(`body.${name}`), ref('select'), ref('on_conflict'), ref('preferPost')], responses: { '201': { description: 'Created' } } };
  item.delete = { ...op, description: filterRequired, parameters: [...rowFilters, ref('preferReturn')], responses: { '204': { description: 'No Content' } } };
  item.patch = { ...op, description: filterRequired, parameters: [...rowFilters, ref(`body.${name}`), ref('preferReturn')], responses: { '204': { description: 'No Content' } } };
  return item;
}

/** Whether `role` may call the function: its `access`, as the EXECUTE grants schema_apply makes. */
function callable(fn: DeclaredFunction, role: DataRole): boolean {
  return fn.access === 'public' || role === 'svc_service' || (fn.access === 'authenticated' && role === 'svc_user');
}

/** What a function answers, in words (PostgREST shows a function's comment; declared ones have none). */
function describeReturns(fn: DeclaredFunction): string {
  const { kind, type, table } = fn.returns;
  if (kind === 'void') return 'Returns nothing (204).';
  if (kind === 'scalar') return `Returns one ${type} value.`;
  if (kind === 'row') return `Returns one ${table} row (an object).`;
  return `Returns a set of ${kind === 'table' ? 'rows' : table ? `${table} rows` : `${type} values`}, which select, filters and order apply to.`;
}

/**
 * /rpc/{fn} as PostgREST describes it: POST with the arguments as one JSON object (a single unnamed json argument is the
 * body itself), and GET with each argument in the query string for a function that does not write.
 */
function rpcPathItem(fn: DeclaredFunction): Record<string, unknown> {
  const op = { tags: [`(rpc) ${fn.name}`], summary: describeReturns(fn), produces: MEDIA_TYPES };
  const named = fn.args.filter((a) => a.name !== '');
  const argType = (type: string) => {
    const swagger = swaggerType(type.replace(/\(\s*\d+(?:\s*,\s*\d+)?\s*\)/g, ''));
    return { format: type, ...(swagger ? { type: swagger } : {}) };
  };
  const required = named.filter((a) => a.default === null).map((a) => a.name);
  const schema = named.length < fn.args.length
    ? { type: 'object', description: 'Any JSON object: the function takes the body as its single json argument.' }
    : { type: 'object', ...(required.length ? { required } : {}), properties: Object.fromEntries(named.map((a) => [a.name, argType(a.type)])) };
  const item: Record<string, unknown> = {
    post: { ...op, parameters: [{ name: 'args', required: true, in: 'body', schema }], responses: { '200': { description: 'OK' } } },
  };
  if (fn.volatility !== 'volatile') {
    const query = named.map((a) => ({ ...argType(a.type), name: a.name, required: a.default === null, in: 'query' }));
    item.get = { ...op, parameters: query, responses: { '200': { description: 'OK' } } };
  }
  return item;
}

/** The document for `catalog` as `role` reaches it: the tables it may read, with the methods it may use. */
export function dataOpenApi(catalog: Catalog, options: DataOpenApiOptions): SwaggerDocument {
  const role = options.role ?? 'svc_service';
  const url = new URL(options.baseUrl);
  const tables = [...catalog.values()].map((table) => ({ table, reach: tableReach(table, role) })).filter((t) => t.reach.read);
  const shown = new Set(tables.map((t) => t.table.name));
  const visible = (name: string) => shown.has(name);

  const paths: Record<string, Record<string, unknown>> = {
    '/': {
      get: {
        tags: ['Introspection'],
        summary: 'OpenAPI description (this document)',
        produces: [OPENAPI_MEDIA_TYPE, 'application/json'],
        responses: { '200': { description: 'OK' } },
      },
    },
  };
  const definitions: Record<string, unknown> = {};
  const parameters = sharedParameters();
  for (const { table, reach } of tables) {
    definitions[table.name] = definition(table, visible);
    paths[`/${table.name}`] = pathItem(table, reach.write);
    parameters[`body.${table.name}`] = { name: table.name, description: table.name, required: false, in: 'body', schema: { $ref: `#/definitions/${table.name}` } };
    for (const column of table.columns) parameters[`rowFilter.${table.name}.${column.name}`] = queryParam(column.name, `${column.name} (${formatOf(column)})`);
  }
  for (const fn of options.functions ?? []) if (callable(fn, role)) paths[`/rpc/${fn.name}`] = rpcPathItem(fn);

  return {
    swagger: '2.0',
    info: {
      title: options.title,
      description:
        "The app's data API: PostgREST's syntax over the app's own Postgres database, generated from its live schema. " +
        'It lists the tables and methods the credential that asked may use.',
      version: '0.1.0',
    },
    ...(options.docsUrl ? { externalDocs: { description: 'Query syntax, limits and differences from PostgREST', url: options.docsUrl } } : {}),
    host: url.host,
    basePath: url.pathname.replace(/(?<!\/)\/+$/, '') || '/',
    schemes: [url.protocol.replace(/:$/, '')],
    consumes: MEDIA_TYPES,
    produces: MEDIA_TYPES,
    paths,
    definitions,
    parameters,
    securityDefinitions: {
      JWT: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Add the token prepending "Bearer " (without quotes) to it: an end-user JWT, a service key or a platform key' },
    },
    security: [{ JWT: [] }],
  };
}
