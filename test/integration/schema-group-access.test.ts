// Group access: rows of a workspace reach its members only, through the membership table, for reads and writes; a
// read-only group leaves writes to keys; schema_get round-trips it and a second apply plans nothing; references that
// would break it are refused before any SQL runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

let p: TestPlatform;
let app: { app_id: string; service_key: { key: string } };
let alice: string;
let bob: string;
const ALICE = '11111111-1111-4111-8111-111111111111';
const BOB = '22222222-2222-4222-8222-222222222222';
const WS_A = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';
const WS_B = 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb';

const GROUP = { members: 'members', column: 'workspace_id' };
const SCHEMA = {
  tables: {
    workspaces: {
      columns: { id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' }, name: { type: 'text', nullable: false } },
      access: { members: 'members', column: 'id', key: 'workspace_id', write: 'service' },
    },
    members: {
      columns: {
        id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' },
        workspace_id: { type: 'uuid', nullable: false, references: { table: 'workspaces', column: 'id', onDelete: 'cascade' } },
        user_id: { type: 'uuid', nullable: false },
      },
      access: { ...GROUP, write: 'service' },
    },
    contacts: {
      columns: {
        id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' },
        workspace_id: { type: 'uuid', nullable: false, references: { table: 'workspaces', column: 'id', onDelete: 'cascade' } },
        user_id: { type: 'uuid' },
        name: { type: 'text', nullable: false },
      },
      access: GROUP,
    },
  },
};

const apply = (body: unknown) => p.api('POST', `/v1/${app.app_id}/schema/apply`, { body, key: app.service_key.key });
const rows = (path: string, key: string) => p.api('GET', `/v1/${app.app_id}/${path}`, { key });

beforeAll(async () => {
  p = await startTestPlatform();
  const init = await p.api('POST', '/init', { body: { name: 'Group access' } });
  app = init.body;
  if (init.status !== 201) throw new Error(JSON.stringify(init.body));
  alice = await p.services.endUserTokens.sign(app.app_id, { sub: ALICE, role: 'authenticated' }, 600);
  bob = await p.services.endUserTokens.sign(app.app_id, { sub: BOB, role: 'authenticated' }, 600);
  const applied = await apply({ schema: SCHEMA });
  expect(applied.status).toBe(200);
  const key = app.service_key.key;
  await p.api('POST', `/v1/${app.app_id}/workspaces`, { key, body: [{ id: WS_A, name: 'A' }, { id: WS_B, name: 'B' }] });
  await p.api('POST', `/v1/${app.app_id}/members`, { key, body: [{ workspace_id: WS_A, user_id: ALICE }, { workspace_id: WS_B, user_id: BOB }] });
  await p.api('POST', `/v1/${app.app_id}/contacts`, { key, body: [{ workspace_id: WS_A, name: 'a1' }, { workspace_id: WS_B, name: 'b1' }] });
});
afterAll(async () => {
  await p?.close();
});

describe('group access', () => {
  it('each member reads only their workspaces, their memberships and their workspaces\' rows', async () => {
    expect((await rows('workspaces?select=name', alice)).body).toEqual([{ name: 'A' }]);
    expect((await rows('contacts?select=name', alice)).body).toEqual([{ name: 'a1' }]);
    expect((await rows('contacts?select=name', bob)).body).toEqual([{ name: 'b1' }]);
    expect((await rows('members?select=user_id', bob)).body).toEqual([{ user_id: BOB }]);
    const anon = await p.api('GET', `/v1/${app.app_id}/contacts?select=name`, { key: null });
    expect([anon.status, anon.body]).toEqual([200, []]);
  });

  it('members write rows of their workspace (user_id filled) and no other', async () => {
    const made = await p.api('POST', `/v1/${app.app_id}/contacts`, { key: alice, body: { workspace_id: WS_A, name: 'a2' }, headers: { prefer: 'return=representation' } });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject([{ workspace_id: WS_A, name: 'a2', user_id: ALICE }]);
    const foreign = await p.api('POST', `/v1/${app.app_id}/contacts`, { key: alice, body: { workspace_id: WS_B, name: 'sneaky' } });
    expect(foreign.status).toBe(403);
    expect(foreign.body.code).toBe('42501');
    const moved = await p.api('PATCH', `/v1/${app.app_id}/contacts?name=eq.a2`, { key: alice, body: { workspace_id: WS_B } });
    expect(moved.status).toBe(403);
    const untouched = await p.api('PATCH', `/v1/${app.app_id}/contacts?name=eq.b1`, { key: alice, body: { name: 'x' }, headers: { prefer: 'return=representation' } });
    expect([untouched.status, untouched.body]).toEqual([200, []]);
  });

  it("write 'service' leaves end users reading: joining a workspace is a key's act", async () => {
    const join = await p.api('POST', `/v1/${app.app_id}/members`, { key: alice, body: { workspace_id: WS_B, user_id: ALICE } });
    expect(join.status).toBe(403);
    const rename = await p.api('PATCH', `/v1/${app.app_id}/workspaces?id=eq.${WS_A}`, { key: alice, body: { name: 'mine' }, headers: { prefer: 'return=representation' } });
    expect([rename.status, rename.body]).toEqual([200, []]);
  });

  it('a new membership opens the workspace at once', async () => {
    await p.api('POST', `/v1/${app.app_id}/members`, { key: app.service_key.key, body: { workspace_id: WS_B, user_id: ALICE } });
    expect((await rows('contacts?select=name&order=name', alice)).body).toEqual([{ name: 'a1' }, { name: 'a2' }, { name: 'b1' }]);
    await p.api('DELETE', `/v1/${app.app_id}/members?workspace_id=eq.${WS_B}&user_id=eq.${ALICE}`, { key: app.service_key.key });
    expect((await rows('contacts?select=name&order=name', alice)).body).toEqual([{ name: 'a1' }, { name: 'a2' }]);
  });

  it('schema_get shows the group; the same definition again plans nothing', async () => {
    const schema = await p.api('GET', `/v1/${app.app_id}/schema`, { key: app.service_key.key });
    expect(schema.body.tables.contacts.access).toEqual({ members: 'members', column: 'workspace_id', key: 'workspace_id', write: 'members' });
    expect(schema.body.tables.workspaces.access).toEqual({ members: 'members', column: 'id', key: 'workspace_id', write: 'service' });
    const again = await apply({ schema: SCHEMA, dry_run: true });
    expect(again.status).toBe(200);
    expect(again.body.sql ?? again.body.statements).toEqual([]);
  });

  it('refuses a group whose members table or columns will not be there', async () => {
    const cases: Array<[unknown, string]> = [
      [{ tables: { notes: { columns: { id: { type: 'uuid', primary: true }, ws: { type: 'uuid' } }, access: { members: 'nowhere', column: 'ws' } } } }, "table 'nowhere' does not exist after this apply"],
      [{ tables: { notes: { columns: { id: { type: 'uuid', primary: true } }, access: GROUP } } }, "it has no column 'workspace_id'"],
      [{ tables: { notes: { columns: { id: { type: 'uuid', primary: true }, workspace_id: { type: 'text' } }, access: GROUP } } }, "'members.workspace_id' is uuid and 'notes.workspace_id' is text"],
      [{ tables: { members: { _drop: true } } }, "Table 'contacts' has group access through 'members.workspace_id', but table 'members' does not exist"],
      [{ tables: { members: { _dropColumns: ['user_id'] } } }, 'has no user_id uuid column'],
    ];
    for (const [schema, message] of cases) {
      const r = await apply({ schema, dry_run: true });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('VALIDATION_FAILED');
      expect(r.body.error.message).toContain(message);
    }
  });
});
