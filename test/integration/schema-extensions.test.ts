import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { databaseUrl } from '../helpers/db.ts';

/*
 * Our additions to the schema definition (issue 17, "Schema extensions"): range and tsvector types, `enum` on text
 * columns (a CHECK), `identity: true` on integer/bigint primary keys, `references.onUpdate`, and table-level
 * multi-column `foreignKeys`. Each is planned exactly, works in Postgres, is idempotent and round-trips through schema_get.
 */

interface CreatedApp {
  app_id: string;
  service_key: { key: string };
}

let p: TestPlatform;
let app: CreatedApp;
let db: pg.Client;

beforeAll(async () => {
  p = await startTestPlatform();
  app = (await p.api('POST', '/init', { body: { name: 'Schema extensions' } })).body;
  db = new pg.Client({ connectionString: databaseUrl(p.appDbPrefix + app.app_id) });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await p?.close();
});

const apply = (body: unknown) => p.api('POST', `/v1/${app.app_id}/schema/apply`, { body });
const getSchema = async () => (await p.api('GET', `/v1/${app.app_id}/schema`)).body;
const rows = async (sql: string, params?: unknown[]) => (await db.query(sql, params)).rows;
const migrationCount = async () => (await rows('select count(*)::int as n from svc_meta.migrations'))[0].n as number;
const NOTHING = { dry_run: false, applied: false, statements: [], migration: null };
/** Postgres's error code for a statement, or 'ok'. */
const pgCode = async (sql: string, params?: unknown[]) => {
  try {
    await db.query(sql, params);
    return 'ok';
  } catch (err) {
    return (err as { code: string }).code;
  }
};

const SERVICE_ONLY = (t: string) => [
  `ALTER TABLE "${t}" ENABLE ROW LEVEL SECURITY`,
  `CREATE POLICY svc_service_all ON "${t}" FOR ALL TO svc_service USING (true) WITH CHECK (true)`,
  `INSERT INTO svc_meta.table_access (table_name, access) VALUES ('${t}', 'service') ON CONFLICT (table_name) DO UPDATE SET access = EXCLUDED.access`,
];
const USER_OWNED = (t: string) => [
  `ALTER TABLE "${t}" ENABLE ROW LEVEL SECURITY`,
  `CREATE POLICY svc_service_all ON "${t}" FOR ALL TO svc_service USING (true) WITH CHECK (true)`,
  `CREATE POLICY svc_user_own ON "${t}" FOR ALL TO svc_user USING ("user_id" = public.current_user_id()) WITH CHECK ("user_id" = public.current_user_id())`,
  `CREATE OR REPLACE TRIGGER svc_fill_user_id BEFORE INSERT ON "${t}" FOR EACH ROW EXECUTE FUNCTION svc_meta.fill_user_id()`,
  `INSERT INTO svc_meta.table_access (table_name, access) VALUES ('${t}', 'user') ON CONFLICT (table_name) DO UPDATE SET access = EXCLUDED.access`,
];

/** Applies a definition that must be refused: 400 VALIDATION_FAILED with this message, and nothing recorded. */
async function refused(schema: unknown, message: string | RegExp): Promise<void> {
  const before = await migrationCount();
  const r = await apply({ schema, name: 'refused' });
  expect(r.status).toBe(400);
  expect(r.body.error.code).toBe('VALIDATION_FAILED');
  if (typeof message === 'string') expect(r.body.error.message).toBe(message);
  else expect(r.body.error.message).toMatch(message);
  expect(await migrationCount()).toBe(before);
}

