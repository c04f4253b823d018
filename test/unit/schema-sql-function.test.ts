// Declared SQL function bodies (docs/design/schema-functions.md §3.3, §3.4.1, §3.7): the tutoring marketplace's
// functions are accepted and pinned to schema public by splicing; every hostile form is refused with its exact message.
import { beforeAll, describe, expect, it } from 'vitest';
import { checkFunctionBody } from '../../src/schema/sql/function-body.ts';
import { loadSqlParser } from '../../src/schema/sql/parser.ts';
import { refusedWith, TUTORING } from '../helpers/tutoring-tables.ts';

beforeAll(loadSqlParser);

const body = (text: string, args: string[] = [], functions: string[] = []) =>
  checkFunctionBody(text, { name: 'f', args: args.map((name) => ({ name, type: 'text' })), tables: TUTORING, functions: new Set(functions) });
const refused = (text: string, args: string[] = [], functions: string[] = []) => refusedWith(() => body(text, args, functions));

describe('accepted bodies', () => {
  it('request_booking: a booking and its event in one statement (data-modifying WITH)', () => {
    const text =
      "with b as (insert into bookings (slot_id, student_id, tutor_id, status, note) select s.id, auth.uid(), s.tutor_id, 'requested', request_booking.note from slots s where s.id = request_booking.slot_id returning *), e as (insert into booking_events (booking_id, kind) select id, 'requested' from b) select * from b";
    const args = [
      { name: 'slot_id', type: 'bigint' },
      { name: 'note', type: 'text' },
    ];
    expect(checkFunctionBody(text, { name: 'request_booking', args, tables: TUTORING, functions: new Set() })).toEqual({
      sql: "with b as (insert into public.bookings (slot_id, student_id, tutor_id, status, note) select s.id, auth.uid(), s.tutor_id, 'requested', request_booking.note from public.slots s where s.id = request_booking.slot_id returning *), e as (insert into public.booking_events (booking_id, kind) select id, 'requested' from b) select * from b;",
      writes: true,
      reads: ['slots'],
      writesTo: ['booking_events', 'bookings'],
      calls: [],
    });
  });

  it('upcoming: a read-only join', () => {
    const text = 'select b.* from bookings b join slots s on s.id = b.slot_id where s.starts_at >= upcoming.after';
    expect(checkFunctionBody(text, { name: 'upcoming', args: [{ name: 'after', type: 'timestamptz' }], tables: TUTORING, functions: new Set() })).toEqual({
      sql: 'select b.* from public.bookings b join public.slots s on s.id = b.slot_id where s.starts_at >= upcoming.after;',
      writes: false,
      reads: ['bookings', 'slots'],
      writesTo: [],
      calls: [],
    });
  });

  it('several statements, declared functions, current_user_id(), $1, pgvector and row types get public.', () => {
    const text =
      "update bookings set status = 'cancelled' where id = $1 and student_id = current_user_id(); -- first\nselect other(1), '[1,2]'::vector <=> '[1,3]'::vector;\ninsert into reviews select * from jsonb_populate_record(null::reviews, $1::jsonb) returning id";
    expect(body(text, ['booking_id'], ['other'])).toEqual({
      sql: "update public.bookings set status = 'cancelled' where id = $1 and student_id = public.current_user_id();\nselect public.other(1), '[1,2]'::public.vector OPERATOR(public.<=>) '[1,3]'::public.vector;\ninsert into public.reviews select * from jsonb_populate_record(null::public.reviews, $1::jsonb) returning id;",
      writes: true,
      reads: ['bookings', 'reviews'],
      writesTo: ['bookings', 'reviews'],
      calls: ['other'],
    });
  });

  it('quoted names, written schemas, comments and UTF-8 text keep their place', () => {
    const text = 'select \'é\' as "naïve", s.* /* all */ from "slots" s join public.bookings b on b.slot_id = s.id -- end';
    expect(body(text).sql).toBe('select \'é\' as "naïve", s.*   from public."slots" s join public.bookings b on b.slot_id = s.id;');
  });

  it('the SQL subset: ON CONFLICT, UPDATE ... FROM, DELETE ... USING, UNION, windows, LATERAL, FOR UPDATE when writing', () => {
    const texts = [
      'insert into reviews (booking_id, rating) values (1, 5) on conflict (booking_id) do update set rating = excluded.rating where reviews.rating < 5 returning *',
      "update bookings b set status = 'done' from slots s where s.id = b.slot_id and s.tutor_id = auth.uid() returning b.*",
      'delete from booking_events e using bookings b where b.id = e.booking_id and b.student_id = auth.uid()',
      'select id from bookings union all select id from slots order by 1 limit 5',
      'select id, row_number() over (partition by b.status order by b.id) from bookings b',
      'select s.id, x.n from slots s, lateral (select count(*) n from bookings b where b.slot_id = s.id) x',
      'select * from bookings b where b.id = 1 for update; update bookings set status = $1 where id = 1',
      "select case when coalesce(note, '') = '' then greatest(1, 2) end, extract(epoch from now()), now() at time zone 'utc', '{}'::jsonb @> '{}' from bookings",
    ];
    for (const text of texts) expect(() => body(text, ['status2'])).not.toThrow();
  });
});

