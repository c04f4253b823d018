// A declared condition: one boolean SQL expression over the checked row (what a Supabase policy's `using` holds),
// compiled into a restrictive policy by the caller. Checked as a function body's expressions are, plus a bounded cost:
// at most 3 sub-selects, nested at most 2 deep, each over one app table found by one index probe
// (docs/design/schema-functions.md §3.2).
import { errors } from '../../core/errors.ts';
import type { TableMap, TableShape } from './walker.ts';
import { isComment, type ReadSql, readSql } from './parser.ts';
import { commentSites, proveSame, splice } from './qualify.ts';
import { type Entry, Scope } from './scope.ts';
import { SqlChecker, type SubselectRules } from './statements.ts';
import { conjuncts, type Fields, isObject, list, location, names, unwrap } from './tree.ts';

export interface ConditionContext {
  /** The table whose rows the condition checks: bare columns are its columns. */
  table: string;
  /** The app's tables in the definition's final state, the checked one included. */
  tables: TableMap;
  /** Names the condition in refusals; default "Condition on table '<table>'". */
  label?: string;
}

export interface CheckedCondition {
  /** The expression to put in USING (...) / WITH CHECK (...): app tables as public.<t>, auth.uid() as (select auth.uid()). */
  sql: string;
  /** The tables its sub-selects read (sorted), for the caller's recursion check. */
  reads: string[];
}

export const CONDITION_LIMITS = { bytes: 2000, tokens: 1000, subselects: 3, nesting: 2, nodes: 2000, depth: 64 };
const PREFIX = 'select ';

/** Checks and qualifies one condition; throws a 400 (errors.validation) naming what is wrong and the fix. */
export function checkCondition(text: string, ctx: ConditionContext): CheckedCondition {
  const label = ctx.label ?? `Condition on table '${ctx.table}'`;
  const row = ctx.tables.get(ctx.table);
  if (!row) throw new Error(`checkCondition: '${ctx.table}' is missing from ctx.tables`);
  const read = readSql(text, { label, what: 'the condition', prefix: PREFIX, maxBytes: CONDITION_LIMITS.bytes, maxTokens: CONDITION_LIMITS.tokens });
  const { stmt, expression } = theExpression(read, label);
  const checker = new SqlChecker(
    { label, mode: 'condition', tables: ctx.tables, functions: new Set(), tokens: read.tokens, maxNodes: CONDITION_LIMITS.nodes, maxDepth: CONDITION_LIMITS.depth },
    new SubselectLimits(ctx.tables, label),
  );
  const scope = new Scope();
  scope.entries.push({ name: ctx.table, columns: row.columns, table: ctx.table });
  checker.node(expression, scope);

  const sites = [...checker.sites, ...commentSites(read.tokens)];
  const sql = splice(read.bytes, sites, Buffer.byteLength(PREFIX), read.bytes.length, label).trim();
  for (const change of checker.mutations) change();
  proveSame([stmt], PREFIX + sql, label);
  return { sql, reads: [...checker.reads].sort() };
}

/**
 * The one expression of `select <text>`, refused unless the text is exactly that: the caller puts the result inside
 * USING (...), where a second statement, a FROM, an alias or a leading SELECT option (`all true`) would not mean what
 * was checked.
 */
function theExpression(read: ReadSql, label: string): { stmt: unknown; expression: unknown } {
  const refuse = (message: string) => errors.validation(`${label}: ${message}`);
  if (read.tokens.some((t) => t.text === ';')) throw refuse("a condition is one expression; remove the ';'.");
  const stmt = read.stmts[0]?.stmt;
  const select = unwrap(stmt)?.[1];
  const targets = list(select?.targetList);
  const target = unwrap(targets[0])?.[1];
  // Postgres reads a trailing keyword as a column label: `status = 'x' and` is `select status = 'x' as "and"`.
  if (typeof target?.name === 'string') throw refuse(`the condition ends in '${target.name}', read as a column alias; complete the expression.`);
  const first = read.tokens.find((t) => t.start >= PREFIX.length && !isComment(t));
  const star = unwrap(target?.val)?.[0] === 'ColumnRef' && names(unwrap(target?.val)![1].fields) === undefined;
  const plain = read.stmts.length === 1 && unwrap(stmt)?.[0] === 'SelectStmt' && onlyKeys(select!) && targets.length === 1;
  if (!plain || !target || !onlyKeys(target, ['val', 'location']) || location(target) !== first?.start || star) {
    throw refuse('a condition is one boolean expression (no FROM, alias or second statement); read other tables in a sub-select: exists (select 1 from <table> t where t.<indexed column> = <column of this row>).');
  }
  return { stmt, expression: target.val };
}

