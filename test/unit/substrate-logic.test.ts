// The JSON-Logic evaluator of principles and attention rules (src/substrate/logic.ts): json-logic-js's results for the
// allowed operators (the table's expected values were produced by json-logic-js 2.0.5, which the project no longer
// depends on), and the budget that keeps a costly expression from holding the event loop.
import { withEventLoopDelay } from '../helpers/event-loop.ts';
import { describe, expect, it } from 'vitest';
import { LOGIC_OPERATORS, logicProblem } from '../../src/substrate/capabilities/principles.ts';
import {
  applyLogic,
  LOGIC_MAX_DEPTH,
  LOGIC_MAX_MS,
  LOGIC_MAX_OPERATIONS,
  LogicBudget,
  LogicBudgetExceeded,
  LogicError,
  logicHolds,
  truthy,
} from '../../src/substrate/logic.ts';

const data = {
  a: 1,
  b: '2',
  s: 'hello world',
  n: null,
  e: '',
  z: 0,
  t: true,
  f: false,
  arr: [1, 2, 3],
  empty: [],
  nested: { x: { y: 'deep' } },
  items: [
    { qty: 1, ok: true },
    { qty: 5, ok: false },
  ],
  tags: ['red', 'blue'],
  payload: { amount: 120, to: 'bob@example.com' },
};

