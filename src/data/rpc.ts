// /rpc/{fn}: the app's declared SQL functions (svc_meta.functions, app migration 12) called as PostgREST 13 calls
// them (docs/design/schema-functions.md §1.1): which function and arguments a request names, who may call it, and
// the SQL of the call, whose result the statement shapes as the data API shapes a read.
import pg from 'pg';
import { AppError, errors } from '../core/errors.ts';
import type { Caller } from '../core/caller.ts';
import type { Catalog, TableInfo } from '../schema/catalog.ts';
import type { FunctionRecord } from '../schema/functions.ts';
import { q } from './filters.ts';
import { parseCondition } from './query.ts';
import { MAX_ROWS } from './compile.ts';

/** What /rpc needs of a row of svc_meta.functions (src/schema/functions.ts writes them). */
export type DeclaredFunction = Pick<FunctionRecord, 'name' | 'args' | 'returns' | 'volatility' | 'access'>;

export type Functions = Map<string, DeclaredFunction>;

type Queryable = { query<R extends pg.QueryResultRow>(text: string): Promise<pg.QueryResult<R>> };

export async function readFunctions(db: Queryable): Promise<Functions> {
  const { rows } = await db.query<DeclaredFunction>('select name, args, returns, volatility, access from svc_meta.functions order by name');
  return new Map(rows.map((f) => [f.name, f]));
}

/**
 * The declared functions of the catalog snapshot they were read with: a schema apply replaces the app's snapshot
 * (CatalogCache), so the functions are read again with the next one.
 */
const byCatalog = new WeakMap<Catalog, Promise<Functions>>();

export function functionsOf(catalog: Catalog, db: Queryable): Promise<Functions> {
  let functions = byCatalog.get(catalog);
  if (!functions) {
    functions = readFunctions(db);
    functions.catch(() => byCatalog.delete(catalog));
    byCatalog.set(catalog, functions);
  }
  return functions;
}

/** The call a request makes: POST with a JSON body, or GET/HEAD with the arguments in the query string. */
export type RpcArgs = { via: 'body'; body: unknown } | { via: 'query'; values: Map<string, string> };

/** Query parameters that are never arguments (PostgREST's reserved names, logical trees). */
const RESERVED = new Set(['select', 'columns', 'on_conflict', 'order', 'limit', 'offset', 'and', 'or', 'not.and', 'not.or']);

/**
 * Splits a GET's query string as PostgREST does: a parameter that is reserved, an embedded resource's (dotted), or
 * whose value reads as `op.value` is part of the read; every other one is an argument.
 */
export function splitQueryArgs(raw: string): { values: Map<string, string>; rest: string } {
  const values = new Map<string, string>();
  const rest = new URLSearchParams();
  for (const [key, value] of new URLSearchParams(raw)) {
    // Postgres takes no NUL in a literal (it would fail the whole round trip, not the value).
    if (value.includes('\0') || key.includes('\0')) throw errors.validation(`The query parameter '${key.replace(/\0/g, '').slice(0, 60)}' holds a NUL character.`);
    if (RESERVED.has(key) || key.includes('.') || isFilter(key, value)) rest.append(key, value);
    else values.set(key, value);
  }
  return { values, rest: rest.toString() };
}

function isFilter(key: string, value: string): boolean {
  try {
    parseCondition(key, value);
    return true;
  } catch {
    return false;
  }
}

const isJsonType = (type: string) => type === 'json' || type === 'jsonb';
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The function `name` when `args` fit it (every key an argument, every required argument given), else PGRST202. */
export function resolveCall(functions: Functions, name: string, args: RpcArgs): { fn: DeclaredFunction; single: boolean } {
  const fn = functions.get(name);
  const keys = args.via === 'query' ? [...args.values.keys()] : isRecord(args.body) ? Object.keys(args.body) : null;
  if (fn) {
    const unnamed = fn.args.length === 1 && fn.args[0]!.name === '' && isJsonType(fn.args[0]!.type);
    if (!unnamed && keys && fits(fn, keys)) return { fn, single: false };
    if (unnamed && args.via === 'body') return { fn, single: true };
  }
  throw notFound(name, keys ?? [], args.via === 'body');
}

function fits(fn: DeclaredFunction, keys: readonly string[]): boolean {
  const names = new Set(fn.args.map((a) => a.name));
  return keys.every((k) => names.has(k)) && fn.args.every((a) => a.default !== null || keys.includes(a.name));
}

/** PostgREST 13's PGRST202, word for word (without its fuzzy hint). */
function notFound(name: string, given: readonly string[], json: boolean): AppError {
  const keys = [...given].sort();
  const message = keys.length ? `Could not find the function public.${name}(${keys.join(', ')}) in the schema cache` : `Could not find the function public.${name} without parameters in the schema cache`;
  const params = keys.length === 0 ? 'without parameters' : keys.length === 1 ? `with parameter ${keys[0]}` : `with parameters ${keys.join(', ')}`;
  const details = `Searched for the function public.${name} ${params}${json ? ' or with a single unnamed json/jsonb parameter' : ''}, but no matches were found in the schema cache.`;
  const err = new AppError(404, 'RESOURCE_NOT_FOUND', message, 'Call a function the schema declares (schema_get lists them) with its argument names.');
  err.postgrest = { code: 'PGRST202', message, details, hint: null };
  return err;
}

