// The capture of postgres_changes (issue 42): `realtime: true` tables get the capture triggers through schema_apply; a
// reader sees each committed change once, in order, with its old and new row; nothing is captured while no process
// reads; and each captured row is judged by the table's row-level security as each viewer, including rows since deleted.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChangeFeeds, type CapturedChange } from '../../src/realtime/capture.ts';
import { RowVisibility, type Viewer } from '../../src/realtime/visibility.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

let p: TestPlatform;
let app: { app_id: string; service_key: { key: string } };
let feeds: ChangeFeeds;
let alice: string;
const ALICE = '11111111-1111-4111-8111-111111111111';
const BOB = '22222222-2222-4222-8222-222222222222';

const SCHEMA = {
  tables: {
    notes: {
      columns: { id: { type: 'bigint', primary: true, identity: true }, user_id: { type: 'uuid' }, body: { type: 'text' } },
      access: 'user',
      realtime: true,
    },
    posts: { columns: { id: { type: 'bigint', primary: true, identity: true }, title: { type: 'text' } }, access: 'public', realtime: true },
    secrets: { columns: { id: { type: 'bigint', primary: true, identity: true }, value: { type: 'text' } }, access: 'service', realtime: true },
    quiet: { columns: { id: { type: 'bigint', primary: true, identity: true }, value: { type: 'text' } }, access: 'public' },
    // A group's rows: judged in SQL (the policy reads the members table), not by the ownership test in JavaScript.
    members: {
      columns: { id: { type: 'bigint', primary: true, identity: true }, team: { type: 'uuid', nullable: false }, user_id: { type: 'uuid', nullable: false } },
      access: { members: 'members', column: 'team', key: 'team', write: 'service' },
    },
    docs: {
      columns: { id: { type: 'bigint', primary: true, identity: true }, team: { type: 'uuid', nullable: false }, title: { type: 'text' } },
      access: { members: 'members', column: 'team' },
      realtime: true,
    },
  },
};
const TEAM_A = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';
const TEAM_B = 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb';

const viewer = (sub: string | null, role: Viewer['role'] = sub ? 'svc_user' : 'svc_anon'): Viewer => ({
  role,
  claims: sub ? JSON.stringify({ sub, role: 'authenticated' }) : '{}',
});

const apply = (schema: unknown) => p.api('POST', `/v1/${app.app_id}/schema/apply`, { body: { schema }, key: app.service_key.key });

