import { errors } from '../core/errors.ts';
import { accessGroup } from './access.ts';
import { liveShape, sameShape } from './indexes.ts';
import { conditionChanges } from './conditions.ts';
import { functionChanges } from './function-changes.ts';
import type { FunctionRecord } from './functions.ts';
import { isGroupAccess, isRulesAccess, sameAccess, type Catalog, type ColumnInfo, type ForeignKeyInfo, type TableAccess, type TableInfo } from './catalog.ts';
import type { ColumnDefinition, SchemaChange } from './changes.ts';
import type { ColumnSpec, Definition, ForeignKeySpec, Reference, TableSpec } from './definition.ts';
import { finalHasUserId, type FinalState, type FinalTable } from './final-state.ts';
import { catalogEnum, catalogHasUserId, compositeForeignKeys, defaultAccess, singleForeignKeys, uniqueConstraints, USER_ID, type LiveReference } from './table-info.ts';

/**
 * The diff: a normalized definition against the live catalog, as typed changes in execution order (no SQL).
 * Nothing is ever dropped unless the definition says `_drop` or `_dropColumns`; an unchanged definition plans nothing.
 * Refusals (type or primary key changes, access without user_id, plans on a service table, a new table without
 * columns) throw 400; references were checked before (checks.ts), against the same final state.
 */

/** Canonical (pg_get_expr) spelling of each defined default, keyed `table.column`; see service.ts. */
export type CanonicalDefaults = ReadonlyMap<string, string | null>;

export function diffSchema(def: Definition, catalog: Catalog, final: FinalState, canonical: CanonicalDefaults = new Map(), functions: readonly FunctionRecord[] = []): SchemaChange[] {
  const phases = new Phases();
  planDrops(def, catalog, phases);
  for (const spec of def.tables) {
    if (spec.drop) continue;
    const info = catalog.get(spec.name);
    if (info) planExistingTable(spec, info, final, canonical, phases);
  }
  planNewTables(def, catalog, final, phases);
  for (const spec of def.tables) {
    if (spec.drop) continue;
    const { drop, create } = conditionChanges(spec, catalog.get(spec.name)?.conditions, final, def, catalog);
    phases.dropOther.push(...drop);
    phases.conditions.push(...create);
  }
  const { drop, create } = functionChanges(def, catalog, final, functions);
  phases.dropFunctions.push(...drop);
  phases.functions.push(...create);
  return phases.all();
}

/** Changes grouped by phase so that every object exists before something depends on it. */
class Phases {
  /** First: a function holds the tables, columns and functions it uses. */
  dropFunctions: SchemaChange[] = [];
  dropForeignKeys: SchemaChange[] = [];
  dropOther: SchemaChange[] = [];
  dropColumns: SchemaChange[] = [];
  dropTables: SchemaChange[] = [];
  alterColumns: SchemaChange[] = [];
  createTables: SchemaChange[] = [];
  addForeignKeys: SchemaChange[] = [];
  indexes: SchemaChange[] = [];
  /** After the indexes: a multi-column key may point at a unique index this plan creates. */
  addCompositeForeignKeys: SchemaChange[] = [];
  security: SchemaChange[] = [];
  /** Under an empty search_path of their own, so after everything that names tables unqualified but conditions. */
  functions: SchemaChange[] = [];
  /** Last: a condition may read any table of the plan, and its row of table_access exists by then. */
  conditions: SchemaChange[] = [];

  all(): SchemaChange[] {
    return [
      ...this.dropFunctions,
      ...this.dropForeignKeys,
      ...this.dropOther,
      ...this.dropColumns,
      ...this.dropTables,
      ...this.alterColumns,
      ...this.createTables,
      ...this.addForeignKeys,
      ...this.indexes,
      ...this.addCompositeForeignKeys,
      ...this.security,
      ...this.functions,
      ...this.conditions,
    ];
  }
}

function planDrops(def: Definition, catalog: Catalog, phases: Phases): void {
  const dropped = def.tables.filter((t) => t.drop && catalog.has(t.name)).map((t) => t.name);
  if (dropped.length > 0) phases.dropTables.push({ kind: 'drop_tables', tables: dropped });
}

// ---------------------------------------------------------------- existing tables

/** What an existing table has now, read once for all its columns. */
interface LiveTable {
  info: TableInfo;
  columns: Map<string, ColumnInfo>;
  uniques: Map<string, string>;
  foreignKeys: Map<string, { name: string; ref: LiveReference }>;
}

