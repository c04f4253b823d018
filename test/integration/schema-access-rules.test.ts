// Access beyond one mode (issue 43): 'authenticated' (signed-in end users read, anonymous callers do not), rules that
// combine readers and writers, several owner columns (a booking belongs to its student and its tutor), and own rows
// plus a group's. Checked through the data API as two students, two tutors and an anonymous visitor; schema_get shows
// each as a definition writes it and applying that again plans nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { PEOPLE, peopleTokens, type Person } from '../helpers/tutoring-people.ts';

let p: TestPlatform;
let app: { app_id: string; service_key: { key: string } };
const ids = PEOPLE;
let tokens: Record<Person, string>;
const TEAM = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';

const SCHEMA = {
  tables: {
    tutors: {
      columns: { id: { type: 'uuid', primary: true }, name: { type: 'text', nullable: false }, user_id: { type: 'uuid' } },
      access: 'authenticated',
    },
    bookings: {
      columns: {
        id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' },
        student_id: { type: 'uuid', nullable: false },
        tutor_id: { type: 'uuid', nullable: false },
        note: { type: 'text' },
      },
      access: { read: 'owner', owners: ['student_id', 'tutor_id'] },
    },
    profiles: {
      columns: { user_id: { type: 'uuid', primary: true }, bio: { type: 'text' } },
      access: { read: 'public', write: 'owner' },
    },
    team_members: {
      columns: { team_id: { type: 'uuid', primary: true }, user_id: { type: 'uuid', primary: true } },
      access: 'service',
    },
    notes: {
      columns: { id: { type: 'bigint', primary: true, identity: true }, user_id: { type: 'uuid' }, team_id: { type: 'uuid' }, text: { type: 'text' } },
      access: { read: ['owner', 'group'], write: 'owner', group: { members: 'team_members', column: 'team_id' } },
    },
  },
};

const apply = (schema: unknown, dry_run = false) => p.api('POST', `/v1/${app.app_id}/schema/apply`, { body: { schema, dry_run }, key: app.service_key.key });
const as = (who: Person | null, method: string, path: string, body?: unknown) =>
  p.api(method, `/v1/${app.app_id}/${path}`, { key: who === null ? null : tokens[who], body, headers: { prefer: 'return=representation' } });
const names = async (who: Person | null, path: string) => (await as(who, 'GET', path)).body;

beforeAll(async () => {
  p = await startTestPlatform();
  const init = await p.api('POST', '/init', { body: { name: 'Tutoring' } });
  if (init.status !== 201) throw new Error(JSON.stringify(init.body));
  app = init.body;
  tokens = await peopleTokens(p, app.app_id);
  const applied = await apply(SCHEMA);
  if (applied.status !== 200) throw new Error(JSON.stringify(applied.body));
  const key = app.service_key.key;
  await p.api('POST', `/v1/${app.app_id}/tutors`, { key, body: [{ id: ids.tia, name: 'Tia', user_id: ids.tia }, { id: ids.tom, name: 'Tom', user_id: ids.tom }] });
  await p.api('POST', `/v1/${app.app_id}/team_members`, { key, body: [{ team_id: TEAM, user_id: ids.ann }, { team_id: TEAM, user_id: ids.ben }] });
});
afterAll(async () => {
  await p?.close();
});

describe("'authenticated'", () => {
  it('lets signed-in end users read every row and anonymous visitors none; they write their own rows', async () => {
    expect(await names('ann', 'tutors?select=name&order=name')).toEqual([{ name: 'Tia' }, { name: 'Tom' }]);
    const anon = await as(null, 'GET', 'tutors?select=name');
    expect([anon.status, anon.body]).toEqual([200, []]);
    const own = await as('tia', 'PATCH', `tutors?id=eq.${ids.tia}`, { name: 'Tia B.' });
    expect([own.status, own.body]).toEqual([200, [{ id: ids.tia, name: 'Tia B.', user_id: ids.tia }]]);
    // Another's row is seen but not written: row-level security leaves it out of the update (200 and no rows).
    const other = await as('tia', 'PATCH', `tutors?id=eq.${ids.tom}`, { name: 'Hacked' });
    expect([other.status, other.body]).toEqual([200, []]);
  });
});

