// The checks on expressions, shared by conditions and function bodies. Every node of the parse tree must be of a kind
// listed here with only the fields listed here (a grammar feature nobody read is refused, not passed); functions,
// operators and types are taken from allowed.ts; names that need their schema (app tables, declared functions,
// pgvector) are recorded as sites for qualify.ts, with the change each makes to the tree.
import {
  AUTH_FUNCTIONS, BUILTIN_FUNCTIONS, BUILTIN_TYPES, CLOCK_VALUES, functionRefusal, OPERATORS, PUBLIC_FUNCTIONS,
  PUBLIC_OPERATORS, PUBLIC_TYPES, REG_TYPES, sqlName,
} from './allowed.ts';
import { describeEntry, Scope } from './scope.ts';
import { type Fields, isObject, list, location, names, stringNode, unwrap } from './tree.ts';
import { Walker } from './walker.ts';

// The tables the checks are given; also exported here, where callers first found them.
export type { TableMap, TableShape } from './walker.ts';

/** Expression kinds whose fields are only scalars and nodes: the listed fields are checked, the nodes walked. */
const GENERIC: Record<string, string> = {
  BoolExpr: 'boolop args location',
  NullTest: 'arg nulltesttype argisrow location',
  BooleanTest: 'arg booltesttype location',
  CaseExpr: 'arg args defresult location',
  CaseWhen: 'expr result location',
  CoalesceExpr: 'args location',
  MinMaxExpr: 'op args location',
  A_ArrayExpr: 'elements list_start list_end location',
  RowExpr: 'args row_format colnames location',
  A_Indirection: 'arg indirection',
  A_Indices: 'is_slice lidx uidx',
  NamedArgExpr: 'arg name argnumber location',
  List: 'items',
  String: 'sval',
  Integer: 'ival',
  Float: 'fval',
  Boolean: 'boolval',
  BitString: 'bsval',
  A_Star: '',
};
/** Kinds that only statements of a body produce (UPDATE ... SET (a, b) = ..., DEFAULT, GROUPING SETS). */
const FUNCTION_GENERIC: Record<string, string> = { MultiAssignRef: 'source colno ncolumns', SetToDefault: 'location', GroupingSet: 'kind content location' };
const EXPR_KINDS = new Set(
  'AEXPR_OP AEXPR_OP_ANY AEXPR_OP_ALL AEXPR_DISTINCT AEXPR_NOT_DISTINCT AEXPR_NULLIF AEXPR_IN AEXPR_LIKE AEXPR_ILIKE AEXPR_SIMILAR AEXPR_BETWEEN AEXPR_NOT_BETWEEN AEXPR_BETWEEN_SYM AEXPR_NOT_BETWEEN_SYM'.split(' '),
);
const NAMED_OPERATOR_KINDS = new Set(['AEXPR_OP', 'AEXPR_OP_ANY', 'AEXPR_OP_ALL']);

export abstract class ExpressionChecker extends Walker {
  /** A sub-select (EXISTS, IN, scalar, ARRAY) of an expression; statements.ts knows queries. */
  protected abstract subquery(value: unknown, scope: Scope, link: Fields): void;

  node(value: unknown, scope: Scope): void {
    const node = unwrap(value);
    if (!node) this.refuse('the SQL has a form these checks do not know; write it more plainly.');
    this.within(() => this.dispatch(node[0], node[1], value as Fields, scope));
  }

  protected children(value: unknown, scope: Scope): void {
    if (Array.isArray(value)) for (const item of value) this.node(item, scope);
    else if (value !== undefined) this.node(value, scope);
  }

