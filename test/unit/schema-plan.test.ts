import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.ts';
import type { Catalog, ColumnInfo, ForeignKeyInfo, IndexInfo, TableAccess, TableInfo } from '../../src/schema/catalog.ts';
import { SchemaDefinitionSchema, normalizeDefinition } from '../../src/schema/definition.ts';
import { dependencyOrder, planSchema, type CanonicalDefaults } from '../../src/schema/plan.ts';
import { describeCatalog } from '../../src/schema/describe.ts';

const plan = (tables: unknown, catalog: Catalog = new Map(), canonical?: CanonicalDefaults) =>
  planSchema(normalizeDefinition(SchemaDefinitionSchema.parse({ tables })), catalog, canonical);

function refusal(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).status).toBe(400);
    expect((err as AppError).code).toBe('VALIDATION_FAILED');
    return err as AppError;
  }
  throw new Error('expected a refusal');
}

// ---- a tiny catalog builder: what readCatalog would return for tables made by earlier applies

type Col = [name: string, type: string, opts?: { nullable?: boolean; default?: string }];

function table(
  name: string,
  columns: Col[],
  opts: { pk?: string[]; unique?: string[]; fks?: Array<[string, string, string, ForeignKeyInfo['onDelete']?]>; indexes?: Array<[string, string[], boolean?]>; access?: TableAccess | null; rls?: boolean; plans?: string[] | null } = {},
): TableInfo {
  const pk = opts.pk ?? [];
  const cols: ColumnInfo[] = columns.map(([n, type, o]) => ({
    name: n,
    type,
    udt: type.replace('[]', ''),
    isArray: type.endsWith('[]'),
    nullable: pk.includes(n) ? false : (o?.nullable ?? true),
    default: o?.default ?? null,
  }));
  const indexes: IndexInfo[] = [];
  if (pk.length) indexes.push({ name: `${name}_pkey`, columns: pk, unique: true, primary: true, constraint: true });
  for (const u of opts.unique ?? []) indexes.push({ name: `${name}_${u}_key`, columns: [u], unique: true, primary: false, constraint: true });
  for (const [n, c, unique] of opts.indexes ?? []) indexes.push({ name: n, columns: c, unique: unique ?? false, primary: false, constraint: false });
  return {
    name,
    columns: cols,
    primaryKey: pk,
    foreignKeys: (opts.fks ?? []).map(([col, refTable, refCol, onDelete]) => ({
      name: `${name}_${col}_fkey`,
      columns: [col],
      refTable,
      refColumns: [refCol],
      onDelete: onDelete ?? 'no action',
    })),
    indexes,
    rls: opts.rls ?? true,
    access: opts.access === undefined ? 'service' : opts.access,
    plans: opts.plans ?? null,
  };
}

const catalogOf = (...tables: TableInfo[]): Catalog => new Map(tables.map((t) => [t.name, t]));

const SERVICE_POLICY = (t: string) => `CREATE POLICY svc_service_all ON "${t}" FOR ALL TO svc_service USING (true) WITH CHECK (true)`;
const USER_POLICY = (t: string) =>
  `CREATE POLICY svc_user_own ON "${t}" FOR ALL TO svc_user USING ("user_id" = public.current_user_id()) WITH CHECK ("user_id" = public.current_user_id())`;
const PUBLIC_POLICY = (t: string) => `CREATE POLICY svc_public_read ON "${t}" FOR SELECT TO svc_anon, svc_user USING (true)`;
const TRIGGER = (t: string) => `CREATE OR REPLACE TRIGGER svc_fill_user_id BEFORE INSERT ON "${t}" FOR EACH ROW EXECUTE FUNCTION svc_meta.fill_user_id()`;
const ACCESS = (t: string, a: string) =>
  `INSERT INTO svc_meta.table_access (table_name, access) VALUES ('${t}', '${a}') ON CONFLICT (table_name) DO UPDATE SET access = EXCLUDED.access`;
