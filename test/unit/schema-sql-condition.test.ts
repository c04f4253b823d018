// Declared conditions (docs/design/schema-functions.md §3.2): the tutoring marketplace's rules are accepted and
// compiled with exact text; hostile or unbounded ones are refused with the exact message an agent reads.
import { beforeAll, describe, expect, it } from 'vitest';
import { checkCondition } from '../../src/schema/sql/condition.ts';
import { loadSqlParser } from '../../src/schema/sql/parser.ts';
import { refusedWith, TUTORING } from '../helpers/tutoring-tables.ts';

beforeAll(loadSqlParser);

const on = (table: string) => (text: string) => checkCondition(text, { table, tables: TUTORING });
const reviews = on('reviews');
const bookings = on('bookings');

describe('accepted conditions compile to policy SQL', () => {
  it("reviews: only the student of a completed booking inserts (the design's output, byte for byte)", () => {
    const text = "exists (select 1 from bookings b where b.id = reviews.booking_id and b.status = 'completed' and b.student_id = auth.uid())";
    expect(reviews(text)).toEqual({
      sql: "exists (select 1 from public.bookings b where b.id = reviews.booking_id and b.status = 'completed' and b.student_id = (select auth.uid()))",
      reads: ['bookings'],
    });
  });

  it('two-owner bookings: either party reads, the student inserts, nobody deletes', () => {
    expect(bookings('auth.uid() in (student_id, tutor_id)')).toEqual({ sql: '(select auth.uid()) in (student_id, tutor_id)', reads: [] });
    expect(bookings("student_id = auth.uid() and status = 'requested'")).toEqual({ sql: "student_id = (select auth.uid()) and status = 'requested'", reads: [] });
    expect(bookings('false')).toEqual({ sql: 'false', reads: [] });
  });

  it('signed-in-only reads, claims, casts and the IN (select <key>) probe', () => {
    expect(on('tutor_profiles')('auth.uid() is not null')).toEqual({ sql: '(select auth.uid()) is not null', reads: [] });
    expect(bookings("(auth.jwt() ->> 'role') = 'tutor' and created_at > now() - interval '30 days'")).toEqual({
      sql: "((select auth.jwt()) ->> 'role') = 'tutor' and created_at > now() - interval '30 days'",
      reads: [],
    });
    expect(reviews("booking_id in (select b.id from bookings b where b.status = 'completed')")).toEqual({
      sql: "booking_id in (select b.id from public.bookings b where b.status = 'completed')",
      reads: ['bookings'],
    });
  });

  it('keeps the author text, drops comments, counts UTF-8 bytes (é is two)', () => {
    const text = "body <> 'é' -- no empty reviews\n and exists (select 1 from bookings b /* the booking */ where b.id = booking_id)";
    expect(reviews(text)).toEqual({ sql: "body <> 'é'  \n and exists (select 1 from public.bookings b   where b.id = booking_id)", reads: ['bookings'] });
  });

  it('nested sub-selects (2 deep) and the tables they read, for the caller’s recursion check', () => {
    const text = 'exists (select 1 from bookings b where b.id = reviews.booking_id and exists (select 1 from slots s where s.id = b.slot_id and s.tutor_id = auth.uid()))';
    expect(reviews(text).reads).toEqual(['bookings', 'slots']);
    expect(reviews('exists (select 1 from reviews r where r.id = reviews.id)').reads).toEqual(['reviews']);
  });
});