  private dispatch(kind: string, f: Fields, wrapper: Fields, scope: Scope): void {
    switch (kind) {
      case 'A_Const':
        return this.fields(kind, f, 'ival fval boolval sval bsval isnull location');
      case 'ColumnRef':
        return this.columnRef(f, scope);
      case 'ParamRef':
        return this.paramRef(f);
      case 'A_Expr':
        return this.operatorExpr(f, scope);
      case 'FuncCall':
        return this.funcCall(f, wrapper, scope);
      case 'TypeCast':
        this.fields(kind, f, 'arg typeName location');
        this.node(f.arg, scope);
        return this.typeName(f.typeName);
      case 'CollateClause':
        return this.collate(f, scope);
      case 'SQLValueFunction':
        this.fields(kind, f, 'op type typmod location');
        if (!CLOCK_VALUES.has(String(f.op))) this.refuse(`CURRENT_USER and the other role and schema names are not allowed; use auth.uid() for the caller.`);
        return;
      case 'SubLink':
        return this.subLink(f, scope);
      case 'SortBy':
        this.fields(kind, f, 'node sortby_dir sortby_nulls useOp location');
        if (f.useOp !== undefined) this.operator(f.useOp);
        return this.node(f.node, scope);
    }
    const generic = GENERIC[kind] ?? (this.o.mode === 'function' ? FUNCTION_GENERIC[kind] : undefined);
    if (generic === undefined) this.refuse(`${sqlName(kind)} cannot be used in ${this.where}.`);
    this.fields(kind, f, generic);
    for (const value of Object.values(f)) if (typeof value === 'object' && value !== null) this.children(value, scope);
  }

  private columnRef(f: Fields, scope: Scope): void {
    this.fields('ColumnRef', f, 'fields location');
    const parts = list(f.fields);
    this.tally(parts.length);
    const star = unwrap(parts.at(-1))?.[0] === 'A_Star';
    const strings = names(star ? parts.slice(0, -1) : parts);
    if (!strings) this.refuse('a column reference has a form these checks do not know; write <alias>.<column>.');
    if (parts.length > 2) this.refuse(`'${strings.join('.')}' names a schema; write <alias>.<column> (every table is the app's own).`);
    if (!star && strings.length === 1) this.bareColumn(strings[0]!, scope);
  }

  /** An unqualified name: refused when it could mean two things and Postgres would silently pick one. */
  private bareColumn(name: string, scope: Scope): void {
    const visible = scope.visible();
    const owners = visible.filter((e) => e.columns?.has(name));
    if (this.args.has(name)) {
      const hit = owners[0] ?? visible.find((e) => e.columns === null);
      if (hit) {
        const what = owners.length ? 'a column' : 'possibly a column';
        this.refuse(`'${name}' is both an argument and ${what} of ${describeEntry(hit)}; write ${this.o.fn!.name}.${name} for the argument or ${hit.name}.${name} for the column.`);
      }
    }
    if (owners.length > 1) {
      const [a, b] = owners as [typeof owners[0], typeof owners[0]];
      this.refuse(`column '${name}' is in both ${describeEntry(b)} and ${describeEntry(a)}; write ${b.name}.${name} or ${a.name}.${name}.`);
    }
  }

  private paramRef(f: Fields): void {
    this.functionOnly('$n parameters');
    this.fields('ParamRef', f, 'number location');
    const count = this.o.fn?.args.length ?? 0;
    const n = typeof f.number === 'number' ? f.number : 0;
    if (n < 1 || n > count) this.refuse(`$${n} is not an argument (the function has ${count}); use $1 to $${count} or the arguments' names.`);
  }

  private operatorExpr(f: Fields, scope: Scope): void {
    this.fields('A_Expr', f, 'kind name lexpr rexpr rexpr_list_start rexpr_list_end location');
    if (!EXPR_KINDS.has(String(f.kind))) this.refuse(`the operator form ${String(f.kind)} is not allowed.`);
    const named = NAMED_OPERATOR_KINDS.has(String(f.kind));
    const op = named ? this.operator(f.name) : this.operatorName(f.name);
    if (named && PUBLIC_OPERATORS.has(op)) this.qualifyOperator(f, op);
    if (f.lexpr !== undefined) this.node(f.lexpr, scope);
    if (f.rexpr !== undefined) this.node(f.rexpr, scope);
  }

