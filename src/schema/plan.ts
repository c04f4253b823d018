import pg from 'pg';
import { errors } from '../core/errors.ts';
import type { Catalog, ForeignKeyAction, ForeignKeyInfo, TableAccess, TableInfo } from './catalog.ts';
import { enumConstraintName, type ColumnSpec, type Definition, type ForeignKeySpec, type IndexSpec, type Reference, type TableSpec } from './definition.ts';

/**
 * The plan: a pure diff of a normalized definition against the live catalog, as SQL statements.
 * Nothing is ever dropped unless the definition says `_drop` or `_dropColumns`; an unchanged definition
 * plans nothing. Refusals (type or primary key changes, dangling references) throw 400 before any SQL runs.
 */

/** Canonical (pg_get_expr) spelling of each defined default, keyed `table.column`; see service.ts. */
export type CanonicalDefaults = ReadonlyMap<string, string | null>;

const q = (identifier: string) => pg.escapeIdentifier(identifier);
const cols = (names: readonly string[]) => names.map(q).join(', ');

export const USER_ID = 'user_id';
export const POLICY_NAMES = ['svc_service_all', 'svc_user_own', 'svc_public_read'] as const;
export const FILL_TRIGGER = 'svc_fill_user_id';
/** The restrictive policy of a table gated by billing plans; apart from POLICY_NAMES, which an access change rebuilds. */
export const PLAN_GATE = 'svc_plan_gate';

// ---------------------------------------------------------------- catalog helpers

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

// ---------------------------------------------------------------- final state

interface FinalColumn {
  type: string;
  nullable: boolean;
  unique: boolean;
  references: LiveReference | null;
  /** Where a foreign key comes from, for messages. */
  declared: boolean;
}

/** A multi-column foreign key of the final state. */
interface FinalForeignKey {
  columns: string[];
  refTable: string;
  refColumns: string[];
  onDelete: ForeignKeyAction;
  onUpdate: ForeignKeyAction;
  /** Its position in the definition's foreignKeys, or -1 for a key the table keeps from the database. */
  index: number;
}

interface FinalTable {
  columns: Map<string, FinalColumn>;
  primaryKey: string[];
  /** Column sets a multi-column foreign key can point at: the primary key, unique constraints and unique indexes. */
  keys: string[][];
  foreignKeys: FinalForeignKey[];
}

/** The tables and columns as they will be after the apply; references are checked against it. */
function finalState(def: Definition, catalog: Catalog): Map<string, FinalTable> {
  const specs = new Map(def.tables.map((t) => [t.name, t]));
  const out = new Map<string, FinalTable>();
  for (const [name, info] of catalog) {
    const spec = specs.get(name);
    if (spec?.drop) continue;
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
    out.set(name, { columns, primaryKey, keys, foreignKeys });
  }
  for (const spec of def.tables) {
    if (spec.drop || catalog.has(spec.name)) continue;
    const columns = new Map(spec.columns.map((c) => [c.name, declaredColumn(c)]));
    const primaryKey = spec.columns.filter((c) => c.primary).map((c) => c.name);
    const keys = [...(primaryKey.length > 0 ? [primaryKey] : []), ...declaredKeys(spec)];
    out.set(spec.name, { columns, primaryKey, keys, foreignKeys: (spec.foreignKeys ?? []).map(finalForeignKey) });
  }
  return out;
}

function declaredColumn(c: ColumnSpec): FinalColumn {
  return { type: c.type, nullable: c.nullable, unique: c.unique, references: c.references, declared: true };
}

/** Unique column sets a definition declares: unique columns and unique indexes. */
function declaredKeys(spec: TableSpec | undefined): string[][] {
  if (!spec) return [];
  return [...spec.columns.filter((c) => c.unique).map((c) => [c.name]), ...spec.indexes.filter((i) => i.unique).map((i) => i.columns)];
}

function finalForeignKey(fk: ForeignKeySpec, index: number): FinalForeignKey {
  return { columns: fk.columns, refTable: fk.refTable, refColumns: fk.refColumns, onDelete: fk.onDelete, onUpdate: fk.onUpdate, index };
}

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x) => b.includes(x));

function finalHasUserId(table: FinalTable): boolean {
  return table.columns.get(USER_ID)?.type === 'uuid';
}

