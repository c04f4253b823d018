import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { databaseUrl } from '../helpers/db.ts';

interface CreatedApp {
  app_id: string;
  service_key: { key: string };
}

let p: TestPlatform;
let app: CreatedApp;
let other: CreatedApp;
let db: pg.Client;

beforeAll(async () => {
  p = await startTestPlatform();
  app = (await p.api('POST', '/init', { body: { name: 'Schema main' } })).body;
  other = (await p.api('POST', '/init', { body: { name: 'Schema other' } })).body;
  db = new pg.Client({ connectionString: databaseUrl(p.appDbPrefix + app.app_id) });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await p?.close();
});

const apply = (body: unknown, appId = app.app_id, key?: string | null) => p.api('POST', `/v1/${appId}/schema/apply`, { body, key });
const sha256 = (statements: string[]) => createHash('sha256').update(statements.join('\n')).digest('hex');
const rows = async (sql: string, params?: unknown[]) => (await db.query(sql, params)).rows;
const migrationCount = async () => (await rows('select count(*)::int as n from svc_meta.migrations'))[0].n as number;
const publicTables = async () => (await rows(`select tablename from pg_tables where schemaname = 'public' order by tablename`)).map((r) => r.tablename);

// posts is listed before the authors table it references: the plan must create authors first.
const BLOG = {
  tables: {
    posts: {
      columns: {
        id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' },
        author_id: { type: 'uuid', references: { table: 'authors', column: 'id' } },
        title: { type: 'text', nullable: false },
        embedding: { type: 'vector(3)' },
        user_id: { type: 'uuid' },
        created_at: { type: 'timestamptz', nullable: false, default: 'now()' },
      },
      indexes: { posts_author_idx: { columns: ['author_id'] } },
    },
    authors: {
      columns: {
        id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' },
        name: { type: 'text' },
        email: { type: 'varchar(200)', unique: true },
      },
      access: 'public',
    },
    settings: {
      columns: { key: { type: 'text', primary: true }, value: { type: 'jsonb', default: "'{}'" } },
    },
  },
};

const BLOG_STATEMENTS = [
  'CREATE TABLE "authors" ("id" uuid DEFAULT gen_random_uuid() NOT NULL, "name" text, "email" character varying(200) UNIQUE, PRIMARY KEY ("id"))',
  'ALTER TABLE "authors" ENABLE ROW LEVEL SECURITY',
  'CREATE POLICY svc_service_all ON "authors" FOR ALL TO svc_service USING (true) WITH CHECK (true)',
  'CREATE POLICY svc_public_read ON "authors" FOR SELECT TO svc_anon, svc_user USING (true)',
  "INSERT INTO svc_meta.table_access (table_name, access) VALUES ('authors', 'public') ON CONFLICT (table_name) DO UPDATE SET access = EXCLUDED.access",
  'CREATE TABLE "posts" ("id" uuid DEFAULT gen_random_uuid() NOT NULL, "author_id" uuid REFERENCES "authors" ("id"), "title" text NOT NULL, "embedding" vector(3), "user_id" uuid, "created_at" timestamp with time zone DEFAULT now() NOT NULL, PRIMARY KEY ("id"))',
  'ALTER TABLE "posts" ENABLE ROW LEVEL SECURITY',
  'CREATE POLICY svc_service_all ON "posts" FOR ALL TO svc_service USING (true) WITH CHECK (true)',
  'CREATE POLICY svc_user_own ON "posts" FOR ALL TO svc_user USING ("user_id" = public.current_user_id()) WITH CHECK ("user_id" = public.current_user_id())',
  'CREATE OR REPLACE TRIGGER svc_fill_user_id BEFORE INSERT ON "posts" FOR EACH ROW EXECUTE FUNCTION svc_meta.fill_user_id()',
  "INSERT INTO svc_meta.table_access (table_name, access) VALUES ('posts', 'user') ON CONFLICT (table_name) DO UPDATE SET access = EXCLUDED.access",
  `CREATE TABLE "settings" ("key" text NOT NULL, "value" jsonb DEFAULT '{}', PRIMARY KEY ("key"))`,
  'ALTER TABLE "settings" ENABLE ROW LEVEL SECURITY',
  'CREATE POLICY svc_service_all ON "settings" FOR ALL TO svc_service USING (true) WITH CHECK (true)',
  "INSERT INTO svc_meta.table_access (table_name, access) VALUES ('settings', 'service') ON CONFLICT (table_name) DO UPDATE SET access = EXCLUDED.access",
  'CREATE INDEX "posts_author_idx" ON "posts" ("author_id")',
];

