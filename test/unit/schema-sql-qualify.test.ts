// Qualification fails closed (docs/design/schema-functions.md §3.4.1): spliced text must parse to the checked tree plus
// exactly the recorded changes, and changes whose order is ambiguous are refused rather than guessed.
import { beforeAll, describe, expect, it } from 'vitest';
import { loadSqlParser, reparse } from '../../src/schema/sql/parser.ts';
import { proveSame, splice } from '../../src/schema/sql/qualify.ts';
import { refusedWith } from '../helpers/tutoring-tables.ts';

beforeAll(loadSqlParser);

const UNPROVABLE = "Function 'f': the SQL could not be pinned to the app's schema without changing its meaning; write it more plainly (and report it with POST /suggestions).";

describe('splice and proof', () => {
  it('splices at UTF-8 byte offsets and proves an equal tree (positions and spacing ignored)', () => {
    const bytes = Buffer.from("select 'é', x from bookings", 'utf8');
    // 'bookings' starts at byte 20 ('é' is two bytes); its JavaScript string index is 19.
    const sql = splice(bytes, [{ at: 20, cut: 0, text: 'public.' }], 0, bytes.length, "Function 'f'");
    expect(sql).toBe("select 'é', x from public.bookings");
    const checked = reparse("select 'é',   x from public.bookings", "Function 'f'").map((s) => s.stmt);
    expect(() => proveSame(checked, sql, "Function 'f'")).not.toThrow();
  });

  it('refuses text whose tree differs from the checked one', () => {
    const checked = reparse('select x from bookings', "Function 'f'").map((s) => s.stmt);
    expect(refusedWith(() => proveSame(checked, 'select x from public.bookings', "Function 'f'"))).toBe(UNPROVABLE);
    expect(refusedWith(() => proveSame(checked, 'select x from bookings; select 1', "Function 'f'"))).toBe(UNPROVABLE);
  });

  it('refuses two insertions at one offset, or one inside another’s cut', () => {
    const bytes = Buffer.from('select a <=> b', 'utf8');
    const twice = [
      { at: 7, cut: 0, text: 'x.' },
      { at: 7, cut: 0, text: 'y.' },
    ];
    expect(refusedWith(() => splice(bytes, twice, 0, bytes.length, "Function 'f'"))).toBe(UNPROVABLE);
    const inside = [
      { at: 9, cut: 3, text: 'OPERATOR(public.<=>)' },
      { at: 10, cut: 0, text: 'x' },
    ];
    expect(refusedWith(() => splice(bytes, inside, 0, bytes.length, "Function 'f'"))).toBe(UNPROVABLE);
  });
});
