// postgres_changes filters as realtime-js writes them (RealtimePostgresFilterBuilder): `col=op.value`, several joined by
// commas and all required; `in.(a,b)` lists; values with `,()"\` or edge spaces PostgREST-quoted; `not.` negates.
// Evaluated in JavaScript on the captured row, without regular expressions over user input: like/ilike patterns are
// matched by a wildcard scan whose cost is bounded by the lengths of pattern and value.

export type FilterOp = 'eq' | 'neq' | 'lt' | 'lte' | 'gt' | 'gte' | 'in' | 'is' | 'isdistinct' | 'like' | 'ilike';
const OPS = new Set<string>(['eq', 'neq', 'lt', 'lte', 'gt', 'gte', 'in', 'is', 'isdistinct', 'like', 'ilike']);

export interface Condition {
  column: string;
  op: FilterOp;
  negate: boolean;
  /** The value, or the list of `in`; `null` is the word null (for is, and lists). */
  values: (string | null)[];
}

export class FilterError extends Error {}

/** A filter's conditions; FilterError names what is wrong. Columns are checked by the caller. */
export function parseFilter(filter: string): Condition[] {
  if (filter.length > 4096) throw new FilterError('the filter is longer than 4096 characters');
  return splitTop(filter, ',').map(parseCondition);
}

function parseCondition(text: string): Condition {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new FilterError(`'${text.slice(0, 100)}' is not column=operator.value`);
  const column = text.slice(0, eq);
  let rest = text.slice(eq + 1);
  const negate = rest.startsWith('not.');
  if (negate) rest = rest.slice(4);
  const dot = rest.indexOf('.');
  const op = dot < 0 ? rest : rest.slice(0, dot);
  if (!OPS.has(op)) {
    const why = op === 'match' || op === 'imatch' ? 'regular expressions are not evaluated' : 'not an operator';
    throw new FilterError(`'${op.slice(0, 20)}' in filter on '${column.slice(0, 63)}': ${why} (eq, neq, lt, lte, gt, gte, in, is, isdistinct, like, ilike)`);
  }
  if (dot < 0) throw new FilterError(`'${op}' on '${column.slice(0, 63)}' has no value`);
  const raw = rest.slice(dot + 1);
  if (op === 'in') {
    if (!raw.startsWith('(') || !raw.endsWith(')')) throw new FilterError(`in on '${column.slice(0, 63)}' takes a list: in.(a,b)`);
    const items = splitTop(raw.slice(1, -1), ',').map(unquote);
    if (items.length > 100) throw new FilterError(`in on '${column.slice(0, 63)}' lists more than 100 values`);
    return { column, op, negate, values: items };
  }
  return { column, op: op as FilterOp, negate, values: [op === 'is' || op === 'isdistinct' ? wordOrValue(raw) : unquote(raw)] };
}

/** Splits on `sep` outside double quotes and parentheses. */
function splitTop(text: string, sep: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '\\') i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === sep && depth === 0) {
      out.push(text.slice(start, i));
      start = i + 1;
    }
  }
  if (quoted || depth !== 0) throw new FilterError('unbalanced quotes or parentheses in the filter');
  out.push(text.slice(start));
  return out;
}

function unquote(value: string): string | null {
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
    let out = '';
    for (let i = 1; i < value.length - 1; i++) out += value[i] === '\\' ? value[++i] : value[i];
    return out;
  }
  return value === 'null' ? null : value;
}

function wordOrValue(raw: string): string | null {
  return raw === 'null' ? null : raw;
}

/** How a column's values compare: by number, boolean, time, or text. */
export type ValueKind = 'number' | 'boolean' | 'time' | 'text';

const NUMBER_TYPES = new Set(['int2', 'int4', 'int8', 'float4', 'float8', 'numeric', 'oid']);
const TIME_TYPES = new Set(['timestamp', 'timestamptz', 'date']);

export function valueKind(udt: string, isArray: boolean): ValueKind {
  if (isArray) return 'text';
  if (NUMBER_TYPES.has(udt)) return 'number';
  if (udt === 'bool') return 'boolean';
  if (TIME_TYPES.has(udt)) return 'time';
  return 'text';
}

/** Whether the row meets every condition; `kinds` gives each filtered column's kind. */
export function matches(conditions: readonly Condition[], row: Record<string, unknown>, kinds: ReadonlyMap<string, ValueKind>): boolean {
  return conditions.every((c) => holds(c, row[c.column], kinds.get(c.column) ?? 'text') !== c.negate);
}

function holds(c: Condition, value: unknown, kind: ValueKind): boolean {
  const first = c.values[0] ?? null;
  switch (c.op) {
    case 'is':
      return first === null ? value === null || value === undefined : String(value) === first;
    case 'isdistinct':
      return first === null ? value !== null && value !== undefined : value === null || value === undefined || !equal(value, first, kind);
    case 'in':
      return value !== null && value !== undefined && c.values.some((v) => v !== null && equal(value, v, kind));
    case 'like':
    case 'ilike': {
      if (value === null || value === undefined || first === null) return false;
      const text = typeof value === 'string' ? value : JSON.stringify(value);
      return c.op === 'ilike' ? likeMatch(first.toLowerCase(), text.toLowerCase()) : likeMatch(first, text);
    }
    default: {
      if (value === null || value === undefined || first === null) return false;
      const order = compare(value, first, kind);
      if (order === undefined) return false;
      return c.op === 'eq' ? order === 0 : c.op === 'neq' ? order !== 0 : c.op === 'lt' ? order < 0 : c.op === 'lte' ? order <= 0 : c.op === 'gt' ? order > 0 : order >= 0;
    }
  }
}

function equal(value: unknown, literal: string, kind: ValueKind): boolean {
  return compare(value, literal, kind) === 0;
}

/** The row's value against the filter's literal, compared as the column's kind; undefined when they cannot be. */
function compare(value: unknown, literal: string, kind: ValueKind): number | undefined {
  if (kind === 'number') return order(Number(value), Number(literal));
  if (kind === 'boolean') return String(value) === literal ? 0 : 1;
  if (kind === 'time') {
    const a = Date.parse(String(value));
    const b = Date.parse(literal);
    if (!Number.isNaN(a) && !Number.isNaN(b)) return order(a, b);
  }
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text < literal ? -1 : text > literal ? 1 : 0;
}

function order(a: number, b: number): number | undefined {
  if (Number.isNaN(a) || Number.isNaN(b)) return undefined;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * SQL LIKE (`%` any run, `_` one character, `\` escapes) by the greedy wildcard scan: on a mismatch after a `%`, resume
 * one character further from the last `%`; at most pattern × text steps, never exponential.
 */
export function likeMatch(pattern: string, text: string): boolean {
  const tokens: { any: boolean; ch?: string }[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) tokens.push({ any: false, ch: pattern[++i] });
    else if (c === '%') tokens.push({ any: true });
    else tokens.push({ any: false, ch: c === '_' ? undefined : c });
  }
  let p = 0;
  let t = 0;
  let star = -1;
  let mark = 0;
  while (t < text.length) {
    const tok = tokens[p];
    if (tok && !tok.any && (tok.ch === undefined || tok.ch === text[t])) {
      p++;
      t++;
    } else if (tok?.any) {
      star = p++;
      mark = t;
    } else if (star >= 0) {
      p = star + 1;
      t = ++mark;
    } else return false;
  }
  while (tokens[p]?.any) p++;
  return p === tokens.length;
}
