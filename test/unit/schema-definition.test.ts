import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.ts';
import {
  SchemaDefinitionSchema,
  checkIdentifier,
  checkTableName,
  definitionUsesPlans,
  definitionType,
  normalizeDefault,
  normalizeDefinition,
  normalizeType,
} from '../../src/schema/definition.ts';

/** Runs fn and returns the AppError it throws (failing the test when it throws nothing or something else). */
function refusal(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected a refusal');
}

const normalize = (tables: unknown) => normalizeDefinition(SchemaDefinitionSchema.parse({ tables }));

describe('column types', () => {
  const cases: Array<[string, string]> = [
    ['text', 'text'],
    ['varchar', 'character varying'],
    ['varchar(20)', 'character varying(20)'],
    ['char', 'character(1)'],
    ['char(3)', 'character(3)'],
    ['integer', 'integer'],
    ['bigint', 'bigint'],
    ['smallint', 'smallint'],
    ['real', 'real'],
    ['float4', 'real'],
    ['float8', 'double precision'],
    ['decimal', 'numeric'],
    ['numeric', 'numeric'],
    ['numeric(10,2)', 'numeric(10,2)'],
    ['boolean', 'boolean'],
    ['bool', 'boolean'],
    ['uuid', 'uuid'],
    ['timestamp', 'timestamp without time zone'],
    ['timestamptz', 'timestamp with time zone'],
    ['date', 'date'],
    ['time', 'time without time zone'],
    ['timetz', 'time with time zone'],
    ['interval', 'interval'],
    ['json', 'json'],
    ['jsonb', 'jsonb'],
    ['bytea', 'bytea'],
    ['vector(3)', 'vector(3)'],
    ['vector(16000)', 'vector(16000)'],
    ['text[]', 'text[]'],
    ['integer[]', 'integer[]'],
    ['varchar(5)[]', 'character varying(5)[]'],
    ['timestamptz[]', 'timestamp with time zone[]'],
    [' VARCHAR( 20 ) ', 'character varying(20)'],
  ];
  it.each(cases)('%s is allowed as %s', (input, formatted) => {
    expect(normalizeType(input)).toBe(formatted);
  });

  it.each(['money', 'serial', 'int', 'int4', 'vector', 'vector(0)', 'vector(16001)', 'vector(3)[]', 'varchar(0)', 'numeric(5,6)', 'text[][]', 'text; drop table x', 'citext', ''])(
    '%s is refused',
    (input) => {
      expect(normalizeType(input)).toBeUndefined();
    },
  );

  it.each(cases)('the schema_get spelling of %s normalizes back to the same type', (input) => {
    const formatted = normalizeType(input)!;
    expect(normalizeType(definitionType(formatted))).toBe(formatted);
  });

  it('schema_get shows the short spellings', () => {
    expect(definitionType('character varying(20)')).toBe('varchar(20)');
    expect(definitionType('timestamp with time zone[]')).toBe('timestamptz[]');
    expect(definitionType('double precision')).toBe('float8');
    expect(definitionType('character(1)')).toBe('char(1)');
    expect(definitionType('vector(3)')).toBe('vector(3)');
  });

  it('a bad type is a 400 naming table, column and type', () => {
    const err = refusal(() => normalize({ posts: { columns: { price: { type: 'money' } } } }));
    expect(err.status).toBe(400);
    expect(err.code).toBe('VALIDATION_FAILED');
    expect(err.message).toMatch(/^Column 'posts\.price' has type 'money', which is not allowed\. Allowed types: text, varchar/);
  });
});

