// The checks on queries and statements: SELECT (a condition's sub-selects, a body's queries), INSERT, UPDATE and
// DELETE with WITH and RETURNING. WITH names are scoped as Postgres scopes them (a query sees the ones before it);
// what each query outputs is tracked so that a later bare name can be judged against its columns.
import { sqlName } from './allowed.ts';
import { type Columns, FromChecker, RANGE_VAR_KEYS } from './from.ts';
import { type Entry, Scope } from './scope.ts';
import { type Fields, isObject, list, names, unwrap } from './tree.ts';
import type { CheckerOptions } from './walker.ts';

/** What a condition adds around each of its sub-selects (condition.ts): their shape, and their index probe. */
export interface SubselectRules {
  before(select: Fields, outer: Scope): void;
  after(select: Fields, level: Scope, link: Fields | undefined): void;
}

const SELECT_KEYS =
  'distinctClause targetList fromClause whereClause groupClause groupDistinct havingClause windowClause valuesLists sortClause limitOffset limitCount limitOption lockingClause withClause op all larg rarg';

export class SqlChecker extends FromChecker {
  /** FOR UPDATE/SHARE seen: allowed only in a body that writes (a read-only call runs read-only). */
  locks = false;
  private readonly rules: SubselectRules | undefined;

  constructor(options: CheckerOptions, rules?: SubselectRules) {
    super(options);
    this.rules = rules;
  }

  /** One top-level statement of a function body. */
  statement(value: unknown, scope: Scope): void {
    const kind = unwrap(value)?.[0] ?? 'unknown';
    if (!['SelectStmt', 'InsertStmt', 'UpdateStmt', 'DeleteStmt'].includes(kind)) {
      this.refuse(`${sqlName(kind)} cannot be used in a function body; a body holds SELECT, INSERT, UPDATE and DELETE statements (WITH allowed).`);
    }
    this.query(value, scope, true);
  }

  protected subquery(value: unknown, scope: Scope, link: Fields): void {
    const node = unwrap(value);
    if (node?.[0] !== 'SelectStmt') this.refuse('a sub-select must be a SELECT.');
    this.within(() => this.select(node[1], scope, link));
  }

  /** A SELECT anywhere, or (in a body's statements and WITH queries) INSERT, UPDATE or DELETE. */
  protected query(value: unknown, scope: Scope, writable: boolean): Columns {
    const node = unwrap(value);
    if (!node) this.refuse('a query has a form these checks do not know.');
    const [kind, f] = node;
    if (kind !== 'SelectStmt' && !writable) this.refuse(`${sqlName(kind)} is only allowed as a statement or a WITH query.`);
    return this.within(() => {
      if (kind === 'SelectStmt') return this.select(f, scope);
      if (kind === 'InsertStmt') return this.insert(f, scope);
      if (kind === 'UpdateStmt') return this.update(f, scope);
      if (kind === 'DeleteStmt') return this.delete(f, scope);
      return this.refuse(`${sqlName(kind)} cannot be used in ${this.where}.`);
    });
  }

  private select(f: Fields, outer: Scope, link?: Fields): Columns {
    if (f.intoClause !== undefined) this.refuse('SELECT ... INTO is not allowed (it creates a table); use INSERT INTO <table> SELECT ....');
    this.fields('SelectStmt', f, SELECT_KEYS);
    const scope = f.withClause === undefined ? outer : this.withClause(f.withClause, outer);
    if (f.op !== undefined && f.op !== 'SETOP_NONE') return this.setOperation(f, scope);
    if (f.valuesLists !== undefined) {
      this.functionOnly('VALUES');
      this.children(f.valuesLists, scope);
      const width = list(unwrap(list(f.valuesLists)[0])?.[1].items).length;
      return new Set(Array.from({ length: width }, (_, i) => `column${i + 1}`));
    }
    this.rules?.before(f, scope);
    const level = new Scope(scope);
    for (const item of list(f.fromClause)) this.fromItem(item, level, scope);
    const columns = this.targets(f.targetList, level);
    for (const key of ['whereClause', 'groupClause', 'havingClause', 'sortClause', 'limitCount', 'limitOffset']) this.children(f[key], level);
    for (const item of list(f.distinctClause)) if (unwrap(item)) this.node(item, level); // plain DISTINCT is [{}]
    if (f.windowClause !== undefined) this.functionOnly('WINDOW');
    for (const w of list(f.windowClause)) {
      if (unwrap(w)?.[0] !== 'WindowDef') this.refuse('WINDOW has a form these checks do not know.');
      this.windowDef(unwrap(w)![1], level);
    }
    if (f.lockingClause !== undefined) this.locking(f.lockingClause);
    this.rules?.after(f, level, link);
    return columns;
  }