describe('refused bodies (the hostile declarations of §3.7 and the rest of §3.3)', () => {
  const SUBSET = 'cannot be used in a function body; a body holds SELECT, INSERT, UPDATE and DELETE statements (WITH allowed).';
  const OUTSIDE = "use the app's tables and the statement's WITH names.";
  const cases: Array<[string, string, string]> = [
    ['svc_auth.users', 'select * from svc_auth.users', `'svc_auth.users' is outside the app's tables (schema svc_auth); ${OUTSIDE}`],
    ['pg_catalog.pg_database', 'select datname from pg_catalog.pg_database', `'pg_catalog.pg_database' is outside the app's tables (schema pg_catalog); ${OUTSIDE}`],
    ['information_schema.tables', 'select * from information_schema.tables', `'information_schema.tables' is outside the app's tables (schema information_schema); ${OUTSIDE}`],
    ['U&"svc\\005fauth".users', 'select * from U&"svc\\005fauth".users', `'svc_auth.users' is outside the app's tables (schema svc_auth); ${OUTSIDE}`],
    ['a catalog table, unqualified', 'select * from pg_class', "'pg_class' is not one of the app's tables and the statement's WITH names (booking_events, bookings, reviews, slots, tutor_profiles); fix the name."],
    ['a write to another schema', "insert into svc_auth.users (id) values ('x')", `'svc_auth.users' is outside the app's tables (schema svc_auth); ${OUTSIDE}`],
    ['another database', 'select * from other.public.bookings', "'other.public.bookings' names another database; use the app's tables."],
    ['WITH RECURSIVE', 'with recursive x as (select 1) select * from x', 'WITH RECURSIVE is not allowed (its cost has no bound); write the query without recursion.'],
    ['a call to itself', 'select f()', 'f() calls itself; recursion is not allowed, so write the body without the call.'],
    ['set role', 'set role svc_service', `SET/RESET ${SUBSET}`],
    ['set search_path', 'set search_path = svc_auth, public', `SET/RESET ${SUBSET}`],
    ['reset', 'reset role', `SET/RESET ${SUBSET}`],
    ['set_config', "select set_config('request.jwt.claims', '{\"sub\":\"x\"}', true)", 'set_config() is not allowed: it could rewrite request.jwt.claims and act as another user.'],
    ['copy', "copy bookings to '/tmp/out'", `COPY ${SUBSET}`],
    ['do', 'do $$ begin perform 1; end $$', `DO ${SUBSET}`],
    ['call', 'call cleanup()', `CALL ${SUBSET}`],
    ['create', 'create table x (a int)', `DDL (CREATE/ALTER/DROP) ${SUBSET}`],
    ['alter', 'alter table bookings disable row level security', `DDL (CREATE/ALTER/DROP) ${SUBSET}`],
    ['drop', 'drop table bookings', `DDL (CREATE/ALTER/DROP) ${SUBSET}`],
    ['grant', 'grant all on bookings to public', `GRANT/REVOKE ${SUBSET}`],
    ['lock', 'lock table bookings', `LOCK ${SUBSET}`],
    ['truncate', 'truncate bookings', `TRUNCATE ${SUBSET}`],
    ['merge', 'merge into bookings b using slots s on s.id = b.slot_id when matched then delete', `MERGE ${SUBSET}`],
    ['listen', 'listen x', `LISTEN ${SUBSET}`],
    ['notify', 'notify x', `NOTIFY ${SUBSET}`],
    ['prepare', 'prepare p as select 1', `PREPARE ${SUBSET}`],
    ['execute', 'execute p', `EXECUTE ${SUBSET}`],
    ['explain', 'explain select 1', `EXPLAIN ${SUBSET}`],
    ['vacuum', 'vacuum bookings', `VACUUM/ANALYZE ${SUBSET}`],
    ['begin', 'begin', `transaction control (BEGIN/COMMIT/ROLLBACK/SAVEPOINT) ${SUBSET}`],
    ['savepoint', 'select 1; savepoint s', `transaction control (BEGIN/COMMIT/ROLLBACK/SAVEPOINT) ${SUBSET}`],
    ['select ... into', 'select * into stolen from bookings', 'SELECT ... INTO is not allowed (it creates a table); use INSERT INTO <table> SELECT ....'],
    ['::regclass', "select 'svc_auth.users'::regclass", 'the type regclass is not allowed: it looks up objects of any schema by name; compare ids or text instead.'],
    ['another type', 'select 1::oid', 'the type oid is not allowed; use a column type (text, integer, bigint, numeric, boolean, uuid, date, timestamptz, interval, jsonb, vector, arrays of them) or an app table\'s row type.'],
    ['query_to_xml', "select query_to_xml('select * from svc_auth.users', true, true, '')", 'query_to_xml() is not allowed: it runs SQL or XML queries given as strings, which these checks cannot see.'],
    ['ts_stat', "select * from ts_stat('select body from svc_auth.users')", 'ts_stat() is not allowed: it runs SQL or XML queries given as strings, which these checks cannot see.'],
    ['xpath', "select xpath('/a', '<a/>')", 'xpath() is not allowed: it runs SQL or XML queries given as strings, which these checks cannot see.'],
    ['pg_sleep', 'select pg_sleep(60)', 'pg_sleep() is not allowed: it holds a connection while doing nothing.'],
    ['pg_catalog.pg_sleep_for', "select pg_catalog.pg_sleep_for('1 minute')", 'pg_sleep_for() is not allowed: it holds a connection while doing nothing.'],
    ['current_setting', "select current_setting('request.jwt.claims')", "current_setting() is not allowed: it reads server settings; use auth.jwt() for the caller's claims."],
    ['nextval', "select nextval('bookings_id_seq')", 'nextval() is not allowed: sequences belong to column defaults; declare a default instead.'],
    ['pg_advisory_lock', 'select pg_advisory_lock(1)', 'pg_advisory_lock() is not allowed: advisory locks outlive the statement.'],
    ['has_table_privilege', "select has_table_privilege('svc_auth.users', 'select')", "has_table_privilege() is not allowed: it probes other schemas' objects."],
    ['to_regclass', "select to_regclass('svc_auth.users')", "to_regclass() is not allowed: it probes other schemas' objects."],
    ['pg_read_file', "select pg_read_file('/etc/passwd')", 'pg_read_file() is not allowed: it reaches server internals or files.'],
    ['lo_import', "select lo_import('/etc/passwd')", "lo_import() is not allowed: large objects are outside the app's tables."],
    ['dblink', "select dblink('host=x', 'select 1')", 'dblink() is not allowed: it connects to other databases.'],
    ['an unlisted function', 'select version()', "version() is not allowed; use built-in math, text, date/time, json, array, range, full-text or aggregate functions, auth.uid(), auth.jwt() or the app's declared functions."],
    ['a function of another schema', 'select svc_auth.sign(1)', "svc_auth.sign() is outside the app (schema svc_auth); use auth.uid(), auth.jwt(), built-in functions or the app's declared functions."],
    ['OPERATOR(schema.op)', 'select 1 operator(pg_catalog.+) 2', 'OPERATOR(schema.op) is not allowed; write the operator itself (a <=> b).'],
    ['an unlisted operator', 'select 1 << 2', 'the operator << is not allowed; use comparison, arithmetic, ||, LIKE, regex, jsonb, array, range, @@ or pgvector operators.'],
    ['FOR UPDATE without a write', 'select * from bookings for update', 'FOR UPDATE/SHARE is allowed only in a body that writes (a read-only call runs in a read-only transaction); remove it.'],
    ['a WITH name that is a table', 'with bookings as (select 1) select * from bookings', "the WITH name 'bookings' is also a table; rename the WITH query."],
    ['a sub-select hiding a table', 'select * from bookings where exists (select 1 from bookings where id = 1)', "'bookings' in FROM hides the outer bookings; give one of them an alias."],
    ['XML', 'select xmlelement(name x)', 'XML functions cannot be used in a function body.'],
    ['WHERE CURRENT OF', "update bookings set status = 'x' where current of c", 'WHERE CURRENT OF cannot be used in a function body.'],
    ['TABLESAMPLE', 'select * from bookings tablesample system (10)', "TABLESAMPLE cannot be used in FROM; read the app's tables, WITH queries, sub-selects or set-returning functions."],
    ['a syntax error', 'select from where', 'syntax error at or near "where" (at character 13); fix the SQL there.'],
    ['an unterminated string', "select 'x", 'unterminated quoted string at or near "\'x" (at character 8); fix the SQL there.'],
    ['no statement', ';', "the body has 0 statements; write 1 to 10, separated by ';'."],
    ['11 statements', 'select 1;'.repeat(11), "the body has 11 statements; write 1 to 10, separated by ';'."],
    ['a NUL character', 'select 1\u0000; drop table bookings', 'the body contains a NUL character; remove it.'],
  ];
  it.each(cases)('%s', (_, text, message) => {
    expect(refused(text)).toBe(`Function 'f': ${message}`);
  });

  it('an argument shadowed by a column (a column wins, silently: hazard(status) counted every row)', () => {
    expect(refused('select count(*) from bookings where status = status', ['status'])).toBe(
      "Function 'f': 'status' is both an argument and a column of bookings; write f.status for the argument or bookings.status for the column.",
    );
    expect(refused('select * from bookings b where b.slot_id = slot_id', ['slot_id'])).toBe(
      "Function 'f': 'slot_id' is both an argument and a column of bookings (b); write f.slot_id for the argument or b.slot_id for the column.",
    );
    expect(refused('select n from generate_series(1, 3) g', ['n'])).toBe(
      "Function 'f': 'n' is both an argument and possibly a column of g; write f.n for the argument or g.n for the column.",
    );
    expect(body('select * from bookings b where b.status = f.status', ['status']).sql).toBe('select * from public.bookings b where b.status = f.status;');
  });

  it('arguments by number, declared names that shadow built-ins', () => {
    expect(refused('select $2', ['a'])).toBe("Function 'f': $2 is not an argument (the function has 1); use $1 to $1 or the arguments' names.");
    expect(refused("select lower('x')", [], ['lower'])).toBe("Function 'f': lower() is both a built-in and a declared function; rename the declared one.");
  });

  it('a body over 8,192 bytes is refused before it is parsed (this one would not parse)', () => {
    expect(refused('x'.repeat(8193))).toBe("Function 'f': the body is 8193 bytes, more than 8192; shorten it.");
  });
});