const DROP_POLICIES = (t: string) => ['svc_service_all', 'svc_user_own', 'svc_public_read'].map((p) => `DROP POLICY IF EXISTS ${p} ON "${t}"`);

describe('new tables', () => {
  it('creates a table with every column property, its RLS and access row', () => {
    expect(
      plan({
        tags: {
          columns: {
            id: { type: 'bigint', primary: true },
            label: { type: 'varchar(40)', nullable: false, unique: true, default: "'new'" },
            weight: { type: 'numeric(5,2)', default: 1.5 },
          },
          indexes: { tags_weight_idx: { columns: ['weight', 'label'], unique: true } },
        },
      }),
    ).toEqual([
      'CREATE TABLE "tags" ("id" bigint NOT NULL, "label" character varying(40) DEFAULT \'new\' NOT NULL UNIQUE, "weight" numeric(5,2) DEFAULT 1.5, PRIMARY KEY ("id"))',
      'ALTER TABLE "tags" ENABLE ROW LEVEL SECURITY',
      SERVICE_POLICY('tags'),
      ACCESS('tags', 'service'),
      'CREATE UNIQUE INDEX "tags_weight_idx" ON "tags" ("weight", "label")',
    ]);
  });

  it('a table with a user_id uuid column defaults to user access with the fill trigger', () => {
    expect(plan({ notes: { columns: { id: { type: 'uuid', primary: true }, user_id: { type: 'uuid', nullable: false } } } })).toEqual([
      'CREATE TABLE "notes" ("id" uuid NOT NULL, "user_id" uuid NOT NULL, PRIMARY KEY ("id"))',
      'ALTER TABLE "notes" ENABLE ROW LEVEL SECURITY',
      SERVICE_POLICY('notes'),
      USER_POLICY('notes'),
      TRIGGER('notes'),
      ACCESS('notes', 'user'),
    ]);
  });

  it('public access: everyone reads; end users write their own rows only when there is a user_id', () => {
    expect(plan({ pages: { columns: { id: { type: 'integer' } }, access: 'public' } }).slice(2)).toEqual([
      SERVICE_POLICY('pages'),
      PUBLIC_POLICY('pages'),
      ACCESS('pages', 'public'),
    ]);
    expect(plan({ posts: { columns: { user_id: { type: 'uuid' } }, access: 'public' } }).slice(2)).toEqual([
      SERVICE_POLICY('posts'),
      PUBLIC_POLICY('posts'),
      USER_POLICY('posts'),
      TRIGGER('posts'),
      ACCESS('posts', 'public'),
    ]);
  });

  it('service access on a table with user_id: only the service policy, but still the trigger', () => {
    expect(plan({ audit: { columns: { user_id: { type: 'uuid' } }, access: 'service' } }).slice(2)).toEqual([
      SERVICE_POLICY('audit'),
      TRIGGER('audit'),
      ACCESS('audit', 'service'),
    ]);
  });

  it('user access without a user_id uuid column is refused', () => {
    expect(refusal(() => plan({ t: { columns: { user_id: { type: 'text' } }, access: 'user' } })).message).toMatch(
      /^Table 't' has access 'user', which needs a 'user_id' column of type uuid/,
    );
  });

  it('composite primary keys', () => {
    expect(plan({ m: { columns: { a: { type: 'integer', primary: true }, b: { type: 'integer', primary: true } } } })[0]).toBe(
      'CREATE TABLE "m" ("a" integer NOT NULL, "b" integer NOT NULL, PRIMARY KEY ("a", "b"))',
    );
  });

  it('creates referenced tables first even when listed after', () => {
    const statements = plan({
      comments: { columns: { id: { type: 'integer', primary: true }, post_id: { type: 'integer', references: { table: 'posts', column: 'id' } } } },
      posts: { columns: { id: { type: 'integer', primary: true }, author_id: { type: 'integer', references: { table: 'authors', column: 'id' } } } },
      authors: { columns: { id: { type: 'integer', primary: true } } },
    });
    const creates = statements.filter((s) => s.startsWith('CREATE TABLE'));
    expect(creates).toEqual([
      'CREATE TABLE "authors" ("id" integer NOT NULL, PRIMARY KEY ("id"))',
      'CREATE TABLE "posts" ("id" integer NOT NULL, "author_id" integer REFERENCES "authors" ("id"), PRIMARY KEY ("id"))',
      'CREATE TABLE "comments" ("id" integer NOT NULL, "post_id" integer REFERENCES "posts" ("id"), PRIMARY KEY ("id"))',
    ]);
  });

  it('a self-reference is inlined; a cycle gets its closing foreign key after both tables exist', () => {
    expect(plan({ nodes: { columns: { id: { type: 'integer', primary: true }, parent_id: { type: 'integer', references: { table: 'nodes', column: 'id' } } } } })[0]).toBe(
      'CREATE TABLE "nodes" ("id" integer NOT NULL, "parent_id" integer REFERENCES "nodes" ("id"), PRIMARY KEY ("id"))',
    );
    const statements = plan({
      a: { columns: { id: { type: 'integer', primary: true }, b_id: { type: 'integer', references: { table: 'b', column: 'id' } } } },
      b: { columns: { id: { type: 'integer', primary: true }, a_id: { type: 'integer', references: { table: 'a', column: 'id' } } } },
    });
    const interesting = statements.filter((s) => s.startsWith('CREATE TABLE') || s.includes('FOREIGN KEY'));
    expect(interesting).toEqual([
      'CREATE TABLE "a" ("id" integer NOT NULL, "b_id" integer, PRIMARY KEY ("id"))',
      'CREATE TABLE "b" ("id" integer NOT NULL, "a_id" integer REFERENCES "a" ("id"), PRIMARY KEY ("id"))',
      'ALTER TABLE "a" ADD FOREIGN KEY ("b_id") REFERENCES "b" ("id")',
    ]);
  });

  it('a foreign key may point at an existing table', () => {
    const catalog = catalogOf(table('authors', [['id', 'uuid']], { pk: ['id'] }));
    expect(plan({ posts: { columns: { author_id: { type: 'uuid', references: { table: 'authors', column: 'id' } } } } }, catalog)[0]).toBe(
      'CREATE TABLE "posts" ("author_id" uuid REFERENCES "authors" ("id"))',
    );
  });

  it('refuses references to unknown tables, unknown columns and non-key columns', () => {
    expect(refusal(() => plan({ posts: { columns: { author_id: { type: 'uuid', references: { table: 'authors', column: 'id' } } } } })).message).toBe(
      "Column 'posts.author_id' references 'authors.id', but table 'authors' is neither in the schema definition nor in the database. Define 'authors' in the same schema, or fix references.table.",
    );
    expect(
      refusal(() => plan({ a: { columns: { id: { type: 'integer', primary: true } } }, b: { columns: { a_id: { type: 'integer', references: { table: 'a', column: 'nope' } } } } })).message,
    ).toBe("Column 'b.a_id' references 'a.nope', but 'a' has no column 'nope' (or this definition drops it).");
    expect(
      refusal(() => plan({ a: { columns: { id: { type: 'integer' } } }, b: { columns: { a_id: { type: 'integer', references: { table: 'a', column: 'id' } } } } })).message,
    ).toMatch(/^Column 'b\.a_id' references 'a\.id', but 'a\.id' is neither the primary key nor unique/);
  });

  it('a new table needs columns', () => {
    expect(refusal(() => plan({ empty: {} })).message).toBe("Table 'empty' is new and has no columns; define at least one column.");
  });
});

