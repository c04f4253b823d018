import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.ts';
import type { Catalog, ColumnInfo, TableInfo } from '../../src/schema/catalog.ts';
import { SchemaDefinitionSchema, normalizeDefinition } from '../../src/schema/definition.ts';
import { planChanges, type CanonicalDefaults } from '../../src/schema/plan.ts';

// The diff as typed changes: what the planner decides, in execution order, without a line of SQL (render.ts spells it).

const changes = (tables: unknown, catalog: Catalog = new Map(), canonical?: CanonicalDefaults) =>
  planChanges(normalizeDefinition(SchemaDefinitionSchema.parse({ tables })), catalog, canonical);

/** A live column as readCatalog returns it; nullable and without a default unless said. */
const col = (name: string, type: string, extra: Partial<ColumnInfo> = {}): ColumnInfo => ({ name, type, udt: type, isArray: false, nullable: true, default: null, ...extra });

/** A live table made by an earlier apply: RLS on, service access, nothing else unless said. */
const live = (name: string, columns: ColumnInfo[], extra: Partial<TableInfo> = {}): TableInfo => ({
  name,
  columns,
  primaryKey: [],
  foreignKeys: [],
  checks: [],
  indexes: [],
  rls: true,
  access: 'service',
  plans: null,
  ...extra,
});

const catalogOf = (...tables: TableInfo[]): Catalog => new Map(tables.map((t) => [t.name, t]));

/** A table with an integer primary key `id`, which references can point at. */
const keyed = (name: string, columns: ColumnInfo[] = [], extra: Partial<TableInfo> = {}) =>
  live(name, [col('id', 'integer', { nullable: false }), ...columns], {
    primaryKey: ['id'],
    indexes: [{ name: `${name}_pkey`, columns: ['id'], unique: true, primary: true, constraint: true }],
    ...extra,
  });

describe('diff: new tables', () => {
  it('a new table is created with its columns, primary key and access, then its indexes', () => {
    expect(
      changes({
        tags: {
          columns: { id: { type: 'bigint', primary: true }, label: { type: 'text', nullable: false, unique: true, default: "'new'" } },
          indexes: { tags_label_idx: { columns: ['label'] } },
        },
      }),
    ).toEqual([
      {
        kind: 'create_table',
        table: 'tags',
        columns: [
          { name: 'id', type: 'bigint', nullable: false, unique: false, default: null, references: null },
          { name: 'label', type: 'text', nullable: false, unique: true, default: "'new'", references: null },
        ],
        primaryKey: ['id'],
      },
      { kind: 'set_access', table: 'tags', access: 'service', hasUserId: false, enableRls: true },
      { kind: 'create_index', table: 'tags', index: { name: 'tags_label_idx', columns: ['label'], unique: false, reads: ['label'] } },
    ]);
  });

  it('referenced tables come first with the key inline; a cycle is closed by add_foreign_key after both exist', () => {
    const ref = (table: string) => ({ type: 'integer', references: { table, column: 'id' } });
    const result = changes({
      a: { columns: { id: { type: 'integer', primary: true }, b_id: ref('b') } },
      b: { columns: { id: { type: 'integer', primary: true }, a_id: ref('a') } },
      c: { columns: { b_id: ref('b') } },
    });
    expect(result.map((c) => (c.kind === 'create_table' ? `${c.table}: ${c.columns.map((x) => x.references?.table ?? '-').join(' ')}` : c.kind))).toEqual([
      'a: - -',
      'set_access',
      'b: - a',
      'set_access',
      'c: b',
      'set_access',
      'add_foreign_key',
    ]);
    expect(result.at(-1)).toEqual({ kind: 'add_foreign_key', table: 'a', column: 'b_id', references: { table: 'b', column: 'id', onDelete: 'no action' } });
  });

  it('a user_id uuid column makes user access the default; public and plans are taken as declared', () => {
    expect(changes({ notes: { columns: { user_id: { type: 'uuid' } } } })[1]).toEqual({ kind: 'set_access', table: 'notes', access: 'user', hasUserId: true, enableRls: true });
    expect(changes({ guides: { columns: { id: { type: 'integer' } }, access: 'public', plans: ['pln_b', 'pln_a'] } }).slice(1)).toEqual([
      { kind: 'set_access', table: 'guides', access: 'public', hasUserId: false, enableRls: true },
      { kind: 'create_plan_gate', table: 'guides', plans: ['pln_a', 'pln_b'] },
    ]);
  });
});