describe('defaults', () => {
  const accepted: Array<[string | number | boolean, string]> = [
    [0, '0'],
    [-1.5, '-1.5'],
    [1e21, '1e+21'],
    [true, 'true'],
    [false, 'false'],
    ['42', '42'],
    ['-3.25e2', '-3.25e2'],
    ['FALSE', 'false'],
    ["'draft'", "'draft'"],
    ["'it''s'", "'it''s'"],
    ["''", "''"],
    ["'a''; drop table x; --'", "'a''; drop table x; --'"],
    ["'{}'", "'{}'"],
    ["'[]'", "'[]'"],
    ["'{}'::jsonb", "'{}'::jsonb"],
    ["'[]'::jsonb", "'[]'::jsonb"],
    ["'{}'::text[]", "'{}'::text[]"],
    ["'{}'::integer[]", "'{}'::integer[]"],
    ["'x'::varchar(20)", "'x'::character varying(20)"],
    ["'y'::character varying", "'y'::character varying"],
    ["'z'::bpchar", "'z'::bpchar"],
    ["'[1,2,3]'::vector", "'[1,2,3]'::vector"],
    ["'-1'::integer", "'-1'::integer"],
    ['now()', 'now()'],
    ['NOW()', 'now()'],
    ['gen_random_uuid()', 'gen_random_uuid()'],
    ['current_timestamp', 'CURRENT_TIMESTAMP'],
    ['CURRENT_DATE', 'CURRENT_DATE'],
  ];
  it.each(accepted)('%j is accepted as %s', (input, sql) => {
    expect(normalizeDefault(input)).toBe(sql);
  });

  it('null (as JSON or as text) means no default', () => {
    expect(normalizeDefault(null)).toBeNull();
    expect(normalizeDefault('null')).toBeNull();
  });

  it.each([
    'now(); drop table x',
    'pg_sleep(1)',
    "'a' || pg_sleep(1)",
    "'a'::text; drop table x",
    "'a'::regclass",
    "'a'::money",
    "E'\\x'",
    'random()',
    'current_user',
    "'unterminated",
    "'a'' b",
    '1; select 1',
    '(1)',
    'x',
  ])('%s is refused', (input) => {
    expect(normalizeDefault(input)).toBeUndefined();
  });

  it('a refused default is a 400 naming the column', () => {
    const err = refusal(() => normalize({ jobs: { columns: { at: { type: 'text', default: 'now(); drop table x' } } } }));
    expect(err.status).toBe(400);
    expect(err.message).toMatch(/^Column 'jobs\.at' has default "now\(\); drop table x", which is not allowed\./);
  });
});

describe('identifiers', () => {
  it.each(['posts', '_x', 'a1_b2', 'a'.repeat(63)])('%s is accepted', (name) => {
    expect(() => checkTableName(name)).not.toThrow();
  });

  it.each([
    ['Posts', /is not a valid name/],
    ['1posts', /is not a valid name/],
    ['a'.repeat(64), /is not a valid name/],
    ['my-table', /is not a valid name/],
    ['select', /is a reserved SQL keyword/],
    ['user', /is a reserved SQL keyword/],
    ['svc_x', /starts with a reserved prefix/],
    ['pg_stats', /starts with a reserved prefix/],
    ['schema', /reserved by a route/],
    ['migrations', /reserved by a route/],
    ['auth', /reserved by a route/],
    ['storage', /reserved by a route/],
  ])('table %s is refused', (name, reason) => {
    const err = refusal(() => checkTableName(name));
    expect(err.status).toBe(400);
    expect(err.message).toContain(`Table '${name}'`);
    expect(err.message).toMatch(reason);
  });

  it('route segments are fine as column names, reserved words are not', () => {
    expect(() => checkIdentifier('data', 'Column')).not.toThrow();
    expect(refusal(() => checkIdentifier('order', "Column 't.order'")).message).toBe(
      "Column 't.order': 'order' is a reserved SQL keyword; choose another name.",
    );
  });

  it('every kind of identifier is checked and named', () => {
    expect(refusal(() => normalize({ t: { columns: { Bad: { type: 'text' } } } })).message).toMatch(/^Column 't\.Bad': 'Bad' is not a valid name/);
    expect(refusal(() => normalize({ t: { columns: { a: { type: 'text' } }, indexes: { select: { columns: ['a'] } } } })).message).toMatch(
      /^Index 'select' of table 't': 'select' is a reserved SQL keyword/,
    );
    expect(refusal(() => normalize({ t: { columns: { a: { type: 'text' } }, indexes: { t_a: { columns: ['A'] } } } })).message).toMatch(
      /^Columns of index 't_a' \(table 't'\): 'A' is not a valid name/,
    );
    expect(refusal(() => normalize({ t: { columns: { a: { type: 'uuid', references: { table: 'svc_x', column: 'id' } } } } })).message).toMatch(
      /^references\.table of column 't\.a': 'svc_x' starts with a reserved prefix/,
    );
    expect(refusal(() => normalize({ t: { _dropColumns: ['pg_x'] } })).message).toMatch(/^_dropColumns of table 't': 'pg_x' starts with a reserved prefix/);
  });
});

