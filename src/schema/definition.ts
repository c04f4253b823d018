import { createHash } from 'node:crypto';
import { z } from 'zod';
import { errors } from '../core/errors.ts';
import type { TableAccess } from './catalog.ts';
import { AccessInputSchema, normalizeAccess } from './access.ts';

export { ACCESS_VALUES } from './access.ts';
import { normalizeChannels } from './channels.ts';
import { checkIdentifier, ROUTE_SEGMENTS } from './identifiers.ts';
import { guided, guidedList, strictly } from './guided.ts';
import { indexKey, indexWhere } from './indexes.ts';
import { ConditionsInputSchema, normalizeConditions, type TableConditions } from './conditions.ts';
import { FunctionsInputSchema, normalizeFunctions, type FunctionSpec } from './functions.ts';

export { checkIdentifier, ROUTE_SEGMENTS } from './identifiers.ts';

/**
 * The declarative schema definition: its wire shape (zod) and its validated, normalized form.
 * Shape errors come out of zod (invoke turns them into 400 VALIDATION_FAILED naming the path); the checks
 * zod cannot express well (types, defaults, identifiers, limits) throw errors.validation naming the field.
 */

export const MAX_TABLES = 50;
export const MAX_TABLE_PLANS = 20;
/** What deleting a referenced row does to the rows pointing at it; 'no action' (Postgres's default) refuses the delete. */
export const ON_DELETE_VALUES = ['no action', 'restrict', 'cascade', 'set null'] as const;
export type OnDelete = (typeof ON_DELETE_VALUES)[number];
/** ON UPDATE takes the same actions (when the referenced key value changes). */
export type OnUpdate = OnDelete;
export const MAX_ENUM_VALUES = 1000;

const ColumnInputSchema = z.strictObject({
  type: z
    .string()
    .describe('Postgres type, e.g. text, integer, bigint, numeric(P,S), boolean, uuid, timestamptz, date, jsonb, vector(N); text[] for an array'),
  primary: z.boolean().optional().describe('In the primary key (several: composite); not null'),
  nullable: z.boolean().optional().describe('Default true'),
  unique: z.boolean().optional().describe('Unique constraint on this column'),
  default: z
    .union([z.string(), z.number(), z.boolean(), z.null()])
    .optional()
    .describe("Default: a number, true/false, null, a quoted 'text', now(), gen_random_uuid(), current_date, '{}'::jsonb"),
  references: z
    .strictObject({
      table: z.string(),
      column: z.string(),
      onDelete: z
        .enum(ON_DELETE_VALUES)
        .optional()
        .describe("On the referenced row's delete: 'no action' (default) refuses it (409), 'cascade' deletes these rows"),
      onUpdate: z.enum(ON_DELETE_VALUES).optional(),
    })
    .optional()
    .describe('Foreign key to a primary-key or unique column (checked without row-level security)'),
  // Counts are checked in normalizeEnum: every byte of this schema is in tools/list.
  enum: z.array(z.string()).optional().describe('text/varchar: allowed values'),
  identity: z.boolean().optional().describe('integer/bigint primary key: generated ids'),
});

const IndexInputSchema = z.strictObject({
  columns: z.array(z.string()).min(1).max(32).describe("Indexed columns, in order; also lower(col), upper(col), col->>'key'"),
  unique: z.boolean().optional(),
  where: z.string().min(1).max(2000).optional().describe('Partial: PostgREST filters, e.g. status=eq.active'),
});

/** At least two columns each side (normalizeForeignKey says so; one column is a column's references). */
const ForeignKeysInputSchema = z.array(
  z.strictObject({
    columns: z.array(z.string()),
    references: z.strictObject({ table: z.string(), columns: z.array(z.string()) }),
    onDelete: z.enum(ON_DELETE_VALUES).optional(),
    onUpdate: z.enum(ON_DELETE_VALUES).optional(),
  }),
);

