// A declared function's body: 1-10 SELECT/INSERT/UPDATE/DELETE statements (WITH allowed, never RECURSIVE) over the
// app's tables, compiled by the caller into a SECURITY INVOKER `BEGIN ATOMIC` SQL function created under an empty
// search_path (docs/design/schema-functions.md §3.3-3.4). The checks run on the parse tree, so no spelling
// (quoting, U&"..." escapes, comments) reaches a name they did not see.
import { errors } from '../../core/errors.ts';
import type { TableMap } from './walker.ts';
import { readSql } from './parser.ts';
import { commentSites, proveSame, splice } from './qualify.ts';
import { Scope } from './scope.ts';
import { SqlChecker } from './statements.ts';

export interface FunctionContext {
  name: string;
  /** In declaration order; the unnamed single jsonb argument has name ''. */
  args: ReadonlyArray<{ name: string; type: string }>;
  tables: TableMap;
  /** The app's other declared functions, callable by name. */
  functions: ReadonlySet<string>;
}

export interface CheckedBody {
  /** The statements, each ended by ';' on its own line, app tables and declared functions as public.<name>: BEGIN ATOMIC <sql> END. */
  sql: string;
  /** Whether a statement (a data-modifying WITH included) writes: the caller makes such a function VOLATILE. */
  writes: boolean;
  /** App tables read or named (FROM, JOIN, USING, sub-selects, UPDATE/DELETE targets, row types), sorted. */
  reads: string[];
  /** App tables written, sorted. */
  writesTo: string[];
  /** Declared functions called, sorted (the caller checks the call graph for cycles and ORs their writes). */
  calls: string[];
}

export const BODY_LIMITS = { bytes: 8192, tokens: 2500, statements: 10, nodes: 2000, depth: 64 };

/** Checks and qualifies a body; throws a 400 (errors.validation) naming what is wrong and the fix. */
export function checkFunctionBody(text: string, ctx: FunctionContext): CheckedBody {
  const label = `Function '${ctx.name}'`;
  const read = readSql(text, { label, what: 'the body', prefix: '', maxBytes: BODY_LIMITS.bytes, maxTokens: BODY_LIMITS.tokens });
  const count = read.stmts.length;
  if (count < 1 || count > BODY_LIMITS.statements) {
    throw errors.validation(`${label}: the body has ${count} statements; write 1 to ${BODY_LIMITS.statements}, separated by ';'.`);
  }
  const checker = new SqlChecker({
    label,
    mode: 'function',
    tables: ctx.tables,
    functions: ctx.functions,
    fn: { name: ctx.name, args: ctx.args.map((a) => a.name) },
    tokens: read.tokens,
    maxNodes: BODY_LIMITS.nodes,
    maxDepth: BODY_LIMITS.depth,
  });
  for (const raw of read.stmts) checker.statement(raw.stmt, new Scope());
  const writes = checker.writesTo.size > 0;
  if (checker.locks && !writes) {
    throw errors.validation(`${label}: FOR UPDATE/SHARE is allowed only in a body that writes (a read-only call runs in a read-only transaction); remove it.`);
  }

  const sites = [...checker.sites, ...commentSites(read.tokens)];
  const statements = read.stmts.map((raw) => {
    const from = raw.stmt_location ?? 0;
    const to = raw.stmt_len ? from + raw.stmt_len : read.bytes.length; // the last statement's length is 0: to the end
    return `${splice(read.bytes, sites, from, to, label).trim()};`;
  });
  for (const change of checker.mutations) change();
  const sql = statements.join('\n');
  proveSame(
    read.stmts.map((raw) => raw.stmt),
    sql,
    label,
  );
  const sorted = (set: ReadonlySet<string>) => [...set].sort();
  return { sql, writes, reads: sorted(checker.reads), writesTo: sorted(checker.writesTo), calls: sorted(checker.calls) };
}