describe('diff: existing tables', () => {
  it('an unchanged definition, or one that leaves columns out, has no changes', () => {
    const catalog = catalogOf(keyed('posts', [col('title', 'text')]));
    expect(changes({ posts: { columns: { id: { type: 'integer', primary: true }, title: { type: 'text' } } } }, catalog)).toEqual([]);
    expect(changes({ posts: { columns: { title: { type: 'text' } } } }, catalog)).toEqual([]);
  });

  it('an added column carries no foreign key: that is a separate change once every table exists; dropping skips what is not there', () => {
    const catalog = catalogOf(keyed('authors'), keyed('posts', [col('old', 'text')]));
    expect(
      changes(
        { posts: { columns: { author_id: { type: 'integer', nullable: false, default: 0, references: { table: 'authors', column: 'id', onDelete: 'cascade' } } }, _dropColumns: ['old', 'ghost'] } },
        catalog,
      ),
    ).toEqual([
      { kind: 'drop_column', table: 'posts', column: 'old' },
      { kind: 'add_column', table: 'posts', column: { name: 'author_id', type: 'integer', nullable: false, unique: false, default: '0' } },
      { kind: 'add_foreign_key', table: 'posts', column: 'author_id', references: { table: 'authors', column: 'id', onDelete: 'cascade' } },
    ]);
  });

  it('changed properties of a listed column: drops first, then the column changes in their order', () => {
    const catalog = catalogOf(
      keyed('members', [col('name', 'text', { default: "'a'::text" }), col('nick', 'text'), col('code', 'text')], {
        indexes: [{ name: 'members_nick_key', columns: ['nick'], unique: true, primary: false, constraint: true }],
        checks: [{ name: 'members_code_enum', columns: ['code'], values: ['x', 'y'] }],
      }),
    );
    const result = changes(
      {
        members: {
          columns: {
            id: { type: 'integer', primary: true, identity: true },
            name: { type: 'text', nullable: false, default: "'b'" },
            nick: { type: 'text' },
            code: { type: 'text', unique: true, enum: ['y', 'z'] },
          },
        },
      },
      catalog,
      new Map([['members.name', "'b'::text"]]),
    );
    expect(result).toEqual([
      { kind: 'drop_unique', table: 'members', column: 'nick', constraint: 'members_nick_key' },
      { kind: 'drop_enum', table: 'members', column: 'code', constraint: 'members_code_enum' },
      { kind: 'add_identity', table: 'members', column: 'id' },
      { kind: 'set_nullable', table: 'members', column: 'name', nullable: false },
      { kind: 'set_default', table: 'members', column: 'name', default: "'b'" },
      { kind: 'add_enum', table: 'members', column: 'code', values: ['y', 'z'] },
      { kind: 'add_unique', table: 'members', column: 'code' },
    ]);
  });

  it('a default compares in Postgres spelling: the same canonical text is no change, leaving it out drops it', () => {
    const catalog = catalogOf(live('t', [col('n', 'integer', { default: '1' })]));
    expect(changes({ t: { columns: { n: { type: 'integer', default: 1 } } } }, catalog, new Map([['t.n', '1']]))).toEqual([]);
    expect(changes({ t: { columns: { n: { type: 'integer' } } } }, catalog)).toEqual([{ kind: 'set_default', table: 't', column: 'n', default: null }]);
  });

  it('a type change is refused: there is no change that alters a type', () => {
    let refusal: unknown;
    try {
      changes({ posts: { columns: { title: { type: 'integer' } } } }, catalogOf(keyed('posts', [col('title', 'text')])));
    } catch (err) {
      refusal = err;
    }
    expect(refusal).toBeInstanceOf(AppError);
    expect(refusal).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', message: expect.stringMatching(/^Column 'posts\.title' is text in the database but the definition says integer/) });
  });
});