describe('schema apply', () => {
  it('a dry run returns the statements and changes nothing', async () => {
    const r = await apply({ schema: BLOG, dry_run: true, name: 'blog' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ dry_run: true, applied: false, statements: BLOG_STATEMENTS, migration: null });
    expect(await publicTables()).toEqual([]);
    expect(await migrationCount()).toBe(0);
  });

  it('applies tables with a vector column and a foreign key, referenced table first, and records the migration', async () => {
    const r = await apply({ schema: BLOG, name: 'blog' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      dry_run: false,
      applied: true,
      statements: BLOG_STATEMENTS,
      migration: { id: 1, name: 'blog', checksum: sha256(BLOG_STATEMENTS), applied_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) },
    });
    expect(await publicTables()).toEqual(['authors', 'posts', 'settings']);
    const [embedding] = await rows(`select format_type(atttypid, atttypmod) as type from pg_attribute where attrelid = 'posts'::regclass and attname = 'embedding'`);
    expect(embedding.type).toBe('vector(3)');
    const [fk] = await rows(`select confrelid::regclass::text as ref from pg_constraint where conrelid = 'posts'::regclass and contype = 'f'`);
    expect(fk.ref).toBe('authors');
    expect(await rows('select table_name, access from svc_meta.table_access order by table_name')).toEqual([
      { table_name: 'authors', access: 'public' },
      { table_name: 'posts', access: 'user' },
      { table_name: 'settings', access: 'service' },
    ]);
    // The data API's catalog snapshot was invalidated: it sees the new tables at once.
    expect([...(await p.services.catalogs.get(app.app_id)).keys()]).toEqual(['authors', 'posts', 'settings']);
  });

  it('applying the same schema again plans nothing and records nothing', async () => {
    const r = await apply({ schema: BLOG, name: 'blog again' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ dry_run: false, applied: false, statements: [], migration: null });
    expect(await migrationCount()).toBe(1);
  });

  it('lists migrations oldest first with their statements', async () => {
    const r = await p.api('GET', `/v1/${app.app_id}/migrations`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      migrations: [{ id: 1, name: 'blog', checksum: sha256(BLOG_STATEMENTS), statements: BLOG_STATEMENTS, applied_at: expect.any(String), source: null }],
    });
    const service = await p.api('GET', `/v1/${app.app_id}/migrations`, { key: app.service_key.key });
    expect(service.status).toBe(200);
    expect(service.body).toEqual(r.body);
  });

  it('schema_get returns the definition format, and applying it plans nothing', async () => {
    const r = await p.api('GET', `/v1/${app.app_id}/schema`, { key: app.service_key.key });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      tables: {
        authors: {
          columns: {
            id: { type: 'uuid', primary: true, nullable: false, unique: false, default: 'gen_random_uuid()' },
            name: { type: 'text', primary: false, nullable: true, unique: false },
            email: { type: 'varchar(200)', primary: false, nullable: true, unique: true },
          },
          indexes: {},
          access: 'public',
          policies: [expect.objectContaining({ name: 'svc_public_read' }), expect.objectContaining({ name: 'svc_service_all' })],
        },
        posts: {
          columns: {
            id: { type: 'uuid', primary: true, nullable: false, unique: false, default: 'gen_random_uuid()' },
            author_id: { type: 'uuid', primary: false, nullable: true, unique: false, references: { table: 'authors', column: 'id' } },
            title: { type: 'text', primary: false, nullable: false, unique: false },
            embedding: { type: 'vector(3)', primary: false, nullable: true, unique: false },
            user_id: { type: 'uuid', primary: false, nullable: true, unique: false },
            created_at: { type: 'timestamptz', primary: false, nullable: false, unique: false, default: 'now()' },
          },
          indexes: { posts_author_idx: { columns: ['author_id'], unique: false } },
          access: 'user',
          policies: [expect.objectContaining({ name: 'svc_service_all' }), expect.objectContaining({ name: 'svc_user_own' })],
        },
        settings: {
          columns: {
            key: { type: 'text', primary: true, nullable: false, unique: false },
            value: { type: 'jsonb', primary: false, nullable: true, unique: false, default: "'{}'::jsonb" },
          },
          indexes: {},
          access: 'service',
          policies: [expect.objectContaining({ name: 'svc_service_all' })],
        },
      },
    });
    const again = await apply({ schema: r.body, name: 'round trip' }, app.app_id, app.service_key.key);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ dry_run: false, applied: false, statements: [], migration: null });
  });

  it('every allowed type with a variety of defaults is idempotent and round-trips', async () => {
    const kitchen = {
      tables: {
        kitchen: {
          columns: {
            t: { type: 'text', default: "'it''s'" },
            v: { type: 'varchar', default: "'v'::varchar" },
            v20: { type: 'varchar(20)', default: "'x'" },
            c: { type: 'char', default: "'c'" },
            c3: { type: 'char(3)' },
            i: { type: 'integer', default: -1 },
            b: { type: 'bigint', default: 9999999999 },
            s: { type: 'smallint', default: '3' },
            r: { type: 'real', default: 1.5 },
            f4: { type: 'float4' },
            f8: { type: 'float8', default: '-2.5' },
            d: { type: 'decimal', default: '1e3' },
            n: { type: 'numeric', default: 0.25 },
            n52: { type: 'numeric(5,2)', default: 2 },
            bo: { type: 'boolean', default: false },
            bl: { type: 'bool', default: 'TRUE' },
            u: { type: 'uuid', default: 'gen_random_uuid()' },
            ts: { type: 'timestamp', default: 'now()' },
            tz: { type: 'timestamptz', default: 'current_timestamp' },
            dt: { type: 'date', default: 'current_date' },
            tm: { type: 'time' },
            ttz: { type: 'timetz' },
            iv: { type: 'interval', default: "'1 day'" },
            j: { type: 'json', default: "'[]'" },
            jb: { type: 'jsonb', default: "'{}'::jsonb" },
            by: { type: 'bytea' },
            vec: { type: 'vector(1536)' },
            ta: { type: 'text[]', default: "'{}'::text[]" },
            ia: { type: 'integer[]', default: "'{}'" },
            nul: { type: 'text', default: null },
          },
        },
      },
    };
    const first = await apply({ schema: kitchen, name: 'kitchen' });
    expect(first.status).toBe(200);
    expect(first.body.applied).toBe(true);
    const second = await apply({ schema: kitchen });
    expect(second.body).toEqual({ dry_run: false, applied: false, statements: [], migration: null });
    const got = await p.api('GET', `/v1/${app.app_id}/schema`);
    expect(got.body.tables.kitchen.columns.v20).toEqual({ type: 'varchar(20)', primary: false, nullable: true, unique: false, default: "'x'::character varying" });
    expect(got.body.tables.kitchen.columns.f8.type).toBe('float8');
    expect(got.body.tables.kitchen.columns.nul).toEqual({ type: 'text', primary: false, nullable: true, unique: false });
    const round = await apply({ schema: got.body });
    expect(round.body).toEqual({ dry_run: false, applied: false, statements: [], migration: null });
    const dropped = await apply({ schema: { tables: { kitchen: { _drop: true } } }, name: 'drop kitchen' });
    expect(dropped.body.statements).toEqual(['DROP TABLE "kitchen"', "DELETE FROM svc_meta.table_access WHERE table_name IN ('kitchen')"]);
  });

  it('many defaults (probed in chunks) are idempotent too', async () => {
    const wide = (n: number) => ({ columns: Object.fromEntries(Array.from({ length: n }, (_, i) => [`c${i}`, { type: i % 2 ? 'integer' : 'text', default: i % 2 ? i : `'v${i}'` }])) });
    const schema = { tables: { wide_a: wide(90), wide_b: wide(90), wide_c: wide(30) } };
    expect((await apply({ schema, name: 'wide' })).body.applied).toBe(true);
    expect((await apply({ schema })).body.statements).toEqual([]);
    const bad = { tables: { ...schema.tables, wide_c: { columns: { ...schema.tables.wide_c.columns, c29: { type: 'integer', default: "'x'" } } } } };
    const r = await apply({ schema: bad });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toBe(`Column 'wide_c.c29' has default 'x', which does not fit its type integer: invalid input syntax for type integer: "x".`);
    expect((await apply({ schema: { tables: { wide_a: { _drop: true }, wide_b: { _drop: true }, wide_c: { _drop: true } } } })).body.statements[0]).toBe(
      'DROP TABLE "wide_a", "wide_b", "wide_c"',
    );
  });

  it('adds columns, drops listed columns and tables, and never drops what is merely omitted', async () => {
    await db.query(`insert into settings (key, value) values ('theme', '{"dark":true}')`);
    const add = await apply({
      schema: { tables: { settings: { columns: { updated_at: { type: 'timestamptz', default: 'now()' }, note: { type: 'text' } } } } },
      name: 'settings columns',
    });
    expect(add.status).toBe(200);
    expect(add.body.statements).toEqual([
      'ALTER TABLE "settings" ADD COLUMN "updated_at" timestamp with time zone DEFAULT now()',
      'ALTER TABLE "settings" ADD COLUMN "note" text',
    ]);
    expect(add.body.migration.name).toBe('settings columns');

    const dropCol = await apply({ schema: { tables: { settings: { _dropColumns: ['note', 'missing'] } } } });
    expect(dropCol.body).toMatchObject({ applied: true, statements: ['ALTER TABLE "settings" DROP COLUMN "note"'], migration: { name: 'unnamed' } });
    const columns = await rows(`select column_name from information_schema.columns where table_name = 'settings' order by ordinal_position`);
    expect(columns.map((c) => c.column_name)).toEqual(['key', 'value', 'updated_at']);
    expect(await rows('select key from settings')).toEqual([{ key: 'theme' }]);

    // Omitting everything else (authors, posts, settings' other columns) dropped nothing.
    expect(await publicTables()).toEqual(['authors', 'posts', 'settings']);

    const scratch = await apply({ schema: { tables: { scratch: { columns: { id: { type: 'integer' } } } } } });
    expect(scratch.body.applied).toBe(true);
    const drop = await apply({ schema: { tables: { scratch: { _drop: true } } }, name: 'drop scratch' });
    expect(drop.body.statements).toEqual(['DROP TABLE "scratch"', "DELETE FROM svc_meta.table_access WHERE table_name IN ('scratch')"]);
    expect(await publicTables()).toEqual(['authors', 'posts', 'settings']);
    expect(await rows(`select * from svc_meta.table_access where table_name = 'scratch'`)).toEqual([]);
    const dropAgain = await apply({ schema: { tables: { scratch: { _drop: true } } } });
    expect(dropAgain.body).toEqual({ dry_run: false, applied: false, statements: [], migration: null });
  });

  it('refuses to drop a table another table references', async () => {
    const r = await apply({ schema: { tables: { authors: { _drop: true } } } });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toBe(
      "Column 'posts.author_id' references 'authors.id', but this definition drops table 'authors'. Remove or change the reference (references, _dropColumns or _drop) in the same definition.",
    );
  });
});