const TableInputSchema = z.strictObject({
  columns: z.record(z.string(), ColumnInputSchema).optional().describe('Column name -> column; a new table needs at least one'),
  indexes: z.record(z.string(), IndexInputSchema).optional().describe('Index name -> { columns, unique? }'),
  foreignKeys: guidedList('Multi-column foreign keys (guide)'),
  _dropColumns: z.array(z.string()).optional().describe('Columns to remove (destructive)'),
  _drop: z.boolean().optional().describe('true removes the table and its rows (destructive)'),
  access: AccessInputSchema.optional(),
  plans: z
    .array(z.string().min(1).max(100))
    .min(1)
    .max(MAX_TABLE_PLANS)
    .nullable()
    .optional()
    .describe('Billing plan ids whose subscribers alone reach the rows (billing guide); null removes'),
  realtime: z.boolean().optional().describe('true: changes stream to realtime subscribers (realtime guide)'),
  conditions: guided('SQL row conditions per command (guide)'),
  policies: z.array(z.unknown()).optional().describe("schema_get's; ignored"),
});

/** Who may join and send on a private realtime channel (src/schema/channels.ts). */
export const CHANNEL_ACCESS_VALUES = ['user', 'authenticated', 'service'] as const;
const ChannelGroupInputSchema = z.strictObject({ members: z.string(), key: z.string(), write: z.enum(['members', 'service']).optional() });

const ChannelsInputSchema = z.record(z.string(), z.union([z.enum(CHANNEL_ACCESS_VALUES), ChannelGroupInputSchema]));

export const SchemaDefinitionSchema = z.strictObject({
  tables: z.record(z.string(), TableInputSchema).describe(`Table name -> table; at most ${MAX_TABLES} tables`),
  channels: guided("Private realtime channels: pattern ('room:*') -> who may join (guide)"),
  functions: guided('SQL functions (guide)'),
});
export type SchemaDefinitionInput = z.output<typeof SchemaDefinitionSchema>;

export interface Reference {
  table: string;
  column: string;
  onDelete: OnDelete;
  /** Absent: 'no action' (Postgres's default). */
  onUpdate?: OnUpdate;
}

/** A table-level (multi-column) foreign key. */
export interface ForeignKeySpec {
  /** Deterministic constraint name: foreignKeyName(table, columns). */
  name: string;
  columns: string[];
  refTable: string;
  refColumns: string[];
  onDelete: OnDelete;
  onUpdate: OnUpdate;
}

export interface ColumnSpec {
  name: string;
  /** format_type() spelling, so it compares directly with the catalog. */
  type: string;
  primary: boolean;
  nullable: boolean;
  unique: boolean;
  /** SQL default expression from the allow-list, or null for none. */
  default: string | null;
  references: Reference | null;
  /** Allowed values (a CHECK constraint named enumConstraintName(table, column)); absent for none. */
  enum?: string[];
  /** `generated by default as identity`; absent for none. */
  identity?: true;
}

export interface IndexSpec {
  name: string;
  /** Keys as written: columns, or expressions of one column (indexes.ts). */
  columns: string[];
  unique: boolean;
  /** A partial index's condition, as written. */
  where?: string;
  /** Every column the keys and the condition read. */
  reads: string[];
}

export interface TableSpec {
  name: string;
  drop: boolean;
  columns: ColumnSpec[];
  indexes: IndexSpec[];
  /** Multi-column foreign keys; undefined keeps what the table has, a list (even empty) is the table's whole set. */
  foreignKeys: ForeignKeySpec[] | undefined;
  dropColumns: string[];
  access: TableAccess | undefined;
  /** Billing plans gating end users (sorted, distinct); null removes the gate, undefined keeps what the table has. */
  plans: string[] | null | undefined;
  /** Whether changes stream to realtime subscribers; undefined keeps what the table has. */
  realtime: boolean | undefined;
  /** Row conditions per command, as written; undefined keeps what the table has, {} removes them. */
  conditions: TableConditions | undefined;
}

/** A private channel's access: a kind, or the members of a group whose key is what the pattern's '*' stands for. */
export type ChannelAccess = (typeof CHANNEL_ACCESS_VALUES)[number] | { members: string; key: string; write: 'members' | 'service' };
export interface ChannelRule {
  pattern: string;
  access: ChannelAccess;
}

export interface Definition {
  tables: TableSpec[];
  /** Private channels' access, ordered by pattern; undefined keeps what the app has, a list (even empty) replaces it. */
  channels: ChannelRule[] | undefined;
  /** Declared SQL functions; undefined (or one left out) keeps what the app has. */
  functions?: FunctionSpec[] | undefined;
}

// ---------------------------------------------------------------- identifiers