describe('range and tsvector types', () => {
  const SPANS = {
    tables: {
      spans: {
        columns: {
          id: { type: 'integer', primary: true },
          i4: { type: 'int4range' },
          i8: { type: 'INT8RANGE' },
          n: { type: 'numrange' },
          ts: { type: 'tsrange' },
          tz: { type: 'tstzrange' },
          d: { type: 'daterange', default: "'[2020-01-01,2021-01-01)'" },
          doc: { type: 'tsvector' },
          many: { type: 'int4range[]' },
        },
      },
    },
  };

  it('creates them in format_type spelling, stores values, is idempotent and round-trips', async () => {
    const r = await apply({ schema: SPANS, name: 'spans' });
    expect(r.status).toBe(200);
    expect(r.body.statements).toEqual([
      `CREATE TABLE "spans" ("id" integer NOT NULL, "i4" int4range, "i8" int8range, "n" numrange, "ts" tsrange, "tz" tstzrange, ` +
        `"d" daterange DEFAULT '[2020-01-01,2021-01-01)', "doc" tsvector, "many" int4range[], PRIMARY KEY ("id"))`,
      ...SERVICE_ONLY('spans'),
    ]);
    await db.query(
      `insert into spans (id, i4, i8, n, ts, tz, doc, many) values (1, '[1,5)', '[1,10000000000)', '[0.5,1.5]', '[2024-01-01 10:00,2024-01-01 11:00)', ` +
        `'[2024-01-01 10:00Z,2024-01-01 11:00Z)', to_tsvector('simple', 'hello range world'), '{"[1,2)","[3,4)"}')`,
    );
    expect(
      await rows(
        `select i4::text, i8::text, d::text, doc @@ to_tsquery('simple', 'range') as hit, 3 <@ i4 as inside, ` +
          `tz @> '2024-01-01 10:30Z'::timestamptz as during, cardinality(many) as n from spans`,
      ),
    ).toEqual([{ i4: '[1,5)', i8: '[1,10000000000)', d: '[2020-01-01,2021-01-01)', hit: true, inside: true, during: true, n: 2 }]);
    expect((await apply({ schema: SPANS })).body).toEqual(NOTHING);
    const got = await getSchema();
    expect(got.tables.spans.columns).toEqual({
      id: { type: 'integer', primary: true, nullable: false, unique: false },
      i4: { type: 'int4range', primary: false, nullable: true, unique: false },
      i8: { type: 'int8range', primary: false, nullable: true, unique: false },
      n: { type: 'numrange', primary: false, nullable: true, unique: false },
      ts: { type: 'tsrange', primary: false, nullable: true, unique: false },
      tz: { type: 'tstzrange', primary: false, nullable: true, unique: false },
      d: { type: 'daterange', primary: false, nullable: true, unique: false, default: "'[2020-01-01,2021-01-01)'::daterange" },
      doc: { type: 'tsvector', primary: false, nullable: true, unique: false },
      many: { type: 'int4range[]', primary: false, nullable: true, unique: false },
    });
    expect((await apply({ schema: got })).body).toEqual(NOTHING);
  });

  it('a range type with a parameter is still refused, naming the column', async () => {
    await refused({ tables: { spans2: { columns: { r: { type: 'int4range(3)' } } } } }, /^Column 'spans2\.r' has type 'int4range\(3\)', which is not allowed\. Allowed types: .*int4range, int8range, numrange, tsrange, tstzrange, daterange, tsvector/);
  });
});

