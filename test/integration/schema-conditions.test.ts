// Declared conditions (issue 43): per command, a SQL condition narrowing what access grants end users. A booking is
// requested by its student and moved on by its tutor; a review is written only by the student of a completed booking.
// Checked as two students, two tutors and an anonymous visitor; the dry run shows the policies, schema_get the
// conditions as written; what could reach beyond the app's tables, or recurse, is refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { withEventLoopDelay } from '../helpers/event-loop.ts';
import { PEOPLE, peopleTokens, REVIEW_RULE, REVIEWS_TABLE, type Person } from '../helpers/tutoring-people.ts';

let p: TestPlatform;
let app: { app_id: string; service_key: { key: string } };
const ids = PEOPLE;
let tokens: Record<Person, string>;

const SCHEMA = {
  tables: {
    bookings: {
      columns: {
        id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' },
        student_id: { type: 'uuid', nullable: false },
        tutor_id: { type: 'uuid', nullable: false },
        status: { type: 'text', nullable: false, default: "'requested'", enum: ['requested', 'accepted', 'completed'] },
      },
      access: { read: 'owner', owners: ['student_id', 'tutor_id'] },
      conditions: { insert: "student_id = auth.uid() and status = 'requested'", update: 'tutor_id = auth.uid()' },
    },
    reviews: REVIEWS_TABLE,
  },
};

const apply = (schema: unknown, dry_run = false) => p.api('POST', `/v1/${app.app_id}/schema/apply`, { body: { schema, dry_run }, key: app.service_key.key });
const as = (who: Person | null, method: string, path: string, body?: unknown) =>
  p.api(method, `/v1/${app.app_id}/${path}`, { key: who === null ? null : tokens[who], body, headers: { prefer: 'return=representation' } });

beforeAll(async () => {
  p = await startTestPlatform();
  const init = await p.api('POST', '/init', { body: { name: 'Conditions' } });
  if (init.status !== 201) throw new Error(JSON.stringify(init.body));
  app = init.body;
  tokens = await peopleTokens(p, app.app_id);
  const applied = await apply(SCHEMA);
  if (applied.status !== 200) throw new Error(JSON.stringify(applied.body));
});
afterAll(async () => {
  await p?.close();
});