function planExistingTable(spec: TableSpec, info: TableInfo, state: FinalState, canonical: CanonicalDefaults, phases: Phases): void {
  const final = state.get(spec.name)!;
  const table = spec.name;
  for (const c of spec.columns) checkUnchangeable(table, c, info);
  const live: LiveTable = { info, columns: new Map(info.columns.map((c) => [c.name, c])), uniques: uniqueConstraints(info), foreignKeys: singleForeignKeys(info) };
  for (const column of spec.dropColumns) {
    if (live.columns.has(column)) phases.dropColumns.push({ kind: 'drop_column', table, column });
  }
  for (const c of spec.columns) {
    const current = live.columns.get(c.name);
    if (current) {
      planExistingColumn(table, c, current, live, canonical, phases);
      continue;
    }
    // A new column of an existing table: its foreign key waits until every table exists.
    phases.alterColumns.push({ kind: 'add_column', table, column: columnDefinition(c) });
    if (c.references) phases.addForeignKeys.push({ kind: 'add_foreign_key', table, column: c.name, references: c.references });
  }
  planCompositeForeignKeys(spec, info, phases);
  planIndexes(spec, info, phases);
  planExistingSecurity(spec, info, state, phases);
}

/** Type and primary-key changes would rewrite or re-key live rows: refused, with the safe way spelled out. */
function checkUnchangeable(table: string, c: ColumnSpec, info: TableInfo): void {
  const current = info.columns.find((x) => x.name === c.name);
  if (current && current.type !== c.type) {
    throw errors.validation(
      `Column '${table}.${c.name}' is ${current.type} in the database but the definition says ${c.type}. Changing a column's type is not supported: ` +
        `add a new column with the new type, copy the data over, then remove the old column with _dropColumns.`,
    );
  }
  const inKey = info.primaryKey.includes(c.name);
  if (c.primary !== inKey) {
    const key = info.primaryKey.length > 0 ? `(${info.primaryKey.join(', ')})` : 'none';
    throw errors.validation(
      `Column '${table}.${c.name}' ${c.primary ? 'is declared primary but is not' : 'is not declared primary but is'} part of the primary key ` +
        `(currently ${key}). Changing a primary key is not supported: declare primary: true exactly on the current key columns; ` +
        `for a different key, add a new column (unique: true) or create a new table and copy the rows, then remove the old column with _dropColumns.`,
    );
  }
}

/** A column as CREATE TABLE and ADD COLUMN take it: its primary key and foreign key are separate changes or clauses. */
function columnDefinition(c: ColumnSpec): ColumnDefinition {
  const { primary: _primary, references: _references, ...column } = c;
  return column;
}

/** A listed column the table has: every property is declarative, so what differs is set back to the definition. */
function planExistingColumn(table: string, c: ColumnSpec, current: ColumnInfo, live: LiveTable, canonical: CanonicalDefaults, phases: Phases): void {
  const column = c.name;
  if (current.nullable !== c.nullable) phases.alterColumns.push({ kind: 'set_nullable', table, column, nullable: c.nullable });
  planDefaultAndIdentity(table, c, current, canonical, phases);
  const check = catalogEnum(live.info, column);
  if (!sameList(check?.values ?? null, c.enum ?? null)) {
    if (check) phases.dropOther.push({ kind: 'drop_enum', table, column, constraint: check.name });
    if (c.enum) phases.alterColumns.push({ kind: 'add_enum', table, column, values: c.enum });
  }
  const unique = live.uniques.get(column);
  if (c.unique && unique === undefined) phases.alterColumns.push({ kind: 'add_unique', table, column });
  if (!c.unique && unique !== undefined) phases.dropOther.push({ kind: 'drop_unique', table, column, constraint: unique });
  const fk = live.foreignKeys.get(column);
  // Postgres cannot alter a foreign key's ON DELETE in place: a changed action drops and re-adds the key.
  if (!sameReference(fk?.ref ?? null, c.references)) {
    if (fk) phases.dropForeignKeys.push({ kind: 'drop_foreign_key', table, constraint: fk.name });
    if (c.references) phases.addForeignKeys.push({ kind: 'add_foreign_key', table, column, references: c.references });
  }
}

/** An identity is dropped before a default is set, and added after the old default is gone (a column has one or the other). */
function planDefaultAndIdentity(table: string, c: ColumnSpec, current: ColumnInfo, canonical: CanonicalDefaults, phases: Phases): void {
  const column = c.name;
  const identity = current.identity === true;
  const wantIdentity = c.identity === true;
  if (identity && !wantIdentity) phases.alterColumns.push({ kind: 'drop_identity', table, column });
  // Compared in Postgres's own spelling (canonical); set in the definition's.
  const wanted = canonical.has(`${table}.${column}`) ? canonical.get(`${table}.${column}`)! : c.default;
  if (wanted !== current.default) phases.alterColumns.push({ kind: 'set_default', table, column, default: c.default });
  if (!identity && wantIdentity) phases.alterColumns.push({ kind: 'add_identity', table, column });
}