/**
 * A constraint name made of the table, the parts and a suffix (`orders_status_enum`, `lines_order_id_product_id_fkey`).
 * Postgres would silently cut a name beyond 63 bytes: a long one keeps its start and ends in a hash of the whole, so
 * it stays deterministic and distinct.
 */
export function constraintName(table: string, parts: readonly string[], suffix: string): string {
  const name = `${table}_${parts.join('_')}_${suffix}`;
  if (name.length <= 63) return name;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  return `${name.slice(0, 63 - suffix.length - 10)}_${hash}_${suffix}`;
}

export const enumConstraintName = (table: string, column: string): string => constraintName(table, [column], 'enum');
export const foreignKeyName = (table: string, columns: readonly string[]): string => constraintName(table, columns, 'fkey');

export function checkTableName(name: string): void {
  checkIdentifier(name, `Table '${name}'`);
  if (ROUTE_SEGMENTS.has(name)) {
    throw errors.validation(`Table '${name}': the name is reserved by a route of the app API (/v1/{app_id}/${name}); choose another name.`);
  }
}

// ---------------------------------------------------------------- types

const ALLOWED_TYPES_TEXT =
  'text, varchar, varchar(N), char, char(N), integer, bigint, smallint, real, float4, float8, decimal, numeric, numeric(P,S), ' +
  'boolean, bool, uuid, timestamp, timestamptz, date, time, timetz, interval, json, jsonb, bytea, vector(N), ' +
  'int4range, int8range, numrange, tsrange, tstzrange, daterange, tsvector, and arrays such as text[] or integer[]';

/** Parameterless allowed types and their format_type() spelling. */
const SIMPLE_TYPES: Record<string, string> = {
  text: 'text',
  varchar: 'character varying',
  char: 'character(1)',
  integer: 'integer',
  bigint: 'bigint',
  smallint: 'smallint',
  real: 'real',
  float4: 'real',
  float8: 'double precision',
  decimal: 'numeric',
  numeric: 'numeric',
  boolean: 'boolean',
  bool: 'boolean',
  uuid: 'uuid',
  timestamp: 'timestamp without time zone',
  timestamptz: 'timestamp with time zone',
  date: 'date',
  time: 'time without time zone',
  timetz: 'time with time zone',
  interval: 'interval',
  json: 'json',
  jsonb: 'jsonb',
  bytea: 'bytea',
  int4range: 'int4range',
  int8range: 'int8range',
  numrange: 'numrange',
  tsrange: 'tsrange',
  tstzrange: 'tstzrange',
  daterange: 'daterange',
  tsvector: 'tsvector',
};

/** Postgres's own length limit for character types. */
const MAX_CHAR_LENGTH = 10_485_760;
const MAX_VECTOR_DIM = 16_000;
const MAX_NUMERIC_PRECISION = 1000;

/** The format_type() spelling of an allowed type, or undefined when the type is not allowed. */
export function normalizeType(raw: string): string | undefined {
  const t = raw.trim().toLowerCase().replace(/(?:(?<!\s)\s+)?([(),])\s*/g, '$1').replace(/(?<!\s)\s*\[\s*\]$/, '[]');
  const isArray = t.endsWith('[]');
  const base = isArray ? t.slice(0, -2) : t;
  const normalized = normalizeBaseType(base);
  if (normalized === undefined) return undefined;
  if (!isArray) return normalized;
  if (normalized.startsWith('vector(')) return undefined; // pgvector has no array form worth supporting
  return `${normalized}[]`;
}

function normalizeBaseType(base: string): string | undefined {
  const simple = SIMPLE_TYPES[base];
  if (simple !== undefined) return simple;
  const sized = /^(varchar|char|vector)\((\d{1,6})\)$/.exec(base);
  if (sized) {
    const n = Number(sized[2]);
    if (sized[1] === 'vector') return n >= 1 && n <= MAX_VECTOR_DIM ? `vector(${n})` : undefined;
    if (n < 1 || n > MAX_CHAR_LENGTH) return undefined;
    return sized[1] === 'varchar' ? `character varying(${n})` : `character(${n})`;
  }
  const numeric = /^numeric\((\d{1,4}),(\d{1,4})\)$/.exec(base);
  if (numeric) {
    const p = Number(numeric[1]);
    const s = Number(numeric[2]);
    return p >= 1 && p <= MAX_NUMERIC_PRECISION && s <= p ? `numeric(${p},${s})` : undefined;
  }
  return undefined;
}