/** A function's `access` against the caller: as Postgres's EXECUTE privilege refuses it (42501; 401 when anonymous). */
export function checkAccess(fn: DeclaredFunction, caller: Caller): void {
  const anonymous = caller.kind !== 'user' && caller.kind !== 'service' && caller.kind !== 'platform';
  const allowed = fn.access === 'public' || (fn.access === 'authenticated' ? !anonymous : caller.kind === 'service' || caller.kind === 'platform');
  if (allowed) return;
  const message = `permission denied for function ${fn.name}`;
  const err = new AppError(403, 'FORBIDDEN', message, `'${fn.name}' may be called by ${fn.access === 'service' ? 'keys only' : 'signed-in end users and keys'}.`);
  err.postgrest = { code: '42501', message, details: null, hint: null };
  throw err;
}

/** PATCH and DELETE on /rpc/{fn} (which the by-id row routes would read as table 'rpc'): PostgREST's 405 PGRST101. */
export function rpcMethodRefused(method: string): AppError {
  const message = `Cannot use the ${method} method on RPC`;
  const err = new AppError(405, 'METHOD_NOT_ALLOWED', message, 'Call a function with POST, or with GET or HEAD for a read.');
  err.postgrest = { code: 'PGRST101', message, details: null, hint: null };
  return err;
}

/** A type name from svc_meta.functions, checked before it is spliced into a cast (e.g. `bigint`, `uuid[]`, `numeric(10,2)`). */
const TYPE = /^[a-z_][a-z0-9_ .]{0,62}(?:\(\d{1,8}(?:,\d{1,8})?\))?(?:\[\])?$/;

function typeSql(type: string): string {
  if (!TYPE.test(type)) throw new Error(`svc_meta.functions holds an unexpected type '${type}'`);
  return type;
}

/**
 * The call's SQL: `call` is the function applied to its arguments; `from` (possibly '') the from-item those
 * arguments come from. A POST's body goes through json_to_record as PostgREST does, so JSON strings fill bigints and
 * JSON arrays fill arrays; a GET's values are literals cast to the argument's type.
 */
export function callSql(fn: DeclaredFunction, args: RpcArgs, single: boolean): { call: string; from: string } {
  const target = `public.${q(fn.name)}`;
  if (single) return { call: `${target}(${pg.escapeLiteral(JSON.stringify((args as { body: unknown }).body ?? null))}::${typeSql(fn.args[0]!.type)})`, from: '' };
  const given = fn.args.filter((a) => (args.via === 'query' ? args.values.has(a.name) : Object.hasOwn(args.body as object, a.name)));
  if (given.length === 0) return { call: `${target}()`, from: '' };
  if (args.via === 'query') {
    return { call: `${target}(${given.map((a) => `${q(a.name)} := ${pg.escapeLiteral(args.values.get(a.name)!)}::${typeSql(a.type)}`).join(', ')})`, from: '' };
  }
  const record = given.map((a) => `${q(a.name)} ${typeSql(a.type)}`).join(', ');
  return {
    call: `${target}(${given.map((a) => `${q(a.name)} := pgrst_body.${q(a.name)}`).join(', ')})`,
    from: `json_to_record(${pg.escapeLiteral(JSON.stringify(args.body))}::json) as pgrst_body(${record})`,
  };
}

/** The rows a set- or row-returning function yields, as a table the read compiler can select from. */
export function returnedTable(catalog: Catalog, fn: DeclaredFunction): TableInfo | undefined {
  const r = fn.returns;
  if (r.table) return catalog.get(r.table);
  if (!r.columns) return undefined;
  return {
    name: fn.name,
    columns: Object.entries(r.columns).map(([name, type]) => ({ name, type, udt: type.replace(/\[\]$/, ''), isArray: type.endsWith('[]'), nullable: true, default: null })),
    primaryKey: [],
    foreignKeys: [],
    indexes: [],
    rls: false,
    access: null,
  };
}

/**
 * The statement of a function that yields one value (scalar), nothing (void) or a set of scalars: no read features,
 * but the same ceilings as a read (at most MAX_ROWS values, at most `maxBytes` of body: past it, SV413 and no body
 * reaches the process).
 */
export function valueStatement(fn: DeclaredFunction, call: { call: string; from: string }, maxBytes: number): string {
  const from = call.from ? ` from ${call.from}` : '';
  if (fn.returns.kind === 'set') {
    const rows = call.from ? `${call.from} cross join lateral ${call.call} as _s(v)` : `${call.call} as _s(v)`;
    return (
      `select case when bool_or(_j.over) then null else coalesce('[' || string_agg(_j.t, ',') filter (where not _j.over) || ']', '[]') end as body, ` +
      `count(*) as rows, count(*) as total, set_config('svc.abort', case when bool_or(_j.over) then 'SV413' else '' end, true) as abort ` +
      `from (select _t.t, sum(octet_length(_t.t)) over (rows unbounded preceding) > ${maxBytes} as over ` +
      `from (select coalesce(to_json(_s.v)::text, 'null') as t from ${rows} limit ${MAX_ROWS}) _t) _j`
    );
  }
  // The outer select reads v, so that the function runs even when it returns void.
  const body = fn.returns.kind === 'void' ? `case when _s.v is null then null::text end` : `to_json(_s.v)::text`;
  return (
    `select case when octet_length(_b.t) > ${maxBytes} then null else _b.t end as body, 1 as rows, 1::bigint as total, ` +
    `set_config('svc.abort', case when octet_length(_b.t) > ${maxBytes} then 'SV413' else '' end, true) as abort ` +
    `from (select ${body} as t from (select ${call.call} as v${from}) _s) _b`
  );
}
