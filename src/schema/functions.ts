// Declared SQL functions (the definition's `functions`, docs/design/schema-functions.md §3.1): their wire shape, the
// normalized form, and the record kept in svc_meta.functions (app migration 12, whose header is the contract the data
// API's /rpc reads). The bodies are checked and compiled by function-changes.ts, against the definition's final state.
import type pg from 'pg';
import { z } from 'zod';
import { errors } from '../core/errors.ts';
import { checkIdentifier } from './identifiers.ts';
import { PUBLIC_FUNCTIONS } from './sql/allowed.ts';

export const MAX_FUNCTIONS = 50;
export const MAX_FUNCTION_ARGS = 20;
export const FUNCTION_ACCESS = ['public', 'authenticated', 'service'] as const;
export type FunctionAccess = (typeof FUNCTION_ACCESS)[number];
export type Volatility = 'stable' | 'volatile';

// Bare strings: every byte here is in tools/list; types, sizes and the body are checked in the diff (function-changes.ts).
const ArgDefault = z.union([z.string(), z.number(), z.boolean(), z.null()]);
export const FunctionInputSchema = z.strictObject({
  args: z.union([z.literal('jsonb'), z.record(z.string(), z.union([z.string(), z.strictObject({ type: z.string(), default: ArgDefault })]))]).optional(),
  returns: z.union([z.string(), z.strictObject({ columns: z.record(z.string(), z.string()) })]).optional(),
  volatility: z.enum(['stable', 'volatile']).optional(),
  access: z.enum(FUNCTION_ACCESS).optional(),
  body: z.string().optional(),
  _drop: z.boolean().optional(),
});
export type FunctionInput = z.output<typeof FunctionInputSchema>;
export const FunctionsInputSchema = z.record(z.string(), FunctionInputSchema).describe('SQL functions (guide)');

/** A declared function, validated where no database is needed; its types and body are checked by the diff. */
export interface FunctionSpec {
  name: string;
  drop: boolean;
  /** As written: stored, compared (canonically) and shown by schema_get. */
  declaration: FunctionInput;
}

/** svc_meta.functions.args: in order; the single unnamed jsonb argument is { name: '', type: 'jsonb', default: null }. */
export interface FunctionArg {
  name: string;
  type: string;
  /** The SQL default's text, or null when the argument is required. */
  default: string | null;
}

/** svc_meta.functions.returns. */
export interface FunctionReturns {
  kind: 'scalar' | 'row' | 'set' | 'table' | 'void';
  type?: string;
  table?: string;
  columns?: Record<string, string>;
}

/** A row of svc_meta.functions. */
export interface FunctionRecord {
  name: string;
  declaration: FunctionInput;
  args: FunctionArg[];
  returns: FunctionReturns;
  volatility: Volatility;
  access: FunctionAccess;
  checksum: string;
}

export function normalizeFunctions(input: Record<string, FunctionInput> | undefined): FunctionSpec[] | undefined {
  if (input === undefined) return undefined;
  const entries = Object.entries(input);
  if (entries.length > MAX_FUNCTIONS) {
    throw errors.validation(`The schema defines ${entries.length} functions; at most ${MAX_FUNCTIONS} are allowed per schema definition. Apply them in several definitions.`);
  }
  return entries.map(([name, declaration]) => normalizeFunction(name, declaration));
}

function normalizeFunction(name: string, declaration: FunctionInput): FunctionSpec {
  const label = `Function '${name}'`;
  checkIdentifier(name, label);
  // The platform's functions in public (current_user_id() and its kin, the extensions') are what policies rely on.
  if (PUBLIC_FUNCTIONS.has(name) || name.startsWith('current_user')) throw errors.validation(`${label}: '${name}' is a function of the platform; choose another name.`);
  if (declaration._drop === true) return { name, drop: true, declaration };
  if (declaration.returns === undefined || declaration.body === undefined) {
    throw errors.validation(`${label} needs returns and body (or _drop: true to remove it).`);
  }
  const args = declaration.args;
  if (typeof args === 'object') {
    const names = Object.keys(args);
    if (names.length > MAX_FUNCTION_ARGS) throw errors.validation(`${label} has ${names.length} arguments; at most ${MAX_FUNCTION_ARGS} are allowed.`);
    for (const arg of names) checkIdentifier(arg, `Argument '${arg}' of function '${name}'`);
  }
  return { name, drop: false, declaration };
}

/** Compared canonically: jsonb keeps object keys in an order of its own, so keys are sorted, and args (ordered) listed. */
export function canonicalDeclaration(declaration: FunctionInput): string {
  const { args, ...rest } = declaration;
  return stableJson({ ...rest, args: args === undefined || typeof args === 'string' ? (args ?? null) : Object.entries(args) });
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Every declared function of the app, with each declaration's arguments back in their declared order. */
export async function readFunctions(db: { query<R extends pg.QueryResultRow>(text: string): Promise<pg.QueryResult<R>> }): Promise<FunctionRecord[]> {
  const { rows } = await db.query<FunctionRecord>('select name, declaration, args, returns, volatility, access, checksum from svc_meta.functions order by name');
  return rows.map((r) => ({ ...r, declaration: writtenDeclaration(r) }));
}

function writtenDeclaration(record: FunctionRecord): FunctionInput {
  const { declaration } = record;
  if (typeof declaration.args !== 'object') return declaration;
  const given = declaration.args;
  const args = Object.fromEntries(record.args.map((a) => [a.name, given[a.name]!]));
  return { ...declaration, args };
}

/** schema_get's `functions`: each declaration as written, by name; absent when there are none. */
export function describeFunctions(records: readonly FunctionRecord[]): Record<string, FunctionInput> | undefined {
  return records.length > 0 ? Object.fromEntries(records.map((r) => [r.name, r.declaration])) : undefined;
}