/** A bare `select <expression>`: a target list and the two fields every SELECT carries. */
function onlyKeys(fields: Fields, allowed = ['targetList', 'limitOption', 'op']): boolean {
  return Object.keys(fields).every((k) => allowed.includes(k)) && (fields.op === undefined || fields.op === 'SETOP_NONE');
}

/** The cost bound of a condition's sub-selects: how many, how deep, and one index probe each. */
class SubselectLimits implements SubselectRules {
  private count = 0;
  private readonly tables: TableMap;
  private readonly label: string;

  constructor(tables: TableMap, label: string) {
    this.tables = tables;
    this.label = label;
  }

  before(select: Fields, outer: Scope): void {
    const { subselects, nesting } = CONDITION_LIMITS;
    if (++this.count > subselects) this.refuse(`a condition has at most ${subselects} sub-selects; combine them or move the rule into access.`);
    let depth = 0;
    for (let s: Scope | undefined = outer; s; s = s.parent) depth++;
    if (depth > nesting) this.refuse(`sub-selects nest at most ${nesting} deep in a condition; flatten them.`);
    const from = list(select.fromClause);
    if (from.length !== 1 || unwrap(from[0])?.[0] !== 'RangeVar') {
      this.refuse("each sub-select reads exactly one of the app's tables: exists (select 1 from <table> t where ...); nest another exists (...) for a second table.");
    }
  }

  /** The sub-select must find its rows through an index: `t.<leading column> = <outer value>` or `x in (select t.<leading column> ...)`. */
  after(select: Fields, level: Scope, link: Fields | undefined): void {
    const entry = level.entries[0]!;
    const table = this.tables.get(entry.table!)!;
    const unindexed: string[] = [];
    for (const term of conjuncts(select.whereClause)) {
      const eq = unwrap(term);
      if (eq?.[0] !== 'A_Expr' || eq[1].kind !== 'AEXPR_OP' || names(eq[1].name)?.[0] !== '=') continue;
      for (const [key, other] of [[eq[1].lexpr, eq[1].rexpr], [eq[1].rexpr, eq[1].lexpr]]) {
        const column = innerColumn(key, entry);
        if (column === undefined || mentions(other, entry)) continue;
        if (table.indexedLeading.has(column)) return;
        unindexed.push(column);
      }
    }
    if (link?.subLinkType === 'ANY_SUBLINK' && (link.operName === undefined || names(link.operName)?.[0] === '=')) {
      const targets = list(select.targetList);
      const column = targets.length === 1 ? innerColumn(unwrap(targets[0])?.[1].val, entry) : undefined;
      if (column !== undefined && table.indexedLeading.has(column)) return;
    }
    this.refuse(probeAdvice(entry, table, unindexed));
  }

  private refuse(message: string): never {
    throw errors.validation(`${this.label}: ${message}`);
  }
}

function probeAdvice(entry: Entry, table: TableShape, unindexed: string[]): string {
  const name = entry.table!;
  const indexed = [...table.indexedLeading].sort().join(', ') || 'none';
  if (unindexed.length) {
    const column = unindexed[0]!;
    return `the sub-select on '${name}' matches ${column}, which leads no index of ${name}; add one (indexes: { ${name}_by_${column}: { columns: ["${column}"] } }) or match an indexed column (${indexed}).`;
  }
  return `the sub-select on '${name}' must find its rows by one index probe: add ${entry.name}.<column> = <a column of the row or auth.uid()> to its where, with a column that leads an index of ${name} (${indexed}).`;
}

/** The column of `entry` that `expr` is, if it is a plain reference to one (t.col, or col when only t has it). */
function innerColumn(expr: unknown, entry: Entry): string | undefined {
  const ref = unwrap(expr);
  if (ref?.[0] !== 'ColumnRef') return undefined;
  const parts = names(ref[1].fields);
  if (parts?.length === 2 && parts[0] === entry.name) return parts[1];
  if (parts?.length === 1 && entry.columns?.has(parts[0]!)) return parts[0];
  return undefined;
}

/** Whether `expr` reads the sub-select's own table (then it is no probe key) or holds a sub-select. */
function mentions(expr: unknown, entry: Entry): boolean {
  if (Array.isArray(expr)) return expr.some((e) => mentions(e, entry));
  if (!isObject(expr)) return false;
  const node = unwrap(expr);
  if (node?.[0] === 'SubLink') return true;
  if (node?.[0] === 'ColumnRef') {
    const parts = names(node[1].fields);
    if (!parts) return true; // t.* and the like: not a probe value
    return parts.length === 2 ? parts[0] === entry.name : (entry.columns?.has(parts[0]!) ?? true);
  }
  return Object.values(expr).some((v) => mentions(v, entry));
}