async function until(done: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

beforeAll(async () => {
  p = await startTestPlatform();
  const init = await p.api('POST', '/init', { body: { name: 'Realtime capture' } });
  if (init.status !== 201) throw new Error(JSON.stringify(init.body));
  app = init.body;
  expect((await apply(SCHEMA)).status).toBe(200);
  alice = await p.services.endUserTokens.sign(app.app_id, { sub: ALICE, role: 'authenticated' }, 600);
  feeds = new ChangeFeeds({ databases: p.services.databases, readerId: 'capture-test', pollMs: 10, retentionSeconds: 60, log: pino({ level: 'silent' }) });
});
afterAll(async () => {
  await feeds?.close();
  await p?.close();
});

describe('the schema', () => {
  it('shows realtime tables, plans nothing on a second apply, and refuses a table without a primary key', async () => {
    const got = await p.api('GET', `/v1/${app.app_id}/schema`, { key: app.service_key.key });
    expect(got.body.tables.notes.realtime).toBe(true);
    expect(got.body.tables.quiet.realtime).toBeUndefined();
    const again = await p.api('POST', `/v1/${app.app_id}/schema/apply`, { body: { schema: SCHEMA, dry_run: true }, key: app.service_key.key });
    expect(again.status).toBe(200);
    expect(again.body.statements).toEqual([]);
    const keyless = await apply({ tables: { logs: { columns: { line: { type: 'text' } }, access: 'service', realtime: true } } });
    expect(keyless.status).toBe(400);
    expect(keyless.body.error.message).toContain("Table 'logs' has no primary key");
  });
});

describe('capture and visibility', () => {
  const seen: CapturedChange[] = [];
  let live = false;
  let stop: () => void;

  beforeAll(async () => {
    stop = feeds.subscribe(app.app_id, { changes: (batch) => seen.push(...batch), live: () => (live = true) });
    await until(() => live);
  });

  it('reads each committed change once, in order, with old and new rows; a table without realtime is not captured', async () => {
    const key = app.service_key.key;
    expect((await p.api('POST', `/v1/${app.app_id}/notes`, { key: alice, body: { body: 'first' } })).status).toBe(201);
    expect((await p.api('POST', `/v1/${app.app_id}/notes`, { key, body: [{ body: 'bob 1', user_id: BOB }, { body: 'bob 2', user_id: BOB }] })).status).toBe(201);
    expect((await p.api('PATCH', `/v1/${app.app_id}/notes?body=eq.first`, { key: alice, body: { body: 'edited' } })).status).toBe(204);
    expect((await p.api('DELETE', `/v1/${app.app_id}/notes?body=eq.bob%202`, { key })).status).toBe(204);
    expect((await p.api('POST', `/v1/${app.app_id}/quiet`, { key, body: { value: 'unseen' } })).status).toBe(201);
    await until(() => seen.length >= 5);
    expect(seen.map((c) => [c.table, c.op, c.record?.body ?? null, c.old?.body ?? null])).toEqual([
      ['notes', 'I', 'first', null],
      ['notes', 'I', 'bob 1', null],
      ['notes', 'I', 'bob 2', null],
      ['notes', 'U', 'edited', 'first'],
      ['notes', 'D', null, 'bob 2'],
    ]);
    expect(seen[0]!.record).toEqual({ id: expect.any(Number), user_id: ALICE, body: 'first' });
  });

  it('judges each captured row by the policies as each viewer, deleted rows included', async () => {
    const vis = new RowVisibility(p.services.databases);
    const rows = seen.slice(0, 5).map((c) => c.record ?? c.old!);
    expect([...(await vis.visible(app.app_id, 'notes', viewer(ALICE), rows))]).toEqual([0, 3]);
    expect([...(await vis.visible(app.app_id, 'notes', viewer(BOB), rows))]).toEqual([1, 2, 4]);
    expect([...(await vis.visible(app.app_id, 'notes', viewer(null), rows))]).toEqual([]);
    expect([...(await vis.visible(app.app_id, 'notes', viewer(null, 'svc_service'), rows))]).toEqual([0, 1, 2, 3, 4]);
    expect([...(await vis.visible(app.app_id, 'posts', viewer(null), [{ id: 1, title: 'x' }]))]).toEqual([0]);
    expect([...(await vis.visible(app.app_id, 'secrets', viewer(ALICE), [{ id: 1, value: 'x' }]))]).toEqual([]);
    expect([...(await vis.visible(app.app_id, 'missing', viewer(ALICE), [{ id: 1 }]))]).toEqual([]);
    // A sub that is no uuid owns nothing (Postgres would fail the cast; the row is simply not shown).
    expect([...(await vis.visible(app.app_id, 'notes', viewer('not-a-uuid'), rows))]).toEqual([]);
    const key = app.service_key.key;
    expect((await p.api('POST', `/v1/${app.app_id}/members`, { key, body: [{ team: TEAM_A, user_id: ALICE }, { team: TEAM_B, user_id: BOB }] })).status).toBe(201);
    const docs = [{ id: 1, team: TEAM_A, title: 'a' }, { id: 2, team: TEAM_B, title: 'b' }, { id: 3, team: TEAM_A, title: 'a2' }];
    expect([...(await vis.visible(app.app_id, 'docs', viewer(ALICE), docs))]).toEqual([0, 2]);
    expect([...(await vis.visible(app.app_id, 'docs', viewer(BOB), docs))]).toEqual([1]);
    expect([...(await vis.visible(app.app_id, 'docs', viewer(null), docs))]).toEqual([]);
    // Many viewers at once: ownership by one index of the rows, a group's condition in one round trip for all.
    const many = await vis.visibleTo(app.app_id, 'notes', [viewer(ALICE), viewer(BOB), viewer(null), viewer(null, 'svc_service')], rows);
    expect(many.map((set) => [...set].sort())).toEqual([[0, 3], [1, 2, 4], [], [0, 1, 2, 3, 4]]);
    const teams = await vis.visibleTo(app.app_id, 'docs', [viewer(BOB), viewer(ALICE), viewer(BOB)], docs);
    expect(teams.map((set) => [...set].sort())).toEqual([[1], [0, 2], [1]]);
  });

  it('captures nothing once no process reads', async () => {
    stop();
    const sql = p.services.databases.sql(app.app_id);
    const readers = async () => (await sql.query<{ n: number }>(`select count(*)::int as n from svc_realtime.readers`)).rows[0]!.n;
    await until(async () => (await readers()) === 0);
    const before = await sql.query<{ n: number }>(`select count(*)::int as n from svc_realtime.changes`);
    expect((await p.api('POST', `/v1/${app.app_id}/posts`, { key: app.service_key.key, body: { title: 'nobody listens' } })).status).toBe(201);
    const after = await sql.query<{ n: number }>(`select count(*)::int as n from svc_realtime.changes`);
    expect(after.rows[0]!.n).toBe(before.rows[0]!.n);
  });
});