describe('schema apply refusals', () => {
  const refused = async (schema: unknown, message: string | RegExp) => {
    const before = await migrationCount();
    const r = await apply({ schema, name: 'refused' });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('VALIDATION_FAILED');
    if (typeof message === 'string') expect(r.body.error.message).toBe(message);
    else expect(r.body.error.message).toMatch(message);
    expect(r.body.error.remediation).toBe('Fix the named field and send the request again.');
    expect(await migrationCount()).toBe(before);
  };

  it('more than 50 tables', async () => {
    const tables = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`t${i}`, { columns: { id: { type: 'integer' } } }]));
    await refused({ tables }, 'The schema defines 51 tables; at most 50 tables are allowed per schema definition. Apply it in several smaller definitions.');
  });

  it('a type outside the allow-list', async () => {
    await refused({ tables: { orders: { columns: { total: { type: 'money' } } } } }, /^Column 'orders\.total' has type 'money', which is not allowed\. Allowed types: /);
  });

  it('bad identifiers, reserved words and reserved prefixes', async () => {
    await refused({ tables: { 'Bad-Name': { columns: { id: { type: 'integer' } } } } }, /^Table 'Bad-Name': 'Bad-Name' is not a valid name/);
    await refused({ tables: { select: { columns: { id: { type: 'integer' } } } } }, "Table 'select': 'select' is a reserved SQL keyword; choose another name.");
    await refused({ tables: { svc_x: { columns: { id: { type: 'integer' } } } } }, "Table 'svc_x': 'svc_x' starts with a reserved prefix (svc_ or pg_); choose another name.");
    await refused({ tables: { storage: { columns: { id: { type: 'integer' } } } } }, /^Table 'storage': the name is reserved by a route of the app API/);
    await refused({ tables: { t: { columns: { from: { type: 'integer' } } } } }, "Column 't.from': 'from' is a reserved SQL keyword; choose another name.");
  });

  it('defaults outside the allow-list', async () => {
    await refused({ tables: { jobs: { columns: { at: { type: 'timestamptz', default: 'now(); drop table x' } } } } }, /^Column 'jobs\.at' has default "now\(\); drop table x", which is not allowed\./);
    await refused({ tables: { jobs: { columns: { n: { type: 'integer', default: 'pg_sleep(1)' } } } } }, /^Column 'jobs\.n' has default "pg_sleep\(1\)", which is not allowed\./);
  });

  it('a default that does not fit its type, named before anything runs', async () => {
    await refused(
      { tables: { jobs: { columns: { id: { type: 'integer' }, n: { type: 'integer', default: "'abc'" } } } } },
      `Column 'jobs.n' has default 'abc', which does not fit its type integer: invalid input syntax for type integer: "abc".`,
    );
    await refused({ tables: { jobs: { columns: { e: { type: 'vector(3)', default: "'[1,2]'" } } } } }, /^Column 'jobs\.e' has default '\[1,2\]', which does not fit its type vector\(3\): expected 3 dimensions, not 2/);
    await refused(
      { tables: { jobs: { columns: { ok: { type: 'text', default: "'fine'" }, code: { type: 'varchar(2)', default: "'abc'" } } } } },
      "Column 'jobs.code' has default 'abc', which does not fit its type character varying(2): value too long for type character varying(2).",
    );
    expect(await publicTables()).not.toContain('jobs');
  });

  it('a type change', async () => {
    await refused(
      { tables: { posts: { columns: { title: { type: 'integer', nullable: false } } } } },
      "Column 'posts.title' is text in the database but the definition says integer. Changing a column's type is not supported: add a new column with the new type, copy the data over, then remove the old column with _dropColumns.",
    );
  });

  it('a reference to a table that exists nowhere', async () => {
    await refused(
      { tables: { comments: { columns: { post_id: { type: 'uuid', references: { table: 'articles', column: 'id' } } } } } },
      "Column 'comments.post_id' references 'articles.id', but table 'articles' is neither in the schema definition nor in the database. Define 'articles' in the same schema, or fix references.table.",
    );
  });

  it('user access without a user_id column', async () => {
    await refused(
      { tables: { diary: { columns: { body: { type: 'text' } }, access: 'user' } } },
      `Table 'diary' has access 'user', which needs a 'user_id' column of type uuid to tell whose row it is. Add "user_id": { "type": "uuid" }, or choose access 'public' or 'service'.`,
    );
  });

  it('a malformed definition names the offending path', async () => {
    await refused({ tables: { t: { columns: { a: { type: 'text', nulable: false } } } } }, /^Invalid 'schema\.tables\.t\.columns\.a': Unrecognized key: "nulable"/);
    await refused({ tables: { t: { columns: { a: { type: 'text' } }, access: 'everyone' } } }, /^Invalid 'schema\.tables\.t\.access'/);
  });
});

