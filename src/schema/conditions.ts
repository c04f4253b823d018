// Declared conditions: per command, a boolean SQL expression over the row, auth.uid(), auth.jwt() and the app's
// tables, narrowing what a table's access grants end users and anonymous callers (a RESTRICTIVE policy per command,
// like the plan gate). `access` says who; a condition says which rows and values, so a wrong one fails closed. Each is
// checked and qualified by src/schema/sql (Postgres's own grammar, allow-lists); kept as written beside the access.
import pg from 'pg';
import { z } from 'zod';
import { errors } from '../core/errors.ts';
import type { Catalog } from './catalog.ts';
import type { SchemaChange } from './changes.ts';
import type { Definition, TableSpec } from './definition.ts';
import type { FinalState } from './final-state.ts';
import { checkCondition } from './sql/condition.ts';
import type { TableMap, TableShape } from './sql/expressions.ts';

export const COMMANDS = ['select', 'insert', 'update', 'delete'] as const;
export type Command = (typeof COMMANDS)[number];
/** Each command's policy: which clauses Postgres takes for it. */
const CLAUSES: Record<Command, { using: boolean; check: boolean }> = {
  select: { using: true, check: false },
  insert: { using: false, check: true },
  update: { using: true, check: true },
  delete: { using: true, check: false },
};

/** The conditions as written: update's `using` judges the rows before, `check` the rows after. */
export interface TableConditions {
  select?: string;
  insert?: string;
  update?: { using: string; check: string };
  delete?: string;
}

const Condition = z.string().min(1);
export const ConditionsInputSchema = z
  .strictObject({
    select: Condition.optional(),
    insert: Condition.optional(),
    update: z.union([Condition, z.strictObject({ using: Condition, check: Condition })]).optional(),
    delete: Condition.optional(),
  })
  .describe('SQL row conditions per command, narrowing access for end users (guide)');
export type ConditionsInput = z.output<typeof ConditionsInputSchema>;

/** A checked condition's SQL per clause, what the policy is made of. */
export type CompiledConditions = Partial<Record<Command, { using?: string; check?: string }>>;

export const CONDITION_POLICY = (command: Command) => `svc_condition_${command}`;

export function normalizeConditions(input: ConditionsInput | undefined): TableConditions | undefined {
  if (input === undefined) return undefined;
  const out: TableConditions = {};
  if (input.select !== undefined) out.select = input.select;
  if (input.insert !== undefined) out.insert = input.insert;
  if (input.update !== undefined) out.update = typeof input.update === 'string' ? { using: input.update, check: input.update } : input.update;
  if (input.delete !== undefined) out.delete = input.delete;
  return out;
}

/** Compared command by command: jsonb keeps an object's keys in an order of its own. */
const same = (a: TableConditions | null | undefined, b: TableConditions | null | undefined) =>
  COMMANDS.every((c) => {
    const [x, y] = [a?.[c], b?.[c]];
    return typeof x === 'object' && typeof y === 'object' ? x.using === y.using && x.check === y.check : x === y;
  });
const isEmpty = (c: TableConditions | null | undefined) => !c || Object.keys(c).length === 0;

/**
 * The condition changes of one table: a definition's new conditions, or the old ones around a column drop (Postgres
 * refuses to drop a column a policy names, so they go first and come back after). Checked against the final state.
 */
export function conditionChanges(spec: TableSpec, stored: TableConditions | null | undefined, state: FinalState, def: Definition, catalog: Catalog): { drop: SchemaChange[]; create: SchemaChange[] } {
  const wanted = spec.conditions ?? stored ?? null;
  const rebuild = spec.dropColumns.length > 0 && !isEmpty(stored);
  if (!rebuild && (spec.conditions === undefined || same(spec.conditions, stored))) return { drop: [], create: [] };
  const drop: SchemaChange[] = isEmpty(stored) ? [] : [{ kind: 'drop_conditions', table: spec.name }];
  if (isEmpty(wanted)) return { drop, create: spec.conditions !== undefined && !isEmpty(stored) ? [{ kind: 'set_conditions', table: spec.name, conditions: {}, compiled: {} }] : [] };
  // The checker's view of the final state, built once for this table's conditions and the recursion walk.
  const tables = tablesOf(state);
  const compiled = compileConditions(spec.name, wanted!, tables);
  checkNoRecursion(spec.name, compiled.reads, def, catalog, tables);
  return { drop, create: [{ kind: 'set_conditions', table: spec.name, conditions: wanted!, compiled: compiled.sql }] };
}