describe('enum', () => {
  const SPECIAL = ["it's", 'say "hi"', 'back\\slash', 'a,b', '{braces}', ' padded ', ''];
  const TICKETS = (status: string[], priority?: string[]) => ({
    tables: {
      tickets: {
        columns: {
          id: { type: 'integer', primary: true },
          status: { type: 'text', nullable: false, enum: status },
          priority: { type: 'varchar(10)', ...(priority ? { enum: priority } : {}) },
        },
      },
    },
  });

  it('a dry run plans named CHECK constraints and creates nothing', async () => {
    const r = await apply({ schema: TICKETS(['open', 'closed'], ['low', 'high']), dry_run: true });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      dry_run: true,
      applied: false,
      statements: [
        `CREATE TABLE "tickets" ("id" integer NOT NULL, "status" text NOT NULL CONSTRAINT "tickets_status_enum" CHECK ("status" = ANY ('{"open","closed"}'::text[])), ` +
          `"priority" character varying(10) CONSTRAINT "tickets_priority_enum" CHECK ("priority" = ANY ('{"low","high"}'::text[])), PRIMARY KEY ("id"))`,
        ...SERVICE_ONLY('tickets'),
      ],
      migration: null,
    });
    expect(await rows(`select to_regclass('tickets') as t`)).toEqual([{ t: null }]);
  });

  it('the check refuses other values and allows null on a nullable column', async () => {
    expect((await apply({ schema: TICKETS(['open', 'closed'], ['low', 'high']), name: 'tickets' })).body.applied).toBe(true);
    expect(await pgCode(`insert into tickets (id, status, priority) values (1, 'open', 'low')`)).toBe('ok');
    expect(await pgCode(`insert into tickets (id, status, priority) values (2, 'closed', null)`)).toBe('ok');
    expect(await pgCode(`insert into tickets (id, status) values (3, 'pending')`)).toBe('23514');
    expect(await pgCode(`insert into tickets (id, status, priority) values (4, 'open', 'urgent')`)).toBe('23514');
    expect(await pgCode(`update tickets set status = 'OPEN' where id = 1`)).toBe('23514');
    // Through the data API: 400 naming the constraint.
    const viaApi = await p.api('POST', `/v1/${app.app_id}/tickets`, { body: { id: 5, status: 'bogus' }, key: app.service_key.key });
    expect(viaApi.status).toBe(400);
    expect(viaApi.body.error.code).toBe('VALIDATION_FAILED');
    expect(viaApi.body.error.message).toMatch(/tickets_status_enum/);
  });

  it('is idempotent and round-trips through schema_get', async () => {
    expect((await apply({ schema: TICKETS(['open', 'closed'], ['low', 'high']) })).body).toEqual(NOTHING);
    const got = await getSchema();
    expect(got.tables.tickets.columns).toEqual({
      id: { type: 'integer', primary: true, nullable: false, unique: false },
      status: { type: 'text', primary: false, nullable: false, unique: false, enum: ['open', 'closed'] },
      priority: { type: 'varchar(10)', primary: false, nullable: true, unique: false, enum: ['low', 'high'] },
    });
    expect((await apply({ schema: got })).body).toEqual(NOTHING);
  });

  it('values with quotes, backslashes, commas, braces, spaces and the empty string survive the round trip', async () => {
    const r = await apply({ schema: TICKETS(['open', 'closed', ...SPECIAL], ['low', 'high']) });
    expect(r.body.statements).toEqual([
      'ALTER TABLE "tickets" DROP CONSTRAINT "tickets_status_enum"',
      `ALTER TABLE "tickets" ADD CONSTRAINT "tickets_status_enum" CHECK ("status" = ANY ('{"open","closed","it''s","say \\"hi\\"","back\\\\slash","a,b","{braces}"," padded ",""}'::text[]))`,
    ]);
    for (const [i, value] of SPECIAL.entries()) expect(await pgCode('insert into tickets (id, status) values ($1, $2)', [100 + i, value])).toBe('ok');
    expect(await pgCode(`insert into tickets (id, status) values (200, 'padded')`)).toBe('23514');
    expect((await getSchema()).tables.tickets.columns.status.enum).toEqual(['open', 'closed', ...SPECIAL]);
    expect((await apply({ schema: TICKETS(['open', 'closed', ...SPECIAL], ['low', 'high']) })).body).toEqual(NOTHING);
    // A listed value twice counts once.
    expect((await apply({ schema: TICKETS(['open', 'open', 'closed', ...SPECIAL], ['low', 'high']) })).body).toEqual(NOTHING);
  });

  it('narrowing below the stored values is refused with the reason, and nothing is half-applied', async () => {
    const before = await migrationCount();
    const r = await apply({ schema: TICKETS(['open'], ['low']), name: 'narrow' });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('VALIDATION_FAILED');
    expect(r.body.error.message).toBe(
      `Applying the schema failed at: ALTER TABLE "tickets" ADD CONSTRAINT "tickets_status_enum" CHECK ("status" = ANY ('{"open"}'::text[])) -- ` +
        'check constraint "tickets_status_enum" of relation "tickets" is violated by some row. ' +
        'Existing rows hold values outside the enum: update or delete those rows, or widen the enum, then apply again.',
    );
    expect(await migrationCount()).toBe(before);
    // The old checks are still there (the drop rolled back with the failed add).
    expect((await getSchema()).tables.tickets.columns.priority.enum).toEqual(['low', 'high']);
    expect((await getSchema()).tables.tickets.columns.status.enum).toEqual(['open', 'closed', ...SPECIAL]);
  });

  it('leaving enum out of a listed column removes the check; adding it to an existing column adds it', async () => {
    const removed = await apply({ schema: TICKETS(['open', 'closed', ...SPECIAL]) });
    expect(removed.body.statements).toEqual(['ALTER TABLE "tickets" DROP CONSTRAINT "tickets_priority_enum"']);
    expect(await pgCode(`insert into tickets (id, status, priority) values (300, 'open', 'urgent')`)).toBe('ok');
    expect((await getSchema()).tables.tickets.columns.priority).toEqual({ type: 'varchar(10)', primary: false, nullable: true, unique: false });
    const added = await apply({ schema: TICKETS(['open', 'closed', ...SPECIAL], ['low', 'high', 'urgent']), dry_run: true });
    expect(added.body.statements).toEqual([
      `ALTER TABLE "tickets" ADD CONSTRAINT "tickets_priority_enum" CHECK ("priority" = ANY ('{"low","high","urgent"}'::text[]))`,
    ]);
    // A new column of an existing table carries its check inline.
    const withColumn = TICKETS(['open', 'closed', ...SPECIAL]);
    (withColumn.tables.tickets.columns as Record<string, unknown>).kind = { type: 'text', enum: ['bug', 'feature'] };
    const column = await apply({ schema: withColumn });
    expect(column.body.statements).toEqual([
      `ALTER TABLE "tickets" ADD COLUMN "kind" text CONSTRAINT "tickets_kind_enum" CHECK ("kind" = ANY ('{"bug","feature"}'::text[]))`,
    ]);
    expect(await pgCode(`insert into tickets (id, status, kind) values (301, 'open', 'question')`)).toBe('23514');
    expect((await apply({ schema: withColumn })).body).toEqual(NOTHING);
  });

  it('long table and column names get a deterministic constraint name within 63 characters', async () => {
    const table = `t${'a'.repeat(40)}`;
    const column = `c${'b'.repeat(40)}`;
    const schema = { tables: { [table]: { columns: { [column]: { type: 'text', enum: ['x'] } } } } };
    const r = await apply({ schema });
    expect(r.body.applied).toBe(true);
    const [check] = await rows(`select conname from pg_constraint where conrelid = $1::regclass and contype = 'c'`, [table]);
    expect(check.conname).toMatch(/^ta{40}_cb{6}_[0-9a-f]{8}_enum$/);
    expect(check.conname).toHaveLength(63);
    expect((await getSchema()).tables[table].columns[column].enum).toEqual(['x']);
    expect((await apply({ schema })).body).toEqual(NOTHING);
  });

  it('refuses enum on other types and empty lists, naming the column', async () => {
    await refused({ tables: { e1: { columns: { n: { type: 'integer', enum: ['1'] } } } } }, "Column 'e1.n' has enum but type integer; enum is only for text and varchar columns.");
    await refused({ tables: { e1: { columns: { n: { type: 'text[]', enum: ['a'] } } } } }, "Column 'e1.n' has enum but type text[]; enum is only for text and varchar columns.");
    await refused({ tables: { e1: { columns: { n: { type: 'char(2)', enum: ['ab'] } } } } }, "Column 'e1.n' has enum but type char(2); enum is only for text and varchar columns.");
    await refused({ tables: { e1: { columns: { n: { type: 'text', enum: [] } } } } }, "Column 'e1.n' has 0 enum values; list 1 to 1000.");
    await refused({ tables: { e1: { columns: { n: { type: 'text', enum: 'a' } } } } }, /^Invalid 'schema\.tables\.e1\.columns\.n\.enum'/);
    await refused({ tables: { e1: { columns: { n: { type: 'text', enum: [1] } } } } }, /^Invalid 'schema\.tables\.e1\.columns\.n\.enum\.0'/);
    expect(await rows(`select to_regclass('e1') as t`)).toEqual([{ t: null }]);
  });
});