/** format_type() spellings back to the definition's short spelling, for schema_get. */
const SHORT_SPELLING: Array<[RegExp, string]> = [
  [/^character varying(\(\d+\))?$/, 'varchar$1'],
  [/^character(\(\d+\))$/, 'char$1'],
  [/^double precision$/, 'float8'],
  [/^timestamp without time zone$/, 'timestamp'],
  [/^timestamp with time zone$/, 'timestamptz'],
  [/^time without time zone$/, 'time'],
  [/^time with time zone$/, 'timetz'],
];

export function definitionType(formatType: string): string {
  const isArray = formatType.endsWith('[]');
  const base = isArray ? formatType.slice(0, -2) : formatType;
  let short = base;
  for (const [pattern, replacement] of SHORT_SPELLING) {
    if (pattern.test(base)) {
      short = base.replace(pattern, replacement);
      break;
    }
  }
  return isArray ? `${short}[]` : short;
}

// ---------------------------------------------------------------- defaults

const NUMBER = /^-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const QUOTED = /^'((?:[^'\u0000]|'')*)'(?:::(.+))?$/s;
const FUNCTIONS = new Map([
  ['now()', 'now()'],
  ['gen_random_uuid()', 'gen_random_uuid()'],
  ['current_timestamp', 'CURRENT_TIMESTAMP'],
  ['current_date', 'CURRENT_DATE'],
]);
/** Cast targets Postgres itself prints in defaults, beside the definition's own spellings. */
const PRINTED_CASTS = new Set(['bpchar', 'vector', 'character', 'character varying', 'double precision', 'timestamp with time zone', 'timestamp without time zone', 'time with time zone', 'time without time zone']);

/**
 * The default as SQL, or undefined when it is outside the allow-list. A default is an expression that
 * runs on every insert, so anything beyond literals and a few functions would be an injection path.
 * null means "no default".
 */
export function normalizeDefault(raw: string | number | boolean | null): string | null | undefined {
  if (raw === null) return null;
  if (typeof raw === 'boolean') return String(raw);
  if (typeof raw === 'number') return Number.isFinite(raw) ? String(raw) : undefined;
  const d = raw.trim();
  const lower = d.toLowerCase();
  if (lower === 'null') return null;
  if (lower === 'true' || lower === 'false') return lower;
  if (NUMBER.test(d)) return d;
  const fn = FUNCTIONS.get(lower.replace(/\s+/g, ''));
  if (fn) return fn;
  const quoted = QUOTED.exec(d);
  if (!quoted) return undefined;
  if (quoted[2] === undefined) return `'${quoted[1]}'`;
  const castType = castTarget(quoted[2].trim().toLowerCase().replace(/\s+/g, ' '));
  return castType === undefined ? undefined : `'${quoted[1]}'::${castType}`;
}

function castTarget(cast: string): string | undefined {
  const isArray = cast.endsWith('[]');
  const base = isArray ? cast.slice(0, -2) : cast;
  if (PRINTED_CASTS.has(base)) return cast;
  return normalizeType(cast);
}

// ---------------------------------------------------------------- normalization

/** Validates everything that needs no database and returns the normalized definition. */
export function normalizeDefinition(input: SchemaDefinitionInput): Definition {
  const entries = Object.entries(input.tables);
  if (entries.length > MAX_TABLES) {
    throw errors.validation(`The schema defines ${entries.length} tables; at most ${MAX_TABLES} tables are allowed per schema definition. Apply it in several smaller definitions.`);
  }
  const tables = entries.map(([name, table]) => normalizeTable(name, table));
  checkIndexNamesUnique(tables);
  return {
    tables,
    channels: normalizeChannels(strictly(ChannelsInputSchema, input.channels, 'channels')),
    functions: normalizeFunctions(strictly(FunctionsInputSchema, input.functions, 'functions')),
  };
}

type TableInput = SchemaDefinitionInput['tables'][string];