describe('declared conditions', () => {
  let booking: string;

  it('a student requests a booking for themself only; only its tutor moves it on', async () => {
    const made = await as('ann', 'POST', 'bookings', { student_id: ids.ann, tutor_id: ids.tia });
    expect([made.status, made.body[0]?.status]).toEqual([201, 'requested']);
    booking = made.body[0].id;
    const preCompleted = await as('ann', 'POST', 'bookings', { student_id: ids.ann, tutor_id: ids.tia, status: 'completed' });
    expect([preCompleted.status, preCompleted.body.code]).toEqual([403, '42501']);
    const forTutor = await as('tia', 'POST', 'bookings', { student_id: ids.ann, tutor_id: ids.tia });
    expect([forTutor.status, forTutor.body.code]).toEqual([403, '42501']);
    // The student sees the booking but may not complete it: the update condition leaves it out.
    expect((await as('ann', 'PATCH', `bookings?id=eq.${booking}`, { status: 'completed' })).body).toEqual([]);
    expect((await as('tom', 'PATCH', `bookings?id=eq.${booking}`, { status: 'completed' })).body).toEqual([]);
    expect((await as('tia', 'PATCH', `bookings?id=eq.${booking}`, { status: 'completed' })).body).toMatchObject([{ id: booking, status: 'completed' }]);
  });

  it('a review is written only by the student of a completed booking; anyone reads reviews', async () => {
    const other = (await as('ben', 'POST', 'bookings', { student_id: ids.ben, tutor_id: ids.tom })).body[0].id;
    const notCompleted = await as('ben', 'POST', 'reviews', { booking_id: other, stars: 5 });
    expect([notCompleted.status, notCompleted.body.code]).toEqual([403, '42501']);
    const notTheirs = await as('ben', 'POST', 'reviews', { booking_id: booking, stars: 1 });
    expect([notTheirs.status, notTheirs.body.code]).toEqual([403, '42501']);
    const anonymous = await as(null, 'POST', 'reviews', { booking_id: booking, stars: 1 });
    expect([anonymous.status, anonymous.body.code]).toEqual([401, '42501']);
    expect((await as('ann', 'POST', 'reviews', { booking_id: booking, stars: 5 })).status).toBe(201);
    expect((await as(null, 'GET', 'reviews?select=stars')).body).toEqual([{ stars: 5 }]);
  });

  it('schema_get shows them as written, re-applying plans nothing, and the dry run shows the policy it makes', async () => {
    const view = (await p.api('GET', `/v1/${app.app_id}/schema`, { key: app.service_key.key })).body;
    expect(view.tables.bookings.conditions).toEqual({ insert: "student_id = auth.uid() and status = 'requested'", update: { using: 'tutor_id = auth.uid()', check: 'tutor_id = auth.uid()' } });
    expect(view.tables.reviews.conditions).toEqual({ insert: REVIEW_RULE });
    expect((await apply({ tables: { bookings: { conditions: view.tables.bookings.conditions }, reviews: { conditions: view.tables.reviews.conditions } } }, true)).body.statements).toEqual([]);
    const changed = await apply({ tables: { reviews: { conditions: { insert: REVIEW_RULE, delete: 'false' } } } }, true);
    expect(changed.body.statements[0]).toBe('DROP POLICY IF EXISTS svc_condition_select ON "reviews"');
    expect(changed.body.statements).toContain('CREATE POLICY svc_condition_delete ON "reviews" AS RESTRICTIVE FOR DELETE TO svc_anon, svc_user USING (false)');
    expect(changed.body.statements.find((s: string) => s.includes('svc_condition_insert ON "reviews" AS'))).toMatch(/from public\.bookings b where/);
  });

  it('refuses conditions that reach beyond the app, write settings, or recurse', async () => {
    const refused = async (table: string, conditions: unknown) => {
      const r = await apply({ tables: { [table]: { conditions } } });
      expect(r.status).toBe(400);
      return r.body.error.message as string;
    };
    expect(await refused('reviews', { select: 'exists (select 1 from svc_auth.users u where u.id = auth.uid())' })).toMatch(/^The select condition of table 'reviews': /);
    expect(await refused('reviews', { select: "set_config('request.jwt.claims', '{}', true) is not null" })).toBe(
      "The select condition of table 'reviews': set_config() is not allowed: it could rewrite request.jwt.claims and act as another user.",
    );
    expect(await refused('reviews', { select: 'stars > (select count(*) from pg_catalog.pg_class)' })).toBe(
      "The select condition of table 'reviews': 'pg_catalog.pg_class' is outside the app's tables (schema pg_catalog); use the app's tables.",
    );
    expect(await refused('reviews', { select: 'exists (select 1 from bookings b where b.status = reviews.stars::text)' })).toBe(
      `The select condition of table 'reviews': the sub-select on 'bookings' matches status, which leads no index of bookings; add one (indexes: { bookings_by_status: { columns: ["status"] } }) or match an indexed column (id).`,
    );
    // tools/list shows conditions as any object; the definition still checks their shape.
    const unknownKey = await apply({ tables: { reviews: { conditions: { upsert: 'true' } } } });
    expect([unknownKey.status, unknownKey.body.error.message]).toEqual([400, `Invalid 'schema.tables.reviews.conditions': Unrecognized key: "upsert".`]);
    // bookings' select reads reviews and reviews' select reads bookings: Postgres would recurse at query time.
    const loop = await apply({
      tables: {
        bookings: { conditions: { select: 'exists (select 1 from reviews r where r.booking_id = bookings.id) or true' } },
        reviews: { conditions: { select: 'exists (select 1 from bookings b where b.id = reviews.booking_id)' } },
      },
    });
    expect(loop.status).toBe(400);
    expect(loop.body.error.message).toMatch(/infinite recursion/);
    // The checks run on the plan thread: the hardest condition within the size limit holds the event loop no longer than
    // any apply (the limits' own test measures the parse itself at up to ~125 ms).
    const deep = `${'not '.repeat(498)}true`;
    const { result, maxDelayMs } = await withEventLoopDelay(() => apply({ tables: { reviews: { conditions: { select: deep } } } }, true));
    expect(result.status).toBe(400);
    expect(maxDelayMs).toBeLessThan(40);
    // Nothing changed.
    expect((await p.api('GET', `/v1/${app.app_id}/schema`, { key: app.service_key.key })).body.tables.reviews.conditions).toEqual({ insert: REVIEW_RULE });
  });
});
