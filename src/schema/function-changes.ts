// The plan of the definition's `functions`: each declaration checked (src/schema/sql/function-body.ts) against the
// final state, the call graph ordered (cycles refused), volatility inferred through calls, then the changes: one DROP of
// the functions that go or must be rebuilt (a new signature or return type, a table or column they use being dropped,
// a callee rebuilt) before anything else, and their CREATE OR REPLACE in call order after tables, indexes and access.
import { createHash } from 'node:crypto';
import pg from 'pg';
import { AppError, errors } from '../core/errors.ts';
import type { Catalog } from './catalog.ts';
import type { SchemaChange } from './changes.ts';
import { tablesOf } from './conditions.ts';
import { normalizeDefault, normalizeType, type Definition } from './definition.ts';
import type { FinalState } from './final-state.ts';
import { canonicalDeclaration, MAX_FUNCTIONS, type FunctionAccess, type FunctionArg, type FunctionInput, type FunctionRecord, type FunctionReturns, type Volatility } from './functions.ts';
import { checkIdentifier } from './identifiers.ts';
import { checkFunctionBody } from './sql/function-body.ts';
import type { TableMap } from './sql/expressions.ts';

/** A function as it will be created: its record but the checksum (render's, of the CREATE statement), and its body. */
export interface CompiledFunction extends Omit<FunctionRecord, 'checksum'> {
  /** The checked, qualified statements (BEGIN ATOMIC <body> END). */
  body: string;
  /**
   * Whether it replaces the app's own function of that signature (recorded in svc_meta.functions). A new one is a plain
   * CREATE, so that it can never replace a function of the platform or of an extension in public (Postgres refuses).
   */
  replace?: true;
}

/** A function to drop: its name and argument types (its signature). */
export interface DroppedFunction {
  name: string;
  argTypes: string[];
}

interface Checked {
  fn: Omit<CompiledFunction, 'volatility'>;
  declared: Volatility | undefined;
  writes: boolean;
  reads: string[];
  calls: string[];
}

export function functionChanges(def: Definition, catalog: Catalog, final: FinalState, stored: readonly FunctionRecord[]): { drop: SchemaChange[]; create: SchemaChange[] } {
  const storedBy = new Map(stored.map((r) => [r.name, r]));
  const wanted = new Map(stored.map((r) => [r.name, r.declaration]));
  const changed = new Set<string>();
  const dropped: string[] = [];
  for (const spec of def.functions ?? []) {
    if (spec.drop) {
      if (wanted.delete(spec.name)) dropped.push(spec.name);
      continue;
    }
    const old = storedBy.get(spec.name);
    if (!old || canonicalDeclaration(old.declaration) !== canonicalDeclaration(spec.declaration)) changed.add(spec.name);
    wanted.set(spec.name, spec.declaration);
  }
  const touched = touchedTables(def, catalog);
  if (changed.size === 0 && dropped.length === 0 && touched.size === 0) return { drop: [], create: [] };
  if (wanted.size > MAX_FUNCTIONS) throw errors.validation(`The app would have ${wanted.size} functions; at most ${MAX_FUNCTIONS} are allowed. _drop some first.`);
  for (const name of wanted.keys()) {
    if (final.has(name)) throw errors.validation(`Function '${name}' has the name of a table; choose another name for the function.`);
  }

  const checked = checkAll(wanted, changed, final);
  const order = callOrder(checked);
  const volatility = inferVolatility(checked, order);

  const rebuild = new Set<string>();
  for (const [name, c] of checked) {
    const old = storedBy.get(name);
    if (!old) continue;
    const signatureChanged = JSON.stringify(old.args) !== JSON.stringify(c.fn.args) || JSON.stringify(old.returns) !== JSON.stringify(c.fn.returns);
    const usesTouched = [...c.reads, c.fn.returns.table ?? ''].some((t) => touched.has(t)) || (changed.has(name) && touched.size > 0);
    if (signatureChanged || usesTouched) rebuild.add(name);
  }
  // A function that calls one being dropped would keep it from dropping: it is rebuilt too.
  for (let grew = true; grew; ) {
    grew = false;
    for (const [name, c] of checked) {
      if (rebuild.has(name) || !storedBy.has(name) || !c.calls.some((callee) => rebuild.has(callee))) continue;
      rebuild.add(name);
      grew = true;
    }
  }
  const create = order.filter((name) => changed.has(name) || rebuild.has(name) || storedBy.get(name)?.volatility !== volatility.get(name));
  const toDrop = [...dropped, ...order.filter((name) => rebuild.has(name))].map((name) => signatureOf(storedBy.get(name)!));
  return {
    drop: toDrop.length ? [{ kind: 'drop_functions', functions: toDrop }] : [],
    create: create.length
      ? [{ kind: 'create_functions', functions: create.map((name) => ({ ...checked.get(name)!.fn, volatility: volatility.get(name)!, ...(storedBy.has(name) && !rebuild.has(name) ? { replace: true as const } : {}) })) }]
      : [],
  };
}

