import { z } from 'zod';
import { isRulesAccess, READERS, WRITERS, type Catalog, type ForeignKeyAction, type TableAccess, type TableInfo } from './catalog.ts';
import { ACCESS_VALUES, CHANNEL_ACCESS_VALUES, ON_DELETE_VALUES, definitionType, type ChannelRule } from './definition.ts';
import { describeChannels } from './channels.ts';
import { liveShape } from './indexes.ts';
import { catalogEnum, catalogHasUserId, compositeForeignKeys, defaultAccess, singleForeignKeys, uniqueConstraints } from './table-info.ts';

/**
 * The live schema in the definition's own format, so that applying what schema_get returns plans nothing.
 * Only what a definition can express is shown: single-column unique constraints, single-column foreign keys as the
 * column's references and multi-column ones as the table's foreignKeys, enums (the CHECKs a definition names), identity,
 * and standalone indexes (those backing a primary key or unique constraint are implied by the columns).
 */

const ACTION = z.enum([...ON_DELETE_VALUES, 'set default']).optional().describe("Shown unless 'no action'");

export const ColumnViewSchema = z.object({
  type: z.string(),
  primary: z.boolean(),
  nullable: z.boolean(),
  unique: z.boolean(),
  default: z.string().optional().describe('Default expression as Postgres prints it'),
  identity: z.literal(true).optional(),
  enum: z.array(z.string()).optional(),
  references: z.object({ table: z.string(), column: z.string(), onDelete: ACTION, onUpdate: ACTION }).optional(),
});

const ForeignKeyViewSchema = z.object({
  columns: z.array(z.string()),
  references: z.object({ table: z.string(), columns: z.array(z.string()) }),
  onDelete: ACTION,
  onUpdate: ACTION,
});

/** A row-level-security policy in force, as pg_policies lists it: shown, never applied (access and plans make them). */
export const PolicyViewSchema = z.object({
  name: z.string(),
  command: z.enum(['ALL', 'SELECT', 'INSERT', 'UPDATE', 'DELETE']),
  permissive: z.boolean().describe('false: RESTRICTIVE (every such policy must pass too)'),
  roles: z.array(z.string()),
  using: z.string().nullable(),
  with_check: z.string().nullable(),
});
export type PolicyView = z.infer<typeof PolicyViewSchema>;

export const TableViewSchema = z.object({
  columns: z.record(z.string(), ColumnViewSchema),
  indexes: z.record(z.string(), z.object({ columns: z.array(z.string()), unique: z.boolean(), where: z.string().optional() })),
  foreignKeys: z.array(ForeignKeyViewSchema).optional().describe('Multi-column foreign keys; absent when none'),
  access: z.union([
    z.enum(ACCESS_VALUES),
    z.object({ members: z.string(), column: z.string(), key: z.string(), write: z.enum(['members', 'service']) }),
    z.object({
      read: z.union([z.array(z.enum(READERS)), z.literal('service')]),
      write: z.union([z.array(z.enum(WRITERS)), z.literal('service')]),
      owners: z.array(z.string()).optional(),
      group: z.object({ members: z.string(), column: z.string(), key: z.string() }).optional(),
    }),
  ]),
  plans: z.array(z.string()).optional().describe('Billing plans whose subscribers alone reach the rows as end users; absent when not gated'),
  realtime: z.literal(true).optional().describe('Its changes reach realtime subscribers; absent when not'),
  conditions: z
    .object({ select: z.string().optional(), insert: z.string().optional(), update: z.object({ using: z.string(), check: z.string() }).optional(), delete: z.string().optional() })
    .optional()
    .describe('Declared row conditions per command, as written; absent when none'),
  policies: z.array(PolicyViewSchema).describe('Row-level-security policies in force, by name; schema_apply ignores them'),
});

