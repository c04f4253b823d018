import { errors } from '../core/errors.ts';
import { isRulesAccess, type Catalog, type GroupAccess } from './catalog.ts';
import { accessGroup } from './access.ts';
import type { Definition } from './definition.ts';
import { USER_ID } from './table-info.ts';
import type { FinalForeignKey, FinalState, FinalTable } from './final-state.ts';

/**
 * What a definition refers to, checked against the state after the apply before anything is planned: every foreign key
 * points at a key that will exist, and every index names columns that will exist under a name no other relation holds.
 * Each refusal is a 400 that says how to fix the definition.
 */

export function checkDefinitionReferences(def: Definition, catalog: Catalog, final: FinalState): void {
  checkReferences(final, new Set(def.tables.filter((t) => t.drop).map((t) => t.name)));
  checkIndexNames(def, catalog, final);
  checkGroupAccess(def, catalog, final);
}

/**
 * Every table whose access is a group (defined now, or kept from the database) has its column, and its members table
 * will exist with user_id uuid and a key column of the same type: also when this definition changes the members table.
 */
function checkGroupAccess(def: Definition, catalog: Catalog, final: FinalState): void {
  for (const [name, table] of final) {
    const access = def.tables.find((t) => t.name === name)?.access ?? catalog.get(name)?.access;
    const group = accessGroup(access);
    if (group) {
      const problem = groupAccessProblem(name, table, group, final);
      if (problem) throw errors.validation(`Table '${name}' has group access through '${group.members}.${group.key}', but ${problem}`);
    }
    for (const owner of isRulesAccess(access) ? access.owners : []) {
      if (table.columns.get(owner)?.type !== 'uuid') {
        throw errors.validation(`Table '${name}' names '${owner}' among its access owners, but it has no uuid column '${owner}'. Add it ("${owner}": { "type": "uuid" }), or fix access.owners.`);
      }
    }
  }
}

function groupAccessProblem(name: string, table: FinalTable, access: Pick<GroupAccess, 'members' | 'column' | 'key'>, final: FinalState): string | undefined {
  const column = table.columns.get(access.column);
  if (!column) return `it has no column '${access.column}' (access.column). Add it, or fix access.column.`;
  const members = final.get(access.members);
  if (!members) return `table '${access.members}' does not exist after this apply. Define it (user_id uuid and '${access.key}'), or change access.members.`;
  if (members.columns.get(USER_ID)?.type !== 'uuid') return `'${access.members}' has no ${USER_ID} uuid column to say whose membership a row is.`;
  const key = members.columns.get(access.key);
  if (!key) return `'${access.members}' has no column '${access.key}' (access.key, default: access.column).`;
  if (key.type !== column.type) return `'${access.members}.${access.key}' is ${key.type} and '${name}.${access.column}' is ${column.type}; they must have the same type.`;
  return undefined;
}

/** Every foreign key of the final state must point at an existing primary-key or unique column. */
function checkReferences(final: FinalState, dropping: ReadonlySet<string>): void {
  for (const [tableName, table] of final) {
    for (const [colName, col] of table.columns) {
      if (!col.references) continue;
      const { table: refTable, column: refColumn } = col.references;
      const where = `Column '${tableName}.${colName}' references '${refTable}.${refColumn}'`;
      const target = final.get(refTable);
      if (!target) {
        throw errors.validation(
          col.declared && !dropping.has(refTable)
            ? `${where}, but table '${refTable}' is neither in the schema definition nor in the database. Define '${refTable}' in the same schema, or fix references.table.`
            : `${where}, but this definition drops table '${refTable}'. Remove or change the reference (references, _dropColumns or _drop) in the same definition.`,
        );
      }
      const targetColumn = target.columns.get(refColumn);
      if (!targetColumn) {
        throw errors.validation(`${where}, but '${refTable}' has no column '${refColumn}' (or this definition drops it).`);
      }
      const isKey = targetColumn.unique || (target.primaryKey.length === 1 && target.primaryKey[0] === refColumn);
      if (!isKey) {
        throw errors.validation(`${where}, but '${refTable}.${refColumn}' is neither the primary key nor unique. Reference a primary key, or give that column unique: true.`);
      }
    }
    for (const fk of table.foreignKeys) checkCompositeReference(final, dropping, tableName, table, fk);
  }
}