/** Tables this definition drops or drops columns of: Postgres refuses those changes under a function that uses them. */
function touchedTables(def: Definition, catalog: Catalog): Set<string> {
  return new Set(def.tables.filter((t) => catalog.has(t.name) && (t.drop || t.dropColumns.length > 0)).map((t) => t.name));
}

function signatureOf(record: FunctionRecord): DroppedFunction {
  return { name: record.name, argTypes: record.args.map((a) => a.type) };
}

function checkAll(wanted: ReadonlyMap<string, FunctionInput>, changed: ReadonlySet<string>, final: FinalState): Map<string, Checked> {
  const tables = tablesOf(final);
  const names = new Set(wanted.keys());
  const out = new Map<string, Checked>();
  for (const [name, declaration] of wanted) {
    try {
      out.set(name, checkFunction(name, declaration, final, tables, names));
    } catch (err) {
      if (changed.has(name) || !(err instanceof AppError)) throw err;
      throw errors.validation(`${err.message} (Function '${name}' is kept from an earlier apply and no longer fits this definition: change it or _drop it in the same one.)`);
    }
  }
  return out;
}

function checkFunction(name: string, declaration: FunctionInput, final: FinalState, tables: TableMap, functions: ReadonlySet<string>): Checked {
  const label = `Function '${name}'`;
  const args = functionArgs(name, declaration.args);
  const returns = functionReturns(label, declaration.returns!, final);
  const body = checkFunctionBody(declaration.body!, { name, args, tables, functions });
  const access = declaration.access ?? 'authenticated';
  return { fn: { name, declaration, args, returns, access, body: body.sql }, declared: declaration.volatility, writes: body.writes, reads: body.reads, calls: body.calls };
}

function functionArgs(name: string, input: FunctionInput['args']): FunctionArg[] {
  if (input === undefined) return [];
  if (input === 'jsonb') return [{ name: '', type: 'jsonb', default: null }];
  let defaulted = false;
  return Object.entries(input).map(([arg, given]) => {
    const label = `Argument '${arg}' of function '${name}'`;
    checkIdentifier(arg, label);
    const type = sqlType(label, typeof given === 'string' ? given : given.type);
    if (typeof given === 'string') {
      if (defaulted) throw errors.validation(`${label} follows an argument with a default, so it needs a default too.`);
      return { name: arg, type, default: null };
    }
    defaulted = true;
    const value = normalizeDefault(given.default);
    if (value === undefined) {
      throw errors.validation(`${label} has default ${JSON.stringify(given.default)}, which is not allowed; use a number, true/false, null, a quoted 'text' or now().`);
    }
    return { name: arg, type, default: value ?? 'NULL' };
  });
}

/** A type of the column type list, spelled as under an empty search_path (pgvector's type lives in public). */
function sqlType(label: string, raw: string): string {
  const type = normalizeType(raw);
  if (type === undefined) throw errors.validation(`${label} has type '${raw}', which is not allowed; use a column type (text, bigint, uuid, timestamptz, jsonb, text[], ...).`);
  return type.startsWith('vector') ? `public.${type}` : type;
}

function functionReturns(label: string, input: NonNullable<FunctionInput['returns']>, final: FinalState): FunctionReturns {
  if (typeof input === 'object') {
    const entries = Object.entries(input.columns);
    if (entries.length === 0) throw errors.validation(`${label} returns { columns: {} }; name at least one column.`);
    for (const [column] of entries) checkIdentifier(column, `Returned column '${column}' of ${label.toLowerCase()}`);
    return { kind: 'table', columns: Object.fromEntries(entries.map(([column, type]) => [column, sqlType(`Returned column '${column}' of ${label.toLowerCase()}`, type)])) };
  }
  const text = input.trim();
  if (text.toLowerCase() === 'void') return { kind: 'void' };
  const setOf = text.toLowerCase().startsWith('setof ');
  const target = setOf ? text.slice(6).trim() : text;
  if (final.has(target)) return setOf ? { kind: 'set', table: target } : { kind: 'row', table: target };
  if (normalizeType(target) === undefined) {
    throw errors.validation(`${label} returns '${input}', which is neither a table nor an allowed type; write a type, "void", a table, "setof <table>", "setof <type>" or { "columns": { name: type } }.`);
  }
  const type = sqlType(label, target);
  return setOf ? { kind: 'set', type } : { kind: 'scalar', type };
}

