// postgres_changes filters as realtime-js's builder writes them, parsed and evaluated on captured rows; hostile patterns
// and values cost time linear in their length at worst (no regular expression over user input).
import { postgresChangesFilter } from '@supabase/realtime-js';
import { describe, expect, it } from 'vitest';
import { FilterError, likeMatch, matches, parseFilter, type ValueKind } from '../../src/realtime/filters.ts';

const kinds = new Map<string, ValueKind>([
  ['id', 'number'],
  ['done', 'boolean'],
  ['at', 'time'],
  ['name', 'text'],
]);
const row = { id: 7, done: false, at: '2026-12-06T11:00:00.5+00:00', name: 'Ada, "the" (first)' };
const meets = (filter: string, r: Record<string, unknown> = row) => matches(parseFilter(filter), r, kinds);

describe('parsing', () => {
  it("reads the builder's output: several conditions, lists, quoting and negation", () => {
    const built = postgresChangesFilter().eq('name', 'Ada, "the" (first)').in('id', [1, 7]).not('done', 'eq', true).build();
    expect(parseFilter(built)).toEqual([
      { column: 'name', op: 'eq', negate: false, values: ['Ada, "the" (first)'] },
      { column: 'id', op: 'in', negate: false, values: ['1', '7'] },
      { column: 'done', op: 'eq', negate: true, values: ['true'] },
    ]);
    expect(meets(built)).toBe(true);
  });

  it('refuses what it does not evaluate, naming it', () => {
    expect(() => parseFilter('name=match.^a')).toThrow(new FilterError("'match' in filter on 'name': regular expressions are not evaluated (eq, neq, lt, lte, gt, gte, in, is, isdistinct, like, ilike)"));
    expect(() => parseFilter('name')).toThrow(FilterError);
    expect(() => parseFilter('id=eq')).toThrow("'eq' on 'id' has no value");
    expect(() => parseFilter('id=in.1,2')).toThrow('in on \'id\' takes a list: in.(a,b)');
    expect(() => parseFilter('name=eq."open')).toThrow('unbalanced quotes or parentheses in the filter');
  });
});

describe('evaluation', () => {
  it.each([
    ['id=eq.7', true],
    ['id=neq.7', false],
    ['id=gt.6', true],
    ['id=gte.8', false],
    ['id=lt.10', true],
    ['id=lte.6', false],
    ['id=in.(1,2)', false],
    ['done=eq.false', true],
    ['done=is.false', true],
    ['name=is.null', false],
    ['name=isdistinct.null', true],
    ['at=gt.2026-12-06T10:59:00Z', true],
    ['at=lt.2026-12-06', false],
    ['name=like.Ada%', true],
    ['name=like.ada%', false],
    ['name=ilike.ada%(first)', true],
    ['id=eq.7,name=eq.Bob', false],
    ['id=not.in.(1,2)', true],
  ])('%s → %s', (filter, expected) => {
    expect(meets(filter)).toBe(expected);
  });

  it('never matches a null value but by is', () => {
    expect(meets('name=eq.x', { name: null })).toBe(false);
    expect(meets('name=is.null', { name: null })).toBe(true);
  });

  it('matches LIKE patterns by scanning, in time bounded by pattern × text', () => {
    expect(likeMatch('a%b_c', 'axxbyc')).toBe(true);
    expect(likeMatch('a\\%', 'a%')).toBe(true);
    expect(likeMatch('a\\%', 'ab')).toBe(false);
    // A backtracking matcher takes exponential time on this; the scan takes about 40,000 steps.
    const started = performance.now();
    expect(likeMatch('%a%a%a%a%a%a%a%a%a%b', 'a'.repeat(4000))).toBe(false);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