/** [expression, json-logic-js's result, data (default: data above)] */
const table: Array<[unknown, unknown, unknown?]> = [
  [{ '==': [1, '1'] }, true],
  [{ '==': [0, false] }, true],
  [{ '==': [null, 0] }, false],
  [{ '==': [null, null] }, true],
  [{ '===': [1, '1'] }, false],
  [{ '===': [1, 1] }, true],
  [{ '!=': [1, '1'] }, false],
  [{ '!==': [1, '1'] }, true],
  [{ '==': [[1], 1] }, true],
  [{ '==': [{ var: 'arr' }, '1,2,3'] }, true],
  [{ '>': [2, 1] }, true],
  [{ '>': ['10', 9] }, true],
  [{ '>': ['b', 'a'] }, true],
  [{ '>=': [1, 1] }, true],
  [{ '<': [1, 2, 3] }, true],
  [{ '<': [1, 3, 2] }, false],
  [{ '<': [1, 2] }, true],
  [{ '<=': [1, 1, 3] }, true],
  [{ '<=': [1, 4, 3] }, false],
  [{ '<': [null, 1] }, true],
  [{ '!': [[]] }, true],
  [{ '!': [0] }, true],
  [{ '!': 'x' }, false],
  [{ '!!': [[]] }, false],
  [{ '!!': ['0'] }, true],
  [{ '!!': [[0]] }, true],
  [{ or: [0, '', 'x', 'y'] }, 'x'],
  [{ or: [0, false] }, false],
  [{ or: [] }, undefined],
  [{ and: [1, 'a', 0, 'b'] }, 0],
  [{ and: [1, 2] }, 2],
  [{ and: [] }, undefined],
  [{ and: [[], 1] }, []],
  [{ or: [[], 0] }, 0],
  [{ if: [] }, null],
  [{ if: [true, 'yes', 'no'] }, 'yes'],
  [{ if: [false, 'yes', 'no'] }, 'no'],
  [{ if: [[], 'yes', 'no'] }, 'no'],
  [{ if: [false, 1, false, 2] }, null],
  [{ if: [false, 1, true, 2, 3] }, 2],
  [{ if: [false, 1, false, 2, 3] }, 3],
  [{ '?:': [{ var: 'z' }, 'a', 'b'] }, 'b'],
  [{ if: 'only' }, 'only'],
  [{ var: 'a' }, 1],
  [{ var: ['a'] }, 1],
  [{ var: 'nested.x.y' }, 'deep'],
  [{ var: 'nested.x.q' }, null],
  [{ var: ['nested.x.q', 'dflt'] }, 'dflt'],
  [{ var: ['n', 'dflt'] }, null],
  [{ var: 'n.q' }, null],
  [{ var: ['n.q', 7] }, 7],
  [{ var: '' }, { a: 1, b: '2', s: 'hello world', n: null, e: '', z: 0, t: true, f: false, arr: [1, 2, 3], empty: [], nested: { x: { y: 'deep' } }, items: [{ qty: 1, ok: true }, { qty: 5, ok: false }], tags: ['red', 'blue'], payload: { amount: 120, to: 'bob@example.com' } }],
  [{ var: 'arr.1' }, 2],
  [{ var: 1 }, 'y', ['x', 'y']],
  [{ var: 'arr.length' }, 3],
  [{ var: 's.length' }, 11],
  [{ var: 'missing_field' }, null],
  [{ var: ['z', 9] }, 0],
  [{ var: ['e', 9] }, ''],
  [{ var: ['f', 9] }, false],
  [{ var: 'items.1.qty' }, 5],
  [{ var: 'a.' }, null],
  [{ var: { var: 'b' } }, 'via', { b: 'a', a: 'via' }],
  [{ var: null }, 5, 5],
  [{ missing: ['a', 'b', 'nope', 'n', 'e', 'z'] }, ['nope', 'n', 'e']],
  [{ missing: [['a', 'nope']] }, ['nope']],
  [{ missing: 'nope' }, ['nope']],
  [{ missing: [] }, []],
  [{ missing: ['nested.x.y', 'nested.x.q'] }, ['nested.x.q']],
  [{ missing_some: [1, ['a', 'nope']] }, []],
  [{ missing_some: [2, ['a', 'nope', 'n']] }, ['nope', 'n']],
  [{ missing_some: [0, []] }, []],
  [{ missing_some: [2, ['a', 'b', 'nope']] }, []],
  [{ in: ['ell', 'hello'] }, true],
  [{ in: ['x', 'hello'] }, false],
  [{ in: [2, [1, 2, 3]] }, true],
  [{ in: ['2', [1, 2, 3]] }, false],
  [{ in: ['red', { var: 'tags' }] }, true],
  [{ in: ['a', null] }, false],
  [{ in: ['a', 5] }, false],
  [{ in: ['a', { var: 'nested' }] }, false],
  [{ in: [1, '1,2'] }, true],
  [{ '+': [1, '2', 3.5] }, 6.5],
  [{ '+': [] }, 0],
  [{ '+': '3' }, 3],
  [{ '+': ['a', 1] }, NaN],
  [{ '+': ['1e2', '0x10'] }, 100],
  [{ '*': [2, '3'] }, 6],
  [{ '*': ['3'] }, '3'],
  [{ '*': [2, 3, 4] }, 24],
  [{ '-': [5, 2] }, 3],
  [{ '-': [5] }, -5],
  [{ '-': ['5', '2'] }, 3],
  [{ '-': 'x' }, NaN],
  [{ '/': [1, 4] }, 0.25],
  [{ '/': [1, 0] }, Infinity],
  [{ '%': [7, 3] }, 1],
  [{ '%': [-7, 3] }, -1],
  [{ min: [3, 1, '2'] }, 1],
  [{ max: [3, 1, '7'] }, 7],
  [{ min: [] }, Infinity],
  [{ max: [] }, -Infinity],
  [{ max: [1, 'x'] }, NaN],
  [{ all: [{ var: 'arr' }, { '>': [{ var: '' }, 0] }] }, true],
  [{ all: [{ var: 'arr' }, { '>': [{ var: '' }, 1] }] }, false],
  [{ all: [[], true] }, false],
  [{ all: ['abc', true] }, false],
  [{ some: [{ var: 'items' }, { var: 'ok' }] }, true],
  [{ some: [{ var: 'items' }, { '>': [{ var: 'qty' }, 9] }] }, false],
  [{ some: [[], true] }, false],
  [{ some: [null, true] }, false],
  [{ none: [{ var: 'items' }, { '>': [{ var: 'qty' }, 9] }] }, true],
  [{ none: [{ var: 'items' }, { var: 'ok' }] }, false],
  [{ none: [[], true] }, true],
  [{ none: [5, true] }, true],
  [{ some: [[[1, 2], [3, 4]], { in: [4, { var: '' }] }] }, true],
  [{ all: [{ var: 'items' }] }, false],
  [[1, { var: 'a' }, [{ var: 'b' }]], [1, 1, ['2']]],
  [{ a: 1, b: 2 }, { a: 1, b: 2 }],
  [{}, {}],
  ['plain', 'plain'],
  [42, 42],
  [null, null],
  [true, true],
  [{ and: [{ '>=': [{ var: 'payload.amount' }, 100] }, { in: ['@example.com', { var: 'payload.to' }] }] }, true],
  [{ '==': [{ var: 'capability' }, 'send_email_draft'] }, true, { capability: 'send_email_draft' }],
];