/** The functions in dependency order (callees first); a cycle is refused, as BEGIN ATOMIC could never create it. */
function callOrder(checked: ReadonlyMap<string, Checked>): string[] {
  const order: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (name: string, path: string[]): void => {
    const seen = state.get(name);
    if (seen === 'done') return;
    if (seen === 'visiting') {
      const cycle = [...path.slice(path.indexOf(name)), name].map((n) => `'${n}'`).join(' -> ');
      throw errors.validation(`Function '${name}' calls itself through ${cycle}; functions may not call each other in a cycle. Remove one of the calls.`);
    }
    state.set(name, 'visiting');
    for (const callee of checked.get(name)?.calls ?? []) visit(callee, [...path, name]);
    state.set(name, 'done');
    order.push(name);
  };
  for (const name of [...checked.keys()].sort()) visit(name, []);
  return order;
}

/** Volatile iff the body writes or calls a function that does; `stable` declared on such a function is refused. */
function inferVolatility(checked: ReadonlyMap<string, Checked>, order: readonly string[]): Map<string, Volatility> {
  const writer = new Map<string, string | null>();
  const out = new Map<string, Volatility>();
  for (const name of order) {
    const c = checked.get(name)!;
    const via = c.writes ? null : c.calls.find((callee) => writer.has(callee));
    const writes = c.writes || via !== undefined;
    if (writes) writer.set(name, via ?? null);
    if (writes && c.declared === 'stable') {
      const why = c.writes ? 'its body writes' : `it calls '${via}', which writes`;
      throw errors.validation(`Function '${name}' is declared stable but ${why}; declare it volatile or leave volatility out.`);
    }
    out.set(name, c.declared ?? (writes ? 'volatile' : 'stable'));
  }
  return out;
}

// ---------------------------------------------------------------- SQL

const q = (name: string) => pg.escapeIdentifier(name);
const signature = (name: string, argTypes: readonly string[]) => `public.${q(name)}(${argTypes.join(', ')})`;
const GRANTEES: Record<FunctionAccess, string> = { service: 'svc_service', authenticated: 'svc_service, svc_user', public: 'svc_service, svc_user, svc_anon' };
const json = (value: unknown) => `${pg.escapeLiteral(JSON.stringify(value))}::jsonb`;

function returnsSql(r: FunctionReturns): string {
  const target = r.table !== undefined ? `public.${q(r.table)}` : r.type;
  if (r.kind === 'void') return 'void';
  if (r.kind === 'set') return `SETOF ${target}`;
  if (r.kind === 'table') return `TABLE(${Object.entries(r.columns!).map(([c, t]) => `${q(c)} ${t}`).join(', ')})`;
  return target!;
}

function argSql(a: FunctionArg): string {
  const head = a.name === '' ? a.type : `${q(a.name)} ${a.type}`;
  return a.default === null ? head : `${head} DEFAULT ${a.default}`;
}

/** The statements of one function: created as the caller's (SECURITY INVOKER), callable by its access, recorded. */
function functionSql(fn: CompiledFunction): string[] {
  const sig = signature(fn.name, fn.args.map((a) => a.type));
  const create =
    `CREATE ${fn.replace ? 'OR REPLACE ' : ''}FUNCTION public.${q(fn.name)}(${fn.args.map(argSql).join(', ')}) RETURNS ${returnsSql(fn.returns)} ` +
    `LANGUAGE sql ${fn.volatility.toUpperCase()} SECURITY INVOKER BEGIN ATOMIC\n${fn.body}\nEND`;
  const checksum = createHash('sha256').update(create).digest('hex');
  const values = [pg.escapeLiteral(fn.name), json(fn.declaration), json(fn.args), json(fn.returns), pg.escapeLiteral(fn.volatility), pg.escapeLiteral(fn.access), pg.escapeLiteral(checksum)];
  return [
    create,
    `REVOKE ALL ON FUNCTION ${sig} FROM PUBLIC, svc_anon, svc_user, svc_service`,
    `GRANT EXECUTE ON FUNCTION ${sig} TO ${GRANTEES[fn.access]}`,
    `INSERT INTO svc_meta.functions (name, declaration, args, returns, volatility, access, checksum) VALUES (${values.join(', ')}) ` +
      'ON CONFLICT (name) DO UPDATE SET declaration = EXCLUDED.declaration, args = EXCLUDED.args, returns = EXCLUDED.returns, ' +
      'volatility = EXCLUDED.volatility, access = EXCLUDED.access, checksum = EXCLUDED.checksum',
  ];
}

/** Created under an empty search_path: a name the checks did not qualify fails the CREATE instead of resolving elsewhere. */
export function createFunctionsSql(functions: readonly CompiledFunction[]): string[] {
  return [`SET LOCAL search_path = ''`, ...functions.flatMap(functionSql), 'RESET search_path'];
}

/** One statement: Postgres orders the drops of functions that call each other itself. */
export function dropFunctionsSql(functions: readonly DroppedFunction[]): string[] {
  return [
    `DROP FUNCTION ${functions.map((f) => signature(f.name, f.argTypes)).join(', ')}`,
    `DELETE FROM svc_meta.functions WHERE name IN (${functions.map((f) => pg.escapeLiteral(f.name)).join(', ')})`,
  ];
}