describe('existing tables', () => {
  const posts = () =>
    table(
      'posts',
      [
        ['id', 'uuid', { default: 'gen_random_uuid()' }],
        ['title', 'text', { nullable: false, default: "'untitled'::text" }],
        ['user_id', 'uuid'],
        ['old', 'integer'],
      ],
      { pk: ['id'], access: 'user', indexes: [['posts_title_idx', ['title']]] },
    );
  const same = {
    posts: {
      columns: {
        id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' },
        title: { type: 'text', nullable: false, default: "'untitled'" },
        user_id: { type: 'uuid' },
      },
      indexes: { posts_title_idx: { columns: ['title'] } },
    },
  };
  const canonical: CanonicalDefaults = new Map([
    ['posts.id', 'gen_random_uuid()'],
    ['posts.title', "'untitled'::text"],
  ]);

  it('an unchanged definition plans nothing (omitted columns are left alone)', () => {
    expect(plan(same, catalogOf(posts()), canonical)).toEqual([]);
  });

  it('schema_get output planned against the same catalog is empty', () => {
    const catalog = catalogOf(posts(), table('authors', [['id', 'integer'], ['email', 'text']], { pk: ['id'], unique: ['email'], access: 'public' }));
    expect(plan(describeCatalog(catalog).tables, catalog)).toEqual([]);
  });

  it('without the canonical spelling a differently printed default is re-set', () => {
    expect(plan(same, catalogOf(posts()))).toEqual([`ALTER TABLE "posts" ALTER COLUMN "title" SET DEFAULT 'untitled'`]);
  });

  it('adds and drops columns; dropping only what exists', () => {
    const tables = {
      posts: {
        columns: { ...same.posts.columns, body: { type: 'text', default: "''" }, slug: { type: 'text', unique: true, nullable: false, default: "'x'" } },
        _dropColumns: ['old', 'never_existed'],
      },
    };
    expect(plan(tables, catalogOf(posts()), canonical)).toEqual([
      'ALTER TABLE "posts" DROP COLUMN "old"',
      `ALTER TABLE "posts" ADD COLUMN "body" text DEFAULT ''`,
      `ALTER TABLE "posts" ADD COLUMN "slug" text DEFAULT 'x' NOT NULL UNIQUE`,
    ]);
  });

  it('nullable, default, unique and references changes become the matching ALTERs', () => {
    const catalog = catalogOf(
      table('authors', [['id', 'integer'], ['code', 'text']], { pk: ['id'], unique: ['code'] }),
      table('teams', [['id', 'integer']], { pk: ['id'] }),
      table('members', [['id', 'integer'], ['name', 'text', { default: "'a'::text" }], ['email', 'text'], ['nick', 'text'], ['author_id', 'integer'], ['team_id', 'integer']], {
        pk: ['id'],
        unique: ['nick'],
        fks: [['author_id', 'authors', 'id']],
      }),
    );
    const statements = plan(
      {
        members: {
          columns: {
            id: { type: 'integer', primary: true },
            name: { type: 'text', nullable: false },
            email: { type: 'text', unique: true, default: "'b'" },
            nick: { type: 'text' },
            author_id: { type: 'integer', references: { table: 'authors', column: 'code' } },
            team_id: { type: 'integer', references: { table: 'teams', column: 'id' } },
          },
        },
      },
      catalog,
      new Map([['members.email', "'b'::text"]]),
    );
    expect(statements).toEqual([
      'ALTER TABLE "members" DROP CONSTRAINT "members_author_id_fkey"',
      'ALTER TABLE "members" DROP CONSTRAINT "members_nick_key"',
      'ALTER TABLE "members" ALTER COLUMN "name" SET NOT NULL',
      'ALTER TABLE "members" ALTER COLUMN "name" DROP DEFAULT',
      `ALTER TABLE "members" ALTER COLUMN "email" SET DEFAULT 'b'`,
      'ALTER TABLE "members" ADD UNIQUE ("email")',
      'ALTER TABLE "members" ADD FOREIGN KEY ("author_id") REFERENCES "authors" ("code")',
      'ALTER TABLE "members" ADD FOREIGN KEY ("team_id") REFERENCES "teams" ("id")',
    ]);
  });

  it('references.onDelete: inline and added keys carry it; a changed action drops and re-adds the key; an unchanged one plans nothing', () => {
    expect(
      plan({
        posts: { columns: { id: { type: 'integer', primary: true } } },
        comments: {
          columns: {
            id: { type: 'integer', primary: true },
            post_id: { type: 'integer', nullable: false, references: { table: 'posts', column: 'id', onDelete: 'cascade' } },
            reply_to: { type: 'integer', references: { table: 'comments', column: 'id', onDelete: 'set null' } },
          },
        },
      }).filter((s) => s.startsWith('CREATE TABLE "comments"')),
    ).toEqual([
      'CREATE TABLE "comments" ("id" integer NOT NULL, "post_id" integer NOT NULL REFERENCES "posts" ("id") ON DELETE CASCADE, ' +
        '"reply_to" integer REFERENCES "comments" ("id") ON DELETE SET NULL, PRIMARY KEY ("id"))',
    ]);
    const catalog = catalogOf(
      table('posts', [['id', 'integer']], { pk: ['id'] }),
      table('comments', [['id', 'integer'], ['post_id', 'integer'], ['note_id', 'integer']], { pk: ['id'], fks: [['post_id', 'posts', 'id', 'cascade']] }),
    );
    const columns = (onDelete?: string, note?: string) => ({
      comments: {
        columns: {
          id: { type: 'integer', primary: true },
          post_id: { type: 'integer', references: { table: 'posts', column: 'id', ...(onDelete ? { onDelete } : {}) } },
          note_id: { type: 'integer', ...(note ? { references: { table: 'posts', column: 'id', onDelete: note } } : {}) },
        },
      },
    });
    expect(plan(columns('cascade'), catalog)).toEqual([]);
    expect(plan(columns('restrict', 'set null'), catalog)).toEqual([
      'ALTER TABLE "comments" DROP CONSTRAINT "comments_post_id_fkey"',
      'ALTER TABLE "comments" ADD FOREIGN KEY ("post_id") REFERENCES "posts" ("id") ON DELETE RESTRICT',
      'ALTER TABLE "comments" ADD FOREIGN KEY ("note_id") REFERENCES "posts" ("id") ON DELETE SET NULL',
    ]);
    // Omitted means Postgres's default, no action: declaring the column without onDelete resets a cascade.
    expect(plan(columns(), catalog)).toEqual([
      'ALTER TABLE "comments" DROP CONSTRAINT "comments_post_id_fkey"',
      'ALTER TABLE "comments" ADD FOREIGN KEY ("post_id") REFERENCES "posts" ("id")',
    ]);
    expect(plan(columns('no action'), catalog)).toEqual(plan(columns(), catalog));
    expect(describeCatalog(catalog).tables.comments!.columns.post_id!.references).toEqual({ table: 'posts', column: 'id', onDelete: 'cascade' });
  });

  it('refuses onDelete set null on a column that is never null', () => {
    expect(
      refusal(() =>
        plan({
          posts: { columns: { id: { type: 'integer', primary: true } } },
          comments: { columns: { post_id: { type: 'integer', nullable: false, references: { table: 'posts', column: 'id', onDelete: 'set null' } } } },
        }),
      ).message,
    ).toBe("Column 'comments.post_id' has references.onDelete 'set null' but is never null (primary or nullable: false); choose 'cascade', or make the column nullable.");
  });

  it('refuses a type change, explaining the way round it', () => {
    const err = refusal(() => plan({ posts: { columns: { title: { type: 'integer' } } } }, catalogOf(posts())));
    expect(err.message).toBe(
      "Column 'posts.title' is text in the database but the definition says integer. Changing a column's type is not supported: add a new column with the new type, copy the data over, then remove the old column with _dropColumns.",
    );
  });

  it('refuses primary key changes', () => {
    expect(refusal(() => plan({ posts: { columns: { title: { type: 'text', primary: true } } } }, catalogOf(posts()))).message).toMatch(
      /^Column 'posts\.title' is declared primary but is not part of the primary key \(currently \(id\)\)\. Changing a primary key is not supported/,
    );
    expect(refusal(() => plan({ posts: { columns: { id: { type: 'uuid' } } } }, catalogOf(posts()))).message).toMatch(
      /^Column 'posts\.id' is not declared primary but is part of the primary key/,
    );
    expect(refusal(() => plan({ posts: { columns: { extra: { type: 'integer', primary: true } } } }, catalogOf(posts()))).message).toMatch(
      /^Column 'posts\.extra' is declared primary but is not part of the primary key/,
    );
  });

  it('creates missing indexes, leaves unlisted ones alone and rebuilds a changed one', () => {
    const catalog = catalogOf(posts());
    expect(plan({ posts: { indexes: { posts_user_idx: { columns: ['user_id', 'title'] } } } }, catalog)).toEqual([
      'CREATE INDEX "posts_user_idx" ON "posts" ("user_id", "title")',
    ]);
    expect(plan({ posts: { indexes: { posts_title_idx: { columns: ['title'], unique: true } } } }, catalog)).toEqual([
      'DROP INDEX "posts_title_idx"',
      'CREATE UNIQUE INDEX "posts_title_idx" ON "posts" ("title")',
    ]);
  });

  it('refuses index names that are taken or columns that do not exist', () => {
    const catalog = catalogOf(posts(), table('tags', [['id', 'integer']], { indexes: [['tags_idx', ['id']]] }));
    expect(refusal(() => plan({ posts: { indexes: { tags_idx: { columns: ['title'] } } } }, catalog)).message).toMatch(/already exists on table 'tags'/);
    expect(refusal(() => plan({ posts: { indexes: { posts_pkey: { columns: ['title'] } } } }, catalog)).message).toMatch(/is the name of a primary key or unique constraint/);
    expect(refusal(() => plan({ posts: { indexes: { tags: { columns: ['title'] } } } }, catalog)).message).toMatch(/has the name of an existing table/);
    expect(refusal(() => plan({ posts: { indexes: { p_idx: { columns: ['nope'] } } } }, catalog)).message).toBe(
      "Index 'p_idx' of table 'posts' names column 'nope', which the table does not have.",
    );
  });

  it('an existing table keeps its access when the definition omits it', () => {
    const catalog = catalogOf(table('pages', [['id', 'integer'], ['user_id', 'uuid']], { access: 'public' }));
    expect(plan({ pages: { columns: { id: { type: 'integer' } } } }, catalog)).toEqual([]);
  });

  it('an access change drops and recreates the policies', () => {
    const catalog = catalogOf(posts());
    expect(plan({ posts: { access: 'public' } }, catalog)).toEqual([
      ...DROP_POLICIES('posts'),
      SERVICE_POLICY('posts'),
      PUBLIC_POLICY('posts'),
      USER_POLICY('posts'),
      TRIGGER('posts'),
      ACCESS('posts', 'public'),
    ]);
  });

  it('dropping user_id drops policies and trigger before the column; user access then needs a change', () => {
    const catalog = catalogOf(posts());
    expect(refusal(() => plan({ posts: { _dropColumns: ['user_id'] } }, catalog)).message).toMatch(/^Table 'posts' has access 'user', which needs a 'user_id' column/);
    expect(plan({ posts: { _dropColumns: ['user_id'], access: 'service' } }, catalog)).toEqual([
      'DROP TRIGGER IF EXISTS svc_fill_user_id ON "posts"',
      ...DROP_POLICIES('posts'),
      'ALTER TABLE "posts" DROP COLUMN "user_id"',
      SERVICE_POLICY('posts'),
      ACCESS('posts', 'service'),
    ]);
  });

  it('adding user_id to a service table adds the trigger; a table without RLS gets it enabled', () => {
    const catalog = catalogOf(table('logs', [['id', 'integer']], { access: null, rls: false }));
    expect(plan({ logs: { columns: { user_id: { type: 'uuid' } } } }, catalog)).toEqual([
      ...DROP_POLICIES('logs'),
      'ALTER TABLE "logs" ADD COLUMN "user_id" uuid',
      'ALTER TABLE "logs" ENABLE ROW LEVEL SECURITY',
      SERVICE_POLICY('logs'),
      USER_POLICY('logs'),
      TRIGGER('logs'),
      ACCESS('logs', 'user'),
    ]);
  });
});