  private operatorName(value: unknown): string {
    const parts = names(value);
    this.tally(parts?.length ?? 0);
    if (!parts || parts.length !== 1) this.refuse('OPERATOR(schema.op) is not allowed; write the operator itself (a <=> b).');
    return parts[0]!;
  }

  /** An operator named by the author (a + b, = any(...), order by x using <): on the list or refused. */
  private operator(value: unknown): string {
    const op = this.operatorName(value);
    if (!OPERATORS.has(op)) this.refuse(`the operator ${op} is not allowed; use comparison, arithmetic, ||, LIKE, regex, jsonb, array, range, @@ or pgvector operators.`);
    return op;
  }

  private funcCall(f: Fields, wrapper: Fields, scope: Scope): void {
    this.fields('FuncCall', f, 'funcname args agg_order agg_filter over agg_within_group agg_star agg_distinct func_variadic funcformat location');
    this.functionName(f, wrapper);
    this.children(f.args, scope);
    this.children(f.agg_order, scope);
    this.children(f.agg_filter, scope);
    if (f.over !== undefined) {
      this.functionOnly('a window (OVER)');
      this.windowDef(f.over, scope);
    }
  }

  private functionName(f: Fields, wrapper: Fields): void {
    const parts = names(f.funcname);
    this.tally(parts?.length ?? 0);
    if (!parts || parts.length < 1 || parts.length > 2) this.refuse('a function name has a form these checks do not know; write name(...) or auth.uid().');
    const [schema, name] = parts.length === 2 ? (parts as [string, string]) : [undefined, parts[0]!];
    if (schema === 'auth') return this.authCall(name, f, wrapper);
    if (schema === undefined || schema === 'public') {
      if (name === this.o.fn?.name) this.refuse(`${name}() calls itself; recursion is not allowed, so write the body without the call.`);
      const declared = this.o.functions.has(name);
      if (declared && ((schema === undefined && BUILTIN_FUNCTIONS.has(name)) || PUBLIC_FUNCTIONS.has(name))) {
        this.refuse(`${name}() is both a built-in and a declared function; rename the declared one.`);
      }
      if (declared) this.calls.add(name);
      if (declared || PUBLIC_FUNCTIONS.has(name)) {
        if (schema === undefined) this.qualify(location(f), () => void list(f.funcname).unshift(stringNode('public')));
        return;
      }
      if (schema === 'public') this.refuse(`public.${name}() is not one of the app's declared functions; declare it under functions or fix the name.`);
    }
    if (schema === undefined || schema === 'pg_catalog') {
      if (BUILTIN_FUNCTIONS.has(name)) return;
      const why = functionRefusal(name);
      if (why !== undefined) this.refuse(`${name}() is not allowed: ${why}.`);
      this.refuse(`${name}() is not allowed; use built-in math, text, date/time, json, array, range, full-text or aggregate functions, auth.uid(), auth.jwt() or the app's declared functions.`);
    }
    this.refuse(`${schema}.${name}() is outside the app (schema ${schema}); use auth.uid(), auth.jwt(), built-in functions or the app's declared functions.`);
  }

  /** auth.uid() / auth.jwt(); in a condition compiled as (select auth.uid()), evaluated once per statement. */
  private authCall(name: string, f: Fields, wrapper: Fields): void {
    if (!AUTH_FUNCTIONS.has(name)) this.refuse(`auth.${name}() does not exist; use auth.uid() (the caller's id) or auth.jwt() (their claims).`);
    const plain = Object.keys(f).every((k) => k === 'funcname' || k === 'funcformat' || k === 'location');
    if (!plain) this.refuse(`auth.${name}() takes no arguments; write auth.${name}().`);
    if (this.o.mode !== 'condition') return;
    const i = this.tokenAt(location(f));
    const [dot, open, close] = [this.code[i + 1], this.code[i + 3], this.code[i + 4]];
    if (dot?.text !== '.' || open?.text !== '(' || close?.text !== ')') this.refuse(`write auth.${name}() as exactly that.`);
    this.sites.push({ at: this.code[i]!.start, cut: 0, text: '(select ' }, { at: close.end, cut: 0, text: ')' });
    this.mutations.push(() => {
      const call = wrapper.FuncCall;
      delete wrapper.FuncCall;
      const target = { ResTarget: { val: { FuncCall: call } } };
      wrapper.SubLink = { subLinkType: 'EXPR_SUBLINK', subselect: { SelectStmt: { targetList: [target], limitOption: 'LIMIT_OPTION_DEFAULT', op: 'SETOP_NONE' } } };
    });
  }