  private setOperation(f: Fields, scope: Scope): Columns {
    this.functionOnly('UNION, INTERSECT and EXCEPT');
    const [left, right] = [f.larg, f.rarg];
    if (!isObject(left) || !isObject(right)) this.refuse('a UNION has a form these checks do not know.');
    const columns = this.within(() => this.select(left, scope));
    this.within(() => this.select(right, scope));
    for (const key of ['sortClause', 'limitCount', 'limitOffset']) this.children(f[key], new Scope(scope));
    if (f.lockingClause !== undefined) this.locking(f.lockingClause);
    return columns;
  }

  private withClause(value: unknown, outer: Scope): Scope {
    this.functionOnly('WITH');
    if (!isObject(value)) this.refuse('WITH has a form these checks do not know.');
    const w = value;
    return this.within(() => {
      this.fields('WithClause', w, 'ctes recursive location');
      if (w.recursive) this.refuse('WITH RECURSIVE is not allowed (its cost has no bound); write the query without recursion.');
      const scope = new Scope(outer);
      for (const item of list(w.ctes)) {
        const cte = unwrap(item);
        if (cte?.[0] !== 'CommonTableExpr') this.refuse('WITH has a form these checks do not know.');
        const c = cte[1];
        this.fields('CommonTableExpr', c, 'ctename aliascolnames ctematerialized ctequery location cterecursive cterefcount');
        const name = String(c.ctename);
        if (this.o.tables.has(name)) this.refuse(`the WITH name '${name}' is also a table; rename the WITH query.`);
        const columns = this.within(() => this.query(c.ctequery, scope, true));
        const renamed = names(c.aliascolnames);
        scope.ctes.set(name, renamed?.length ? new Set(renamed) : columns);
      }
      return scope;
    });
  }

  private locking(value: unknown): void {
    this.functionOnly('FOR UPDATE/SHARE');
    this.locks = true;
    for (const item of list(value)) {
      const node = unwrap(item);
      if (node?.[0] !== 'LockingClause') this.refuse('FOR UPDATE has a form these checks do not know.');
      this.fields('LockingClause', node[1], 'lockedRels strength waitPolicy');
      for (const rel of list(node[1].lockedRels)) {
        // FOR UPDATE OF names FROM entries (aliases), not tables: nothing to qualify.
        const r = unwrap(rel)?.[1];
        if (!r || r.schemaname !== undefined || r.catalogname !== undefined) this.refuse('FOR UPDATE OF names FROM entries; write their aliases.');
      }
    }
  }

  /** Select targets or RETURNING: each checked, and the columns they output (for WITH queries and sub-selects). */
  private targets(value: unknown, level: Scope): Columns {
    const out = new Set<string>();
    let known = true;
    for (const item of list(value)) {
      const node = unwrap(item);
      if (node?.[0] !== 'ResTarget') this.refuse('a select list has a form these checks do not know.');
      const t = node[1];
      this.fields('ResTarget', t, 'name val location');
      this.node(t.val, level);
      const named = typeof t.name === 'string' ? [t.name] : outputNames(t.val, level);
      if (named === null) known = false;
      else for (const n of named) out.add(n);
    }
    return known ? out : null;
  }

  private insert(f: Fields, outer: Scope): Columns {
    this.fields('InsertStmt', f, 'relation cols selectStmt onConflictClause returningClause withClause override');
    const scope = f.withClause === undefined ? outer : this.withClause(f.withClause, outer);
    const target = this.target(f.relation, false);
    for (const col of list(f.cols)) {
      const node = unwrap(col);
      if (node?.[0] !== 'ResTarget' || node[1].indirection !== undefined) this.refuse('INSERT lists whole columns; write (col, ...).');
      this.fields('ResTarget', node[1], 'name location');
    }
    // The target is not visible to the rows being inserted, only to ON CONFLICT and RETURNING.
    if (f.selectStmt !== undefined) this.query(f.selectStmt, scope, false);
    const level = new Scope(scope);
    level.entries.push(target);
    if (f.onConflictClause !== undefined) this.onConflict(f.onConflictClause, target, scope);
    return this.returning(f.returningClause, level);
  }

  private update(f: Fields, outer: Scope): Columns {
    this.fields('UpdateStmt', f, 'relation targetList whereClause fromClause returningClause withClause');
    return this.modify(f, outer, f.fromClause, f.targetList);
  }