describe('plans (premium rows)', () => {
  const GATE = (plans: string) => `(SELECT public.current_user_plan()) = ANY (ARRAY[${plans}]::text[])`;
  const CREATE_GATE = (t: string, plans: string) =>
    `CREATE POLICY svc_plan_gate ON "${t}" AS RESTRICTIVE FOR ALL TO svc_anon, svc_user USING (${GATE(plans)}) WITH CHECK (${GATE(plans)})`;
  const STORE = (t: string, plans: string) => `UPDATE svc_meta.table_access SET plans = ${plans} WHERE table_name = '${t}'`;
  const premium = (plans: string[] | null) => catalogOf(table('guides', [['id', 'integer'], ['body', 'text']], { access: 'public', plans }));

  it('a new gated table gets the restrictive policy after its access policies, and the plans stored beside its access', () => {
    expect(plan({ guides: { columns: { id: { type: 'integer' } }, access: 'public', plans: ['pln_team', 'pln_pro', 'pln_pro'] } }).slice(2)).toEqual([
      SERVICE_POLICY('guides'),
      PUBLIC_POLICY('guides'),
      ACCESS('guides', 'public'),
      CREATE_GATE('guides', "'pln_pro', 'pln_team'"),
      STORE('guides', "ARRAY['pln_pro', 'pln_team']::text[]"),
    ]);
  });

  it('plan ids are SQL literals, never SQL', () => {
    expect(plan({ guides: { columns: { id: { type: 'integer' } }, access: 'public', plans: ["x') OR true --"] } }).at(-2)).toBe(
      CREATE_GATE('guides', "'x'') OR true --'"),
    );
  });

  it('the same plans in any order plan nothing; omitted plans are kept', () => {
    expect(plan({ guides: { access: 'public', plans: ['pln_team', 'pln_pro'] } }, premium(['pln_pro', 'pln_team']))).toEqual([]);
    expect(plan({ guides: { columns: { body: { type: 'text' } } } }, premium(['pln_pro']))).toEqual([]);
  });

  it('gating an existing table creates the policy; changing the plans alters it; null drops it', () => {
    expect(plan({ guides: { plans: ['pln_pro'] } }, premium(null))).toEqual([CREATE_GATE('guides', "'pln_pro'"), STORE('guides', "ARRAY['pln_pro']::text[]")]);
    const alter = `ALTER POLICY svc_plan_gate ON "guides" USING (${GATE("'pln_gold'")}) WITH CHECK (${GATE("'pln_gold'")})`;
    expect(plan({ guides: { plans: ['pln_gold'] } }, premium(['pln_pro']))).toEqual([alter, STORE('guides', "ARRAY['pln_gold']::text[]")]);
    expect(plan({ guides: { plans: null } }, premium(['pln_pro']))).toEqual(['DROP POLICY IF EXISTS svc_plan_gate ON "guides"', STORE('guides', 'NULL')]);
    expect(plan({ guides: { plans: null } }, premium(null))).toEqual([]);
  });

  it('an access change rebuilds the access policies and leaves the gate alone', () => {
    expect(plan({ guides: { access: 'user', columns: { user_id: { type: 'uuid' } } } }, premium(['pln_pro']))).not.toContainEqual(
      expect.stringContaining('svc_plan_gate'),
    );
  });

  it('refuses plans on a service table, which end users never reach anyway', () => {
    const message = "Table 'audit' has access 'service' (keys only), so plans would gate nobody. Choose access 'public' or 'user' for rows that subscribers reach, or set plans: null.";
    expect(refusal(() => plan({ audit: { columns: { id: { type: 'integer' } }, plans: ['pln_pro'] } })).message).toBe(message);
    const gated = catalogOf(table('audit', [['id', 'integer']], { access: 'public', plans: ['pln_pro'] }));
    expect(refusal(() => plan({ audit: { access: 'service' } }, gated)).message).toBe(message);
    expect(plan({ audit: { access: 'service', plans: null } }, gated)).toContain('DROP POLICY IF EXISTS svc_plan_gate ON "audit"');
  });

  it('schema_get shows the plans, and its output plans nothing', () => {
    const catalog = premium(['pln_pro', 'pln_team']);
    const view = describeCatalog(catalog);
    expect(view.tables.guides!.plans).toEqual(['pln_pro', 'pln_team']);
    expect(describeCatalog(premium(null)).tables.guides).not.toHaveProperty('plans');
    expect(plan(view.tables, catalog)).toEqual([]);
  });

  it('dropping a gated table drops its policies with it', () => {
    expect(plan({ guides: { _drop: true } }, premium(['pln_pro']))).toEqual(['DROP TABLE "guides"', "DELETE FROM svc_meta.table_access WHERE table_name IN ('guides')"]);
  });
});

