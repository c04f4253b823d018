// Two students and two tutors of an app, as the tutoring marketplace tests act (issue 43): fixed user ids and an
// end-user token of the app for each, signed by the platform the test started.
import type { TestPlatform } from './platform.ts';

export const PEOPLE = {
  ann: '11111111-1111-4111-8111-111111111111',
  ben: '22222222-2222-4222-8222-222222222222',
  tia: '33333333-3333-4333-8333-333333333333',
  tom: '44444444-4444-4444-8444-444444444444',
};
export type Person = keyof typeof PEOPLE;

/** A 10-minute token of each person for the app. */
export async function peopleTokens(p: TestPlatform, appId: string): Promise<Record<Person, string>> {
  const tokens = {} as Record<Person, string>;
  for (const who of Object.keys(PEOPLE) as Person[]) tokens[who] = await p.services.endUserTokens.sign(appId, { sub: PEOPLE[who], role: 'authenticated' }, 600);
  return tokens;
}

/** Reviews of bookings: anyone reads them; only the student of a completed booking writes one (a declared condition). */
export const REVIEW_RULE = "exists (select 1 from bookings b where b.id = reviews.booking_id and b.status = 'completed' and b.student_id = auth.uid())";
export const REVIEWS_TABLE = {
  columns: {
    id: { type: 'bigint', primary: true, identity: true },
    booking_id: { type: 'uuid', nullable: false, references: { table: 'bookings', column: 'id' } },
    user_id: { type: 'uuid' },
    stars: { type: 'integer', nullable: false },
  },
  access: { read: 'public', write: 'owner' },
  indexes: { reviews_by_booking: { columns: ['booking_id'] } },
  conditions: { insert: REVIEW_RULE },
};