describe('rules', () => {
  it('a booking belongs to its student and its tutor: both read and write it, nobody else sees it', async () => {
    const made = await as('ann', 'POST', 'bookings', { student_id: ids.ann, tutor_id: ids.tia, note: 'algebra' });
    expect(made.status).toBe(201);
    const id = made.body[0].id;
    expect(await names('tia', 'bookings?select=note')).toEqual([{ note: 'algebra' }]);
    expect(await names('ben', 'bookings?select=note')).toEqual([]);
    expect(await names('tom', 'bookings?select=note')).toEqual([]);
    expect(await names(null, 'bookings?select=note')).toEqual([]);
    expect((await as('tia', 'PATCH', `bookings?id=eq.${id}`, { note: 'algebra II' })).body).toEqual([{ id, student_id: ids.ann, tutor_id: ids.tia, note: 'algebra II' }]);
    // A booking naming neither party as the caller is refused.
    const forged = await as('ben', 'POST', 'bookings', { student_id: ids.ann, tutor_id: ids.tom });
    expect([forged.status, forged.body.code]).toEqual([403, '42501']);
  });

  it('public read with owner write: anyone reads profiles, only their owner writes one', async () => {
    expect((await as('ann', 'POST', 'profiles', { bio: 'hi' })).body).toEqual([{ user_id: ids.ann, bio: 'hi' }]);
    expect(await names(null, 'profiles?select=bio')).toEqual([{ bio: 'hi' }]);
    const anonWrite = await as(null, 'POST', 'profiles', { user_id: ids.ben, bio: 'x' });
    expect([anonWrite.status, anonWrite.body.code]).toEqual([401, '42501']);
    expect((await as('ben', 'PATCH', `profiles?user_id=eq.${ids.ann}`, { bio: 'defaced' })).body).toEqual([]);
  });

  it("own rows plus the team's: members read each other's notes and write only their own", async () => {
    expect((await as('ann', 'POST', 'notes', { team_id: TEAM, text: 'ann shares' })).status).toBe(201);
    expect((await as('tom', 'POST', 'notes', { text: 'tom alone' })).status).toBe(201);
    expect(await names('ben', 'notes?select=text')).toEqual([{ text: 'ann shares' }]);
    expect(await names('tom', 'notes?select=text')).toEqual([{ text: 'tom alone' }]);
    expect((await as('ben', 'PATCH', 'notes?text=eq.ann shares', { text: 'ben edits' })).body).toEqual([]);
  });

  it('schema_get shows each as written, and applying it again plans nothing', async () => {
    const view = (await p.api('GET', `/v1/${app.app_id}/schema`, { key: app.service_key.key })).body;
    expect(view.tables.tutors.access).toBe('authenticated');
    expect(view.tables.bookings.access).toEqual({ read: ['owner'], write: ['owner'], owners: ['student_id', 'tutor_id'] });
    expect(view.tables.profiles.access).toEqual({ read: ['public'], write: ['owner'], owners: ['user_id'] });
    expect(view.tables.notes.access).toEqual({ read: ['owner', 'group'], write: ['owner'], owners: ['user_id'], group: { members: 'team_members', column: 'team_id', key: 'team_id' } });
    const tables = Object.fromEntries(Object.entries(view.tables as Record<string, { access: unknown }>).map(([name, t]) => [name, { access: t.access }]));
    expect((await apply({ tables }, true)).body.statements).toEqual([]);
  });

  it('refuses rules it cannot build, naming the problem', async () => {
    const cases: Array<[unknown, string]> = [
      [{ read: 'owner', owners: ['missing_id'] }, "Table 'bookings' names 'missing_id' among its access owners, but it has no uuid column 'missing_id'. Add it (\"missing_id\": { \"type\": \"uuid\" }), or fix access.owners."],
      [{ read: 'owner', owner: ['student_id'] }, `Invalid 'schema.tables.bookings.access': Unrecognized key: "owner".`],
      [{ members: 'tutors' }, `Invalid 'schema.tables.bookings.access.column': Invalid input: expected string, received undefined.`],
      [{ read: 'everyone' }, "access of table 'bookings': read: 'everyone' is none of public, authenticated, owner, group, service."],
      [{ read: ['service', 'public'] }, "access of table 'bookings': read: 'service' means keys only and combines with nothing; list the others without it."],
      [{ read: 'group' }, "access of table 'bookings' has 'group' but no group: add group { members, column, key? }."],
      [{ read: 'public', write: 'service', owners: ['student_id'] }, "access of table 'bookings' names owners but neither read nor write has 'owner'; add 'owner' or leave owners out."],
      [{ read: 'group', group: { members: 'tutors', column: 'tutor_id' } }, "Table 'bookings' has group access through 'tutors.tutor_id', but 'tutors' has no column 'tutor_id' (access.key, default: access.column)."],
    ];
    for (const [access, message] of cases) {
      const refused = await apply({ tables: { bookings: { access } } });
      expect([refused.status, refused.body.error?.code, refused.body.error?.message], message).toEqual([400, 'VALIDATION_FAILED', message]);
    }
  });
});