describe('what the live data refuses', () => {
  it('a NOT NULL column without default on a table with rows is a 400, and nothing of the apply remains', async () => {
    const r = await apply({
      schema: { tables: { settings: { columns: { extra: { type: 'text' }, owner: { type: 'text', nullable: false } } } } },
    });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('VALIDATION_FAILED');
    expect(r.body.error.message).toBe(
      'Applying the schema failed at: ALTER TABLE "settings" ADD COLUMN "owner" text NOT NULL -- column "owner" of relation "settings" contains null values. ' +
        'The table has rows where this column is null: give the column a default, or add it as nullable, fill it in, then set nullable: false.',
    );
    // The first statement (ADD COLUMN extra) ran, then was rolled back with the rest.
    const columns = await rows(`select column_name from information_schema.columns where table_name = 'settings' and column_name in ('extra', 'owner')`);
    expect(columns).toEqual([]);
  });

  it('a unique constraint over duplicate values is a 409', async () => {
    await db.query(`insert into authors (name) values ('Ann'), ('Ann')`);
    const r = await apply({ schema: { tables: { authors: { columns: { name: { type: 'text', unique: true } } } } } });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('CONFLICT');
    expect(r.body.error.message).toMatch(/^Applying the schema failed at: ALTER TABLE "authors" ADD UNIQUE \("name"\) -- could not create unique index "authors_name_key" \(Key \(name\)=\(Ann\) is duplicated\.\)\.$/);
    expect(r.body.error.remediation).toMatch(/^Existing rows hold duplicate values/);
    await db.query(`delete from authors where name = 'Ann'`);
  });

  it('concurrent applies serialize: one applies, the other then finds nothing to do', async () => {
    const schema = { tables: { events: { columns: { id: { type: 'bigint', primary: true }, at: { type: 'timestamptz', default: 'now()' } } } } };
    const [a, b] = await Promise.all([apply({ schema, name: 'events' }), apply({ schema, name: 'events' })]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect([a.body.applied, b.body.applied].sort()).toEqual([false, true]);
    expect((await rows(`select count(*)::int as n from svc_meta.migrations where name = 'events'`))[0].n).toBe(1);
  });
});

describe('row-level security', () => {
  const A = '6f1c2d8e-2b7e-4a57-9a55-0d5d4c1e8b11';
  const B = '0a3e4c52-9d1b-4f8e-8a44-6c2b1e7d9f20';

  /** Runs fn inside a transaction as a data role (with claims for svc_user), then rolls back. */
  async function as<T>(role: 'svc_anon' | 'svc_user' | 'svc_service', sub: string | null, fn: () => Promise<T>): Promise<T> {
    await db.query('begin');
    try {
      await db.query(`set local role ${role}`);
      if (sub) await db.query(`select set_config('request.jwt.claims', $1, true)`, [JSON.stringify({ sub })]);
      return await fn();
    } finally {
      await db.query('rollback');
    }
  }
  const expectDenied = (promise: Promise<unknown>) => expect(promise).rejects.toMatchObject({ code: '42501' });

  beforeAll(async () => {
    await db.query(`insert into authors (id, name) values ('11111111-1111-4111-8111-111111111111', 'Ann'), ('22222222-2222-4222-8222-222222222222', 'Bob')`);
    await db.query(`insert into posts (title, user_id) values ('a1', $1), ('a2', $1), ('b1', $2)`, [A, B]);
  });

  it('an end user sees, changes and deletes only their own rows', async () => {
    await as('svc_user', A, async () => {
      expect((await db.query('select title from posts order by title')).rows).toEqual([{ title: 'a1' }, { title: 'a2' }]);
      expect((await db.query(`update posts set title = 'hacked' where title = 'b1'`)).rowCount).toBe(0);
      expect((await db.query(`delete from posts where title = 'b1'`)).rowCount).toBe(0);
      // Handing one's own row to another user violates the policy's WITH CHECK.
      await expectDenied(db.query(`update posts set user_id = $1 where title = 'a1'`, [B]));
    });
    await as('svc_user', B, async () => {
      expect((await db.query('select title, user_id from posts')).rows).toEqual([{ title: 'b1', user_id: B }]);
    });
  });

  it('the fill trigger writes the end user as owner even when another user_id is supplied', async () => {
    await as('svc_user', A, async () => {
      const own = await db.query(`insert into posts (title) values ('mine') returning user_id`);
      expect(own.rows).toEqual([{ user_id: A }]);
      const spoofed = await db.query(`insert into posts (title, user_id) values ('spoof', $1) returning user_id`, [B]);
      expect(spoofed.rows).toEqual([{ user_id: A }]);
    });
    // The service key (no end-user claims) may write rows for any user.
    await as('svc_service', null, async () => {
      const r = await db.query(`insert into posts (title, user_id) values ('for b', $1) returning user_id`, [B]);
      expect(r.rows).toEqual([{ user_id: B }]);
    });
  });

  it('a user with no rows and an anonymous caller see nothing of a user table; anonymous callers cannot write', async () => {
    await as('svc_user', '33333333-3333-4333-8333-333333333333', async () => {
      expect((await db.query('select * from posts')).rows).toEqual([]);
    });
    await as('svc_anon', null, async () => {
      expect((await db.query('select * from posts')).rows).toEqual([]);
    });
    await as('svc_anon', null, async () => {
      await expectDenied(db.query(`insert into posts (title) values ('anon')`));
    });
  });

  it('a public table is readable by everyone and writable only with the service key', async () => {
    await as('svc_anon', null, async () => {
      expect((await db.query('select name from authors order by name')).rows).toEqual([{ name: 'Ann' }, { name: 'Bob' }]);
    });
    await as('svc_anon', null, async () => {
      await expectDenied(db.query(`insert into authors (name) values ('anon')`));
    });
    await as('svc_user', A, async () => {
      expect((await db.query('select count(*)::int as n from authors')).rows).toEqual([{ n: 2 }]);
      // No user_id column: end users have no write policy on this public table.
      expect((await db.query(`update authors set name = 'x'`)).rowCount).toBe(0);
      expect((await db.query(`delete from authors`)).rowCount).toBe(0);
      await expectDenied(db.query(`insert into authors (name) values ('user')`));
    });
    await as('svc_service', null, async () => {
      expect((await db.query(`insert into authors (name) values ('svc') returning name`)).rows).toEqual([{ name: 'svc' }]);
    });
  });

  it('a service table is invisible to end users and anonymous callers', async () => {
    await as('svc_user', A, async () => {
      expect((await db.query('select * from settings')).rows).toEqual([]);
      await expectDenied(db.query(`insert into settings (key) values ('x')`));
    });
    await as('svc_anon', null, async () => {
      expect((await db.query('select * from settings')).rows).toEqual([]);
    });
    await as('svc_service', null, async () => {
      expect((await db.query('select key from settings')).rows).toEqual([{ key: 'theme' }]);
    });
  });

  it('a public table with user_id: everyone reads, each user writes only their own rows', async () => {
    const r = await apply({ schema: { tables: { reviews: { columns: { body: { type: 'text' }, user_id: { type: 'uuid' } }, access: 'public' } } } });
    expect(r.status).toBe(200);
    await db.query(`insert into reviews (body, user_id) values ('by b', $1)`, [B]);
    await as('svc_user', A, async () => {
      expect((await db.query(`insert into reviews (body) values ('by a') returning user_id`)).rows).toEqual([{ user_id: A }]);
      expect((await db.query('select body from reviews order by body')).rows).toEqual([{ body: 'by a' }, { body: 'by b' }]);
      expect((await db.query(`update reviews set body = 'x' where user_id = $1`, [B])).rowCount).toBe(0);
    });
    await as('svc_anon', null, async () => {
      expect((await db.query('select body from reviews')).rows).toEqual([{ body: 'by b' }]);
    });
  });

  it('changing access rebuilds the policies', async () => {
    const r = await apply({ schema: { tables: { settings: { access: 'public' } } }, name: 'publish settings' });
    expect(r.body.statements).toEqual([
      'DROP POLICY IF EXISTS svc_service_all ON "settings"',
      'DROP POLICY IF EXISTS svc_user_own ON "settings"',
      'DROP POLICY IF EXISTS svc_public_read ON "settings"',
      'CREATE POLICY svc_service_all ON "settings" FOR ALL TO svc_service USING (true) WITH CHECK (true)',
      'CREATE POLICY svc_public_read ON "settings" FOR SELECT TO svc_anon, svc_user USING (true)',
      "INSERT INTO svc_meta.table_access (table_name, access) VALUES ('settings', 'public') ON CONFLICT (table_name) DO UPDATE SET access = EXCLUDED.access",
    ]);
    await as('svc_anon', null, async () => {
      expect((await db.query('select key from settings')).rows).toEqual([{ key: 'theme' }]);
    });
    expect((await p.api('GET', `/v1/${app.app_id}/schema`)).body.tables.settings.access).toBe('public');
  });
});

describe('credentials', () => {
  it('a service key of another app gets 403', async () => {
    const r = await apply({ schema: BLOG }, app.app_id, other.service_key.key);
    expect(r.status).toBe(403);
    expect(r.body.error).toEqual({
      code: 'FORBIDDEN',
      message: 'The credential does not grant access to this app.',
      remediation: 'Use a credential issued for this app, or the platform key of its owner.',
      documentation_url: p.docsUrl('schema'),
    });
    expect((await p.api('GET', `/v1/${app.app_id}/schema`, { key: other.service_key.key })).status).toBe(403);
    expect((await p.api('GET', `/v1/${app.app_id}/migrations`, { key: other.service_key.key })).status).toBe(403);
  });

  it('no credential gets 401', async () => {
    const r = await apply({ schema: BLOG }, app.app_id, null);
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe('AUTH_REQUIRED');
  });

  it('the other app has its own, empty schema', async () => {
    const r = await p.api('GET', `/v1/${other.app_id}/schema`, { key: other.service_key.key });
    expect(r).toMatchObject({ status: 200, body: { tables: {} } });
    expect((await p.api('GET', `/v1/${other.app_id}/migrations`, { key: other.service_key.key })).body).toEqual({ migrations: [] });
  });
});

describe('references.onDelete', () => {
  const ALICE = '11111111-1111-4111-8111-111111111111';
  const BOB = '22222222-2222-4222-8222-222222222222';
  let refs: CreatedApp;
  let alice: string;
  let bob: string;
  const key = () => refs.service_key.key;
  const data = (method: string, path: string, token: string, body?: unknown) =>
    p.api(method, `/v1/${refs.app_id}${path}`, { key: token, body, headers: { prefer: 'return=representation' } });
  const definition = (onDelete?: string) => ({
    tables: {
      lists: { columns: { id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' }, user_id: { type: 'uuid' }, name: { type: 'text' } } },
      items: {
        columns: {
          id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' },
          user_id: { type: 'uuid' },
          list_id: { type: 'uuid', references: { table: 'lists', column: 'id', ...(onDelete ? { onDelete } : {}) } },
        },
      },
    },
  });
  const fkAction = async () => {
    const client = new pg.Client({ connectionString: databaseUrl(p.appDbPrefix + refs.app_id) });
    await client.connect();
    try {
      return (await client.query(`select conname, confdeltype from pg_constraint where conrelid = 'items'::regclass and contype = 'f'`)).rows;
    } finally {
      await client.end();
    }
  };

  beforeAll(async () => {
    refs = (await p.api('POST', '/init', { body: { name: 'Schema refs' } })).body;
    alice = await p.services.endUserTokens.sign(refs.app_id, { sub: ALICE, role: 'authenticated' }, 600);
    bob = await p.services.endUserTokens.sign(refs.app_id, { sub: BOB, role: 'authenticated' }, 600);
    expect((await apply({ schema: definition(), name: 'lists' }, refs.app_id, key())).body.applied).toBe(true);
  });

  it('without onDelete another user can pin your row: Postgres checks references without row-level security', async () => {
    const list = (await data('POST', '/lists', alice, { name: 'mine' })).body[0];
    const item = await data('POST', '/items', bob, { list_id: list.id });
    expect(item).toMatchObject({ status: 201, body: [{ user_id: BOB, list_id: list.id }] });
    const refused = await p.api('DELETE', `/v1/${refs.app_id}/lists/${list.id}`, { key: alice });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('CONFLICT');
    expect(refused.body.error.remediation).toMatch(/declare references\.onDelete 'cascade' or 'set null'/);
    await p.api('DELETE', `/v1/${refs.app_id}/items?list_id=eq.${list.id}`, { key: key() });
  });

  it('a changed onDelete drops and re-adds the key (dry run first), once; schema_get shows it and round-trips', async () => {
    const dry = await apply({ schema: definition('cascade'), dry_run: true }, refs.app_id, key());
    expect(dry.body).toEqual({
      dry_run: true,
      applied: false,
      statements: [
        'ALTER TABLE "items" DROP CONSTRAINT "items_list_id_fkey"',
        'ALTER TABLE "items" ADD FOREIGN KEY ("list_id") REFERENCES "lists" ("id") ON DELETE CASCADE',
      ],
      migration: null,
    });
    expect(await fkAction()).toEqual([{ conname: 'items_list_id_fkey', confdeltype: 'a' }]);
    const applied = await apply({ schema: definition('cascade'), name: 'cascade items' }, refs.app_id, key());
    expect(applied.body).toMatchObject({ applied: true, statements: dry.body.statements });
    expect(await fkAction()).toEqual([{ conname: 'items_list_id_fkey', confdeltype: 'c' }]);
    expect((await apply({ schema: definition('cascade') }, refs.app_id, key())).body).toEqual({ dry_run: false, applied: false, statements: [], migration: null });
    const got = await p.api('GET', `/v1/${refs.app_id}/schema`, { key: key() });
    expect(got.body.tables.items.columns.list_id).toEqual({
      type: 'uuid',
      primary: false,
      nullable: true,
      unique: false,
      references: { table: 'lists', column: 'id', onDelete: 'cascade' },
    });
    expect((await apply({ schema: got.body }, refs.app_id, key())).body.statements).toEqual([]);
  });

  it("cascade: the owner deletes their row and the other user's rows pointing at it go with it", async () => {
    const list = (await data('POST', '/lists', alice, { name: 'cascading' })).body[0];
    expect((await data('POST', '/items', bob, { list_id: list.id })).status).toBe(201);
    expect((await p.api('DELETE', `/v1/${refs.app_id}/lists/${list.id}`, { key: alice })).status).toBe(204);
    expect((await p.api('GET', `/v1/${refs.app_id}/items?list_id=eq.${list.id}`, { key: key() })).body).toEqual([]);
  });

  it('set null: the pointing rows stay with a null reference; set null on a NOT NULL column is refused', async () => {
    const changed = await apply({ schema: definition('set null') }, refs.app_id, key());
    expect(changed.body.statements).toEqual([
      'ALTER TABLE "items" DROP CONSTRAINT "items_list_id_fkey"',
      'ALTER TABLE "items" ADD FOREIGN KEY ("list_id") REFERENCES "lists" ("id") ON DELETE SET NULL',
    ]);
    const list = (await data('POST', '/lists', alice, { name: 'nulling' })).body[0];
    const item = (await data('POST', '/items', bob, { list_id: list.id })).body[0];
    expect((await p.api('DELETE', `/v1/${refs.app_id}/lists/${list.id}`, { key: alice })).status).toBe(204);
    expect((await p.api('GET', `/v1/${refs.app_id}/items/${item.id}`, { key: bob })).body).toEqual({ id: item.id, user_id: BOB, list_id: null });

    const notNull = definition('set null');
    (notNull.tables.items.columns.list_id as Record<string, unknown>).nullable = false;
    const refused = await apply({ schema: notNull }, refs.app_id, key());
    expect(refused.status).toBe(400);
    expect(refused.body.error).toEqual({
      code: 'VALIDATION_FAILED',
      message: "Column 'items.list_id' has references.onDelete 'set null' but is never null (primary or nullable: false); choose 'cascade', or make the column nullable.",
      remediation: 'Fix the named field and send the request again.',
      documentation_url: p.docsUrl('schema'),
    });
    // Omitting onDelete goes back to Postgres's default (no action).
    expect((await apply({ schema: definition() }, refs.app_id, key())).body.statements).toEqual([
      'ALTER TABLE "items" DROP CONSTRAINT "items_list_id_fkey"',
      'ALTER TABLE "items" ADD FOREIGN KEY ("list_id") REFERENCES "lists" ("id")',
    ]);
    expect(await fkAction()).toEqual([{ conname: 'items_list_id_fkey', confdeltype: 'a' }]);
  });
});