describe('identity', () => {
  const COUNTERS = (identity: boolean, extra: Record<string, unknown> = {}) => ({
    tables: {
      counters: {
        columns: { id: { type: 'bigint', primary: true, ...(identity ? { identity: true } : {}), ...extra }, label: { type: 'text' } },
      },
    },
  });

  it('creates a generated-by-default identity that fills ids, via SQL and the data API', async () => {
    const r = await apply({ schema: COUNTERS(true), name: 'counters' });
    expect(r.body.statements).toEqual([
      'CREATE TABLE "counters" ("id" bigint GENERATED BY DEFAULT AS IDENTITY NOT NULL, "label" text, PRIMARY KEY ("id"))',
      ...SERVICE_ONLY('counters'),
    ]);
    expect(await rows(`insert into counters (label) values ('a'), ('b') returning id`)).toEqual([{ id: '1' }, { id: '2' }]);
    const viaApi = await p.api('POST', `/v1/${app.app_id}/counters`, {
      body: { label: 'c' },
      key: app.service_key.key,
      headers: { prefer: 'return=representation' },
    });
    expect(viaApi.status).toBe(201);
    expect(viaApi.body).toEqual([{ id: 3, label: 'c' }]);
    // By default, not always: an explicit id is accepted.
    expect(await pgCode(`insert into counters (id, label) values (100, 'explicit')`)).toBe('ok');
  });

  it('is idempotent and round-trips (identity shows instead of a default)', async () => {
    expect((await apply({ schema: COUNTERS(true) })).body).toEqual(NOTHING);
    const got = await getSchema();
    expect(got.tables.counters.columns.id).toEqual({ type: 'bigint', primary: true, nullable: false, unique: false, identity: true });
    expect((await apply({ schema: got })).body).toEqual(NOTHING);
  });

  it('leaving identity out drops it; setting it again restarts past the largest id', async () => {
    const dropped = await apply({ schema: COUNTERS(false), name: 'no identity' });
    expect(dropped.body.statements).toEqual(['ALTER TABLE "counters" ALTER COLUMN "id" DROP IDENTITY']);
    expect(await pgCode(`insert into counters (label) values ('no id')`)).toBe('23502');
    expect((await getSchema()).tables.counters.columns.id).toEqual({ type: 'bigint', primary: true, nullable: false, unique: false });

    const dry = await apply({ schema: COUNTERS(true), dry_run: true });
    expect(dry.body.statements).toEqual([
      'ALTER TABLE "counters" ALTER COLUMN "id" ADD GENERATED BY DEFAULT AS IDENTITY',
      `SELECT setval(pg_get_serial_sequence('"counters"', 'id'), greatest(max("id"), 0) + 1, false) FROM "counters"`,
    ]);
    const again = await apply({ schema: COUNTERS(true), name: 'identity again' });
    expect(again.body.statements).toEqual(dry.body.statements);
    expect(await rows(`insert into counters (label) values ('after') returning id`)).toEqual([{ id: '101' }]);
    expect((await apply({ schema: COUNTERS(true) })).body).toEqual(NOTHING);
  });

  it('an existing column with a default trades it for an identity (and back) in one apply', async () => {
    expect((await apply({ schema: COUNTERS(false, { default: 7 }) })).body.statements).toEqual([
      'ALTER TABLE "counters" ALTER COLUMN "id" DROP IDENTITY',
      'ALTER TABLE "counters" ALTER COLUMN "id" SET DEFAULT 7',
    ]);
    expect((await apply({ schema: COUNTERS(true) })).body.statements).toEqual([
      'ALTER TABLE "counters" ALTER COLUMN "id" DROP DEFAULT',
      'ALTER TABLE "counters" ALTER COLUMN "id" ADD GENERATED BY DEFAULT AS IDENTITY',
      `SELECT setval(pg_get_serial_sequence('"counters"', 'id'), greatest(max("id"), 0) + 1, false) FROM "counters"`,
    ]);
    expect(await rows(`insert into counters (label) values ('again') returning id`)).toEqual([{ id: '102' }]);
  });

  it('refuses identity on other types, on non-primary columns and beside a default', async () => {
    await refused(
      { tables: { i1: { columns: { id: { type: 'uuid', primary: true, identity: true } } } } },
      "Column 'i1.id' has identity: true but type uuid; identity is only for integer and bigint primary-key columns.",
    );
    await refused(
      { tables: { i1: { columns: { id: { type: 'smallint', primary: true, identity: true } } } } },
      "Column 'i1.id' has identity: true but type smallint; identity is only for integer and bigint primary-key columns.",
    );
    await refused(
      { tables: { i1: { columns: { n: { type: 'integer', identity: true } } } } },
      "Column 'i1.n' has identity: true but is not primary; identity is only for primary-key columns. Add primary: true or remove identity.",
    );
    await refused(
      { tables: { i1: { columns: { id: { type: 'integer', primary: true, identity: true, default: 1 } } } } },
      "Column 'i1.id' has both identity: true and a default; an identity column makes its own values. Remove default.",
    );
    await refused({ tables: { i1: { columns: { id: { type: 'integer', primary: true, identity: 'yes' } } } } }, /^Invalid 'schema\.tables\.i1\.columns\.id\.identity'/);
  });
});