describe('diff: indexes and foreign keys', () => {
  const catalog = () =>
    catalogOf(
      keyed('lists', [col('user_id', 'uuid')], {
        indexes: [
          { name: 'lists_pkey', columns: ['id'], unique: true, primary: true, constraint: true },
          { name: 'lists_user_idx', columns: ['user_id'], unique: false, primary: false, constraint: false },
        ],
      }),
      keyed('items', [col('list_id', 'integer'), col('user_id', 'uuid')], {
        foreignKeys: [
          { name: 'items_list_id_fkey', columns: ['list_id'], refTable: 'lists', refColumns: ['id'], onDelete: 'no action' },
          { name: 'items_user_id_list_id_fkey', columns: ['user_id', 'list_id'], refTable: 'lists', refColumns: ['user_id', 'id'], onDelete: 'cascade', onUpdate: 'no action' },
        ],
        access: 'user',
      }),
    );

  it('a new index is created, a changed one dropped and re-created, an unlisted one left alone', () => {
    expect(changes({ lists: { indexes: { lists_user_id_idx: { columns: ['user_id', 'id'], unique: true } } } }, catalog())).toEqual([
      { kind: 'create_index', table: 'lists', index: { name: 'lists_user_id_idx', columns: ['user_id', 'id'], unique: true, reads: ['user_id', 'id'] } },
    ]);
    expect(changes({ lists: { indexes: { lists_user_idx: { columns: ['user_id'], unique: true } } } }, catalog())).toEqual([
      { kind: 'drop_index', table: 'lists', index: 'lists_user_idx' },
      { kind: 'create_index', table: 'lists', index: { name: 'lists_user_idx', columns: ['user_id'], unique: true, reads: ['user_id'] } },
    ]);
  });

  it('a changed onDelete drops the key and adds it back', () => {
    expect(changes({ items: { columns: { list_id: { type: 'integer', references: { table: 'lists', column: 'id', onDelete: 'cascade' } } } } }, catalog())).toEqual([
      { kind: 'drop_foreign_key', table: 'items', constraint: 'items_list_id_fkey' },
      { kind: 'add_foreign_key', table: 'items', column: 'list_id', references: { table: 'lists', column: 'id', onDelete: 'cascade' } },
    ]);
  });

  it('a listed foreignKeys is the whole set: a new key comes after the unique index it points at; [] drops them', () => {
    const indexes = { lists_owner_key: { columns: ['user_id', 'id'], unique: true } };
    const key = { columns: ['list_id', 'user_id'], references: { table: 'lists', columns: ['id', 'user_id'] } };
    expect(changes({ lists: { indexes }, items: { foreignKeys: [key] } }, catalog())).toEqual([
      { kind: 'drop_foreign_key', table: 'items', constraint: 'items_user_id_list_id_fkey' },
      { kind: 'create_index', table: 'lists', index: { name: 'lists_owner_key', columns: ['user_id', 'id'], unique: true, reads: ['user_id', 'id'] } },
      {
        kind: 'add_composite_foreign_key',
        table: 'items',
        foreignKey: { name: 'items_list_id_user_id_fkey', columns: ['list_id', 'user_id'], refTable: 'lists', refColumns: ['id', 'user_id'], onDelete: 'no action', onUpdate: 'no action' },
      },
    ]);
    expect(changes({ items: { foreignKeys: [] } }, catalog())).toEqual([{ kind: 'drop_foreign_key', table: 'items', constraint: 'items_user_id_list_id_fkey' }]);
  });
});

describe('diff: _drop, access and plans', () => {
  it('_drop drops every dropped table that exists in one change', () => {
    const catalog = catalogOf(keyed('authors'), keyed('posts', [col('author_id', 'integer')], {
      foreignKeys: [{ name: 'posts_author_id_fkey', columns: ['author_id'], refTable: 'authors', refColumns: ['id'], onDelete: 'no action' }],
    }));
    expect(changes({ posts: { _drop: true }, authors: { _drop: true }, ghost: { _drop: true } }, catalog)).toEqual([{ kind: 'drop_tables', tables: ['posts', 'authors'] }]);
  });

  it('an access change drops the access policies early and rebuilds them last; RLS is enabled where it is off', () => {
    const catalog = catalogOf(live('pages', [col('id', 'integer'), col('user_id', 'uuid')], { access: 'user', rls: false }));
    expect(changes({ pages: { access: 'public' } }, catalog)).toEqual([
      { kind: 'drop_access_policies', table: 'pages', group: false },
      { kind: 'set_access', table: 'pages', access: 'public', hasUserId: true, enableRls: true },
    ]);
  });

  it('dropping user_id drops the fill trigger and the policies before the column', () => {
    const catalog = catalogOf(live('pages', [col('id', 'integer'), col('user_id', 'uuid')], { access: 'public' }));
    expect(changes({ pages: { _dropColumns: ['user_id'] } }, catalog)).toEqual([
      { kind: 'drop_fill_trigger', table: 'pages' },
      { kind: 'drop_access_policies', table: 'pages', group: false },
      { kind: 'drop_column', table: 'pages', column: 'user_id' },
      { kind: 'set_access', table: 'pages', access: 'public', hasUserId: false, enableRls: false },
    ]);
  });

  it('plans: a gate is created, altered or dropped; the same plans are no change', () => {
    const gated = (plans: string[] | null) => catalogOf(live('guides', [col('id', 'integer')], { access: 'public', plans }));
    expect(changes({ guides: { plans: ['pln_pro'] } }, gated(null))).toEqual([{ kind: 'create_plan_gate', table: 'guides', plans: ['pln_pro'] }]);
    expect(changes({ guides: { plans: ['pln_gold'] } }, gated(['pln_pro']))).toEqual([{ kind: 'alter_plan_gate', table: 'guides', plans: ['pln_gold'] }]);
    expect(changes({ guides: { plans: null } }, gated(['pln_pro']))).toEqual([{ kind: 'drop_plan_gate', table: 'guides' }]);
    expect(changes({ guides: { plans: ['pln_pro'] } }, gated(['pln_pro']))).toEqual([]);
  });
});
