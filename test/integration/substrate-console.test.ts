// What the console's Substrate tabs needed from the API (issue 30, audit §5.2-5.5), on the real control database: the
// ledger's stable cursor (next_before over created_at and id; an ISO `before` still works as it did) and
// `revertible`; the entities' cursor; the outbox deliveries' capability and action_id filters.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

let p: TestPlatform;
let key: string;

const S = '/v1/me/substrate';
const get = (path: string) => p.api('GET', `${S}${path}`, { key });
async function run(capability: string, payload: Record<string, unknown>): Promise<{ action_id: string; result: any }> {
  const res = await p.api('POST', `${S}/actions/propose`, { key, body: { capability, payload } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}
const ids = (rows: Array<{ action_id?: string; id?: string }>): string[] => rows.map((r) => (r.action_id ?? r.id)!);
const CURSOR = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z~[a-z]{3}_[a-z2-7]{20}$/;

/** Every page of a list read `limit` at a time through next_before. */
async function allPages(path: string, field: 'actions' | 'entities', limit: number): Promise<string[]> {
  const seen: string[] = [];
  let before: string | null = null;
  for (let n = 0; n < 20; n++) {
    const res = await get(`${path}&limit=${limit}${before ? `&before=${encodeURIComponent(before)}` : ''}`);
    expect(res.status).toBe(200);
    seen.push(...ids(res.body[field]));
    before = res.body.next_before;
    if (before === null) return seen;
    expect(before).toMatch(CURSOR);
  }
  throw new Error('too many pages');
}

beforeAll(async () => {
  // No worker: deliveries stay pending, which is all the filters need.
  p = await startTestPlatform({ SVC_ROLE: 'api', SVC_OUTBOUND_ALLOW_PRIVATE: 'true' });
  key = await p.substrateKey('me');
});
afterAll(() => p?.close());

describe('the ledger', () => {
  it('pages with next_before over rows sharing a timestamp, none skipped or repeated; an ISO before still pages as it did', async () => {
    const made = [];
    for (const title of ['A', 'B', 'C', 'D']) made.push((await run('record_decision', { title, kind: 'operational', rationale: 'paging' })).action_id);
    await p.sql(`update substrate_actions set created_at = '2026-01-02T03:04:05.123456Z' where id = any($1)`, [made]);
    const byId = [...made].sort().reverse();

    const paged = await allPages('/actions?capability=record_decision', 'actions', 1);
    expect(paged).toEqual(byId);
    const whole = await get('/actions?capability=record_decision&limit=4');
    expect(whole.body).toMatchObject({ next_before: null });
    expect(ids(whole.body.actions)).toEqual(byId);

    // An ISO time (the old callers' before): rows created strictly before it, ties included only before the time.
    const old = await get(`/actions?capability=record_decision&before=${encodeURIComponent('2026-01-02T03:04:05.123456Z')}`);
    expect(old.status).toBe(200);
    expect(old.body).toEqual({ actions: [], next_before: null });
    const later = await get(`/actions?capability=record_decision&before=${encodeURIComponent('2026-01-02T05:00:00+01:00')}&limit=2`);
    expect(ids(later.body.actions)).toEqual(byId.slice(0, 2));
    expect(later.body.next_before).toMatch(CURSOR);
  });

  it('refuses a before that is neither a cursor nor an ISO time: 400 VALIDATION_FAILED on before', async () => {
    for (const before of ['yesterday', '2026-01-02T03:04:05Z~ACT', '2026-01-02T03:04:05Z~act_x~y', 'x'.repeat(201)]) {
      const res = await get(`/actions?before=${encodeURIComponent(before)}`);
      expect(res.status, before).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_FAILED');
    }
  });

  it('says which actions revert_action would undo: executed reversible ones not reverted yet', async () => {
    const learning = await run('record_learning', { title: 'Revertible', description: 'until reverted' });
    const principle = await p.api('POST', `${S}/actions/propose`, {
      key,
      body: { capability: 'record_principle', payload: { title: 'Waits', applies_to: {}, constraint_spec: { logic: { '==': [1, 1] } } } },
    });
    expect(principle.body.requires_approval).toBe(true);
    expect((await get(`/actions/${learning.action_id}`)).body.revertible).toBe(true);
    expect((await get(`/actions/${principle.body.action_id}`)).body.revertible).toBe(false);

    const revert = await run('revert_action', { action_id: learning.action_id });
    expect(revert.result).toEqual({ reverted: learning.action_id });
    const after = await get(`/actions/${learning.action_id}`);
    expect(after.body).toMatchObject({ status: 'executed', reverted_by: revert.action_id, revertible: false });
    const listed = await get('/actions?status=all&limit=500');
    const flags = Object.fromEntries(listed.body.actions.map((a: { action_id: string; revertible: boolean }) => [a.action_id, a.revertible]));
    expect(flags).toMatchObject({ [learning.action_id]: false, [principle.body.action_id]: false, [revert.action_id]: false });
  });
});

describe('entities', () => {
  it('pages with next_before past any limit; a search answers one page; before with q or a bad cursor is 400', async () => {
    const made = [];
    for (const name of ['Paging One', 'Paging Two', 'Paging Three'])
      made.push((await run('upsert_entity', { type: 'project', display_name: name })).result.entity_id);
    await p.sql(`update substrate_entities set updated_at = '2026-02-03T04:05:06.000001Z' where id = any($1)`, [made]);
    expect(await allPages('/entities?type=project', 'entities', 2)).toEqual([...made].sort().reverse());

    const search = await get('/entities?type=project&q=paging&limit=2&count=true');
    expect(search.status).toBe(200);
    expect(search.body).toMatchObject({ next_before: null, total: 3 });
    expect(search.body.entities).toHaveLength(2);
    const mixed = await get(`/entities?q=paging&before=${encodeURIComponent('2026-02-03T04:05:06Z')}`);
    expect(mixed.status).toBe(400);
    expect(mixed.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'before', message: 'not with q' }] });
    const bad = await get('/entities?before=soon');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('VALIDATION_FAILED');
  });
});

describe('outbox deliveries', () => {
  it('filters by capability and by action_id', async () => {
    const set = await p.api('PUT', `${S}/outbox-targets/record_commitment`, {
      key,
      body: { webhook_url: 'http://127.0.0.1:9/hook', signing_secret: 'filters-secret' },
    });
    expect(set.status).toBe(200);
    const first = await run('record_commitment', { description: 'First delivery', status: 'confirmed' });
    const second = await run('record_commitment', { description: 'Second delivery', status: 'confirmed' });

    const byCapability = await get('/outbox-deliveries?capability=record_commitment');
    expect(byCapability.status).toBe(200);
    expect(byCapability.body.deliveries.map((d: { action_id: string }) => d.action_id)).toEqual([second.action_id, first.action_id]);
    const byAction = await get(`/outbox-deliveries?action_id=${first.action_id}&status=pending`);
    expect(byAction.body.deliveries).toEqual([
      expect.objectContaining({ action_id: first.action_id, capability: 'record_commitment', status: 'pending', attempts: 0 }),
    ]);
    expect((await get('/outbox-deliveries?capability=record_learning')).body).toEqual({ deliveries: [] });
    expect((await get(`/outbox-deliveries?action_id=${first.action_id}&status=dead`)).body).toEqual({ deliveries: [] });
    expect((await get(`/outbox-deliveries?capability=${'x'.repeat(101)}`)).status).toBe(400);
  });
});
