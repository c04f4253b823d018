// The JSON-Logic evaluator of principles and attention rules: exactly the operators of LOGIC_OPERATORS, with
// json-logic-js's semantics (2.0.5), and a budget. The node limit of logicProblem bounds an expression's size, not its
// work: nested some/all/none multiply (four levels over 120-element arrays are 2*10^8 visits), and values read with
// `var` can be as large as the row or payload. So every evaluation counts operations and, every LOGIC_CHECK_EVERY of
// them, its time, and throws LogicBudgetExceeded past either limit, keeping the event loop free.
//
// Differences from json-logic-js, all on inputs no sensible rule has:
// - `var` reads own properties only (array and string `length` and indexes included): inherited members such as
//   `constructor` or `__proto__` are not data and give the default.
// - `missing` and `missing_some` take their keys as values; json-logic-js re-evaluated keys that look like logic,
//   which let data read from the row run as an expression.
// - `in` over an object with an `indexOf` key throws LogicError (json-logic-js: TypeError, not a function).
// - An expression nested deeper than LOGIC_MAX_DEPTH levels is refused (LogicError) instead of overflowing the stack.
import { performance } from 'node:perf_hooks';
import { LOGIC_MAX_NODES, LOGIC_OPERATORS } from './capabilities/principles.ts';

/**
 * Operations one evaluation may count: an operator applied, an element an array operator visits or an array literal
 * holds, a segment of a `var` path, and the size of the arrays and long strings an operator coerces. Measured on a
 * busy 2-core machine: 100,000 take 5-15 ms once the JIT has warmed up, while a principle or a snapshot condition of
 * a few dozen operators counts well under a thousand.
 */
export const LOGIC_MAX_OPERATIONS = 100_000;
/**
 * Time one evaluation may spend (performance.now(), checked every LOGIC_CHECK_EVERY operations): the backstop for work
 * the operation count prices too low, and for a cold start (before the JIT, operations cost microseconds). Also the
 * longest any single call of applyLogic runs, whatever its budget, so that no evaluation holds the event loop longer.
 */
export const LOGIC_MAX_MS = 50;
/**
 * A row_query condition's budget, for all the rows one evaluation reads together (at most ROW_SCAN_MAX = 5,000):
 * 100 operations per row on average, room for a `where` of some thirty comparisons on every row. Its time (only the
 * time spent evaluating, not reading rows) is larger than LOGIC_MAX_MS because its caller yields to the event loop
 * between rows; each row's evaluation is still cut at LOGIC_MAX_MS.
 */
export const LOGIC_ROW_QUERY_MAX_OPERATIONS = 500_000;
export const LOGIC_ROW_QUERY_MAX_MS = 250;
/** Operations between two looks at the clock: performance.now() costs more than an operation. */
export const LOGIC_CHECK_EVERY = 1024;
/** Nesting an expression may have; an accepted expression (at most LOGIC_MAX_NODES nodes) never reaches it. */
export const LOGIC_MAX_DEPTH = LOGIC_MAX_NODES;
/** Characters of a string that cost one operation when an operator coerces or scans it (native, so cheap per character). */
const CHARS_PER_OPERATION = 1024;

/** An expression that cannot be evaluated: an unknown operator, too deep a nesting, an operand it cannot use. */
export class LogicError extends Error {
  override readonly name = 'LogicError';
}

/** An evaluation that would need more operations or time than its budget allows. */
export class LogicBudgetExceeded extends Error {
  override readonly name = 'LogicBudgetExceeded';
  readonly limit: number;
  readonly unit: 'operations' | 'ms';

  constructor(unit: 'operations' | 'ms', limit: number) {
    super(
      unit === 'operations'
        ? `the expression needs more than ${limit} operations to evaluate (limit ${limit})`
        : `the expression takes more than ${limit} ms to evaluate (limit ${limit} ms)`,
    );
    this.unit = unit;
    this.limit = limit;
  }
}

/**
 * What evaluations may spend: operations and evaluation time. One budget may serve several evaluations (the rows of
 * a row_query): both add up (the time between evaluations is not counted), and once spent every later evaluation with
 * it throws. Each evaluation is besides cut at LOGIC_MAX_MS.
 */