describe('normalizeDefinition', () => {
  it('normalizes columns, keeps definition order and implies NOT NULL for primary keys', () => {
    const def = normalize({
      posts: {
        columns: {
          id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' },
          title: { type: 'varchar(80)', nullable: false, default: "'untitled'" },
          score: { type: 'float8', default: 0, unique: true },
          author_id: { type: 'uuid', references: { table: 'authors', column: 'id' } },
        },
        indexes: { posts_title_idx: { columns: ['title', 'score'], unique: true } },
        _dropColumns: ['old', 'old'],
        access: 'service',
      },
    });
    expect(def).toEqual({
      tables: [
        {
          name: 'posts',
          drop: false,
          columns: [
            { name: 'id', type: 'uuid', primary: true, nullable: false, unique: false, default: 'gen_random_uuid()', references: null },
            { name: 'title', type: 'character varying(80)', primary: false, nullable: false, unique: false, default: "'untitled'", references: null },
            { name: 'score', type: 'double precision', primary: false, nullable: true, unique: true, default: '0', references: null },
            { name: 'author_id', type: 'uuid', primary: false, nullable: true, unique: false, default: null, references: { table: 'authors', column: 'id', onDelete: 'no action' } },
          ],
          indexes: [{ name: 'posts_title_idx', columns: ['title', 'score'], unique: true, reads: ['title', 'score'] }],
          dropColumns: ['old'],
          access: 'service',
        },
      ],
    });
  });

  it('allows 50 tables and refuses 51', () => {
    const tables = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`t${i}`, { columns: { id: { type: 'integer' } } }]));
    expect(normalize(tables(50)).tables).toHaveLength(50);
    const err = refusal(() => normalize(tables(51)));
    expect(err.status).toBe(400);
    expect(err.message).toBe(
      'The schema defines 51 tables; at most 50 tables are allowed per schema definition. Apply it in several smaller definitions.',
    );
  });

  it('refuses contradictions with a message naming the field', () => {
    expect(refusal(() => normalize({ t: { columns: { id: { type: 'integer', primary: true, nullable: true } } } })).message).toMatch(
      /^Column 't\.id' is primary and nullable/,
    );
    expect(refusal(() => normalize({ t: { columns: { a: { type: 'text' } }, _dropColumns: ['a'] } })).message).toMatch(
      /^Column 't\.a' is both defined in columns and listed in _dropColumns/,
    );
    expect(refusal(() => normalize({ t: { columns: { a: { type: 'text' } }, indexes: { i: { columns: ['b'] } }, _dropColumns: ['b'] } })).message).toMatch(
      /^Index 'i' of table 't' uses column 'b', which _dropColumns removes/,
    );
    expect(refusal(() => normalize({ t: { columns: { a: { type: 'text' } }, indexes: { i: { columns: ['a', 'a'] } } } })).message).toMatch(
      /^Index 'i' of table 't' lists a column twice/,
    );
    expect(
      refusal(() => normalize({ a: { columns: { x: { type: 'text' } }, indexes: { ix: { columns: ['x'] } } }, b: { columns: { x: { type: 'text' } }, indexes: { ix: { columns: ['x'] } } } })).message,
    ).toMatch(/^Index name 'ix' is used by tables 'a' and 'b'/);
    expect(refusal(() => normalize({ a: { columns: { x: { type: 'text' } }, indexes: { b: { columns: ['x'] } } }, b: { columns: { x: { type: 'text' } } } })).message).toMatch(
      /^Index 'b' of table 'a' has the name of a table/,
    );
  });

  it('plans: sorted and distinct; null (remove) and omitted (keep) stay apart', () => {
    const [gated, removed, kept] = normalize({
      a: { columns: { id: { type: 'integer' } }, plans: ['pln_b', 'pln_a', 'pln_b'] },
      b: { columns: { id: { type: 'integer' } }, plans: null },
      c: { columns: { id: { type: 'integer' } } },
    }).tables;
    expect([gated!.plans, removed!.plans, kept!.plans]).toEqual([['pln_a', 'pln_b'], null, undefined]);
    expect(definitionUsesPlans({ tables: { a: { plans: ['pln_a'] } } })).toBe(true);
    expect(definitionUsesPlans({ tables: { a: { plans: null }, b: {} } })).toBe(false);
  });

  it('plans: 1 to 20 non-empty ids', () => {
    const parses = (plans: unknown) => SchemaDefinitionSchema.safeParse({ tables: { t: { plans } } }).success;
    expect(parses(Array.from({ length: 20 }, (_, i) => `pln_${i}`))).toBe(true);
    expect(parses(Array.from({ length: 21 }, (_, i) => `pln_${i}`))).toBe(false);
    expect(parses([])).toBe(false);
    expect(parses([''])).toBe(false);
    expect(parses('pln_a')).toBe(false);
  });

  it('the wire shape refuses unknown keys and empty index column lists', () => {
    expect(SchemaDefinitionSchema.safeParse({ tables: { t: { columns: { a: { type: 'text', nulable: false } } } } }).success).toBe(false);
    expect(SchemaDefinitionSchema.safeParse({ tables: { t: { columns: {}, indexes: { i: { columns: [] } } } } }).success).toBe(false);
    expect(SchemaDefinitionSchema.safeParse({ tables: { t: { access: 'everyone' } } }).success).toBe(false);
  });
});
