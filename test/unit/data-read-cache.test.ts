// Reads parsed and compiled once (src/data/read-cache.ts): a cached statement is byte for byte what compileRead writes
// for the same request, for any id, and a new catalog snapshot compiles again.
import { describe, expect, it } from 'vitest';
import type { Catalog, ColumnInfo, TableInfo } from '../../src/schema/catalog.ts';
import { compileRead, idFilter } from '../../src/data/compile.ts';
import { parseQuery, type ParsedQuery } from '../../src/data/query.ts';
import { compiledById, compiledRead, parsedQuery } from '../../src/data/read-cache.ts';

const OUT = { maxBytes: 1_000_000, single: false };
const col = (name: string, type: string): ColumnInfo => ({ name, type, udt: type, isArray: false, nullable: true, default: null });

function catalogWith(columns: ColumnInfo[]): Catalog {
  const table: TableInfo = { name: 'items', columns, primaryKey: ['id'], foreignKeys: [], indexes: [], rls: true, access: 'user' };
  return new Map([['items', table]]);
}

const byId = (catalog: Catalog, query: ParsedQuery, id: string) =>
  compileRead(catalog, 'items', { ...query, filters: [...query.filters, idFilter(catalog.get('items')!, id)] }, { out: OUT });

describe('read cache', () => {
  const catalog = catalogWith([col('id', 'text'), col('title', 'text'), col('n', 'integer')]);

  it('splices each id into the by-id statement as compileRead writes it', () => {
    const query = parseQuery('select=id,title');
    // Quotes and backslashes change the literal's form (E'...'); the statement must not depend on the first id seen.
    for (const id of ['a1', "it's", 'back\\slash', "both\\'", '', 'x'.repeat(300)]) {
      const compile = (value: string) => byId(catalog, query, value);
      expect(compiledById(catalog, 'by id\0items\0select=id,title', id, compile)).toBe(compile(id));
    }
  });

  it('keeps a read per catalog snapshot and key', () => {
    let compiles = 0;
    const query = parsedQuery('select=id,n&n=gte.100&order=n.desc&limit=20');
    const compile = (c: Catalog) => () => {
      compiles++;
      return compileRead(c, 'items', query, { offset: 0, limit: 20, out: OUT });
    };
    const first = compiledRead(catalog, 'list', compile(catalog));
    expect(compiledRead(catalog, 'list', compile(catalog))).toBe(first);
    expect(compiles).toBe(1);
    // A refreshed snapshot (another column type) is another object: compiled again, from it.
    const changed = catalogWith([col('id', 'text'), col('title', 'text'), col('n', 'bigint')]);
    expect(compiledRead(changed, 'list', compile(changed))).toBe(compileRead(changed, 'items', query, { offset: 0, limit: 20, out: OUT }));
    expect(compiles).toBe(2);
  });

  it('keeps nothing for a query that does not parse or compile', () => {
    expect(() => parsedQuery('n=nope.1')).toThrow(/Unknown operator/);
    expect(() => parsedQuery('n=nope.1')).toThrow(/Unknown operator/);
    const query = parsedQuery('select=missing');
    const compile = () => compileRead(catalog, 'items', query, { out: OUT });
    expect(() => compiledRead(catalog, 'missing', compile)).toThrow(/missing/);
    expect(() => compiledRead(catalog, 'missing', compile)).toThrow(/missing/);
  });
});