describe('references.onUpdate', () => {
  const FAMILY = (onUpdate?: string) => ({
    tables: {
      parents: { columns: { code: { type: 'text', primary: true } } },
      children: {
        columns: {
          id: { type: 'integer', primary: true },
          parent_code: { type: 'text', references: { table: 'parents', column: 'code', onDelete: 'cascade', ...(onUpdate ? { onUpdate } : {}) } },
        },
      },
    },
  });

  it('creates ON UPDATE CASCADE, which carries a changed key to the rows pointing at it', async () => {
    const r = await apply({ schema: FAMILY('cascade'), name: 'family' });
    expect(r.body.statements).toEqual([
      'CREATE TABLE "parents" ("code" text NOT NULL, PRIMARY KEY ("code"))',
      ...SERVICE_ONLY('parents'),
      'CREATE TABLE "children" ("id" integer NOT NULL, "parent_code" text REFERENCES "parents" ("code") ON DELETE CASCADE ON UPDATE CASCADE, PRIMARY KEY ("id"))',
      ...SERVICE_ONLY('children'),
    ]);
    await db.query(`insert into parents values ('old'); insert into children values (1, 'old'), (2, 'old')`);
    await db.query(`update parents set code = 'new' where code = 'old'`);
    expect(await rows('select id, parent_code from children order by id')).toEqual([
      { id: 1, parent_code: 'new' },
      { id: 2, parent_code: 'new' },
    ]);
  });

  it('is idempotent and round-trips', async () => {
    expect((await apply({ schema: FAMILY('cascade') })).body).toEqual(NOTHING);
    const got = await getSchema();
    expect(got.tables.children.columns.parent_code).toEqual({
      type: 'text',
      primary: false,
      nullable: true,
      unique: false,
      references: { table: 'parents', column: 'code', onDelete: 'cascade', onUpdate: 'cascade' },
    });
    expect((await apply({ schema: got })).body).toEqual(NOTHING);
  });

  it('a changed onUpdate drops and re-adds the key; restrict then refuses the update; omitted goes back to no action', async () => {
    const dry = await apply({ schema: FAMILY('restrict'), dry_run: true });
    expect(dry.body.statements).toEqual([
      'ALTER TABLE "children" DROP CONSTRAINT "children_parent_code_fkey"',
      'ALTER TABLE "children" ADD FOREIGN KEY ("parent_code") REFERENCES "parents" ("code") ON DELETE CASCADE ON UPDATE RESTRICT',
    ]);
    expect((await apply({ schema: FAMILY('restrict') })).body.statements).toEqual(dry.body.statements);
    expect(await pgCode(`update parents set code = 'newer' where code = 'new'`)).toBe('23503');
    expect(await rows(`select confupdtype from pg_constraint where conname = 'children_parent_code_fkey'`)).toEqual([{ confupdtype: 'r' }]);
    expect((await apply({ schema: FAMILY() })).body.statements).toEqual([
      'ALTER TABLE "children" DROP CONSTRAINT "children_parent_code_fkey"',
      'ALTER TABLE "children" ADD FOREIGN KEY ("parent_code") REFERENCES "parents" ("code") ON DELETE CASCADE',
    ]);
    expect(await rows(`select confupdtype from pg_constraint where conname = 'children_parent_code_fkey'`)).toEqual([{ confupdtype: 'a' }]);
    expect(await pgCode(`update parents set code = 'newer' where code = 'new'`)).toBe('23503');
  });

  it("refuses onUpdate 'set null' on a column that is never null, and an unknown action", async () => {
    const schema = FAMILY('set null');
    (schema.tables.children.columns.parent_code as Record<string, unknown>).nullable = false;
    await refused(
      schema,
      "Column 'children.parent_code' has references.onUpdate 'set null' but is never null (primary or nullable: false); choose 'cascade', or make the column nullable.",
    );
    await refused(FAMILY('set default'), /^Invalid 'schema\.tables\.children\.columns\.parent_code\.references\.onUpdate'/);
  });
});