function sameReference(a: LiveReference | null, b: Reference | null): boolean {
  if (a === null || b === null) return a === b;
  return a.table === b.table && a.column === b.column && a.onDelete === b.onDelete && (a.onUpdate ?? 'no action') === (b.onUpdate ?? 'no action');
}

/** Two lists with the same items in the same order; null (none) equals only null. */
function sameList(a: readonly string[] | null, b: readonly string[] | null): boolean {
  if (a === null || b === null) return a === b;
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * A listed `foreignKeys` is the table's whole set of multi-column keys: a key the database has exactly (columns,
 * referenced columns, actions) is kept, any other is dropped, and the missing ones are added (a changed key is dropped and
 * re-added, as Postgres cannot alter one in place). Without `foreignKeys` the table keeps the keys it has.
 */
function planCompositeForeignKeys(spec: TableSpec, info: TableInfo | undefined, phases: Phases): void {
  if (!spec.foreignKeys) return;
  const live = info ? compositeForeignKeys(info) : [];
  const kept = new Set<ForeignKeyInfo>();
  for (const fk of spec.foreignKeys) {
    const same = live.find((l) => !kept.has(l) && sameCompositeKey(l, fk));
    if (same) kept.add(same);
    else phases.addCompositeForeignKeys.push({ kind: 'add_composite_foreign_key', table: spec.name, foreignKey: fk });
  }
  for (const l of live) if (!kept.has(l)) phases.dropForeignKeys.push({ kind: 'drop_foreign_key', table: spec.name, constraint: l.name });
}

function sameCompositeKey(live: ForeignKeyInfo, fk: ForeignKeySpec): boolean {
  return (
    live.refTable === fk.refTable &&
    sameList(live.columns, fk.columns) &&
    sameList(live.refColumns, fk.refColumns) &&
    live.onDelete === fk.onDelete &&
    (live.onUpdate ?? 'no action') === fk.onUpdate
  );
}

function planIndexes(spec: TableSpec, info: TableInfo | undefined, phases: Phases): void {
  for (const index of spec.indexes) {
    const current = info?.indexes.find((i) => i.name === index.name);
    if (current && sameShape(liveShape(current), index)) continue;
    // Same name, different definition: rebuild it (an index holds no data of its own).
    if (current) phases.indexes.push({ kind: 'drop_index', table: spec.name, index: index.name });
    phases.indexes.push({ kind: 'create_index', table: spec.name, index });
  }
}

function planExistingSecurity(spec: TableSpec, info: TableInfo, state: FinalState, phases: Phases): void {
  const table = spec.name;
  const hadUserId = catalogHasUserId(info);
  const hasUserId = finalHasUserId(state.get(table)!);
  const access = resolveAccess(spec, info.access, hasUserId);
  if (hadUserId && !hasUserId) phases.dropOther.push({ kind: 'drop_fill_trigger', table });
  const stored = info.plans ?? null;
  const plans = resolvePlans(spec, stored, access);
  const reset = !info.rls || !sameAccess(info.access, access) || hadUserId !== hasUserId;
  if (reset) {
    // Policies are dropped before columns: svc_user_own depends on user_id.
    const rules = info.access === 'authenticated' || isRulesAccess(info.access);
    phases.dropOther.push({ kind: 'drop_access_policies', table, group: isGroupAccess(info.access), ...(rules ? { rules: true as const } : {}) });
    phases.security.push(setAccess(table, access, hasUserId, !info.rls, state));
  }
  phases.security.push(...planGateChanges(table, stored, plans));
  phases.security.push(...realtimeChanges(spec, info.realtime ?? false, state));
}

// ---------------------------------------------------------------- new tables

/**
 * New tables in dependency order: a table is created after the new tables it references. Foreign keys
 * inside a cycle (a -> b -> a) cannot be inlined, so those are added by ALTER TABLE once both tables exist;
 * a table referencing itself is inlined (Postgres allows that in CREATE TABLE).
 */