export const SchemaViewSchema = z.object({
  tables: z.record(z.string(), TableViewSchema),
  channels: z
    .record(z.string(), z.union([z.enum(CHANNEL_ACCESS_VALUES), z.object({ members: z.string(), key: z.string(), write: z.enum(['members', 'service']) })]))
    .optional()
    .describe('Private realtime channels by pattern; absent when none are declared'),
  functions: z.record(z.string(), z.unknown()).optional().describe('Declared SQL functions as written; absent when none'),
});
export type SchemaView = z.infer<typeof SchemaViewSchema>;
type TableView = z.infer<typeof TableViewSchema>;

/** `policies` maps a table to the policies in force on it (readPolicies); a table missing from it has none. */
export function describeCatalog(
  catalog: Catalog,
  policies: ReadonlyMap<string, PolicyView[]> = new Map(),
  channels: readonly ChannelRule[] = [],
  functions?: Record<string, unknown>,
): SchemaView {
  const tables: Record<string, TableView> = {};
  for (const [name, info] of catalog) tables[name] = { ...describeTable(info), policies: policies.get(name) ?? [] };
  const view: SchemaView = channels.length > 0 ? { tables, channels: describeChannels(channels) } : { tables };
  if (functions) view.functions = functions;
  return view;
}

function describeTable(info: TableInfo): Omit<TableView, 'policies'> {
  const uniques = uniqueConstraints(info);
  const fks = singleForeignKeys(info);
  const columns: TableView['columns'] = {};
  for (const c of info.columns) {
    const column: TableView['columns'][string] = {
      type: definitionType(c.type),
      primary: info.primaryKey.includes(c.name),
      nullable: c.nullable,
      unique: uniques.has(c.name),
    };
    if (c.default !== null) column.default = c.default;
    if (c.identity) column.identity = true;
    const values = catalogEnum(info, c.name)?.values;
    if (values) column.enum = values;
    const fk = fks.get(c.name);
    if (fk) column.references = { table: fk.ref.table, column: fk.ref.column, ...actions(fk.ref) };
    columns[c.name] = column;
  }
  const indexes: TableView['indexes'] = {};
  // An index made outside a definition with expressions lists no plain columns and cannot be written as one: left out.
  for (const i of info.indexes) {
    const shape = liveShape(i);
    if (!i.constraint && shape.columns.length > 0) indexes[i.name] = shape;
  }
  const view: Omit<TableView, 'policies'> = { columns, indexes, access: accessView(info.access ?? defaultAccess(catalogHasUserId(info))) };
  const composite = compositeForeignKeys(info);
  if (composite.length > 0) {
    view.foreignKeys = composite.map((fk) => ({ columns: fk.columns, references: { table: fk.refTable, columns: fk.refColumns }, ...actions(fk) }));
  }
  if (info.plans?.length) view.plans = info.plans;
  if (info.realtime) view.realtime = true;
  if (info.conditions && Object.keys(info.conditions).length) view.conditions = info.conditions;
  return view;
}

/** Access as a definition writes it: an empty reader or writer list is 'service', unused owners and group left out. */
function accessView(access: TableAccess): TableView['access'] {
  if (!isRulesAccess(access)) return access;
  const view: TableView['access'] = { read: access.read.length ? access.read : 'service', write: access.write.length ? access.write : 'service' };
  if (access.owners.length) view.owners = access.owners;
  if (access.group) view.group = access.group;
  return view;
}

/** onDelete and onUpdate, each left out when it is 'no action'. */
function actions(fk: { onDelete: ForeignKeyAction; onUpdate?: ForeignKeyAction }): { onDelete?: ForeignKeyAction; onUpdate?: ForeignKeyAction } {
  const out: { onDelete?: ForeignKeyAction; onUpdate?: ForeignKeyAction } = {};
  if (fk.onDelete !== 'no action') out.onDelete = fk.onDelete;
  if (fk.onUpdate !== undefined && fk.onUpdate !== 'no action') out.onUpdate = fk.onUpdate;
  return out;
}