/** Every foreign key of the final state must point at an existing primary-key or unique column. */
function checkReferences(final: Map<string, FinalTable>, dropping: ReadonlySet<string>): void {
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
function checkCompositeReference(final: Map<string, FinalTable>, dropping: ReadonlySet<string>, tableName: string, table: FinalTable, fk: FinalForeignKey): void {
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

// ---------------------------------------------------------------- SQL pieces

/** `ON DELETE ...` and `ON UPDATE ...`, each unless it is Postgres's default (no action, also when absent). */
function actionsSql(actions: { onDelete: ForeignKeyAction; onUpdate?: ForeignKeyAction }): string {
  const onDelete = actions.onDelete === 'no action' ? '' : ` ON DELETE ${actions.onDelete.toUpperCase()}`;
  const onUpdate = (actions.onUpdate ?? 'no action') === 'no action' ? '' : ` ON UPDATE ${actions.onUpdate!.toUpperCase()}`;
  return onDelete + onUpdate;
}

/** `REFERENCES t (c)` and its actions. */
function referencesSql(ref: Reference): string {
  return `REFERENCES ${q(ref.table)} (${q(ref.column)})${actionsSql(ref)}`;
}

/** A SQL string literal; the apply runs with standard_conforming_strings on, so a backslash is just a character. */
const sqlString = (value: string) => `'${value.replaceAll("'", "''")}'`;

/** A text[] literal, every element quoted; Postgres prints it back in the form the catalog parses (catalog.ts). */
const arrayLiteral = (values: readonly string[]) => `{${values.map((v) => `"${v.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`).join(',')}}`;

/** The CHECK of a column's enum; null passes it (a nullable column stays nullable). */
function enumCheckSql(table: string, column: string, values: readonly string[]): string {
  return `CONSTRAINT ${q(enumConstraintName(table, column))} CHECK (${q(column)} = ANY (${sqlString(arrayLiteral(values))}::text[]))`;
}

function columnSql(table: string, c: ColumnSpec, reference: Reference | null): string {
  let sql = `${q(c.name)} ${c.type}`;
  if (c.identity) sql += ' GENERATED BY DEFAULT AS IDENTITY';
  if (c.default !== null) sql += ` DEFAULT ${c.default}`;
  if (!c.nullable) sql += ' NOT NULL';
  if (c.unique) sql += ' UNIQUE';
  if (c.enum) sql += ` ${enumCheckSql(table, c.name, c.enum)}`;
  if (reference) sql += ` ${referencesSql(reference)}`;
  return sql;
}

function addForeignKeySql(table: string, column: string, ref: Reference): string {
  return `ALTER TABLE ${q(table)} ADD FOREIGN KEY (${q(column)}) ${referencesSql(ref)}`;
}

function addCompositeForeignKeySql(table: string, fk: ForeignKeySpec): string {
  return `ALTER TABLE ${q(table)} ADD CONSTRAINT ${q(fk.name)} FOREIGN KEY (${cols(fk.columns)}) REFERENCES ${q(fk.refTable)} (${cols(fk.refColumns)})${actionsSql(fk)}`;
}

function createIndexSql(table: string, index: IndexSpec): string {
  return `CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX ${q(index.name)} ON ${q(table)} (${cols(index.columns)})`;
}

function dropPoliciesSql(table: string): string[] {
  return POLICY_NAMES.map((p) => `DROP POLICY IF EXISTS ${p} ON ${q(table)}`);
}

/** Policies of an access level; svc_service always sees everything (the service key bypasses nothing but RLS). */
function createPoliciesSql(table: string, access: TableAccess, hasUserId: boolean): string[] {
  const t = q(table);
  const own = `${q(USER_ID)} = public.current_user_id()`;
  const out = [`CREATE POLICY svc_service_all ON ${t} FOR ALL TO svc_service USING (true) WITH CHECK (true)`];
  const userOwn = `CREATE POLICY svc_user_own ON ${t} FOR ALL TO svc_user USING (${own}) WITH CHECK (${own})`;
  if (access === 'user') out.push(userOwn);
  if (access === 'public') {
    out.push(`CREATE POLICY svc_public_read ON ${t} FOR SELECT TO svc_anon, svc_user USING (true)`);
    if (hasUserId) out.push(userOwn);
  }
  return out;
}

function fillTriggerSql(table: string): string {
  return `CREATE OR REPLACE TRIGGER ${FILL_TRIGGER} BEFORE INSERT ON ${q(table)} FOR EACH ROW EXECUTE FUNCTION svc_meta.fill_user_id()`;
}

function upsertAccessSql(table: string, access: TableAccess): string {
  return (
    `INSERT INTO svc_meta.table_access (table_name, access) VALUES (${pg.escapeLiteral(table)}, ${pg.escapeLiteral(access)}) ` +
    'ON CONFLICT (table_name) DO UPDATE SET access = EXCLUDED.access'
  );
}

/** RLS, policies, the fill trigger and the access row of a table whose security is (re)built. */
function securitySql(table: string, access: TableAccess, hasUserId: boolean, rlsOn: boolean): string[] {
  const out: string[] = [];
  if (!rlsOn) out.push(`ALTER TABLE ${q(table)} ENABLE ROW LEVEL SECURITY`);
  out.push(...createPoliciesSql(table, access, hasUserId));
  if (hasUserId) out.push(fillTriggerSql(table));
  out.push(upsertAccessSql(table, access));
  return out;
}

const textArray = (values: readonly string[]) => `ARRAY[${values.map((v) => pg.escapeLiteral(v)).join(', ')}]::text[]`;

/**
 * Who passes the plan gate: an end user entitled to one of the plans. The function is wrapped in a sub-select so that
 * Postgres runs it once per statement (an InitPlan) instead of once per row: a security definer function is never
 * inlined.
 */
function planGateCondition(plans: readonly string[]): string {
  return `(SELECT public.current_user_plan()) = ANY (${textArray(plans)})`;
}

/** Both sides are sorted and distinct (normalizeDefinition, and what an apply stored). */
function samePlans(a: readonly string[] | null, b: readonly string[] | null): boolean {
  if (a === null || b === null) return a === b;
  return a.length === b.length && a.every((plan, i) => plan === b[i]);
}

/**
 * The plan gate moving from `before` to `after` (null: no gate). RESTRICTIVE, so it narrows what the access policies
 * allow for end users and anonymous callers alike, for reads and writes; svc_service is not named and keeps every row.
 */
function planGateSql(table: string, before: readonly string[] | null, after: readonly string[] | null): string[] {
  if (samePlans(before, after)) return [];
  const t = q(table);
  const out: string[] = [];
  if (after === null) {
    out.push(`DROP POLICY IF EXISTS ${PLAN_GATE} ON ${t}`);
  } else {
    const condition = planGateCondition(after);
    out.push(
      before === null
        ? `CREATE POLICY ${PLAN_GATE} ON ${t} AS RESTRICTIVE FOR ALL TO svc_anon, svc_user USING (${condition}) WITH CHECK (${condition})`
        : `ALTER POLICY ${PLAN_GATE} ON ${t} USING (${condition}) WITH CHECK (${condition})`,
    );
  }
  out.push(`UPDATE svc_meta.table_access SET plans = ${after === null ? 'NULL' : textArray(after)} WHERE table_name = ${pg.escapeLiteral(table)}`);
  return out;
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

// ---------------------------------------------------------------- the plan

/** Statements grouped by phase so that every object exists before something depends on it. */
class Phases {
  dropForeignKeys: string[] = [];
  dropOther: string[] = [];
  dropColumns: string[] = [];
  dropTables: string[] = [];
  alterColumns: string[] = [];
  createTables: string[] = [];
  addForeignKeys: string[] = [];
  indexes: string[] = [];
  /** After the indexes: a multi-column key may point at a unique index this plan creates. */
  addCompositeForeignKeys: string[] = [];
  security: string[] = [];

  all(): string[] {
    return [
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
    ];
  }
}

export function planSchema(def: Definition, catalog: Catalog, canonical: CanonicalDefaults = new Map()): string[] {
  const final = finalState(def, catalog);
  checkReferences(final, new Set(def.tables.filter((t) => t.drop).map((t) => t.name)));
  checkIndexNames(def, catalog, final);
  const phases = new Phases();
  planDrops(def, catalog, phases);
  for (const spec of def.tables) {
    if (spec.drop) continue;
    const info = catalog.get(spec.name);
    if (info) planExistingTable(spec, info, final.get(spec.name)!, canonical, phases);
  }
  planNewTables(def, catalog, final, phases);
  return phases.all();
}

function planDrops(def: Definition, catalog: Catalog, phases: Phases): void {
  // One statement for all dropped tables: Postgres orders them itself, even when they reference each other.
  const dropped = def.tables.filter((t) => t.drop && catalog.has(t.name)).map((t) => t.name);
  if (dropped.length === 0) return;
  phases.dropTables.push(`DROP TABLE ${cols(dropped)}`);
  phases.dropTables.push(`DELETE FROM svc_meta.table_access WHERE table_name IN (${dropped.map((t) => pg.escapeLiteral(t)).join(', ')})`);
}

function planExistingTable(spec: TableSpec, info: TableInfo, final: FinalTable, canonical: CanonicalDefaults, phases: Phases): void {
  const t = q(spec.name);
  const existing = new Map(info.columns.map((c) => [c.name, c]));
  const uniques = uniqueConstraints(info);
  const fks = singleForeignKeys(info);
  for (const c of spec.columns) checkUnchangeable(spec.name, c, info);

  for (const name of spec.dropColumns) {
    if (existing.has(name)) phases.dropColumns.push(`ALTER TABLE ${t} DROP COLUMN ${q(name)}`);
  }
  for (const c of spec.columns) {
    const current = existing.get(c.name);
    if (!current) {
      // A new column of an existing table: its foreign key waits until every table exists.
      phases.alterColumns.push(`ALTER TABLE ${t} ADD COLUMN ${columnSql(spec.name, c, null)}`);
      if (c.references) phases.addForeignKeys.push(addForeignKeySql(spec.name, c.name, c.references));
      continue;
    }
    if (current.nullable !== c.nullable) {
      phases.alterColumns.push(`ALTER TABLE ${t} ALTER COLUMN ${q(c.name)} ${c.nullable ? 'DROP' : 'SET'} NOT NULL`);
    }
    // An identity is dropped before a default is set, and added after the old default is gone (a column has one or the other).
    const identity = current.identity === true;
    const wantIdentity = c.identity === true;
    if (identity && !wantIdentity) phases.alterColumns.push(`ALTER TABLE ${t} ALTER COLUMN ${q(c.name)} DROP IDENTITY`);
    const wanted = canonical.has(`${spec.name}.${c.name}`) ? canonical.get(`${spec.name}.${c.name}`)! : c.default;
    if (wanted !== current.default) {
      phases.alterColumns.push(
        c.default === null ? `ALTER TABLE ${t} ALTER COLUMN ${q(c.name)} DROP DEFAULT` : `ALTER TABLE ${t} ALTER COLUMN ${q(c.name)} SET DEFAULT ${c.default}`,
      );
    }
    if (!identity && wantIdentity) {
      // The sequence starts past the ids the rows already have, so the next generated id collides with none.
      phases.alterColumns.push(
        `ALTER TABLE ${t} ALTER COLUMN ${q(c.name)} ADD GENERATED BY DEFAULT AS IDENTITY`,
        `SELECT setval(pg_get_serial_sequence(${sqlString(t)}, ${sqlString(c.name)}), greatest(max(${q(c.name)}), 0) + 1, false) FROM ${t}`,
      );
    }
    const check = catalogEnum(info, c.name);
    if (!sameList(check?.values ?? null, c.enum ?? null)) {
      if (check) phases.dropOther.push(`ALTER TABLE ${t} DROP CONSTRAINT ${q(check.name)}`);
      if (c.enum) phases.alterColumns.push(`ALTER TABLE ${t} ADD ${enumCheckSql(spec.name, c.name, c.enum)}`);
    }
    const uniqueName = uniques.get(c.name);
    if (c.unique && uniqueName === undefined) phases.alterColumns.push(`ALTER TABLE ${t} ADD UNIQUE (${q(c.name)})`);
    if (!c.unique && uniqueName !== undefined) phases.dropOther.push(`ALTER TABLE ${t} DROP CONSTRAINT ${q(uniqueName)}`);
    const fk = fks.get(c.name);
    // Postgres cannot alter a foreign key's ON DELETE in place: a changed action drops and re-adds the key.
    if (!sameReference(fk?.ref ?? null, c.references)) {
      if (fk) phases.dropForeignKeys.push(`ALTER TABLE ${t} DROP CONSTRAINT ${q(fk.name)}`);
      if (c.references) phases.addForeignKeys.push(addForeignKeySql(spec.name, c.name, c.references));
    }
  }
  planCompositeForeignKeys(spec, info, phases);
  planIndexes(spec, info, phases);
  planExistingSecurity(spec, info, final, phases);
}

function sameReference(a: LiveReference | null, b: Reference | null): boolean {
  if (a === null || b === null) return a === b;
  return a.table === b.table && a.column === b.column && a.onDelete === b.onDelete && (a.onUpdate ?? 'no action') === (b.onUpdate ?? 'no action');
}

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
    else phases.addCompositeForeignKeys.push(addCompositeForeignKeySql(spec.name, fk));
  }
  for (const l of live) if (!kept.has(l)) phases.dropForeignKeys.push(`ALTER TABLE ${q(spec.name)} DROP CONSTRAINT ${q(l.name)}`);
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

function planIndexes(spec: TableSpec, info: TableInfo | undefined, phases: Phases): void {
  for (const index of spec.indexes) {
    const current = info?.indexes.find((i) => i.name === index.name);
    if (current && current.unique === index.unique && current.columns.join(',') === index.columns.join(',')) continue;
    // Same name, different definition: rebuild it (an index holds no data of its own).
    if (current) phases.indexes.push(`DROP INDEX ${q(index.name)}`);
    phases.indexes.push(createIndexSql(spec.name, index));
  }
}

/** Index names share the schema's relation namespace: refuse names another table, index or constraint holds. */
function checkIndexNames(def: Definition, catalog: Catalog, final: Map<string, FinalTable>): void {
  const owners = new Map<string, { table: string; constraint: boolean }>();
  for (const [table, info] of catalog) for (const i of info.indexes) owners.set(i.name, { table, constraint: i.constraint });
  for (const spec of def.tables) {
    if (spec.drop) continue;
    const columns = final.get(spec.name)!.columns;
    for (const index of spec.indexes) {
      const missing = index.columns.find((c) => !columns.has(c));
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

function planExistingSecurity(spec: TableSpec, info: TableInfo, final: FinalTable, phases: Phases): void {
  const hadUserId = catalogHasUserId(info);
  const hasUserId = finalHasUserId(final);
  const access = resolveAccess(spec, info.access, hasUserId);
  if (hadUserId && !hasUserId) phases.dropOther.push(`DROP TRIGGER IF EXISTS ${FILL_TRIGGER} ON ${q(spec.name)}`);
  const stored = info.plans ?? null;
  const plans = resolvePlans(spec, stored, access);
  const reset = !info.rls || info.access !== access || hadUserId !== hasUserId;
  if (reset) {
    // Policies are dropped before columns: svc_user_own depends on user_id.
    phases.dropOther.push(...dropPoliciesSql(spec.name));
    phases.security.push(...securitySql(spec.name, access, hasUserId, info.rls));
  }
  phases.security.push(...planGateSql(spec.name, stored, plans));
}

/**
 * New tables in dependency order: a table is created after the new tables it references. Foreign keys
 * inside a cycle (a -> b -> a) cannot be inlined, so those are added by ALTER TABLE once both tables exist;
 * a table referencing itself is inlined (Postgres allows that in CREATE TABLE).
 */
function planNewTables(def: Definition, catalog: Catalog, final: Map<string, FinalTable>, phases: Phases): void {
  const fresh = def.tables.filter((t) => !t.drop && !catalog.has(t.name));
  for (const spec of fresh) {
    if (spec.columns.length === 0) throw errors.validation(`Table '${spec.name}' is new and has no columns; define at least one column.`);
  }
  const created = new Set<string>();
  for (const spec of dependencyOrder(fresh)) {
    const inline = (ref: Reference | null) => ref !== null && (ref.table === spec.name || created.has(ref.table) || catalog.has(ref.table));
    const parts = spec.columns.map((c) => columnSql(spec.name, c, inline(c.references) ? c.references : null));
    const primary = spec.columns.filter((c) => c.primary).map((c) => c.name);
    if (primary.length > 0) parts.push(`PRIMARY KEY (${cols(primary)})`);
    phases.createTables.push(`CREATE TABLE ${q(spec.name)} (${parts.join(', ')})`);
    for (const c of spec.columns) {
      if (c.references && !inline(c.references)) phases.addForeignKeys.push(addForeignKeySql(spec.name, c.name, c.references));
    }
    created.add(spec.name);
    planCompositeForeignKeys(spec, undefined, phases);
    planIndexes(spec, undefined, phases);
    const hasUserId = finalHasUserId(final.get(spec.name)!);
    const access = resolveAccess(spec, null, hasUserId);
    phases.createTables.push(...securitySql(spec.name, access, hasUserId, false));
    phases.createTables.push(...planGateSql(spec.name, null, resolvePlans(spec, null, access)));
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