  protected typeName(value: unknown): void {
    if (!isObject(value)) this.refuse('a type has a form these checks do not know; write a column type.');
    const t = value;
    this.within(() => {
      this.fields('TypeName', t, 'names typeOid setof pct_type typmods typemod arrayBounds location');
      if (t.setof) this.refuse('SETOF is not allowed here; name the type.');
      if (t.pct_type) this.refuse('%TYPE is not allowed; name the type.');
      const parts = names(t.names) ?? [];
      this.tally(parts.length);
      const [schema, name] = parts.length === 2 ? parts : [undefined, parts[0]];
      if (name === undefined || parts.length > 2) this.refuse('a type has a form these checks do not know; write a column type.');
      if (REG_TYPES.has(name)) this.refuse(`the type ${name} is not allowed: it looks up objects of any schema by name; compare ids or text instead.`);
      const builtin = (schema === undefined || schema === 'pg_catalog') && BUILTIN_TYPES.has(name);
      const own = (schema === undefined || schema === 'public') && (PUBLIC_TYPES.has(name) || this.o.tables.has(name));
      if (!builtin && !own) {
        this.refuse(`the type ${parts.join('.')} is not allowed; use a column type (text, integer, bigint, numeric, boolean, uuid, date, timestamptz, interval, jsonb, vector, arrays of them) or an app table's row type.`);
      }
      if (own && !builtin && this.o.tables.has(name)) this.reads.add(name);
      if (own && !builtin && schema === undefined) this.qualify(location(t), () => void list(t.names).unshift(stringNode('public')));
      // Typmods and array bounds are constants: nothing in them can name a column.
      this.children(t.typmods, new Scope());
      this.children(t.arrayBounds, new Scope());
    });
  }

  private collate(f: Fields, scope: Scope): void {
    this.fields('CollateClause', f, 'arg collname location');
    const parts = names(f.collname);
    if (!parts || parts.length < 1 || parts.length > 2 || (parts.length === 2 && parts[0] !== 'pg_catalog')) this.refuse('COLLATE names a built-in collation ("C", "POSIX", "und-x-icu"); write it unqualified.');
    this.node(f.arg, scope);
  }

  private subLink(f: Fields, scope: Scope): void {
    this.fields('SubLink', f, 'subLinkType testexpr operName subselect location');
    if (f.subLinkType === 'CTE_SUBLINK') this.refuse('this sub-select form is not allowed.');
    if (f.operName !== undefined) this.operator(f.operName);
    if (f.testexpr !== undefined) this.node(f.testexpr, scope);
    this.subquery(f.subselect, scope, f);
  }

  protected windowDef(value: unknown, scope: Scope): void {
    if (!isObject(value)) this.refuse('a window has a form these checks do not know.');
    const w = value;
    this.within(() => {
      this.fields('WindowDef', w, 'name refname partitionClause orderClause frameOptions startOffset endOffset location');
      for (const key of ['partitionClause', 'orderClause', 'startOffset', 'endOffset']) this.children(w[key], scope);
    });
  }

  private qualifyOperator(f: Fields, op: string): void {
    const token = this.code[this.tokenAt(location(f))]!;
    if (token.text !== op) this.refuse(`the operator ${op} could not be located in the text; write it as a ${op} b.`);
    this.sites.push({ at: token.start, cut: token.end - token.start, text: `OPERATOR(public.${op})` });
    this.mutations.push(() => {
      f.name = [stringNode('public'), stringNode(op)];
    });
  }
}