const OPS_MESSAGE = `the expression needs more than ${LOGIC_MAX_OPERATIONS} operations to evaluate (limit ${LOGIC_MAX_OPERATIONS})`;
const MS_MESSAGE = `the expression takes more than ${LOGIC_MAX_MS} ms to evaluate (limit ${LOGIC_MAX_MS} ms)`;

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
/** `levels` nested some over 120-element array literals whose innermost test is never true: 120^levels visits. */
function nestedSome(levels: number): unknown {
  return levels === 0 ? { '==': [{ var: '' }, -1] } : { some: [range(120), nestedSome(levels - 1)] };
}
/** The same over arrays read with var: each level's elements hold the next level's array (shared, so the data stays small). */
function nestedSomeOverVar(levels: number): { logic: unknown; data: unknown } {
  let logic: unknown = { '==': [{ var: '' }, -1] };
  let items: unknown[] = range(120);
  for (let i = 0; ; i++) {
    logic = { some: [{ var: 'xs' }, logic] };
    const holder = { xs: items };
    if (i === levels - 1) return { logic, data: holder };
    items = Array.from({ length: 120 }, () => holder);
  }
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

/** The event loop's longest hold, in ms, while the works run one after the other, each in its own macrotask. */
async function maxLoopDelayMs(works: Array<() => void>): Promise<number> {
  let max = 0;
  for (const work of works) max = Math.max(max, (await withEventLoopDelay(work)).maxDelayMs);
  return max;
}

describe('semantics (json-logic-js parity)', () => {
  it.each(table.map(([logic, expected, input], i) => ({ i, logic, expected, input })))('case $i: $logic', ({ logic, expected, input }) => {
    expect(applyLogic(logic, input === undefined ? data : input)).toEqual(expected);
  });

  it('covers exactly the allowed operators', () => {
    const used = new Set<string>();
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object' && Object.keys(v).length === 1) {
        const [op, arg] = Object.entries(v)[0]!;
        if (LOGIC_OPERATORS.has(op)) used.add(op);
        walk(arg);
      }
    };
    table.forEach(([logic]) => walk(logic));
    expect([...used].sort()).toEqual([...LOGIC_OPERATORS].sort());
  });

  it('truthiness: an empty array is false, anything else as JavaScript', () => {
    expect([[], [0], 0, '', '0', null, undefined, {}, 'a'].map(truthy)).toEqual([false, true, false, false, true, false, false, true, true]);
    expect(logicHolds({ var: 'empty' }, data)).toBe(false);
    expect(logicHolds({ var: 'arr' }, data)).toBe(true);
  });

  it('throws where json-logic-js throws', () => {
    expect(() => applyLogic({ merge: [[1], [2]] }, {})).toThrow(new LogicError('Unrecognized operation merge'));
    expect(() => applyLogic({ nope: [] }, {})).toThrow(new LogicError('Unrecognized operation nope'));
    expect(() => applyLogic({ '*': [] }, {})).toThrow(TypeError);
    expect(() => applyLogic({ missing_some: [1, null] }, {})).toThrow(new LogicError('missing_some: the options are not a list'));
    expect(() => applyLogic({ in: ['a', { var: 'o' }] }, { o: { indexOf: 'x' } })).toThrow(LogicError);
    expect(() => applyLogic({ '==': [{ var: 'o' }, 1] }, { o: { toString: 'x', valueOf: 'y' } })).toThrow(TypeError);
  });

  it('reads data, never runs it: inherited members are not fields, keys from data are not expressions', () => {
    expect(applyLogic({ var: 'constructor' }, {})).toBeNull();
    expect(applyLogic({ var: ['constructor.name', 'none'] }, {})).toBe('none');
    expect(applyLogic({ var: 's.toUpperCase' }, { s: 'x' })).toBeNull();
    expect(applyLogic({ var: 'a.__proto__' }, { a: {} })).toBeNull();
    // json-logic-js evaluated the key { var: 'x' } to 'y', found y and answered [].
    expect(applyLogic({ missing: { var: 'keys' } }, { keys: [{ var: 'x' }], x: 'y', y: 5 })).toEqual([{ var: 'x' }]);
  });

  it(`nests up to ${LOGIC_MAX_DEPTH} levels; deeper is refused, never a stack overflow`, () => {
    let accepted: unknown = true;
    for (let i = 0; i < 499; i++) accepted = { '!!': accepted };
    expect(logicProblem(accepted)).toBeUndefined();
    expect(applyLogic(accepted, {})).toBe(true);
    let deep: unknown = true;
    for (let i = 0; i < 100_000; i++) deep = { '!': [deep] };
    expect(() => applyLogic(deep, {})).toThrow(new LogicError(`the expression is nested deeper than ${LOGIC_MAX_DEPTH} levels`));
    let arrays: unknown = 1;
    for (let i = 0; i < 100_000; i++) arrays = [arrays];
    expect(() => applyLogic(arrays, {})).toThrow(LogicError);
  });
});