/** Every condition of a table checked and qualified; the tables they read. */
function compileConditions(table: string, conditions: TableConditions, tables: TableMap): { sql: CompiledConditions; reads: Set<string> } {
  const reads = new Set<string>();
  const sql: CompiledConditions = {};
  const one = (text: string, command: Command, clause: string) => {
    const checked = checkCondition(text, { table, tables, label: `The ${command} condition${clause} of table '${table}'` });
    for (const t of checked.reads) reads.add(t);
    return checked.sql;
  };
  for (const command of COMMANDS) {
    const given = conditions[command];
    if (given === undefined) continue;
    sql[command] = typeof given === 'string' ? (CLAUSES[command].using ? { using: one(given, command, '') } : { check: one(given, command, '') }) : { using: one(given.using, command, ' (using)'), check: one(given.check, command, ' (check)') };
  }
  return { sql, reads };
}

/** The checker's view of each final state a plan builds, and the tables each table's select condition reads in it. */
const views = new WeakMap<FinalState, TableMap>();
const selectReadsOf = new WeakMap<TableMap, Map<string, string[]>>();

/**
 * What the checker needs of each table of the final state: its columns and the leading columns of its indexes. Built
 * once per final state, so the tables of one plan share it (and the select conditions parsed against it).
 */
export function tablesOf(state: FinalState): TableMap {
  const built = views.get(state);
  if (built) return built;
  const out = new Map<string, TableShape>();
  for (const [name, table] of state) {
    const leading = new Set<string>(table.keys.map((k) => k[0]!).filter(Boolean));
    for (const [column, info] of table.columns) if (info.unique) leading.add(column);
    for (const column of table.indexLeading) leading.add(column);
    out.set(name, { columns: new Set(table.columns.keys()), indexedLeading: leading });
  }
  views.set(state, out);
  return out;
}

/**
 * Postgres fails at query time ("infinite recursion detected in policy") when evaluating a table's policy reads a
 * table whose select policy reads it back; refused at apply. Edges: the tables a condition reads, then their select
 * conditions' reads.
 */
function checkNoRecursion(table: string, reads: ReadonlySet<string>, def: Definition, catalog: Catalog, tables: TableMap): void {
  const known = selectReadsOf.get(tables) ?? new Map<string, string[]>();
  selectReadsOf.set(tables, known);
  // Each table's select condition is parsed once per plan, however many tables' walks reach it.
  const parsedReads = (name: string): string[] => {
    const conditions = def.tables.find((t) => t.name === name)?.conditions ?? catalog.get(name)?.conditions ?? undefined;
    if (!conditions?.select) return [];
    try {
      return checkCondition(conditions.select, { table: name, tables }).reads;
    } catch {
      return [];
    }
  };
  const selectReads = (name: string): string[] => {
    if (name === table) return [];
    let reads = known.get(name);
    if (!reads) known.set(name, (reads = parsedReads(name)));
    return reads;
  };
  const seen = new Set<string>();
  const walk = (name: string, path: string[]): void => {
    if (name === table) throw errors.validation(`The conditions of table '${table}' read ${path.join(' -> ')} -> '${table}' again, which Postgres refuses as infinite recursion. Share rows through group access instead, or read another table.`);
    if (seen.has(name)) return;
    seen.add(name);
    for (const next of selectReads(name)) walk(next, [...path, `'${name}'`]);
  };
  for (const t of reads) walk(t, [`'${table}'`]);
}

/** The policies of a table's conditions: RESTRICTIVE, for end users and anonymous callers; keys are never narrowed. */
export function conditionPoliciesSql(table: string, compiled: CompiledConditions): string[] {
  const t = pg.escapeIdentifier(table);
  return COMMANDS.filter((c) => compiled[c]).map((command) => {
    const { using, check } = compiled[command]!;
    const clauses = `${using !== undefined ? ` USING (${using})` : ''}${check !== undefined ? ` WITH CHECK (${check})` : ''}`;
    return `CREATE POLICY ${CONDITION_POLICY(command)} ON ${t} AS RESTRICTIVE FOR ${command.toUpperCase()} TO svc_anon, svc_user${clauses}`;
  });
}

export function dropConditionPoliciesSql(table: string): string[] {
  return COMMANDS.map((c) => `DROP POLICY IF EXISTS ${CONDITION_POLICY(c)} ON ${pg.escapeIdentifier(table)}`);
}

/** The conditions stored beside the access, as written ({} clears them). */
export function storeConditionsSql(table: string, conditions: TableConditions): string {
  const value = isEmpty(conditions) ? 'NULL' : `${pg.escapeLiteral(JSON.stringify(conditions))}::jsonb`;
  return `UPDATE svc_meta.table_access SET conditions = ${value} WHERE table_name = ${pg.escapeLiteral(table)}`;
}