describe('dropping tables', () => {
  const catalog = catalogOf(
    table('authors', [['id', 'integer']], { pk: ['id'] }),
    table('posts', [['id', 'integer'], ['author_id', 'integer']], { pk: ['id'], fks: [['author_id', 'authors', 'id']] }),
  );

  it('_drop removes the table and its access row; a missing table is nothing to do', () => {
    expect(plan({ posts: { _drop: true }, ghost: { _drop: true } }, catalog)).toEqual([
      'DROP TABLE "posts"',
      "DELETE FROM svc_meta.table_access WHERE table_name IN ('posts')",
    ]);
  });

  it('tables that reference each other are dropped in one statement', () => {
    expect(plan({ authors: { _drop: true }, posts: { _drop: true } }, catalog)[0]).toBe('DROP TABLE "authors", "posts"');
  });

  it('refuses to drop a table or column another table still references', () => {
    expect(refusal(() => plan({ authors: { _drop: true } }, catalog)).message).toBe(
      "Column 'posts.author_id' references 'authors.id', but this definition drops table 'authors'. Remove or change the reference (references, _dropColumns or _drop) in the same definition.",
    );
    expect(refusal(() => plan({ authors: { _dropColumns: ['id'] } }, catalog)).message).toMatch(/^Column 'posts\.author_id' references 'authors\.id', but 'authors' has no column 'id'/);
    expect(plan({ authors: { _drop: true }, posts: { _dropColumns: ['author_id'] } }, catalog)).toEqual([
      'ALTER TABLE "posts" DROP COLUMN "author_id"',
      'DROP TABLE "authors"',
      "DELETE FROM svc_meta.table_access WHERE table_name IN ('authors')",
    ]);
  });
});

describe('dependencyOrder', () => {
  it('is stable for independent tables', () => {
    const def = normalizeDefinition(SchemaDefinitionSchema.parse({ tables: { c: { columns: { x: { type: 'text' } } }, a: { columns: { x: { type: 'text' } } } } }));
    expect(dependencyOrder(def.tables).map((t) => t.name)).toEqual(['c', 'a']);
  });
});
