// Declared SQL functions (issue 43, docs/design/schema-functions.md §3.1): the tutoring marketplace's request_booking
// (volatile, one booking and its event in one call) and upcoming (stable, a set of bookings). The dry run shows the
// statements as they run; the functions exist as SECURITY INVOKER with the grants of their access and their rows in
// svc_meta.functions; called as an end user they see and write only what row-level security lets that user.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { databaseUrl } from '../helpers/db.ts';

let p: TestPlatform;
let app: { app_id: string; service_key: { key: string } };
let db: pg.Client;
const ann = randomUUID();
const ben = randomUUID();
const tia = randomUUID();

const TABLES = {
  slots: {
    columns: { id: { type: 'bigint', primary: true, identity: true }, tutor_id: { type: 'uuid', nullable: false }, starts_at: { type: 'timestamptz', nullable: false } },
    access: 'authenticated',
  },
  bookings: {
    columns: {
      id: { type: 'bigint', primary: true, identity: true },
      slot_id: { type: 'bigint', nullable: false, references: { table: 'slots', column: 'id' } },
      student_id: { type: 'uuid', nullable: false },
      tutor_id: { type: 'uuid', nullable: false },
      status: { type: 'text', nullable: false },
      note: { type: 'text' },
    },
    access: { read: 'owner', write: 'owner', owners: ['student_id', 'tutor_id'] },
  },
  booking_events: {
    columns: { id: { type: 'bigint', primary: true, identity: true }, booking_id: { type: 'bigint', nullable: false }, kind: { type: 'text', nullable: false } },
    access: { read: 'authenticated', write: 'authenticated' },
  },
};

const REQUEST_BOOKING = {
  args: { slot_id: 'bigint', note: { type: 'text', default: null } },
  returns: 'bookings',
  body:
    "with b as (insert into bookings (slot_id, student_id, tutor_id, status, note) select s.id, auth.uid(), s.tutor_id, 'requested', request_booking.note " +
    'from slots s where s.id = request_booking.slot_id returning *), e as (insert into booking_events (booking_id, kind) select id, \'requested\' from b) select * from b',
};
const UPCOMING = {
  args: { after: { type: 'timestamptz', default: 'now()' } },
  returns: 'setof bookings',
  body: 'select b.* from bookings b join slots s on s.id = b.slot_id where s.starts_at >= upcoming.after',
};
const FUNCTIONS = { request_booking: REQUEST_BOOKING, upcoming: UPCOMING };

const apply = (schema: unknown, dry_run = false) => p.api('POST', `/v1/${app.app_id}/schema/apply`, { body: { schema, dry_run }, key: app.service_key.key });
const refused = async (functions: unknown) => {
  const res = await apply({ tables: {}, functions }, true);
  expect(res.status).toBe(400);
  return res.body.error.message as string;
};

/** Runs `sql` in a transaction as svc_user signed in as `sub`, as the data API does. */
async function asUser<R extends pg.QueryResultRow>(sub: string, sql: string, params: unknown[] = []): Promise<R[]> {
  await db.query('begin');
  try {
    await db.query('set local role svc_user');
    await db.query(`select set_config('request.jwt.claims', $1, true)`, [JSON.stringify({ sub, role: 'authenticated' })]);
    const { rows } = await db.query<R>(sql, params);
    await db.query('commit');
    return rows;
  } catch (err) {
    await db.query('rollback');
    throw err;
  }
}

beforeAll(async () => {
  p = await startTestPlatform();
  const init = await p.api('POST', '/init', { body: { name: 'Functions' } });
  if (init.status !== 201) throw new Error(JSON.stringify(init.body));
  app = init.body;
  const applied = await apply({ tables: TABLES });
  if (applied.status !== 200) throw new Error(JSON.stringify(applied.body));
  db = new pg.Client({ connectionString: databaseUrl(p.appDbPrefix + app.app_id) });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await p?.close();
});

const CREATE_RB =
  'CREATE FUNCTION public."request_booking"("slot_id" bigint, "note" text DEFAULT NULL) RETURNS public."bookings" LANGUAGE sql VOLATILE SECURITY INVOKER BEGIN ATOMIC\n' +
  "with b as (insert into public.bookings (slot_id, student_id, tutor_id, status, note) select s.id, auth.uid(), s.tutor_id, 'requested', request_booking.note " +
  "from public.slots s where s.id = request_booking.slot_id returning *), e as (insert into public.booking_events (booking_id, kind) select id, 'requested' from b) select * from b;\nEND";
/** A new function is a plain CREATE (it can never replace one of the platform's); the app's own is replaced. */
const CREATE_UPCOMING = (body: string, replace = false) =>
  `CREATE ${replace ? 'OR REPLACE ' : ''}FUNCTION public."upcoming"("after" timestamp with time zone DEFAULT now()) RETURNS SETOF public."bookings" LANGUAGE sql STABLE SECURITY INVOKER BEGIN ATOMIC\n${body};\nEND`;
