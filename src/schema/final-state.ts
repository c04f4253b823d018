import type { Catalog, ForeignKeyAction, TableInfo } from './catalog.ts';
import type { ColumnSpec, Definition, ForeignKeySpec, TableSpec } from './definition.ts';
import { compositeForeignKeys, singleForeignKeys, uniqueConstraints, USER_ID, type LiveReference } from './table-info.ts';

/**
 * The tables and columns as they will be after the apply: the catalog, minus what the definition drops, with what it
 * declares on top. References are checked against it (checks.ts), and it says whether a table will carry user_id.
 */

export interface FinalColumn {
  type: string;
  nullable: boolean;
  unique: boolean;
  references: LiveReference | null;
  /** Where a foreign key comes from, for messages. */
  declared: boolean;
}

/** A multi-column foreign key of the final state. */
export interface FinalForeignKey {
  columns: string[];
  refTable: string;
  refColumns: string[];
  onDelete: ForeignKeyAction;
  onUpdate: ForeignKeyAction;
  /** Its position in the definition's foreignKeys, or -1 for a key the table keeps from the database. */
  index: number;
}

export interface FinalTable {
  columns: Map<string, FinalColumn>;
  primaryKey: string[];
  /** Column sets a multi-column foreign key can point at: the primary key, unique constraints and unique indexes. */
  keys: string[][];
  foreignKeys: FinalForeignKey[];
  /** Columns that lead some index (plain first keys): a lookup by one is an index probe (conditions need one). */
  indexLeading: Set<string>;
}

export type FinalState = Map<string, FinalTable>;

export function finalState(def: Definition, catalog: Catalog): FinalState {
  const specs = new Map(def.tables.map((t) => [t.name, t]));
  const out: FinalState = new Map();
  for (const [name, info] of catalog) {
    const spec = specs.get(name);
    if (!spec?.drop) out.set(name, finalExistingTable(info, spec));
  }
  for (const spec of def.tables) {
    if (!spec.drop && !catalog.has(spec.name)) out.set(spec.name, finalNewTable(spec));
  }
  return out;
}

/** A table the database has, as the definition (if it lists the table) leaves it. */
function finalExistingTable(info: TableInfo, spec: TableSpec | undefined): FinalTable {
  const uniques = uniqueConstraints(info);
  const fks = singleForeignKeys(info);
  const columns = new Map<string, FinalColumn>();
  for (const c of info.columns) {
    if (spec?.dropColumns.includes(c.name)) continue;
    columns.set(c.name, { type: c.type, nullable: c.nullable, unique: uniques.has(c.name), references: fks.get(c.name)?.ref ?? null, declared: false });
  }
  for (const c of spec?.columns ?? []) columns.set(c.name, declaredColumn(c));
  const primaryKey = info.primaryKey.filter((c) => columns.has(c));
  // Unique indexes the table keeps: not redefined by name, not a single-column constraint a listed column now decides, and whole.
  const kept = info.indexes.filter(
    (i) =>
      i.unique &&
      !i.primary &&
      !spec?.indexes.some((x) => x.name === i.name) &&
      !(i.constraint && i.columns.length === 1 && spec?.columns.some((c) => c.name === i.columns[0])) &&
      i.columns.every((c) => columns.has(c)),
  );
  const keys = [...(primaryKey.length > 0 ? [primaryKey] : []), ...kept.map((i) => i.columns), ...declaredKeys(spec)];
  const foreignKeys =
    spec?.foreignKeys?.map(finalForeignKey) ??
    compositeForeignKeys(info)
      .filter((fk) => fk.columns.every((c) => columns.has(c)))
      .map((fk) => ({ ...fk, onUpdate: fk.onUpdate ?? 'no action', index: -1 }));
  const indexLeading = new Set([...info.indexes.map((i) => i.columns[0]), ...(spec?.indexes ?? []).map((i) => i.reads[0])].filter((c): c is string => c !== undefined && columns.has(c)));
  return { columns, primaryKey, keys, foreignKeys, indexLeading };
}

function finalNewTable(spec: TableSpec): FinalTable {
  const columns = new Map(spec.columns.map((c) => [c.name, declaredColumn(c)]));
  const primaryKey = spec.columns.filter((c) => c.primary).map((c) => c.name);
  const keys = [...(primaryKey.length > 0 ? [primaryKey] : []), ...declaredKeys(spec)];
  const indexLeading = new Set(spec.indexes.map((i) => i.reads[0]).filter((c): c is string => c !== undefined));
  return { columns, primaryKey, keys, foreignKeys: (spec.foreignKeys ?? []).map(finalForeignKey), indexLeading };
}

export function finalHasUserId(table: FinalTable): boolean {
  return table.columns.get(USER_ID)?.type === 'uuid';
}

function declaredColumn(c: ColumnSpec): FinalColumn {
  return { type: c.type, nullable: c.nullable, unique: c.unique, references: c.references, declared: true };
}

/** Unique column sets a definition declares: unique columns and unique indexes. */
function declaredKeys(spec: TableSpec | undefined): string[][] {
  if (!spec) return [];
  // A partial or expression index makes no key a foreign key can point at.
  const whole = (i: TableSpec['indexes'][number]) => i.unique && i.where === undefined && i.columns.every((c, n) => c === i.reads[n]);
  return [...spec.columns.filter((c) => c.unique).map((c) => [c.name]), ...spec.indexes.filter(whole).map((i) => i.columns)];
}

function finalForeignKey(fk: ForeignKeySpec, index: number): FinalForeignKey {
  return { columns: fk.columns, refTable: fk.refTable, refColumns: fk.refColumns, onDelete: fk.onDelete, onUpdate: fk.onUpdate, index };
}
