// The checks on FROM: the app's tables (qualified public.<t>) and the statement's own WITH names, and in a body also
// joins, sub-selects and set-returning functions. Each entry joins the statement's scope, so that column names can be
// judged (scope.ts), and an alias that hides an outer entry of the same name is refused (which one is meant?).
import { sqlName } from './allowed.ts';
import { ExpressionChecker } from './expressions.ts';
import { type Entry, Scope } from './scope.ts';
import { type Fields, isObject, list, location, names, unwrap } from './tree.ts';

/** A query's output columns (a WITH query's or sub-select's), or null when they cannot be known. */
export type Columns = ReadonlySet<string> | null;

export const RANGE_VAR_KEYS = 'catalogname schemaname relname inh relpersistence alias location';

export abstract class FromChecker extends ExpressionChecker {
  /** A query in FROM (a sub-select) or WITH; statements.ts knows queries. */
  protected abstract query(value: unknown, scope: Scope, writable: boolean): Columns;

  protected fromItem(value: unknown, level: Scope, outer: Scope): void {
    const node = unwrap(value);
    if (!node) this.refuse('a FROM item has a form these checks do not know.');
    const [kind, f] = node;
    this.within(() => {
      if (kind === 'RangeVar') return this.addEntry(level, this.rangeVar(f, level));
      this.functionOnly(kind === 'JoinExpr' ? 'JOIN' : 'a sub-select or function in FROM');
      if (kind === 'JoinExpr') return this.join(f, level, outer);
      if (kind === 'RangeSubselect') {
        this.fields(kind, f, 'lateral subquery alias');
        const columns = this.query(f.subquery, f.lateral ? level : outer, false);
        const alias = this.alias(f.alias);
        return this.addEntry(level, { name: alias.name ?? '(sub-select)', columns: alias.columns ?? columns });
      }
      if (kind === 'RangeFunction') return this.addEntry(level, this.rangeFunction(f, level));
      this.refuse(`${sqlName(kind)} cannot be used in FROM; read the app's tables, WITH queries, sub-selects or set-returning functions.`);
    });
  }

  /** A table or WITH query in FROM. An alias that hides an outer entry of the same name is refused (ambiguous). */
  private rangeVar(f: Fields, level: Scope): Entry {
    this.fields('RangeVar', f, RANGE_VAR_KEYS);
    const alias = this.alias(f.alias);
    const relname = String(f.relname);
    const cte = f.schemaname === undefined && f.catalogname === undefined ? level.cte(relname) : undefined;
    if (cte !== undefined) return { name: alias.name ?? relname, columns: alias.columns ?? cte };
    const table = this.appTable(f);
    this.reads.add(table);
    return { name: alias.name ?? table, columns: alias.columns ? null : this.o.tables.get(table)!.columns, table };
  }

  private addEntry(level: Scope, entry: Entry): void {
    if (level.outerEntry(entry.name)) this.refuse(`'${entry.name}' in FROM hides the outer ${entry.name}; give one of them an alias.`);
    level.entries.push(entry);
  }

  /** A relation that must be one of the app's tables; `public.` is put before it unless written. */
  protected appTable(f: Fields): string {
    const name = String(f.relname);
    const schema = f.schemaname as string | undefined;
    if (f.catalogname !== undefined) this.refuse(`'${String(f.catalogname)}.${schema}.${name}' names another database; use the app's tables.`);
    const own = this.o.mode === 'function' ? "the app's tables and the statement's WITH names" : "the app's tables";
    if (schema !== undefined && schema !== 'public') this.refuse(`'${schema}.${name}' is outside the app's tables (schema ${schema}); use ${own}.`);
    if (!this.o.tables.has(name)) this.refuse(`'${name}' is not one of ${own} (${this.tableList()}); fix the name.`);
    if (schema === undefined) this.qualify(location(f), () => void (f.schemaname = 'public'));
    return name;
  }

  private tableList(): string {
    const all = [...this.o.tables.keys()].sort();
    return all.length > 20 ? `${all.slice(0, 20).join(', ')}, ...` : all.join(', ');
  }

  protected alias(value: unknown): { name?: string; columns?: Set<string> } {
    if (value === undefined) return {};
    if (!isObject(value)) this.refuse('an alias has a form these checks do not know.');
    this.fields('Alias', value, 'aliasname colnames');
    const columns = names(value.colnames);
    return { name: String(value.aliasname), ...(columns?.length ? { columns: new Set(columns) } : {}) };
  }

  private join(f: Fields, level: Scope, outer: Scope): void {
    this.fields('JoinExpr', f, 'jointype isNatural larg rarg usingClause quals rtindex');
    this.fromItem(f.larg, level, outer);
    this.fromItem(f.rarg, level, outer);
    if (f.usingClause !== undefined && !names(f.usingClause)) this.refuse('JOIN ... USING lists column names.');
    this.children(f.quals, level);
  }

  /** unnest(...), jsonb_to_recordset(...) as r(a int), generate_series(...) in FROM: they see earlier entries. */
  private rangeFunction(f: Fields, level: Scope): Entry {
    this.fields('RangeFunction', f, 'lateral ordinality functions alias coldeflist');
    let first = '';
    for (const item of list(f.functions)) {
      // Each function is a List of [call, column definitions or {}].
      const pair = unwrap(item);
      const [call, defs, ...rest] = list(pair?.[1].items);
      if (pair?.[0] !== 'List' || rest.length || unwrap(call)?.[0] !== 'FuncCall') this.refuse('a function in FROM must be a function call.');
      first ||= (names(unwrap(call)![1].funcname) ?? []).at(-1) ?? '';
      this.node(call, level);
      if (isObject(defs) && Object.keys(defs).length) this.columnDefs(unwrap(defs)?.[1].items);
    }
    const defined = this.columnDefs(f.coldeflist);
    const alias = this.alias(f.alias);
    return { name: alias.name ?? first, columns: alias.columns ?? (defined.length ? new Set(defined) : null) };
  }

  private columnDefs(value: unknown): string[] {
    return list(value).map((item) => {
      const node = unwrap(item);
      if (node?.[0] !== 'ColumnDef') this.refuse('a column definition list has a form these checks do not know.');
      this.fields('ColumnDef', node[1], 'colname typeName is_local location');
      this.typeName(node[1].typeName);
      return String(node[1].colname);
    });
  }
}