function normalizeTable(name: string, input: TableInput): TableSpec {
  checkTableName(name);
  const columns = Object.entries(input.columns ?? {}).map(([col, c]) => normalizeColumn(name, col, c));
  const indexes = Object.entries(input.indexes ?? {}).map(([idx, i]) => normalizeIndex(name, idx, i));
  const dropColumns = [...new Set(input._dropColumns ?? [])];
  for (const col of dropColumns) {
    checkIdentifier(col, `_dropColumns of table '${name}'`);
    if (columns.some((c) => c.name === col)) {
      throw errors.validation(`Column '${name}.${col}' is both defined in columns and listed in _dropColumns; keep only one.`);
    }
  }
  for (const index of indexes) {
    for (const col of index.reads) {
      if (dropColumns.includes(col)) throw errors.validation(`Index '${index.name}' of table '${name}' uses column '${col}', which _dropColumns removes.`);
    }
  }
  const foreignKeys = strictly(ForeignKeysInputSchema, input.foreignKeys, `tables.${name}.foreignKeys`)?.map((fk, i) => normalizeForeignKey(name, i, fk, dropColumns));
  const seen = new Set<string>();
  for (const fk of foreignKeys ?? []) {
    if (seen.has(fk.name)) {
      throw errors.validation(`Table '${name}' lists two foreignKeys on columns (${fk.columns.join(', ')}); keep one foreign key per column list.`);
    }
    seen.add(fk.name);
  }
  return { name, drop: input._drop === true, columns, indexes, foreignKeys, dropColumns, access: normalizeAccess(name, input.access), plans: normalizePlans(input.plans), realtime: input.realtime, conditions: normalizeConditions(strictly(ConditionsInputSchema, input.conditions, `tables.${name}.conditions`)) };
}

type ForeignKeyInput = z.output<typeof ForeignKeysInputSchema>[number];

function normalizeForeignKey(table: string, i: number, input: ForeignKeyInput, dropColumns: readonly string[]): ForeignKeySpec {
  const label = `foreignKeys[${i}] of table '${table}'`;
  const where = `In table '${table}', foreignKeys[${i}]`;
  for (const col of input.columns) checkIdentifier(col, `Columns of ${label}`);
  checkIdentifier(input.references.table, `references.table of ${label}`);
  for (const col of input.references.columns) checkIdentifier(col, `references.columns of ${label}`);
  if (input.columns.length < 2) {
    throw errors.validation(`${where} has ${input.columns.length} column(s); foreignKeys are for two or more columns. For one column, use the column's references.`);
  }
  if (input.columns.length !== input.references.columns.length) {
    throw errors.validation(
      `${where} has ${input.columns.length} columns but ${input.references.columns.length} references.columns; list as many on each side, in matching order.`,
    );
  }
  const twice = (list: string[]) => list.find((c, j) => list.indexOf(c) !== j);
  const repeated = twice(input.columns) ?? twice(input.references.columns);
  if (repeated) throw errors.validation(`${where} lists column '${repeated}' twice.`);
  const dropped = input.columns.find((c) => dropColumns.includes(c));
  if (dropped) throw errors.validation(`${where} uses column '${dropped}', which _dropColumns removes.`);
  return {
    name: foreignKeyName(table, input.columns),
    columns: [...input.columns],
    refTable: input.references.table,
    refColumns: [...input.references.columns],
    onDelete: input.onDelete ?? 'no action',
    onUpdate: input.onUpdate ?? 'no action',
  };
}

/** Plans compare as sets: the order an agent lists them in must not re-plan the gate. */
function normalizePlans(plans: string[] | null | undefined): string[] | null | undefined {
  return plans ? [...new Set(plans)].sort() : plans;
}

/** Whether a definition gates any table by plan: those tables need the app database's entitlement functions. */
export function definitionUsesPlans(input: SchemaDefinitionInput): boolean {
  return Object.values(input.tables).some((t) => Array.isArray(t.plans));
}

type ColumnInput = NonNullable<TableInput['columns']>[string];

