// The three-way diff of a branch merge (src/branches/three-way.ts): unit by unit, and whole tables one side dropped.
import { describe, expect, it } from 'vitest';
import { mergeChanges, threeWay } from '../../src/branches/three-way.ts';

const col = (type: string) => JSON.stringify({ nullable: true, primary: false, type, unique: false });
const base = { 'table:notes': '"table"', 'table:notes/column:body': col('text') };

describe('threeWay', () => {
  it("carries the branch's changes, skips what both made alike, and conflicts where both differ", () => {
    const branch = { ...base, 'table:notes/column:done': col('boolean'), 'table:notes/column:body': col('varchar') };
    const production = { ...base, 'table:notes/column:done': col('boolean'), 'table:notes/column:body': col('citext') };
    const { changes, conflicts } = threeWay(base, branch, production);
    expect(changes).toEqual([]);
    expect(conflicts.map((c) => c.key)).toEqual(['table:notes/column:body']);
  });

  it('a table production dropped while the branch changed it is one conflict, not a re-created table', () => {
    const branch = { ...base, 'table:notes/column:extra': col('text') };
    const { changes, conflicts } = threeWay(base, branch, {});
    expect(changes).toEqual([]);
    expect(conflicts).toEqual([{ key: 'table:notes', base: '"table"', branch: '"table"', production: undefined }]);
  });

  it("a table the branch dropped while production added to it is a conflict, not a drop of production's columns", () => {
    const production = { ...base, 'table:notes/column:extra': col('text') };
    const { changes, conflicts } = threeWay(base, {}, production);
    expect(changes).toEqual([]);
    expect(conflicts.map((c) => c.key)).toEqual(['table:notes']);
  });

  it('a table both dropped, or the branch dropped alone, merges as a drop', () => {
    expect(threeWay(base, {}, {})).toEqual({ changes: [], conflicts: [] });
    const { changes } = threeWay(base, {}, base);
    expect(mergeChanges(changes).schema).toEqual({ tables: { notes: { _drop: true } } });
  });

  it('what a definition cannot say is noted and its key skipped', () => {
    const withIndex = { ...base, 'table:notes/index:by_body': JSON.stringify({ columns: ['body'], unique: false }) };
    const merged = mergeChanges(threeWay(withIndex, base, withIndex).changes);
    expect(merged.skipped).toEqual(['table:notes/index:by_body']);
    expect(merged.notes).toEqual(["The branch dropped index 'by_body' of table 'notes'; a definition cannot drop an index, so production keeps it."]);
  });
});