  private delete(f: Fields, outer: Scope): Columns {
    this.fields('DeleteStmt', f, 'relation usingClause whereClause returningClause withClause');
    return this.modify(f, outer, f.usingClause, undefined);
  }

  /** UPDATE and DELETE: the target, then FROM/USING entries, then SET, WHERE and RETURNING over all of them. */
  private modify(f: Fields, outer: Scope, from: unknown, assignments: unknown): Columns {
    const scope = f.withClause === undefined ? outer : this.withClause(f.withClause, outer);
    const level = new Scope(scope);
    level.entries.push(this.target(f.relation, true));
    for (const item of list(from)) this.fromItem(item, level, scope);
    this.assignments(assignments, level);
    this.children(f.whereClause, level);
    return this.returning(f.returningClause, level);
  }

  /** The table an INSERT, UPDATE or DELETE writes (UPDATE and DELETE also read it to find their rows). */
  private target(value: unknown, reads: boolean): Entry {
    if (!isObject(value)) this.refuse('the written table has a form these checks do not know.');
    this.fields('RangeVar', value, RANGE_VAR_KEYS);
    const table = this.appTable(value);
    this.writesTo.add(table);
    if (reads) this.reads.add(table);
    const alias = this.alias(value.alias);
    return { name: alias.name ?? table, columns: this.o.tables.get(table)!.columns, table };
  }

  private onConflict(value: unknown, target: Entry, scope: Scope): void {
    if (!isObject(value)) this.refuse('ON CONFLICT has a form these checks do not know.');
    const c = value;
    this.within(() => {
      this.fields('OnConflictClause', c, 'action infer targetList whereClause location');
      if (c.action !== 'ONCONFLICT_NOTHING' && c.action !== 'ONCONFLICT_UPDATE') this.refuse('ON CONFLICT does DO NOTHING or DO UPDATE.');
      const level = new Scope(scope);
      level.entries.push(target);
      if (isObject(c.infer)) {
        this.fields('InferClause', c.infer, 'indexElems whereClause conname location');
        for (const elem of list(c.infer.indexElems)) {
          const node = unwrap(elem);
          if (node?.[0] !== 'IndexElem') this.refuse('ON CONFLICT (...) lists columns or expressions.');
          this.fields('IndexElem', node[1], 'name expr ordering nulls_ordering');
          this.children(node[1].expr, level);
        }
        this.children(c.infer.whereClause, level);
      }
      level.entries.push({ name: 'excluded', columns: target.columns });
      this.assignments(c.targetList, level);
      this.children(c.whereClause, level);
    });
  }

  /** SET col = value: whole columns only. */
  private assignments(value: unknown, level: Scope): void {
    for (const item of list(value)) {
      const node = unwrap(item);
      if (node?.[0] !== 'ResTarget') this.refuse('SET has a form these checks do not know.');
      if (node[1].indirection !== undefined) this.refuse('SET assigns whole columns; write col = <new value>.');
      this.fields('ResTarget', node[1], 'name val location');
      this.children(node[1].val, level);
    }
  }

  private returning(value: unknown, level: Scope): Columns {
    if (value === undefined) return new Set();
    if (!isObject(value)) this.refuse('RETURNING has a form these checks do not know.');
    if (value.options !== undefined) this.refuse('RETURNING WITH (OLD/NEW ...) is not allowed; return the new row.');
    this.fields('ReturningClause', value, 'exprs');
    return this.targets(value.exprs, level);
  }
}

/** The column names a select-list entry without an alias outputs, as Postgres names them (null: unknowable). */
function outputNames(value: unknown, level: Scope): string[] | null {
  const node = unwrap(value);
  if (!node) return ['?column?'];
  const [kind, f] = node;
  if (kind === 'ColumnRef') {
    const parts = list(f.fields);
    const last = unwrap(parts.at(-1));
    if (last?.[0] !== 'A_Star') return [String(last?.[1].sval)];
    if (parts.length === 1) return setToList(level.allColumns());
    const owner = String(unwrap(parts[0])?.[1].sval);
    return setToList(level.entries.find((e) => e.name === owner)?.columns ?? null);
  }
  if (kind === 'FuncCall') return [(names(f.funcname) ?? ['?column?']).at(-1)!];
  if (kind === 'TypeCast') {
    const inner = outputNames(f.arg, level);
    return inner?.[0] === '?column?' ? [(names(isObject(f.typeName) ? f.typeName.names : []) ?? ['?column?']).at(-1)!] : inner;
  }
  return ['?column?'];
}

function setToList(columns: ReadonlySet<string> | null): string[] | null {
  return columns === null ? null : [...columns];
}