function normalizeColumn(table: string, name: string, input: ColumnInput): ColumnSpec {
  checkIdentifier(name, `Column '${table}.${name}'`);
  const type = normalizeType(input.type);
  if (type === undefined) {
    throw errors.validation(`Column '${table}.${name}' has type '${input.type}', which is not allowed. Allowed types: ${ALLOWED_TYPES_TEXT}.`);
  }
  const primary = input.primary === true;
  if (primary && input.nullable === true) {
    throw errors.validation(`Column '${table}.${name}' is primary and nullable; a primary key column is never null. Remove nullable: true.`);
  }
  const def = input.default === undefined ? null : normalizeDefault(input.default);
  if (def === undefined) {
    throw errors.validation(
      `Column '${table}.${name}' has default ${JSON.stringify(input.default)}, which is not allowed. Use a number, true/false, null, a quoted string ` +
        `(optionally with a ::type cast), now(), gen_random_uuid(), current_timestamp, current_date or an empty json/array literal such as '{}'::jsonb.`,
    );
  }
  let references: Reference | null = null;
  if (input.references) {
    checkIdentifier(input.references.table, `references.table of column '${table}.${name}'`);
    checkIdentifier(input.references.column, `references.column of column '${table}.${name}'`);
    const onUpdate = input.references.onUpdate;
    references = { table: input.references.table, column: input.references.column, onDelete: input.references.onDelete ?? 'no action' };
    if (onUpdate && onUpdate !== 'no action') references.onUpdate = onUpdate;
    for (const action of ['onDelete', 'onUpdate'] as const) {
      if (references[action] === 'set null' && (primary || input.nullable === false)) {
        throw errors.validation(
          `Column '${table}.${name}' has references.${action} 'set null' but is never null (primary or nullable: false); choose 'cascade', or make the column nullable.`,
        );
      }
    }
  }
  const identity = input.identity === true;
  if (identity) {
    if (type !== 'integer' && type !== 'bigint') {
      throw errors.validation(`Column '${table}.${name}' has identity: true but type ${input.type}; identity is only for integer and bigint primary-key columns.`);
    }
    if (!primary) throw errors.validation(`Column '${table}.${name}' has identity: true but is not primary; identity is only for primary-key columns. Add primary: true or remove identity.`);
    if (def !== null) throw errors.validation(`Column '${table}.${name}' has both identity: true and a default; an identity column makes its own values. Remove default.`);
  }
  const column: ColumnSpec = { name, type, primary, nullable: primary ? false : input.nullable !== false, unique: input.unique === true, default: def, references };
  const values = normalizeEnum(table, name, type, input);
  if (values) column.enum = values;
  if (identity) column.identity = true;
  return column;
}

/** An enum is a CHECK over text: only text and varchar columns (not arrays, not char(N), whose padding would surprise). */
function normalizeEnum(table: string, name: string, type: string, input: ColumnInput): string[] | null {
  if (input.enum === undefined) return null;
  if (type !== 'text' && !/^character varying(\(\d+\))?$/.test(type)) {
    throw errors.validation(`Column '${table}.${name}' has enum but type ${input.type}; enum is only for text and varchar columns.`);
  }
  if (input.enum.length === 0 || input.enum.length > MAX_ENUM_VALUES) {
    throw errors.validation(`Column '${table}.${name}' has ${input.enum.length} enum values; list 1 to ${MAX_ENUM_VALUES}.`);
  }
  if (input.enum.some((v) => v.includes('\u0000'))) throw errors.validation(`Column '${table}.${name}' has an enum value with a NUL character, which Postgres text cannot hold.`);
  return [...new Set(input.enum)];
}

type IndexInput = NonNullable<TableInput['indexes']>[string];

function normalizeIndex(table: string, name: string, input: IndexInput): IndexSpec {
  checkIdentifier(name, `Index '${name}' of table '${table}'`);
  const keys = input.columns.map((col) => indexKey(col, `Columns of index '${name}' (table '${table}')`).column);
  if (new Set(input.columns).size !== input.columns.length) {
    throw errors.validation(`Index '${name}' of table '${table}' lists a column twice.`);
  }
  const spec: IndexSpec = { name, columns: [...input.columns], unique: input.unique === true, reads: keys };
  if (input.where !== undefined) {
    spec.where = input.where;
    spec.reads = [...new Set([...keys, ...indexWhere(input.where, `The where of index '${name}' (table '${table}')`).columns])];
  }
  return spec;
}

/** Indexes and tables share one namespace in Postgres. */
function checkIndexNamesUnique(tables: TableSpec[]): void {
  const tableNames = new Set(tables.map((t) => t.name));
  const seen = new Map<string, string>();
  for (const table of tables) {
    for (const index of table.indexes) {
      if (tableNames.has(index.name)) throw errors.validation(`Index '${index.name}' of table '${table.name}' has the name of a table; index and table names share one namespace.`);
      const other = seen.get(index.name);
      if (other !== undefined) throw errors.validation(`Index name '${index.name}' is used by tables '${other}' and '${table.name}'; index names must be unique in the schema.`);
      seen.set(index.name, table.name);
    }
  }
}