export class LogicBudget {
  readonly maxOperations: number;
  readonly maxMs: number;
  #operations = 0;
  #nextCheck = LOGIC_CHECK_EVERY;
  #spentMs = 0;
  #since = 0;
  #running = 0;

  constructor(limits: { operations?: number; ms?: number } = {}) {
    this.maxOperations = limits.operations ?? LOGIC_MAX_OPERATIONS;
    this.maxMs = limits.ms ?? LOGIC_MAX_MS;
  }

  get operations(): number {
    return this.#operations;
  }

  /** Evaluation time spent so far, the running evaluation included. */
  get ms(): number {
    return this.#spentMs + (this.#running ? performance.now() - this.#since : 0);
  }

  /** Counts n operations; throws past the operations, or past the time when it is the clock's turn. */
  charge(n: number): void {
    this.#operations += n;
    if (this.#operations > this.maxOperations) throw new LogicBudgetExceeded('operations', this.maxOperations);
    if (this.#operations >= this.#nextCheck) {
      this.#nextCheck = this.#operations + LOGIC_CHECK_EVERY;
      this.#checkTime();
    }
  }

  /** Starts the clock of an evaluation; a budget already spent refuses to start one. */
  start(): void {
    if (this.#operations > this.maxOperations) throw new LogicBudgetExceeded('operations', this.maxOperations);
    if (this.#spentMs >= this.maxMs) throw new LogicBudgetExceeded('ms', this.maxMs);
    if (this.#running++ === 0) this.#since = performance.now();
  }

  stop(): void {
    if (--this.#running === 0) this.#spentMs += performance.now() - this.#since;
  }

  #checkTime(): void {
    const call = performance.now() - this.#since;
    if (this.#spentMs + call > this.maxMs) throw new LogicBudgetExceeded('ms', this.maxMs);
    if (call > LOGIC_MAX_MS) throw new LogicBudgetExceeded('ms', LOGIC_MAX_MS);
  }
}

/** JSON-Logic truthiness: JavaScript's, except that an empty array is false. */
export function truthy(value: unknown): boolean {
  if (Array.isArray(value) && value.length === 0) return false;
  return Boolean(value);
}

/**
 * The value of a JSON-Logic expression over the data, as json-logic-js's apply would give it, within the budget
 * (a fresh one of LOGIC_MAX_OPERATIONS and LOGIC_MAX_MS when none is passed). Throws LogicBudgetExceeded past the
 * budget, LogicError for an expression it cannot evaluate (and TypeError where JavaScript itself throws, as
 * json-logic-js does).
 */
export function applyLogic(logic: unknown, data: unknown, budget: LogicBudget = new LogicBudget()): unknown {
  budget.start();
  try {
    return evaluate(logic, data, budget, 0);
  } finally {
    budget.stop();
  }
}

/** Whether the expression is true (JSON-Logic truthiness) for the data, within the budget. */
export function logicHolds(logic: unknown, data: unknown, budget?: LogicBudget): boolean {
  return truthy(applyLogic(logic, data, budget));
}

/**
 * One step: an array is evaluated element by element, an object with exactly one key is an operation, anything else
 * is a value.
 */
function evaluate(logic: unknown, data: unknown, b: LogicBudget, depth: number): unknown {
  if (logic === null || typeof logic !== 'object') return logic;
  if (depth > LOGIC_MAX_DEPTH) throw new LogicError(`the expression is nested deeper than ${LOGIC_MAX_DEPTH} levels`);
  if (Array.isArray(logic)) {
    b.charge(logic.length);
    return evaluateAll(logic, data, b, depth + 1);
  }
  const keys = Object.keys(logic);
  if (keys.length !== 1) return logic;
  const name = keys[0]!;
  if (!LOGIC_OPERATORS.has(name)) throw new LogicError(`Unrecognized operation ${name.slice(0, 50)}`);
  b.charge(1);
  const raw = (logic as Record<string, unknown>)[name];
  // The unary shorthand: { "var": "x" } is { "var": ["x"] }.
  const args = Array.isArray(raw) ? raw : [raw];
  const lazy = LAZY[name];
  if (lazy) return lazy(args, data, b, depth + 1);
  const values = evaluateAll(args, data, b, depth + 1);
  if (name !== '!' && name !== '!!') {
    for (const v of values) if (typeof v === 'string' ? v.length >= CHARS_PER_OPERATION : Array.isArray(v)) weigh(v, b);
  }
  return EAGER[name]!(values, data, b);
}

function evaluateAll(items: readonly unknown[], data: unknown, b: LogicBudget, depth: number): unknown[] {
  const out = new Array<unknown>(items.length);
  for (let i = 0; i < items.length; i++) out[i] = evaluate(items[i], data, b, depth);
  return out;
}

/**
 * Charges what coercing or scanning a value costs natively: an array's elements (nested arrays too, as String()
 * joins them) and one operation per CHARS_PER_OPERATION characters of its strings. Walked without recursion, and
 * charged as it walks, so the walk itself stays within the budget.
 */
function weigh(value: unknown, b: LogicBudget): void {
  if (typeof value === 'string') {
    if (value.length >= CHARS_PER_OPERATION) b.charge(Math.floor(value.length / CHARS_PER_OPERATION));
    return;
  }
  if (!Array.isArray(value)) return;
  const pending: unknown[][] = [value];
  while (pending.length) {
    const array = pending.pop()!;
    b.charge(array.length);
    for (const item of array) {
      if (Array.isArray(item)) pending.push(item);
      else if (typeof item === 'string' && item.length >= CHARS_PER_OPERATION) b.charge(Math.floor(item.length / CHARS_PER_OPERATION));
    }
  }
}

type Lazy = (args: unknown[], data: unknown, b: LogicBudget, depth: number) => unknown;
type Eager = (values: unknown[], data: unknown, b: LogicBudget) => unknown;

/** Operators that evaluate their arguments themselves: conditionals short-circuit, array operators rescope the data. */
const LAZY: Record<string, Lazy> = {
  if: conditional,
  '?:': conditional,
  and: (args, data, b, depth) => {
    let current: unknown;
    for (const arg of args) {
      current = evaluate(arg, data, b, depth);
      if (!truthy(current)) return current;
    }
    return current;
  },
  or: (args, data, b, depth) => {
    let current: unknown;
    for (const arg of args) {
      current = evaluate(arg, data, b, depth);
      if (truthy(current)) return current;
    }
    return current;
  },
  // Of an empty array (or a non-array), all is false, some false and none true.
  all: (args, data, b, depth) => scan(args, data, b, depth, false) === true,
  some: (args, data, b, depth) => scan(args, data, b, depth, true) === true,
  none: (args, data, b, depth) => scan(args, data, b, depth, true) !== true,
};

/** if / ?: — pairs of condition and value, then an optional else; null when nothing applies. */
function conditional(args: unknown[], data: unknown, b: LogicBudget, depth: number): unknown {
  let i = 0;
  for (; i < args.length - 1; i += 2) {
    if (truthy(evaluate(args[i], data, b, depth))) return evaluate(args[i + 1], data, b, depth);
  }
  return args.length === i + 1 ? evaluate(args[i], data, b, depth) : null;
}

/**
 * The first argument evaluated to an array, and the second evaluated with each element in turn as the data, until
 * one's truthiness is `stopOn`: then `stopOn`, else `!stopOn`; undefined for an empty array or a non-array.
 */
function scan(args: unknown[], data: unknown, b: LogicBudget, depth: number, stopOn: boolean): boolean | undefined {
  const items = evaluate(args[0], data, b, depth);
  if (!Array.isArray(items) || items.length === 0) return undefined;
  for (const item of items) {
    b.charge(1);
    if (truthy(evaluate(args[1], item, b, depth)) === stopOn) return stopOn;
  }
  return !stopOn;
}

// JavaScript's own coercions are the semantics here (json-logic-js applies the operators to whatever it gets): the
// casts only let TypeScript accept them.
type Loose = number;
const loose = (v: unknown) => v as Loose;

const EAGER: Record<string, Eager> = {
  '==': ([a, b]) => a == b,
  '===': ([a, b]) => a === b,
  '!=': ([a, b]) => a != b,
  '!==': ([a, b]) => a !== b,
  '>': ([a, b]) => loose(a) > loose(b),
  '>=': ([a, b]) => loose(a) >= loose(b),
  // Three arguments: between, exclusive or inclusive.
  '<': ([a, b, c]) => (c === undefined ? loose(a) < loose(b) : loose(a) < loose(b) && loose(b) < loose(c)),
  '<=': ([a, b, c]) => (c === undefined ? loose(a) <= loose(b) : loose(a) <= loose(b) && loose(b) <= loose(c)),
  '!': ([a]) => !truthy(a),
  '!!': ([a]) => truthy(a),
  '%': ([a, b]) => loose(a) % loose(b),
  '+': (values) => values.reduce<number>((sum, v) => sum + parseFloat(v as string), 0),
  // json-logic-js reduces without a start: one argument comes back as it is, none throws.
  '*': (values) => {
    if (values.length === 0) throw new TypeError('Reduce of empty array with no initial value');
    return values.reduce((product, v) => parseFloat(product as string) * parseFloat(v as string));
  },
  '-': ([a, b]) => (b === undefined ? -loose(a) : loose(a) - loose(b)),
  '/': ([a, b]) => loose(a) / loose(b),
  min: (values) => Math.min(...(values as number[])),
  max: (values) => Math.max(...(values as number[])),
  in: ([a, b]) => contains(b, a),
  var: ([path, fallback], data, b) => variable(path, fallback, data, b),
  missing: (values, data, b) => missing(values, data, b),
  missing_some: ([need, options], data, b) => missingSome(need, options, data, b),
};

/** `in`: a substring of a string or an element (===) of an array; false for anything else. */
function contains(haystack: unknown, needle: unknown): boolean {
  if (!haystack) return false;
  if (typeof haystack === 'string') return haystack.indexOf(needle as string) !== -1;
  if (Array.isArray(haystack)) return haystack.indexOf(needle) !== -1;
  // json-logic-js calls the value's own indexOf: an object with an indexOf key is not callable.
  if (typeof haystack === 'object' && Object.hasOwn(haystack, 'indexOf')) throw new LogicError('in: the second argument is neither a string nor an array');
  return false;
}

/**
 * `var`: the data itself for an empty path, else the value at the dotted path, or the fallback (null when none) where
 * the path does not lead. One operation per segment, read without splitting the whole path first: a path can come
 * from data and be long.
 */
function variable(path: unknown, fallback: unknown, data: unknown, b: LogicBudget): unknown {
  const notFound = fallback === undefined ? null : fallback;
  if (path === undefined || path === null || path === '') return data;
  const text = String(path);
  let at = data;
  let start = 0;
  for (;;) {
    b.charge(1);
    const dot = text.indexOf('.', start);
    const segment = dot === -1 ? text.slice(start) : text.slice(start, dot);
    if (at === null || at === undefined || !Object.hasOwn(Object(at), segment)) return notFound;
    at = (at as Record<string, unknown>)[segment];
    if (at === undefined) return notFound;
    if (dot === -1) return at;
    start = dot + 1;
  }
}

/** `missing`: the keys (the arguments, or one array of them) whose value is null, absent or "". */
function missing(values: unknown[], data: unknown, b: LogicBudget): unknown[] {
  const keys = Array.isArray(values[0]) ? values[0] : values;
  const out: unknown[] = [];
  for (const key of keys) {
    // As json-logic-js's { "var": key }: a key that is an array is a path with its fallback.
    const [path, fallback] = Array.isArray(key) ? key : [key];
    const value = variable(path, fallback, data, b);
    if (value === null || value === '') out.push(key);
  }
  return out;
}

/** `missing_some`: [] when at least `need` of the options are present, else the missing ones. */
function missingSome(need: unknown, options: unknown, data: unknown, b: LogicBudget): unknown[] {
  const absent = missing(Array.isArray(options) ? options : [options], data, b);
  if (options === null || options === undefined) throw new LogicError('missing_some: the options are not a list');
  // json-logic-js compares with options.length, whatever options is (NaN for a number, so "missing").
  const count = (options as { length?: unknown }).length;
  return loose(count) - absent.length >= loose(need) ? [] : absent;
}
