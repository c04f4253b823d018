// The bounds on what declared SQL can cost the process that checks it: sizes before the parse, tokens before the
// parse (the parser's output step recurses once per nesting level on the process's stack: measured, 2,500 tokens of
// the worst shapes need under 350 KB of the 984 KB default), then parse nodes and depth while walking. Checks run at
// schema apply only, but a maximal hostile input must still be answered without stalling the event loop.
import { beforeAll, describe, expect, it } from 'vitest';
import { BODY_LIMITS, checkFunctionBody } from '../../src/schema/sql/function-body.ts';
import { CONDITION_LIMITS, checkCondition } from '../../src/schema/sql/condition.ts';
import { loadSqlParser } from '../../src/schema/sql/parser.ts';
import { withEventLoopDelay } from '../helpers/event-loop.ts';
import { refusal, TUTORING } from '../helpers/tutoring-tables.ts';

beforeAll(loadSqlParser);

const body = (text: string) => () => checkFunctionBody(text, { name: 'f', args: [], tables: TUTORING, functions: new Set() });
const condition = (text: string) => () => checkCondition(text, { table: 'reviews', tables: TUTORING });
const nest = (open: string, inner: string, close: string, n: number) => open.repeat(n) + inner + close.repeat(n);

/** Each input at (or just under) its size cap, in the shapes that nest deepest per byte. */
const HOSTILE: Array<[string, () => unknown, string]> = [
  ['4,000 parentheses', body(`select ${nest('(', '1', ')', 4000)}`), "Function 'f': the body has 8002 tokens, more than 2500; shorten or split it."],
  ['2,045 NOTs', body(`select ${'not '.repeat(2045)}true`), "Function 'f': the SQL nests deeper than 64 levels; flatten it."],
  ['1,240 additions', body(`select 1${'+1'.repeat(1240)}`), "Function 'f': the SQL nests deeper than 64 levels; flatten it."],
  ['830 nested sub-selects', body(`select ${nest('(select ', '1', ')', 830)}`), "Function 'f': the SQL nests deeper than 64 levels; flatten it."],
  ['800 nested arrays', body(`select ${nest('array[', '1', ']', 800)}`), "Function 'f': the SQL nests deeper than 64 levels; flatten it."],
  ['1,240 casts', body(`select 1${'::int'.repeat(1240)}`), "Function 'f': the SQL nests deeper than 64 levels; flatten it."],
  ['a flat 600-term AND', body(`select 1 from bookings where ${Array.from({ length: 600 }, () => 'id=1').join(' and ')}`), "Function 'f': the SQL has more than 2000 parse nodes; shorten or split it."],
  ['an 8,193-byte body', body(`select ${'1'.repeat(8186)}`), "Function 'f': the body is 8193 bytes, more than 8192; shorten it."],
  ['1,000 parentheses in a condition', condition(nest('(', 'true', ')', 995)), "Condition on table 'reviews': the condition has 1992 tokens, more than 1000; shorten or split it."],
  ['498 NOTs in a condition', condition(`${'not '.repeat(498)}true`), "Condition on table 'reviews': the SQL nests deeper than 64 levels; flatten it."],
];

describe('hostile sizes and nesting', () => {
  it('the caps are the design’s', () => {
    expect(BODY_LIMITS).toEqual({ bytes: 8192, tokens: 2500, statements: 10, nodes: 2000, depth: 64 });
    expect(CONDITION_LIMITS).toEqual({ bytes: 2000, tokens: 1000, subselects: 3, nesting: 2, nodes: 2000, depth: 64 });
  });

  it.each(HOSTILE)('%s: refused exactly, holding the event loop under 200 ms', async (_, check, message) => {
    const { result, maxDelayMs } = await withEventLoopDelay(() => refusal(check));
    expect([result.status, result.message]).toEqual([400, message]);
    expect(maxDelayMs).toBeLessThan(200);
  });

  it('ten ordinary statements under the caps are accepted', () => {
    const statement = "update bookings set status = 'done', note = coalesce(note, '') || ' (closed)' where id = $1 and tutor_id = auth.uid() returning id";
    const text = Array.from({ length: 10 }, () => statement).join(';\n');
    expect(checkFunctionBody(text, { name: 'f', args: [{ name: 'booking_id', type: 'bigint' }], tables: TUTORING, functions: new Set() }).writesTo).toEqual(['bookings']);
  });

  it('the largest body the caps accept (1,800 tokens, under 2,000 nodes) is checked, qualified and re-parsed under 200 ms', async () => {
    const text = `select b.id from bookings b where ${Array.from({ length: 300 }, (_, i) => `b.note <> 'n${i}'`).join(' and ')}`;
    const { result, maxDelayMs } = await withEventLoopDelay(body(text));
    expect((result as { sql: string }).sql.startsWith('select b.id from public.bookings b where ')).toBe(true);
    expect(maxDelayMs).toBeLessThan(200);
  });

  it('loading the parser again is a no-op once loaded', async () => {
    await loadSqlParser();
    expect(checkCondition('true', { table: 'reviews', tables: TUTORING }).sql).toBe('true');
  });
});