describe('composite foreign keys', () => {
  const ALICE = '11111111-1111-4111-8111-111111111111';
  const BOB = '22222222-2222-4222-8222-222222222222';
  const LISTS = {
    columns: { id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' }, user_id: { type: 'uuid' }, name: { type: 'text' } },
    indexes: { lists_owner_key: { columns: ['user_id', 'id'], unique: true } },
  };
  const ITEMS_COLUMNS = {
    id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' },
    user_id: { type: 'uuid' },
    list_id: { type: 'uuid' },
  };
  const TODO = (foreignKeys?: unknown[]) => ({
    tables: { items: { columns: ITEMS_COLUMNS, ...(foreignKeys ? { foreignKeys } : {}) }, lists: LISTS },
  });
  const OWNED = { columns: ['user_id', 'list_id'], references: { table: 'lists', columns: ['user_id', 'id'] }, onDelete: 'cascade' };
  const ADD_OWNED =
    'ALTER TABLE "items" ADD CONSTRAINT "items_user_id_list_id_fkey" FOREIGN KEY ("user_id", "list_id") REFERENCES "lists" ("user_id", "id") ON DELETE CASCADE';

  it('creates the key after the unique index it points at, in a dry run and for real', async () => {
    const statements = [
      'CREATE TABLE "items" ("id" uuid DEFAULT gen_random_uuid() NOT NULL, "user_id" uuid, "list_id" uuid, PRIMARY KEY ("id"))',
      ...USER_OWNED('items'),
      'CREATE TABLE "lists" ("id" uuid DEFAULT gen_random_uuid() NOT NULL, "user_id" uuid, "name" text, PRIMARY KEY ("id"))',
      ...USER_OWNED('lists'),
      'CREATE UNIQUE INDEX "lists_owner_key" ON "lists" ("user_id", "id")',
      ADD_OWNED,
    ];
    // items is listed first: its key still comes after both tables and the index.
    const dry = await apply({ schema: TODO([OWNED]), dry_run: true });
    expect(dry.body).toEqual({ dry_run: true, applied: false, statements, migration: null });
    const r = await apply({ schema: TODO([OWNED]), name: 'todo' });
    expect(r.status).toBe(200);
    expect(r.body.statements).toEqual(statements);
    expect(await rows(`select conname, confdeltype, confupdtype from pg_constraint where conrelid = 'items'::regclass and contype = 'f'`)).toEqual([
      { conname: 'items_user_id_list_id_fkey', confdeltype: 'c', confupdtype: 'a' },
    ]);
  });

  it('rejects orphans: a row must point at a list of the same owner', async () => {
    const [list] = await rows(`insert into lists (user_id, name) values ($1, 'alice''s') returning id`, [ALICE]);
    expect(await pgCode('insert into items (user_id, list_id) values ($1, $2)', [ALICE, list.id])).toBe('ok');
    expect(await pgCode('insert into items (user_id, list_id) values ($1, $2)', [BOB, list.id])).toBe('23503');
    expect(await pgCode('insert into items (user_id, list_id) values ($1, gen_random_uuid())', [ALICE])).toBe('23503');
    // MATCH SIMPLE: a null column leaves the row unchecked.
    expect(await pgCode('insert into items (user_id, list_id) values ($1, null)', [BOB])).toBe('ok');

    // Through the data API as Bob: his id is filled in, so he cannot pin Alice's list (the point of such a key).
    const bob = await p.services.endUserTokens.sign(app.app_id, { sub: BOB, role: 'authenticated' }, 600);
    const pinned = await p.api('POST', `/v1/${app.app_id}/items`, { key: bob, body: { list_id: list.id } });
    expect(pinned.status).toBe(409);
    expect(pinned.body.error.code).toBe('CONFLICT');

    // Alice deletes her list: her items go with it (ON DELETE CASCADE).
    await db.query('delete from lists where id = $1', [list.id]);
    expect(await rows('select count(*)::int as n from items where list_id = $1', [list.id])).toEqual([{ n: 0 }]);
  });

  it('is idempotent and round-trips: schema_get shows it in the table foreignKeys, not as a column reference', async () => {
    expect((await apply({ schema: TODO([OWNED]) })).body).toEqual(NOTHING);
    // Omitted foreignKeys keep the table's keys.
    expect((await apply({ schema: TODO() })).body).toEqual(NOTHING);
    const got = await getSchema();
    expect(got.tables.items).toEqual({
      columns: {
        id: { type: 'uuid', primary: true, nullable: false, unique: false, default: 'gen_random_uuid()' },
        user_id: { type: 'uuid', primary: false, nullable: true, unique: false },
        list_id: { type: 'uuid', primary: false, nullable: true, unique: false },
      },
      indexes: {},
      foreignKeys: [{ columns: ['user_id', 'list_id'], references: { table: 'lists', columns: ['user_id', 'id'] }, onDelete: 'cascade' }],
      access: 'user',
      policies: [expect.objectContaining({ name: 'svc_service_all' }), expect.objectContaining({ name: 'svc_user_own' })],
    });
    expect(got.tables.lists.foreignKeys).toBeUndefined();
    expect((await apply({ schema: got })).body).toEqual(NOTHING);
  });

  it('a changed action drops and re-adds the key; an empty list drops it; the key then comes back', async () => {
    const changed = await apply({ schema: TODO([{ ...OWNED, onUpdate: 'cascade' }]), name: 'on update' });
    expect(changed.body.statements).toEqual(['ALTER TABLE "items" DROP CONSTRAINT "items_user_id_list_id_fkey"', `${ADD_OWNED} ON UPDATE CASCADE`]);
    expect((await getSchema()).tables.items.foreignKeys).toEqual([
      { columns: ['user_id', 'list_id'], references: { table: 'lists', columns: ['user_id', 'id'] }, onDelete: 'cascade', onUpdate: 'cascade' },
    ]);
    expect((await apply({ schema: TODO([{ ...OWNED, onUpdate: 'cascade' }]) })).body).toEqual(NOTHING);

    const removed = await apply({ schema: TODO([]) });
    expect(removed.body.statements).toEqual(['ALTER TABLE "items" DROP CONSTRAINT "items_user_id_list_id_fkey"']);
    expect((await getSchema()).tables.items.foreignKeys).toBeUndefined();
    expect((await apply({ schema: TODO([]) })).body).toEqual(NOTHING);

    expect((await apply({ schema: TODO([OWNED]) })).body.statements).toEqual([ADD_OWNED]);
  });

  it('an existing orphan makes adding the key a 409 with nothing applied', async () => {
    expect((await apply({ schema: TODO([]) })).body.applied).toBe(true);
    await db.query('insert into items (user_id, list_id) values ($1, gen_random_uuid())', [ALICE]);
    const before = await migrationCount();
    const r = await apply({ schema: TODO([OWNED]) });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('CONFLICT');
    expect(r.body.error.message).toMatch(/^Applying the schema failed at: ALTER TABLE "items" ADD CONSTRAINT "items_user_id_list_id_fkey"/);
    expect(await migrationCount()).toBe(before);
    expect((await getSchema()).tables.items.foreignKeys).toBeUndefined();
    await db.query('delete from items');
    expect((await apply({ schema: TODO([OWNED]) })).body.statements).toEqual([ADD_OWNED]);
  });

  it('refuses bad keys naming the foreign key, and applies nothing else of the definition', async () => {
    const OWNED_AB = { columns: ['a', 'b'], references: { table: 'lists', columns: ['user_id', 'id'] } };
    const fresh = (fk: unknown, extra: Record<string, unknown> = {}) => ({
      tables: { fresh: { columns: { a: { type: 'integer' }, b: { type: 'integer', nullable: false } }, foreignKeys: [fk] }, ...extra },
    });
    await refused(
      fresh({ columns: ['a', 'b'], references: { table: 'lists', columns: ['id'] } }),
      "In table 'fresh', foreignKeys[0] has 2 columns but 1 references.columns; list as many on each side, in matching order.",
    );
    await refused(
      fresh({ columns: ['a'], references: { table: 'lists', columns: ['id'] } }),
      "In table 'fresh', foreignKeys[0] has 1 column(s); foreignKeys are for two or more columns. For one column, use the column's references.",
    );
    await refused(fresh({ columns: ['a', 'a'], references: { table: 'lists', columns: ['user_id', 'id'] } }), "In table 'fresh', foreignKeys[0] lists column 'a' twice.");
    await refused(
      fresh({ columns: ['a', 'c'], references: { table: 'lists', columns: ['user_id', 'id'] } }),
      "In table 'fresh', foreignKeys[0] (a, c) references 'lists' (user_id, id), but table 'fresh' has no column 'c'.",
    );
    await refused(
      fresh({ columns: ['a', 'b'], references: { table: 'nowhere', columns: ['x', 'y'] } }),
      "In table 'fresh', foreignKeys[0] (a, b) references 'nowhere' (x, y), but table 'nowhere' is neither in the schema definition nor in the database. Define 'nowhere' in the same schema, or fix references.table.",
    );
    await refused(
      fresh({ columns: ['a', 'b'], references: { table: 'lists', columns: ['user_id', 'nope'] } }),
      "In table 'fresh', foreignKeys[0] (a, b) references 'lists' (user_id, nope), but 'lists' has no column 'nope' (or this definition drops it).",
    );
    await refused(
      fresh({ columns: ['a', 'b'], references: { table: 'lists', columns: ['user_id', 'name'] } }),
      "In table 'fresh', foreignKeys[0] (a, b) references 'lists' (user_id, name), but those columns of 'lists' are neither its primary key nor unique together. Reference the primary key, or add a unique index on exactly (user_id, name) to 'lists'.",
    );
    await refused(
      fresh({ columns: ['a', 'b'], references: { table: 'lists', columns: ['id', 'user_id'] }, onDelete: 'set null' }),
      "In table 'fresh', foreignKeys[0] (a, b) references 'lists' (id, user_id) with onDelete 'set null', but column 'fresh.b' is never null; choose 'cascade', or make the columns nullable.",
    );
    await refused(
      { tables: { fresh: { columns: { a: { type: 'integer' } }, foreignKeys: [{ columns: ['a', 'b'], references: { table: 'lists', columns: ['user_id', 'id'] } }], _dropColumns: ['b'] } } },
      "In table 'fresh', foreignKeys[0] uses column 'b', which _dropColumns removes.",
    );
    await refused(
      { tables: { lists: { _drop: true } } },
      "The foreign key of table 'items' (user_id, list_id) references 'lists' (user_id, id), but this definition drops table 'lists'. Remove the foreign key (list foreignKeys without it) in the same definition.",
    );
    await refused(
      { tables: { twice: { columns: { a: { type: 'integer' }, b: { type: 'integer' } }, foreignKeys: [OWNED_AB, { ...OWNED_AB, onDelete: 'cascade' }] } } },
      "Table 'twice' lists two foreignKeys on columns (a, b); keep one foreign key per column list.",
    );
    await refused({ tables: { fresh: { columns: { a: { type: 'integer' } }, foreignKeys: {} } } }, /^Invalid 'schema\.tables\.fresh\.foreignKeys'/);
    await refused({ tables: { fresh: { columns: { a: { type: 'integer' } }, foreignKeys: [{ columns: ['a', 'b'] }] } } }, /^Invalid 'schema\.tables\.fresh\.foreignKeys\.0\.references'/);
    // A valid new table beside a bad key: nothing is created.
    await refused(
      fresh({ columns: ['a', 'b'], references: { table: 'lists', columns: ['user_id', 'name'] } }, { bystander: { columns: { x: { type: 'text' } } } }),
      /neither its primary key nor unique together/,
    );
    expect(await rows(`select to_regclass('fresh') as f, to_regclass('bystander') as b`)).toEqual([{ f: null, b: null }]);
  });

  it('a key over a composite primary key, between two new tables, with a long name', async () => {
    const parent = `p${'x'.repeat(30)}`;
    const schema = {
      tables: {
        [parent]: { columns: { org: { type: 'integer', primary: true }, num: { type: 'integer', primary: true } } },
        lines: {
          columns: { id: { type: 'integer', primary: true }, organisation_identifier: { type: 'integer' }, document_number_reference_xyz: { type: 'integer' } },
          foreignKeys: [{ columns: ['organisation_identifier', 'document_number_reference_xyz'], references: { table: parent, columns: ['num', 'org'] } }],
        },
      },
    };
    const r = await apply({ schema });
    expect(r.status).toBe(200);
    const add = r.body.statements.at(-1) as string;
    expect(add).toMatch(
      new RegExp(
        `^ALTER TABLE "lines" ADD CONSTRAINT "lines_organisation_identifier_document_number_ref_[0-9a-f]{8}_fkey" FOREIGN KEY \\("organisation_identifier", "document_number_reference_xyz"\\) REFERENCES "${parent}" \\("num", "org"\\)$`,
      ),
    );
    expect(add.match(/CONSTRAINT "([^"]+)"/)![1]).toHaveLength(63);
    await db.query(`insert into ${parent} values (1, 2)`);
    expect(await pgCode('insert into lines values (1, 2, 1)')).toBe('ok');
    expect(await pgCode('insert into lines values (2, 1, 2)')).toBe('23503');
    expect((await apply({ schema })).body).toEqual(NOTHING);
    expect((await apply({ schema: await getSchema() })).body).toEqual(NOTHING);
  });
});