const UPCOMING_SQL = 'select b.* from public.bookings b join public.slots s on s.id = b.slot_id where s.starts_at >= upcoming.after';

describe('declared functions', () => {
  it('the dry run shows each function as it will be created, granted and recorded, under an empty search_path', async () => {
    const res = await apply({ tables: {}, functions: FUNCTIONS }, true);
    expect(res.status).toBe(200);
    const statements: string[] = res.body.statements;
    expect(statements[0]).toBe(`SET LOCAL search_path = ''`);
    expect(statements.at(-1)).toBe('RESET search_path');
    expect(statements.filter((s) => s.startsWith('CREATE'))).toEqual([CREATE_RB, CREATE_UPCOMING(UPCOMING_SQL)]);
    expect(statements.filter((s) => /^(REVOKE|GRANT)/.test(s))).toEqual([
      'REVOKE ALL ON FUNCTION public."request_booking"(bigint, text) FROM PUBLIC, svc_anon, svc_user, svc_service',
      'GRANT EXECUTE ON FUNCTION public."request_booking"(bigint, text) TO svc_service, svc_user',
      'REVOKE ALL ON FUNCTION public."upcoming"(timestamp with time zone) FROM PUBLIC, svc_anon, svc_user, svc_service',
      'GRANT EXECUTE ON FUNCTION public."upcoming"(timestamp with time zone) TO svc_service, svc_user',
    ]);
    expect(statements).toHaveLength(10);
    expect(statements[4]).toMatch(/^INSERT INTO svc_meta\.functions /);
  });

  it('applies them as SECURITY INVOKER with the grants of their access and their svc_meta.functions rows', async () => {
    const res = await apply({ tables: {}, functions: FUNCTIONS });
    expect([res.status, res.body.applied]).toEqual([200, true]);
    const { rows } = await db.query(
      `select proname, prosecdef, provolatile, has_function_privilege('svc_user', p.oid, 'execute') as user_exec, has_function_privilege('svc_anon', p.oid, 'execute') as anon_exec
         from pg_proc p where pronamespace = 'public'::regnamespace and proname in ('request_booking', 'upcoming') order by proname`,
    );
    expect(rows).toEqual([
      { proname: 'request_booking', prosecdef: false, provolatile: 'v', user_exec: true, anon_exec: false },
      { proname: 'upcoming', prosecdef: false, provolatile: 's', user_exec: true, anon_exec: false },
    ]);
    const meta = await db.query('select name, declaration, args, returns, volatility, access, length(checksum) as checksum from svc_meta.functions order by name');
    expect(meta.rows).toEqual([
      {
        name: 'request_booking',
        declaration: REQUEST_BOOKING,
        args: [
          { name: 'slot_id', type: 'bigint', default: null },
          { name: 'note', type: 'text', default: 'NULL' },
        ],
        returns: { kind: 'row', table: 'bookings' },
        volatility: 'volatile',
        access: 'authenticated',
        checksum: 64,
      },
      {
        name: 'upcoming',
        declaration: UPCOMING,
        args: [{ name: 'after', type: 'timestamp with time zone', default: 'now()' }],
        returns: { kind: 'set', table: 'bookings' },
        volatility: 'stable',
        access: 'authenticated',
        checksum: 64,
      },
    ]);
    // Re-applying the same declarations plans nothing; schema_get shows them as written, arguments in order.
    expect((await apply({ tables: TABLES, functions: FUNCTIONS }, true)).body.statements).toEqual([]);
    const view = await p.api('GET', `/v1/${app.app_id}/schema`, { key: app.service_key.key });
    expect(view.body.functions).toEqual(FUNCTIONS);
    expect(Object.keys(view.body.functions.request_booking.args)).toEqual(['slot_id', 'note']);
    expect((await apply({ tables: {}, functions: view.body.functions }, true)).body.statements).toEqual([]);
  });

  it('runs as the caller: a booking and its event in one call, each user seeing only their own under row-level security', async () => {
    const slot = (await db.query<{ id: string }>('insert into slots (tutor_id, starts_at) values ($1, now() + interval \'1 day\') returning id', [tia])).rows[0]!.id;
    const [booking] = await asUser<{ id: string; student_id: string; status: string; note: string }>(ann, 'select * from public.request_booking($1, $2)', [slot, 'algebra']);
    expect([booking!.student_id, booking!.status, booking!.note]).toEqual([ann, 'requested', 'algebra']);
    expect((await db.query('select kind from booking_events where booking_id = $1', [booking!.id])).rows).toEqual([{ kind: 'requested' }]);
    expect((await asUser(tia, 'select id from public.upcoming()')).map((r) => r.id)).toEqual([booking!.id]);
    expect(await asUser(ben, 'select id from public.upcoming()')).toEqual([]);
    // Anonymous callers have no EXECUTE on an 'authenticated' function.
    await db.query('begin');
    await expect(db.query('set local role svc_anon; select public.upcoming()')).rejects.toThrow('permission denied for function upcoming');
    await db.query('rollback');
  });

  it('a changed body is replaced; _drop drops', async () => {
    const narrowed = { ...UPCOMING, body: `${UPCOMING.body} and b.status = 'requested'` };
    const changed = await apply({ tables: {}, functions: { upcoming: narrowed } });
    expect(changed.status).toBe(200);
    expect(changed.body.statements.filter((s: string) => s.startsWith('CREATE'))).toEqual([CREATE_UPCOMING(`${UPCOMING_SQL} and b.status = 'requested'`, true)]);
    const dropped = await apply({ tables: {}, functions: { request_booking: { _drop: true } } });
    expect(dropped.body.statements).toEqual([`DROP FUNCTION public."request_booking"(bigint, text)`, `DELETE FROM svc_meta.functions WHERE name IN ('request_booking')`]);
    expect((await db.query(`select proname from pg_proc where pronamespace = 'public'::regnamespace and proname in ('request_booking', 'upcoming')`)).rows).toEqual([{ proname: 'upcoming' }]);
    expect((await db.query('select name from svc_meta.functions')).rows).toEqual([{ name: 'upcoming' }]);
  });

  it('a function is rebuilt around a column drop of a table it uses; a table it uses cannot be dropped under it', async () => {
    const res = await apply({ tables: { bookings: { _dropColumns: ['note'] } } });
    expect(res.status).toBe(200);
    expect(res.body.statements[0]).toBe('DROP FUNCTION public."upcoming"(timestamp with time zone)');
    expect(res.body.statements).toContain('ALTER TABLE "bookings" DROP COLUMN "note"');
    expect(res.body.statements.filter((s: string) => s.startsWith('CREATE'))).toHaveLength(1);
    const gone = await apply({ tables: { bookings: { _drop: true } } }, true);
    expect([gone.status, gone.body.error.message]).toEqual([
      400,
      'Function \'upcoming\' returns \'setof bookings\', which is neither a table nor an allowed type; write a type, "void", a table, "setof <table>", "setof <type>" or { "columns": { name: type } }. ' +
        "(Function 'upcoming' is kept from an earlier apply and no longer fits this definition: change it or _drop it in the same one.)",
    ]);
  });

  it('refuses hostile declarations, naming the function', async () => {
    const fn = (body: string, more: object = {}) => ({ f: { returns: 'void', body, ...more } });
    const set = "Function 'f': SET/RESET cannot be used in a function body; a body holds SELECT, INSERT, UPDATE and DELETE statements (WITH allowed).";
    expect(await refused(fn('set role svc_service'))).toBe(set);
    expect(await refused(fn("set search_path = 'svc_auth'"))).toBe(set);
    expect(await refused(fn("select set_config('request.jwt.claims', '{}', true)"))).toBe(
      "Function 'f': set_config() is not allowed: it could rewrite request.jwt.claims and act as another user.",
    );
    expect(await refused(fn('select 1 from svc_auth.users'))).toBe(
      "Function 'f': 'svc_auth.users' is outside the app's tables (schema svc_auth); use the app's tables and the statement's WITH names.",
    );
    expect(await refused({ f: { returns: 'integer', body: 'select g()' }, g: { returns: 'integer', body: 'select f()' } })).toBe(
      "Function 'f' calls itself through 'f' -> 'g' -> 'f'; functions may not call each other in a cycle. Remove one of the calls.",
    );
    expect(await refused(fn(`select 1 ${' '.repeat(8192)}`))).toBe("Function 'f': the body is 8201 bytes, more than 8192; shorten it.");
    expect(await refused(fn("insert into booking_events (booking_id, kind) values (1, 'x')", { volatility: 'stable' }))).toBe(
      "Function 'f' is declared stable but its body writes; declare it volatile or leave volatility out.",
    );
    expect(await refused({ bookings: { returns: 'void', body: 'select 1' } })).toBe("Function 'bookings' has the name of a table; choose another name for the function.");
    // The platform's functions in public are never replaced: by name, or (an extension's) by Postgres refusing the CREATE.
    expect(await refused({ current_user_id: { returns: 'uuid', body: "select '00000000-0000-0000-0000-000000000001'::uuid" } })).toBe(
      "Function 'current_user_id': 'current_user_id' is a function of the platform; choose another name.",
    );
    const extension = await apply({ tables: {}, functions: { armor: { args: { data: 'bytea' }, returns: 'text', body: "select 'x'" } } });
    expect([extension.status, extension.body.error.code]).toEqual([400, 'VALIDATION_FAILED']);
    expect(extension.body.error.message).toMatch(/^Applying the schema failed at: CREATE FUNCTION public\."armor"\("data" bytea\)[\s\S]* already exists/);
    // Nothing was created.
    expect((await db.query('select name from svc_meta.functions')).rows).toEqual([{ name: 'upcoming' }]);
  });
});