describe('refused conditions', () => {
  const ONE = 'a condition is one boolean expression (no FROM, alias or second statement); read other tables in a sub-select: exists (select 1 from <table> t where t.<indexed column> = <column of this row>).';
  const cases: Array<[string, string, string]> = [
    ['svc_auth.users', 'exists (select 1 from svc_auth.users u where u.id = user_id)', "'svc_auth.users' is outside the app's tables (schema svc_auth); use the app's tables."],
    ['pg_catalog.pg_database', 'exists (select 1 from pg_catalog.pg_database d where d.oid = 1)', "'pg_catalog.pg_database' is outside the app's tables (schema pg_catalog); use the app's tables."],
    ['information_schema.tables', "exists (select 1 from information_schema.tables t where t.table_name = 'x')", "'information_schema.tables' is outside the app's tables (schema information_schema); use the app's tables."],
    ['a U& escape', 'exists (select 1 from U&"svc\\005fauth".users u where u.id = user_id)', "'svc_auth.users' is outside the app's tables (schema svc_auth); use the app's tables."],
    ['an unknown table', 'exists (select 1 from users u where u.id = user_id)', "'users' is not one of the app's tables (booking_events, bookings, reviews, slots, tutor_profiles); fix the name."],
    ['an unindexed probe', 'exists (select 1 from bookings b where b.note = reviews.body)', 'the sub-select on \'bookings\' matches note, which leads no index of bookings; add one (indexes: { bookings_by_note: { columns: ["note"] } }) or match an indexed column (id, slot_id, tutor_id).'],
    ['an equality on an unindexed column', "exists (select 1 from bookings b where b.status = 'completed')", 'the sub-select on \'bookings\' matches status, which leads no index of bookings; add one (indexes: { bookings_by_status: { columns: ["status"] } }) or match an indexed column (id, slot_id, tutor_id).'],
    ['no equality at all', 'exists (select 1 from bookings b where b.created_at > now())', "the sub-select on 'bookings' must find its rows by one index probe: add b.<column> = <a column of the row or auth.uid()> to its where, with a column that leads an index of bookings (id, slot_id, tutor_id)."],
    ['a probe on its own row', 'exists (select 1 from bookings b where b.id = b.slot_id)', "the sub-select on 'bookings' must find its rows by one index probe: add b.<column> = <a column of the row or auth.uid()> to its where, with a column that leads an index of bookings (id, slot_id, tutor_id)."],
    ['an ambiguous column', 'exists (select 1 from bookings b where id = reviews.booking_id)', "column 'id' is in both reviews and bookings (b); write reviews.id or b.id."],
    ['an alias hiding the row', 'exists (select 1 from reviews where id = 1)', "'reviews' in FROM hides the outer reviews; give one of them an alias."],
    ['a join', 'exists (select 1 from bookings b join slots s on s.id = b.slot_id where b.id = booking_id)', "each sub-select reads exactly one of the app's tables: exists (select 1 from <table> t where ...); nest another exists (...) for a second table."],
    ['WITH RECURSIVE', 'exists (with recursive x as (select 1) select 1 from bookings b where b.id = booking_id)', 'WITH cannot be used in a condition; a condition is one boolean expression, reading other tables only through exists (select 1 from <table> where <indexed column> = <row column>).'],
    ['set_config', "set_config('request.jwt.claims', '{}', true) is not null", 'set_config() is not allowed: it could rewrite request.jwt.claims and act as another user.'],
    ['current_setting', "current_setting('request.jwt.claims') is not null", "current_setting() is not allowed: it reads server settings; use auth.jwt() for the caller's claims."],
    ['pg_sleep', 'pg_sleep(1) is null', 'pg_sleep() is not allowed: it holds a connection while doing nothing.'],
    ['query_to_xml', "query_to_xml('select * from svc_auth.users', true, true, '') is not null", 'query_to_xml() is not allowed: it runs SQL or XML queries given as strings, which these checks cannot see.'],
    ['::regclass', "'svc_auth.users'::regclass is not null", 'the type regclass is not allowed: it looks up objects of any schema by name; compare ids or text instead.'],
    ['current_user', "current_user = 'svc_service'", 'CURRENT_USER and the other role and schema names are not allowed; use auth.uid() for the caller.'],
    ['auth.<other>', 'auth.role() = 1', "auth.role() does not exist; use auth.uid() (the caller's id) or auth.jwt() (their claims)."],
    ['a bare uid()', 'uid() = user_id', "uid() is not allowed; use built-in math, text, date/time, json, array, range, full-text or aggregate functions, auth.uid(), auth.jwt() or the app's declared functions."],
    ['OPERATOR(schema.op)', 'rating operator(pg_catalog.>) 3', 'OPERATOR(schema.op) is not allowed; write the operator itself (a <=> b).'],
    ['a $1 parameter', '$1 = user_id', '$n parameters cannot be used in a condition; a condition is one boolean expression, reading other tables only through exists (select 1 from <table> where <indexed column> = <row column>).'],
    ['a second statement', 'true; select 1', "a condition is one expression; remove the ';'."],
    ['a FROM', 'true from bookings', ONE],
    ['a leading SELECT option', 'all true', ONE],
    ['DISTINCT', 'distinct true', ONE],
    ['a bare star', '*', ONE],
    ['a dangling keyword', "status = 'x' and", "the condition ends in 'and', read as a column alias; complete the expression."],
    ['a syntax error', "rating >= 4 and body <> 'é' )", 'syntax error at or near ")" (at character 29); fix the SQL there.'],
    ['an empty text', '  ', 'the condition is empty; write SQL.'],
  ];
  it.each(cases)('%s', (_, text, message) => {
    expect(refusedWith(() => reviews(text))).toBe(`Condition on table 'reviews': ${message}`);
  });

  it('at most 3 sub-selects, nested at most 2 deep', () => {
    const probe = 'exists (select 1 from bookings b where b.id = reviews.booking_id)';
    expect(refusedWith(() => reviews([probe, probe, probe, probe].join(' and ')))).toBe("Condition on table 'reviews': a condition has at most 3 sub-selects; combine them or move the rule into access.");
    const deep =
      'exists (select 1 from bookings b where b.id = reviews.booking_id and exists (select 1 from slots s where s.id = b.slot_id and exists (select 1 from tutor_profiles t where t.user_id = s.tutor_id)))';
    expect(refusedWith(() => reviews(deep))).toBe("Condition on table 'reviews': sub-selects nest at most 2 deep in a condition; flatten them.");
  });

  it('a condition over 2,000 bytes is refused before it is parsed (this one would not parse)', () => {
    expect(refusedWith(() => reviews('x'.repeat(2001)))).toBe("Condition on table 'reviews': the condition is 2001 bytes, more than 2000; shorten it.");
    expect(refusedWith(() => reviews('é'.repeat(1001)))).toBe("Condition on table 'reviews': the condition is 2002 bytes, more than 2000; shorten it.");
  });

  it('names the declaration with the caller’s label', () => {
    expect(refusedWith(() => checkCondition('pg_sleep(1) is null', { table: 'reviews', tables: TUTORING, label: "Table 'reviews', insert condition" }))).toBe(
      "Table 'reviews', insert condition: pg_sleep() is not allowed: it holds a connection while doing nothing.",
    );
  });
});
