import type { ForeignKeyAction, ForeignKeyInfo, TableAccess, TableInfo } from './catalog.ts';
import { enumConstraintName, type Reference } from './definition.ts';

/**
 * A live table (the catalog's TableInfo) read in the definition's terms: which columns are unique, which reference
 * what, which enum a column has. Shared by the planner (what is there now) and describe.ts (what schema_get shows),
 * so that applying what schema_get returns plans nothing.
 */

/** The column whose uuid says whose row it is: it drives the `user` access level and the fill trigger. */
export const USER_ID = 'user_id';

/** Single columns carrying a UNIQUE constraint (not the primary key), with the constraint's name. */
export function uniqueConstraints(table: TableInfo): Map<string, string> {
  const out = new Map<string, string>();
  for (const index of table.indexes) {
    if (index.constraint && index.unique && !index.primary && index.columns.length === 1) out.set(index.columns[0]!, index.name);
  }
  return out;
}

/** A foreign key as the catalog has it: its actions may be one a definition cannot say ('set default'). */
export type LiveReference = Omit<Reference, 'onDelete' | 'onUpdate'> & { onDelete: ForeignKeyAction; onUpdate?: ForeignKeyAction };

/** Single-column foreign keys by column. */
export function singleForeignKeys(table: TableInfo): Map<string, { name: string; ref: LiveReference }> {
  const out = new Map<string, { name: string; ref: LiveReference }>();
  for (const fk of table.foreignKeys) {
    if (fk.columns.length !== 1 || fk.refColumns.length !== 1 || out.has(fk.columns[0]!)) continue;
    out.set(fk.columns[0]!, {
      name: fk.name,
      ref: { table: fk.refTable, column: fk.refColumns[0]!, onDelete: fk.onDelete, onUpdate: fk.onUpdate ?? 'no action' },
    });
  }
  return out;
}

/** Foreign keys over several columns: the definition's table-level `foreignKeys`. */
export function compositeForeignKeys(table: TableInfo): ForeignKeyInfo[] {
  return table.foreignKeys.filter((fk) => fk.columns.length > 1);
}

/** The values of a column's enum as the catalog has them (its CHECK named enumConstraintName), or null. */
export function catalogEnum(table: TableInfo, column: string): { name: string; values: string[] | null } | undefined {
  const name = enumConstraintName(table.name, column);
  const check = table.checks?.find((k) => k.name === name);
  return check && { name, values: check.values };
}

export function catalogHasUserId(table: TableInfo): boolean {
  return table.columns.some((c) => c.name === USER_ID && c.type === 'uuid');
}

/** Access of a table whose definition does not say: 'user' when rows carry their owner, else service-only. */
export function defaultAccess(hasUserId: boolean): TableAccess {
  return hasUserId ? 'user' : 'service';
}