describe('budget', () => {
  it('counts operators, element visits, var segments and coerced sizes', () => {
    const count = (logic: unknown, input: unknown = data) => {
      const b = new LogicBudget();
      applyLogic(logic, input, b);
      return b.operations;
    };
    // ==, var, one segment.
    expect(count({ '==': [{ var: 'a' }, 1] })).toBe(3);
    expect(count({ var: 'nested.x.y' })).toBe(4);
    // some and its array literal's 3 elements, then per visit until true (2): the visit, in, var, the literal [2]'s
    // element and its weight when in coerces it.
    expect(count({ some: [[1, 2, 3], { in: [{ var: '' }, [2]] }] })).toBe(1 + 3 + 2 * (1 + 1 + 1 + 1 + 1));
    // The 1 MiB string scanned by in: one operation per 1024 characters.
    expect(count({ in: ['x', { var: 's' }] }, { s: 'y'.repeat(1 << 20) })).toBe(3 + 1024);
    // An array compared with == is joined: one operation per element.
    expect(count({ '==': [{ var: 'xs' }, 1] }, { xs: range(5000) })).toBe(3 + 5000);
  });

  it('four nested some over 120-element array literals (an accepted expression) stop at the budget', () => {
    const logic = nestedSome(4);
    expect(logicProblem(logic)).toBeUndefined();
    const err = thrown(() => applyLogic(logic, {}));
    expect(err).toBeInstanceOf(LogicBudgetExceeded);
    expect([OPS_MESSAGE, MS_MESSAGE]).toContain((err as Error).message);
    // With few operations allowed, the count decides, whatever the machine's speed.
    expect(() => applyLogic(logic, {}, new LogicBudget({ operations: 1000 }))).toThrow(
      new LogicBudgetExceeded('operations', 1000),
    );
    expect(new LogicBudgetExceeded('operations', 1000).message).toBe('the expression needs more than 1000 operations to evaluate (limit 1000)');
  });

  it('the same over arrays read with var', () => {
    const { logic, data: input } = nestedSomeOverVar(4);
    expect(logicProblem(logic)).toBeUndefined();
    expect(() => applyLogic(logic, input, new LogicBudget({ operations: 1000 }))).toThrow(new LogicBudgetExceeded('operations', 1000));
    const err = thrown(() => applyLogic(logic, input));
    expect(err).toBeInstanceOf(LogicBudgetExceeded);
    expect([OPS_MESSAGE, MS_MESSAGE]).toContain((err as Error).message);
    // Two levels are 14,400 visits: within the budget of operations, and false (the clock is not what is tested
    // here: a loaded machine may take more than 50 ms for them).
    const two = nestedSomeOverVar(2);
    expect(applyLogic(two.logic, two.data, new LogicBudget({ ms: 60_000 }))).toBe(false);
  });

  it('a long path or a huge array from the data is charged, not walked without bound', () => {
    // A path of a million segments: read segment by segment, it stops where the data does (the string's size, 1953,
    // and the first segment)...
    const b = new LogicBudget();
    expect(applyLogic({ var: { var: 'p' } }, { p: 'a.'.repeat(1_000_000) }, b)).toBeNull();
    expect(b.operations).toBe(3 + 1953 + 1);
    // ...and where the data goes on (a cycle here), the segments run out of budget.
    const cyclic: Record<string, unknown> = { p: 'a.'.repeat(1_000_000) };
    cyclic.a = cyclic;
    expect(() => applyLogic({ var: { var: 'p' } }, cyclic, new LogicBudget({ ms: 10_000 }))).toThrow(LogicBudgetExceeded);
    expect(() => applyLogic({ '==': [{ var: 'xs' }, 1] }, { xs: range(200_000) })).toThrow(LogicBudgetExceeded);
    expect(() => applyLogic({ missing: { var: 'keys' } }, { keys: range(200_000).map(String) })).toThrow(LogicBudgetExceeded);
  });

  it('one budget spans several evaluations (the rows of a row_query), and stays spent', () => {
    const b = new LogicBudget({ operations: 1000 });
    const logic = { '==': [{ var: 'a' }, 1] };
    for (let i = 0; i < 333; i++) expect(logicHolds(logic, { a: 1 }, b)).toBe(true);
    expect(b.operations).toBe(999);
    expect(() => logicHolds(logic, { a: 1 }, b)).toThrow(new LogicBudgetExceeded('operations', 1000));
    expect(() => logicHolds(true, {}, b)).toThrow(new LogicBudgetExceeded('operations', 1000));
  });

  it('time: a budget without time left evaluates nothing; a slow evaluation stops at its deadline', () => {
    expect(() => applyLogic(true, {}, new LogicBudget({ ms: 0 }))).toThrow(new LogicBudgetExceeded('ms', 0));
    expect(new LogicBudgetExceeded('ms', 50).message).toBe('the expression takes more than 50 ms to evaluate (limit 50 ms)');
    const b = new LogicBudget({ operations: 1e9, ms: 20 });
    const started = performance.now();
    expect(() => applyLogic(nestedSome(4), {}, b)).toThrow(new LogicBudgetExceeded('ms', 20));
    // Checked every 1024 operations: a few ms past the deadline at most.
    expect(performance.now() - started).toBeLessThan(100);
    expect(b.operations).toBeGreaterThan(1024);
  });

  it('no single evaluation runs longer than LOGIC_MAX_MS, whatever its budget', () => {
    const b = new LogicBudget({ operations: 1e9, ms: 10_000 });
    expect(() => applyLogic(nestedSome(4), {}, b)).toThrow(new LogicBudgetExceeded('ms', LOGIC_MAX_MS));
  });

  it('the event loop keeps running while hostile expressions are evaluated (stalls under 200 ms)', async () => {
    const literal = nestedSome(4);
    const fromVar = nestedSomeOverVar(4);
    const failures: unknown[] = [];
    const works = range(10).map((i) => () => {
      failures.push(i % 2 ? thrown(() => applyLogic(literal, {})) : thrown(() => applyLogic(fromVar.logic, fromVar.data)));
    });
    const max = await maxLoopDelayMs(works);
    expect(failures).toHaveLength(10);
    for (const f of failures) expect(f).toBeInstanceOf(LogicBudgetExceeded);
    expect(max).toBeLessThan(200);
  });
});
