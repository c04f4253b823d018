import { z } from 'zod';
import type { Catalog, TableInfo } from './catalog.ts';
import { ACCESS_VALUES, ON_DELETE_VALUES, definitionType } from './definition.ts';
import { catalogHasUserId, defaultAccess, singleForeignKeys, uniqueConstraints } from './plan.ts';

/**
 * The live schema in the definition's own format, so that applying what schema_get returns plans nothing.
 * Only what a definition can express is shown: single-column unique constraints and foreign keys, and
 * standalone indexes (those backing a primary key or unique constraint are implied by the columns).
 */

export const ColumnViewSchema = z.object({
  type: z.string(),
  primary: z.boolean(),
  nullable: z.boolean(),
  unique: z.boolean(),
  default: z.string().optional().describe('Default expression as Postgres prints it'),
  references: z
    .object({ table: z.string(), column: z.string(), onDelete: z.enum([...ON_DELETE_VALUES, 'set default']).optional().describe("Shown unless 'no action'") })
    .optional(),
});

export const TableViewSchema = z.object({
  columns: z.record(z.string(), ColumnViewSchema),
  indexes: z.record(z.string(), z.object({ columns: z.array(z.string()), unique: z.boolean() })),
  access: z.enum(ACCESS_VALUES),
  plans: z.array(z.string()).optional().describe('Billing plans whose subscribers alone reach the rows as end users; absent when not gated'),
});

export const SchemaViewSchema = z.object({ tables: z.record(z.string(), TableViewSchema) });
export type SchemaView = z.infer<typeof SchemaViewSchema>;
type TableView = z.infer<typeof TableViewSchema>;

export function describeCatalog(catalog: Catalog): SchemaView {
  const tables: Record<string, TableView> = {};
  for (const [name, info] of catalog) tables[name] = describeTable(info);
  return { tables };
}

function describeTable(info: TableInfo): TableView {
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
    const fk = fks.get(c.name);
    if (fk) column.references = fk.ref.onDelete === 'no action' ? { table: fk.ref.table, column: fk.ref.column } : { ...fk.ref };
    columns[c.name] = column;
  }
  const indexes: TableView['indexes'] = {};
  // Expression indexes list no plain columns and cannot be written as a definition: left out.
  for (const i of info.indexes) if (!i.constraint && i.columns.length > 0) indexes[i.name] = { columns: i.columns, unique: i.unique };
  const view: TableView = { columns, indexes, access: info.access ?? defaultAccess(catalogHasUserId(info)) };
  if (info.plans?.length) view.plans = info.plans;
  return view;
}