/** A multi-column foreign key: its columns exist, it points at an existing table and at that table's primary key or a unique set. */
function checkCompositeReference(final: FinalState, dropping: ReadonlySet<string>, tableName: string, table: FinalTable, fk: FinalForeignKey): void {
  const declared = fk.index >= 0;
  const key = `(${fk.columns.join(', ')}) references '${fk.refTable}' (${fk.refColumns.join(', ')})`;
  const where = declared ? `In table '${tableName}', foreignKeys[${fk.index}] ${key}` : `The foreign key of table '${tableName}' ${key}`;
  const missing = fk.columns.find((c) => !table.columns.has(c));
  if (missing) throw errors.validation(`${where}, but table '${tableName}' has no column '${missing}'.`);
  const target = final.get(fk.refTable);
  if (!target) {
    throw errors.validation(
      declared && !dropping.has(fk.refTable)
        ? `${where}, but table '${fk.refTable}' is neither in the schema definition nor in the database. Define '${fk.refTable}' in the same schema, or fix references.table.`
        : `${where}, but this definition drops table '${fk.refTable}'. Remove the foreign key (list foreignKeys without it) in the same definition.`,
    );
  }
  const missingRef = fk.refColumns.find((c) => !target.columns.has(c));
  if (missingRef) throw errors.validation(`${where}, but '${fk.refTable}' has no column '${missingRef}' (or this definition drops it).`);
  if (declared && !target.keys.some((key) => sameSet(key, fk.refColumns))) {
    throw errors.validation(
      `${where}, but those columns of '${fk.refTable}' are neither its primary key nor unique together. ` +
        `Reference the primary key, or add a unique index on exactly (${fk.refColumns.join(', ')}) to '${fk.refTable}'.`,
    );
  }
  const never = fk.columns.find((c) => !table.columns.get(c)!.nullable);
  const setNull = (['onDelete', 'onUpdate'] as const).find((action) => fk[action] === 'set null');
  if (declared && setNull && never) {
    throw errors.validation(`${where} with ${setNull} 'set null', but column '${tableName}.${never}' is never null; choose 'cascade', or make the columns nullable.`);
  }
}

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x) => b.includes(x));

/** Index names share the schema's relation namespace: refuse names another table, index or constraint holds. */
function checkIndexNames(def: Definition, catalog: Catalog, final: FinalState): void {
  const owners = new Map<string, { table: string; constraint: boolean }>();
  for (const [table, info] of catalog) for (const i of info.indexes) owners.set(i.name, { table, constraint: i.constraint });
  for (const spec of def.tables) {
    if (spec.drop) continue;
    const columns = final.get(spec.name)!.columns;
    for (const index of spec.indexes) {
      const missing = index.reads.find((c) => !columns.has(c));
      if (missing) throw errors.validation(`Index '${index.name}' of table '${spec.name}' names column '${missing}', which the table does not have.`);
      if (catalog.has(index.name)) throw errors.validation(`Index '${index.name}' of table '${spec.name}' has the name of an existing table; choose another index name.`);
      const owner = owners.get(index.name);
      if (!owner) continue;
      if (owner.table !== spec.name && !def.tables.some((t) => t.drop && t.name === owner.table)) {
        throw errors.validation(`Index '${index.name}' of table '${spec.name}' already exists on table '${owner.table}'; index names are unique per app. Choose another name.`);
      }
      if (owner.table === spec.name && owner.constraint) {
        throw errors.validation(`Index '${index.name}' of table '${spec.name}' is the name of a primary key or unique constraint; choose another index name.`);
      }
    }
  }
}