function planNewTables(def: Definition, catalog: Catalog, final: FinalState, phases: Phases): void {
  const fresh = def.tables.filter((t) => !t.drop && !catalog.has(t.name));
  for (const spec of fresh) {
    if (spec.columns.length === 0) throw errors.validation(`Table '${spec.name}' is new and has no columns; define at least one column.`);
  }
  const created = new Set<string>();
  for (const spec of dependencyOrder(fresh)) {
    const table = spec.name;
    const inline = (ref: Reference | null) => ref !== null && (ref.table === table || created.has(ref.table) || catalog.has(ref.table));
    const columns = spec.columns.map((c) => ({ ...columnDefinition(c), references: inline(c.references) ? c.references : null }));
    const primaryKey = spec.columns.filter((c) => c.primary).map((c) => c.name);
    phases.createTables.push({ kind: 'create_table', table, columns, primaryKey });
    for (const c of spec.columns) {
      if (c.references && !inline(c.references)) phases.addForeignKeys.push({ kind: 'add_foreign_key', table, column: c.name, references: c.references });
    }
    created.add(table);
    planCompositeForeignKeys(spec, undefined, phases);
    planIndexes(spec, undefined, phases);
    const hasUserId = finalHasUserId(final.get(table)!);
    const access = resolveAccess(spec, null, hasUserId);
    // A group's policies call a function reading its members table, which may be created after this one.
    (accessGroup(access) ? phases.security : phases.createTables).push(setAccess(table, access, hasUserId, true, final));
    phases.createTables.push(...planGateChanges(table, null, resolvePlans(spec, null, access)));
    phases.createTables.push(...realtimeChanges(spec, false, final));
  }
}

/** Kahn's algorithm, stable in definition order; a cycle is broken at its first table in definition order. */
export function dependencyOrder(tables: TableSpec[]): TableSpec[] {
  const names = new Set(tables.map((t) => t.name));
  const needs = new Map(
    tables.map((t) => [t.name, new Set(t.columns.map((c) => c.references?.table).filter((r): r is string => !!r && r !== t.name && names.has(r)))]),
  );
  const order: TableSpec[] = [];
  const remaining = [...tables];
  while (remaining.length > 0) {
    const done = new Set(order.map((t) => t.name));
    const ready = remaining.findIndex((t) => [...needs.get(t.name)!].every((r) => done.has(r)));
    const [next] = remaining.splice(ready >= 0 ? ready : 0, 1);
    order.push(next!);
  }
  return order;
}

// ---------------------------------------------------------------- access and plans

/**
 * A set_access change; a group's carries the type of its members' key column (checks.ts made sure it exists; a column's
 * type never changes by an apply, so policies built for it stay right).
 */
function setAccess(table: string, access: TableAccess, hasUserId: boolean, enableRls: boolean, state: FinalState): SchemaChange {
  const group = accessGroup(access);
  if (!group) return { kind: 'set_access', table, access, hasUserId, enableRls };
  return { kind: 'set_access', table, access, hasUserId, enableRls, keyType: state.get(group.members)!.columns.get(group.key)!.type };
}

function resolveAccess(spec: TableSpec, stored: TableAccess | null, hasUserId: boolean): TableAccess {
  const access = spec.access ?? stored ?? defaultAccess(hasUserId);
  if (access === 'user' && !hasUserId) {
    throw errors.validation(
      `Table '${spec.name}' has access 'user', which needs a '${USER_ID}' column of type uuid to tell whose row it is. ` +
        `Add "${USER_ID}": { "type": "uuid" }, or choose access 'public' or 'service'.`,
    );
  }
  return access;
}

/** The table's plans after the apply: the definition's when it says (null removes them), else what the table has. */
function resolvePlans(spec: TableSpec, stored: string[] | null, access: TableAccess): string[] | null {
  const plans = spec.plans === undefined ? stored : spec.plans;
  if (plans !== null && access === 'service') {
    throw errors.validation(
      `Table '${spec.name}' has access 'service' (keys only), so plans would gate nobody. ` +
        `Choose access 'public' or 'user' for rows that subscribers reach, or set plans: null.`,
    );
  }
  return plans;
}

/** The capture triggers coming or going; a change is told apart by its primary key, so a streamed table needs one. */
function realtimeChanges(spec: TableSpec, before: boolean, state: FinalState): SchemaChange[] {
  if (spec.realtime === undefined || spec.realtime === before) return [];
  if (spec.realtime && state.get(spec.name)!.primaryKey.length === 0) {
    throw errors.validation(`Table '${spec.name}' has no primary key, so its changes cannot stream (realtime: true): a subscriber tells rows apart by it. Give it one.`);
  }
  return [{ kind: 'set_realtime', table: spec.name, enabled: spec.realtime }];
}

/** The plan gate moving from `before` to `after` (null: no gate); both are sorted and distinct (normalizeDefinition, and what an apply stored). */
function planGateChanges(table: string, before: readonly string[] | null, after: string[] | null): SchemaChange[] {
  if (sameList(before, after)) return [];
  if (after === null) return [{ kind: 'drop_plan_gate', table }];
  return [{ kind: before === null ? 'create_plan_gate' : 'alter_plan_gate', table, plans: after }];
}
