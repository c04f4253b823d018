// schema_get shows each table's row-level-security policies in force, read from pg_policies (issue 30: the console's
// schema page shows "policies"): the ones each access level makes, and one made by hand in the app's database (a
// RESTRICTIVE one too). They are display only: schema_get's output passed back to schema_apply, policies and all,
// plans nothing, and whatever a definition says under `policies` changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { databaseUrl } from '../helpers/db.ts';

let p: TestPlatform;
let appId: string;
let db: pg.Client;

const SCHEMA = {
  tables: {
    notes: { columns: { id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' }, user_id: { type: 'uuid' }, body: { type: 'text' } } },
    posts: { columns: { id: { type: 'integer', primary: true }, title: { type: 'text' } }, access: 'public' },
    settings: { columns: { key: { type: 'text', primary: true }, value: { type: 'jsonb' } } },
  },
};
const NOTHING = { dry_run: false, applied: false, statements: [], migration: null };
const SERVICE_ALL = { name: 'svc_service_all', command: 'ALL', permissive: true, roles: ['svc_service'], using: 'true', with_check: 'true' };
const OWN = '(user_id = current_user_id())';

const apply = (body: unknown) => p.api('POST', `/v1/${appId}/schema/apply`, { body });
const getSchema = async () => {
  const r = await p.api('GET', `/v1/${appId}/schema`);
  expect(r.status).toBe(200);
  return r.body;
};

beforeAll(async () => {
  p = await startTestPlatform();
  appId = (await p.api('POST', '/init', { body: { name: 'Policies' } })).body.app_id;
  db = new pg.Client({ connectionString: databaseUrl(p.appDbPrefix + appId) });
  await db.connect();
  expect((await apply({ schema: SCHEMA, name: 'policies' })).body.applied).toBe(true);
});
afterAll(async () => {
  await db?.end();
  await p?.close();
});

describe('schema_get policies', () => {
  it('lists the policies each access level makes, by name', async () => {
    const { tables } = await getSchema();
    expect(tables.notes.policies).toEqual([SERVICE_ALL, { name: 'svc_user_own', command: 'ALL', permissive: true, roles: ['svc_user'], using: OWN, with_check: OWN }]);
    expect(tables.posts.policies).toEqual([
      { name: 'svc_public_read', command: 'SELECT', permissive: true, roles: ['svc_anon', 'svc_user'], using: 'true', with_check: null },
      SERVICE_ALL,
    ]);
    expect(tables.settings.policies).toEqual([SERVICE_ALL]);
  });

  it('shows a policy made by hand in the database, a restrictive one too', async () => {
    await db.query(`create policy audit_hide on settings as restrictive for delete to svc_service using (key <> 'locked')`);
    const { tables } = await getSchema();
    expect(tables.settings.policies).toEqual([
      { name: 'audit_hide', command: 'DELETE', permissive: false, roles: ['svc_service'], using: "(key <> 'locked'::text)", with_check: null },
      SERVICE_ALL,
    ]);
  });

  it("passed back unchanged, policies and all, plans nothing; a definition's policies change nothing", async () => {
    const view = await getSchema();
    expect((await apply({ schema: view, dry_run: true })).body).toEqual({ ...NOTHING, dry_run: true });
    expect((await apply({ schema: view, name: 'round trip' })).body).toEqual(NOTHING);
    const altered = { tables: { ...view.tables, posts: { ...view.tables.posts, policies: [{ name: 'anything', command: 'DELETE' }] } } };
    expect((await apply({ schema: altered })).body).toEqual(NOTHING);
    expect((await getSchema()).tables.posts.policies).toEqual(view.tables.posts.policies);
  });

  it('a changed access shows its new policies', async () => {
    const changed = await apply({ schema: { tables: { posts: { access: 'service' } } }, name: 'posts private' });
    expect(changed.body.applied).toBe(true);
    expect((await getSchema()).tables.posts.policies).toEqual([SERVICE_ALL]);
  });
});
