// Partial and expression indexes (issue 43): "one active booking per slot" as a partial unique index holds under
// concurrent inserts, "one account per e-mail whatever its case" as a unique index on lower(email); schema_get gives them
// back as written, applying them again plans nothing, a changed one is rebuilt, and what cannot be built is refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

let p: TestPlatform;
let app: { app_id: string; service_key: { key: string } };

const SCHEMA = {
  tables: {
    bookings: {
      columns: {
        id: { type: 'bigint', primary: true, identity: true },
        slot_id: { type: 'integer', nullable: false },
        status: { type: 'text', nullable: false, enum: ['active', 'cancelled'] },
      },
      access: 'service',
      indexes: { one_active_per_slot: { columns: ['slot_id'], unique: true, where: 'status=eq.active' } },
    },
    accounts: {
      columns: { id: { type: 'bigint', primary: true, identity: true }, email: { type: 'text', nullable: false }, prefs: { type: 'jsonb' } },
      access: 'service',
      indexes: { accounts_email_ci: { columns: ['lower(email)'], unique: true }, accounts_theme: { columns: ["prefs->>'theme'"] } },
    },
  },
};

const apply = (schema: unknown, dry_run = false) => p.api('POST', `/v1/${app.app_id}/schema/apply`, { body: { schema, dry_run }, key: app.service_key.key });
const insert = (table: string, body: unknown) => p.api('POST', `/v1/${app.app_id}/${table}`, { body, key: app.service_key.key });

beforeAll(async () => {
  p = await startTestPlatform();
  const init = await p.api('POST', '/init', { body: { name: 'Indexes' } });
  if (init.status !== 201) throw new Error(JSON.stringify(init.body));
  app = init.body;
  const applied = await apply(SCHEMA);
  if (applied.status !== 200) throw new Error(JSON.stringify(applied.body));
});
afterAll(async () => {
  await p?.close();
});

describe('partial and expression indexes', () => {
  it('one active booking per slot, also when ten arrive at once; cancelled ones do not count', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, () => insert('bookings', { slot_id: 1, status: 'active' })));
    expect(results.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(409)]);
    expect(results.find((r) => r.status === 409)!.body.code).toBe('23505');
    expect((await insert('bookings', { slot_id: 1, status: 'cancelled' })).status).toBe(201);
    expect((await insert('bookings', { slot_id: 2, status: 'active' })).status).toBe(201);
  });

  it('one account per e-mail whatever its case', async () => {
    expect((await insert('accounts', { email: 'Ada@Example.com' })).status).toBe(201);
    expect((await insert('accounts', { email: 'ada@example.COM' })).status).toBe(409);
  });

  it('schema_get gives them back as written; applying them again plans nothing; a changed one is rebuilt', async () => {
    const view = (await p.api('GET', `/v1/${app.app_id}/schema`, { key: app.service_key.key })).body;
    expect(view.tables.bookings.indexes).toEqual({ one_active_per_slot: { columns: ['slot_id'], unique: true, where: 'status=eq.active' } });
    expect(view.tables.accounts.indexes).toEqual({ accounts_email_ci: { columns: ['lower(email)'], unique: true }, accounts_theme: { columns: ["prefs->>'theme'"], unique: false } });
    const again = await apply({ tables: { bookings: { indexes: view.tables.bookings.indexes }, accounts: { indexes: view.tables.accounts.indexes } } }, true);
    expect(again.body.statements, JSON.stringify(again.body)).toEqual([]);
    const changed = await apply({ tables: { bookings: { indexes: { one_active_per_slot: { columns: ['slot_id'], unique: true, where: 'status=in.(active)' } } } } }, true);
    expect(changed.body.statements).toEqual([
      'DROP INDEX "one_active_per_slot"',
      `CREATE UNIQUE INDEX "one_active_per_slot" ON "bookings" ("slot_id") WHERE "status" IN ('active')`,
      `COMMENT ON INDEX "one_active_per_slot" IS 'svc:index:{"columns":["slot_id"],"unique":true,"where":"status=in.(active)"}'`,
    ]);
  });

  it('refuses keys and conditions it cannot build, and a foreign key to a partial unique index', async () => {
    const cases: Array<[unknown, string]> = [
      [{ columns: ['md5(email)'] }, "Columns of index 'x' (table 'accounts'): 'md5(email)' is not an index key; use a column name, lower(column), upper(column) or column->>'key'."],
      [{ columns: ['email'], where: 'email=like.a*' }, "The where of index 'x' (table 'accounts'): 'email=like.a*' has no known operator; write column=op.value (eq, neq, gt, gte, lt, lte, in.(a,b), is.null, not.is.null, is.true, is.false) joined by &."],
      [{ columns: ['email'], where: 'missing=eq.1' }, "Index 'x' of table 'accounts' names column 'missing', which the table does not have."],
    ];
    for (const [index, message] of cases) {
      const refused = await apply({ tables: { accounts: { indexes: { x: index } } } });
      expect([refused.status, refused.body.error?.message], message).toEqual([400, message]);
    }
    // A value is a literal, whatever it holds.
    const quoted = await apply({ tables: { accounts: { indexes: { x: { columns: ['email'], where: "email=eq.x'; drop table accounts; --" } } } } }, true);
    expect(quoted.body.statements[0]).toBe(`CREATE INDEX "x" ON "accounts" ("email") WHERE "email" = 'x''; drop table accounts; --'`);
    const fk = await apply({ tables: { refs: { columns: { id: { type: 'integer', primary: true }, slot_id: { type: 'integer', references: { table: 'bookings', column: 'slot_id' } } }, access: 'service' } } });
    expect(fk.status).toBe(400);
    expect(fk.body.error.message).toMatch(/^Column 'refs\.slot_id' references 'bookings\.slot_id'/);
  });
});
