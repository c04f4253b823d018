// Source artifacts (upsert_source_artifact, capability rules 2 and 3), memory search and list, and daily snapshots,
// over REST on the real control database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertSubstrateKey, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import type { SubstrateActor } from '../../src/substrate/types.ts';
import { substrateSnapshots } from '../../src/substrate/jobs.ts';
import { toTask, type WorkerServices } from '../../workers/index.ts';

let p: TestPlatform;
let key: string;
let agent: SubstrateActor;
let otherKey: string;

const S = '/v1/me/substrate';
const propose = (body: Record<string, unknown>, k = key) => p.api('POST', `${S}/actions/propose`, { body, key: k });
const get = (path: string, k = key) => p.api('GET', `${S}/${path}`, { key: k });
const upsert = async (payload: Record<string, unknown>) => {
  const res = await propose({ capability: 'upsert_source_artifact', payload });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { action_id: string; result: { artifact_id: string; was_insert: boolean; before: Record<string, unknown> | null } };
};
const record = async (capability: string, payload: Record<string, unknown>) => {
  const res = await propose({ capability, payload });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return Object.values(res.body.result as Record<string, string>)[0]!;
};
const ids = (rows: { id: string }[]) => rows.map((r) => r.id);

beforeAll(async () => {
  p = await startTestPlatform({ SVC_ROLE: 'api' });
  key = await p.substrateKey('me');
  const accountId = (await p.sql(`select account_id from platform_keys limit 1`))[0].account_id;
  agent = await p.services.substrate.actor({ kind: 'platform', accountId, role: 'owner', via: 'key', keyId: 'k', personId: null });
  const otherAccount = (await p.sql(`insert into accounts (name) values ('other') returning id`))[0].id;
  otherKey = `svc_sub_${'q'.repeat(43)}`;
  await insertSubstrateKey(p, otherAccount, otherKey);
});
afterAll(() => p?.close());

describe('upsert_source_artifact', () => {
  it('inserts, then resolves by (external_system, external_id): was_insert false and before is the previous row', async () => {
    const first = await upsert({
      kind: 'email',
      title: 'Pricing thread',
      external_system: 'gmail',
      external_id: 'msg-1',
      summary: 'Customer asks about pricing',
      content: 'Hello, what does the enterprise plan cost?',
      url: 'https://mail.example.com/msg-1',
      links: { entity_ids: ['ent_aaaaaaaaaaaaaaaaaaaa'], project_tags: ['pricing'] },
      attrs: { a: 1 },
    });
    expect(first.result).toEqual({ artifact_id: expect.stringMatching(/^art_[a-z2-7]{20}$/), was_insert: true, before: null });
    const id = first.result.artifact_id;

    const second = await upsert({ kind: 'email', title: 'Pricing thread (2)', external_system: 'gmail', external_id: 'msg-1', attrs: { b: 2 }, summary: null });
    expect(second.result.artifact_id).toBe(id);
    expect(second.result.was_insert).toBe(false);
    expect(second.result.before).toMatchObject({
      id,
      title: 'Pricing thread',
      summary: 'Customer asks about pricing',
      content: 'Hello, what does the enterprise plan cost?',
      attrs: { a: 1 },
      links: { entity_ids: ['ent_aaaaaaaaaaaaaaaaaaaa'], project_tags: ['pricing'] },
      source_app_id: null,
    });
    const detail = (await get(`source-artifacts/${id}`)).body;
    // Omitted fields stay, null clears, attrs and links merge key by key.
    expect(detail).toMatchObject({ title: 'Pricing thread (2)', summary: null, content: 'Hello, what does the enterprise plan cost?', attrs: { a: 1, b: 2 } });
    expect(detail.links).toEqual({ entity_ids: ['ent_aaaaaaaaaaaaaaaaaaaa'], project_tags: ['pricing'] });

    // By id (no external ids), and a sent id that names nothing: a new artifact with a generated id.
    const byId = await upsert({ id, kind: 'email', title: 'Pricing thread (3)' });
    expect(byId.result).toMatchObject({ artifact_id: id, was_insert: false, before: { title: 'Pricing thread (2)' } });
    const unknownId = await upsert({ id: 'art_zzzzzzzzzzzzzzzzzzzz', kind: 'note', title: 'Fresh' });
    expect(unknownId.result.was_insert).toBe(true);
    expect(unknownId.result.artifact_id).not.toBe('art_zzzzzzzzzzzzzzzzzzzz');
    // The same external id in another system is another artifact.
    expect((await upsert({ kind: 'email', title: 'Other system', external_system: 'outlook', external_id: 'msg-1' })).result.was_insert).toBe(true);
  });

  it('validates the payload; an installed app gets source_app_id; concurrent upserts of one external id make one row', async () => {
    const half = await propose({ capability: 'upsert_source_artifact', payload: { kind: 'doc', title: 't', external_system: 'drive' } });
    expect(half.status).toBe(400);
    expect(half.body.error.details[0].path).toBe('payload.external_id');
    const noTitle = await propose({ capability: 'upsert_source_artifact', payload: { kind: 'doc' } });
    expect(noTitle.status).toBe(400);
    expect(noTitle.body.error.details[0].path).toBe('payload.title');
    const badLinks = await propose({ capability: 'upsert_source_artifact', payload: { kind: 'doc', title: 't', links: { people: [] } } });
    expect(badLinks.status).toBe(400);

    const fromApp = await p.services.substrate.propose(
      { ...agent, sourceAppId: 'app_crm' },
      { capability: 'upsert_source_artifact', payload: { kind: 'transcript', title: 'Call', external_system: 'zoom', external_id: 'z-1' } },
    );
    expect(fromApp.verdict.result).toBe('auto_approved');
    const artId = (fromApp.result as { artifact_id: string }).artifact_id;
    expect((await get(`source-artifacts/${artId}`)).body.source_app_id).toBe('app_crm');
    // A later upsert by the human keeps it.
    await upsert({ kind: 'transcript', title: 'Call (edited)', external_system: 'zoom', external_id: 'z-1' });
    expect((await get(`source-artifacts/${artId}`)).body.source_app_id).toBe('app_crm');

    const racing = await Promise.all(
      Array.from({ length: 5 }, (_, i) => propose({ capability: 'upsert_source_artifact', payload: { kind: 'doc', title: `race ${i}`, external_system: 'drive', external_id: 'race' } })),
    );
    expect(racing.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(racing.map((r) => r.body.result.artifact_id)).size).toBe(1);
    expect(racing.filter((r) => r.body.result.was_insert)).toHaveLength(1);
    expect(await p.sql(`select id from substrate_artifacts where external_system = 'drive' and external_id = 'race'`)).toHaveLength(1);
  });

  it('external ids stay unique per user: taking another artifact\'s by id, or restoring them, is 409 CONFLICT', async () => {
    const a = (await upsert({ kind: 'doc', title: 'A', external_system: 'notion', external_id: 'page-a' })).result.artifact_id;
    const b = (await upsert({ kind: 'doc', title: 'B' })).result.artifact_id;
    const take = await propose({ capability: 'upsert_source_artifact', payload: { id: b, kind: 'doc', title: 'B', external_system: 'notion', external_id: 'page-a' } });
    expect(take.status).toBe(409);
    expect(take.body.error.message).toContain(a);
    // a moves to page-z, b takes page-a, then undoing a's move would collide with b.
    const move = await upsert({ id: a, kind: 'doc', title: 'A', external_system: 'notion', external_id: 'page-z' });
    await upsert({ id: b, kind: 'doc', title: 'B', external_system: 'notion', external_id: 'page-a' });
    const undo = await propose({ capability: 'revert_action', payload: { action_id: move.action_id } });
    expect(undo.status).toBe(409);
    expect((await get(`source-artifacts/${a}`)).body.external_id).toBe('page-z');
  });

  it('revert_action restores the previous row, or deletes an inserted artifact', async () => {
    const made = await upsert({ kind: 'doc', title: 'Spec v1', external_system: 'drive', external_id: 'spec', content: 'one', attrs: { v: 1 } });
    const id = made.result.artifact_id;
    const changed = await upsert({ kind: 'doc', title: 'Spec v2', external_system: 'drive', external_id: 'spec', content: 'two', attrs: { w: 2 }, url: 'https://x.test/s' });
    const revert = await propose({ capability: 'revert_action', payload: { action_id: changed.action_id } });
    expect(revert.status).toBe(200);
    const restored = (await get(`source-artifacts/${id}`)).body;
    expect(restored).toMatchObject({ title: 'Spec v1', content: 'one', attrs: { v: 1 }, url: null, external_system: 'drive', external_id: 'spec' });
    // A revert is a write: updated_at moves on.
    expect(Date.parse(restored.updated_at)).toBeGreaterThan(Date.parse(restored.created_at));

    // Undoing the insert deletes it; the commitment citing it keeps existing with the reference cleared.
    const commitment = await record('record_commitment', { description: 'Send the spec', status: 'confirmed', source_artifact_id: id });
    expect((await propose({ capability: 'revert_action', payload: { action_id: made.action_id } })).status).toBe(200);
    expect((await get(`source-artifacts/${id}`)).status).toBe(404);
    expect(await p.sql(`select source_artifact_id from substrate_commitments where id = $1`, [commitment])).toEqual([{ source_artifact_id: null }]);
  });
});

describe('capability rule 3: references to artifacts', () => {
  it('memory rows must cite an artifact of the same user; deleting the artifact nulls the references', async () => {
    const art = (await upsert({ kind: 'email', title: 'Contract', external_system: 'gmail', external_id: 'contract' })).result.artifact_id;
    const com = await record('record_commitment', { description: 'Sign the contract', status: 'tentative', source_artifact_id: art });
    const dec = await record('record_decision', { title: 'We sign', kind: 'operational', source_artifact_id: art });
    const lrn = await record('record_learning', { title: 'Contracts', description: 'read them', source_artifact_id: art });
    const missing = await propose({ capability: 'record_commitment', payload: { description: 'x', status: 'proposed', source_artifact_id: 'art_bbbbbbbbbbbbbbbbbbbb' } });
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toContain('art_bbbbbbbbbbbbbbbbbbbb');

    // Another org's artifact is not citable either.
    const theirs = await propose({ capability: 'upsert_source_artifact', payload: { kind: 'doc', title: 'Theirs' } }, otherKey);
    const cross = await propose({ capability: 'record_decision', payload: { title: 'x', kind: 'operational', source_artifact_id: theirs.body.result.artifact_id } });
    expect(cross.status).toBe(404);

    await p.sql(`delete from substrate_artifacts where id = $1`, [art]);
    expect(await p.sql(`select source_artifact_id from substrate_commitments where id = $1`, [com])).toEqual([{ source_artifact_id: null }]);
    expect(await p.sql(`select source_artifact_id from substrate_decisions where id = $1`, [dec])).toEqual([{ source_artifact_id: null }]);
    expect(await p.sql(`select source_artifact_id from substrate_learnings where id = $1`, [lrn])).toEqual([{ source_artifact_id: null }]);
  });
});

describe('source artifact reads', () => {
  it('lists newest first without content, filters by kind, searches title, summary and content with ranks, counts; detail has content', async () => {
    const a = (await upsert({ kind: 'meeting_notes', title: 'Kangaroo roadmap', summary: 'quarterly planning', content: 'We talked about the wombat launch.' })).result.artifact_id;
    const b = (await upsert({ kind: 'meeting_notes', title: 'Standup', content: 'kangaroo kangaroo kangaroo: the kangaroo service is down' })).result.artifact_id;
    const c = (await upsert({ kind: 'invoice', title: 'Invoice 42', summary: 'kangaroo hosting' })).result.artifact_id;

    const all = await get('source-artifacts?limit=3');
    expect(all.status).toBe(200);
    expect(ids(all.body.artifacts)).toEqual([c, b, a]);
    for (const row of all.body.artifacts) expect(row).not.toHaveProperty('content');
    expect(all.body).not.toHaveProperty('total');

    const notes = await get('source-artifacts?kind=meeting_notes&count=true');
    expect(ids(notes.body.artifacts)).toEqual([b, a]);
    expect(notes.body.total).toBe(2);

    // Full text: "kangaroo" is in b's content (four times), a's title and c's summary; b ranks first.
    const found = await get('source-artifacts?q=kangaroo&count=true');
    expect(found.body.total).toBe(3);
    expect(found.body.artifacts[0].id).toBe(b);
    expect(new Set(ids(found.body.artifacts))).toEqual(new Set([a, b, c]));
    expect(ids((await get('source-artifacts?q=wombat')).body.artifacts)).toEqual([a]);
    expect(ids((await get(`source-artifacts?q=${encodeURIComponent('kangaroo -hosting')}&kind=invoice`)).body.artifacts)).toEqual([]);
    expect((await get('source-artifacts?q=quarterly+planning')).body.artifacts.map((r: { id: string }) => r.id)).toEqual([a]);

    const detail = await get(`source-artifacts/${b}`);
    expect(detail.body).toMatchObject({ id: b, kind: 'meeting_notes', content: 'kangaroo kangaroo kangaroo: the kangaroo service is down', links: {}, attrs: {} });
    expect((await get('source-artifacts/art_cccccccccccccccccccc')).status).toBe(404);
    expect((await get('source-artifacts?limit=201')).status).toBe(400);
    expect((await get('source-artifacts?limit=0')).status).toBe(400);
  });
});

describe('memory search', () => {
  let dec: string;
  let lrn: string;
  let com: string;
  let art: string;

  beforeAll(async () => {
    dec = await record('record_decision', { title: 'Quokka migration plan', kind: 'strategic', rationale: 'the quokka cluster moves to Postgres' });
    lrn = await record('record_learning', { title: 'Plan the migration early', description: 'late migrations hurt', resolution_taken: 'start in week one' });
    com = await record('record_commitment', { description: 'Deliver the quokka report\nwith charts', status: 'confirmed', amount: 3, unit: 'pages' });
    art = (await upsert({ kind: 'doc', title: 'Platypus notes', summary: 'about the quokka habitat' })).result.artifact_id;
  });

  it('and (default): every word; or: any word, more matches rank higher; phrase: words adjacent and in order', async () => {
    const and = await get('memory?q=quokka+migration');
    expect(and.status).toBe(200);
    expect(ids(and.body.results)).toEqual([dec]);
    expect(and.body.results[0]).toEqual({
      id: dec,
      kind: 'decision',
      title: 'Quokka migration plan',
      body_text: 'the quokka cluster moves to Postgres',
      rank: expect.any(Number),
      updated_at: expect.any(String),
      source_artifact_id: null,
      supersedes: null,
      status: 'active',
    });
    expect(and.body.results[0].rank).toBeGreaterThan(0);

    const or = await get('memory?q=quokka+migration&match=or');
    const orIds = ids(or.body.results);
    expect(new Set(orIds)).toEqual(new Set([dec, lrn, com, art]));
    // The decision has both words (quokka twice): first. Ranks are real ts_rank values, in descending order.
    expect(orIds[0]).toBe(dec);
    const ranks = or.body.results.map((r: { rank: number }) => r.rank);
    expect(ranks.every((r: unknown) => typeof r === 'number' && r > 0)).toBe(true);
    expect([...ranks].sort((x, y) => y - x)).toEqual(ranks);
    expect(new Set(ranks).size).toBeGreaterThan(1);
    const byKind = Object.fromEntries(or.body.results.map((r: { kind: string; id: string }) => [r.kind, r]));
    expect(byKind.commitment).toMatchObject({ id: com, title: 'Deliver the quokka report', body_text: 'Deliver the quokka report\nwith charts', status: 'confirmed', supersedes: null });
    expect(byKind.learning).toMatchObject({ id: lrn, body_text: 'late migrations hurt\n\nResolution: start in week one', status: null });
    expect(byKind.source_artifact).toMatchObject({ id: art, title: 'Platypus notes', body_text: 'about the quokka habitat', status: null, source_artifact_id: null });

    // "migration plan": in order in the decision's title; the learning has "plan the migration" (wrong order).
    expect(ids((await get('memory?q=migration+plan&match=phrase')).body.results)).toEqual([dec]);
    expect(ids((await get('memory?q=plan+migration&match=phrase')).body.results)).toEqual([]);
    expect(new Set(ids((await get('memory?q=migration+plan')).body.results))).toEqual(new Set([dec, lrn]));
    // Quotes and backslashes are words, never operators; stop words alone match nothing.
    expect((await get(`memory?q=${encodeURIComponent("quokka's \\ 'x' | & !")}&match=or`)).status).toBe(200);
    expect((await get('memory?q=the+and&match=or')).body.results).toEqual([]);
    expect((await get('memory?q=quokka&match=fuzzy')).status).toBe(400);
  });

  it('kinds restricts the kinds searched; q omitted, empty or * lists the newest with rank null', async () => {
    expect(ids((await get('memory?q=quokka&kinds=commitments,source_artifacts')).body.results).sort()).toEqual([com, art].sort());
    expect(ids((await get('memory?q=quokka&kinds=learnings')).body.results)).toEqual([]);
    const bad = await get('memory?q=quokka&kinds=decisions,dreams');
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('dreams');

    for (const q of ['', '?q=', '?q=*']) {
      const res = await get(`memory${q}${q ? '&' : '?'}limit=4`);
      expect(res.status).toBe(200);
      expect(ids(res.body.results)).toEqual([art, com, lrn, dec]);
      expect(res.body.results.every((r: { rank: unknown }) => r.rank === null)).toBe(true);
    }
    expect(ids((await get('memory?q=*&kinds=decisions&limit=1')).body.results)).toEqual([dec]);
    expect((await get('memory?limit=201')).status).toBe(400);
  });

  it('ctx.substrate.searchMemory answers the same rows', async () => {
    const out = (await p.services.substrate.read(agent, 'searchMemory', ['quokka migration', { kinds: ['decisions'], limit: 5 }])) as { results: { id: string }[] };
    expect(ids(out.results)).toEqual([dec]);
  });
});

describe('memory list', () => {
  it('pages by (updated_at, id) with next_before: no gaps or repeats across equal timestamps', async () => {
    const made: string[] = [];
    for (let i = 0; i < 7; i++) made.push(await record('record_learning', { title: `Tie ${i}`, description: 'same instant' }));
    // Five of them share one instant, two share a later one; all older than every other row.
    await p.sql(`update substrate_learnings set updated_at = '2001-01-01T00:00:00.123456Z' where id = any($1)`, [made.slice(0, 5)]);
    await p.sql(`update substrate_learnings set updated_at = '2001-01-02T00:00:00Z' where id = any($1)`, [made.slice(5)]);
    const expected = (await p.sql(`select id from substrate_learnings order by updated_at desc, id desc`)).map((r) => r.id as string);

    const seen: string[] = [];
    let before: string | null = null;
    let pages = 0;
    do {
      const res: { status: number; body: { results: { id: string; rank: unknown }[]; next_before: string | null } } = await get(
        `memory/list?kinds=learnings&limit=2${before ? `&before=${encodeURIComponent(before)}` : ''}`,
      );
      expect(res.status).toBe(200);
      expect(res.body.results.length).toBeLessThanOrEqual(2);
      expect(res.body.results.every((r) => r.rank === null)).toBe(true);
      seen.push(...ids(res.body.results));
      before = res.body.next_before;
      pages++;
    } while (before && pages < 20);
    expect(seen).toEqual(expected);
    expect(seen.slice(-7).sort()).toEqual([...made].sort());
    expect(pages).toBe(Math.ceil(expected.length / 2));

    // A bare ISO timestamp works as a cursor too (rows updated strictly before it); garbage is a 400.
    const older = await get(`memory/list?kinds=learnings&before=${encodeURIComponent('2001-01-01T00:00:00.123457Z')}`);
    expect(ids(older.body.results)).toEqual(expected.slice(-5));
    expect((await get(`memory/list?kinds=learnings&before=${encodeURIComponent('2001-01-01T00:00:00.123456Z')}`)).body.results).toEqual([]);
    expect((await get('memory/list?before=yesterday')).status).toBe(400);
    expect((await get('memory/list?limit=101')).status).toBe(400);
  });

  it('all kinds newest first; superseded=false hides superseded decisions and expired commitments; source_artifact_id keeps citing rows', async () => {
    const art = (await upsert({ kind: 'email', title: 'Offsite', external_system: 'gmail', external_id: 'offsite' })).result.artifact_id;
    const old = await record('record_decision', { title: 'Offsite in Lisbon', kind: 'operational', source_artifact_id: art });
    const sup = await propose({ capability: 'supersede_decision', dangerously_skip_approval: true, payload: { old_decision_id: old, new_title: 'Offsite in Porto', kind: 'operational' } });
    expect(sup.status).toBe(200);
    const replacement = sup.body.result.decision_id as string;
    const expired = await record('record_commitment', { description: 'Book Lisbon hotel', status: 'expired', source_artifact_id: art });
    const open = await record('record_commitment', { description: 'Book Porto hotel', status: 'confirmed', source_artifact_id: art });

    const recent = await get('memory/list?limit=5');
    // supersede_decision updates the old decision and inserts its replacement in one transaction: one updated_at, id order.
    expect(ids(recent.body.results)).toEqual([open, expired, ...[replacement, old].sort().reverse(), art]);
    const byId = Object.fromEntries(recent.body.results.map((r: { id: string }) => [r.id, r]));
    expect(byId[replacement]).toMatchObject({ kind: 'decision', supersedes: old, status: 'active' });
    expect(byId[old]).toMatchObject({ status: 'superseded', source_artifact_id: art });
    expect(recent.body.next_before).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z~art_/));

    const current = await get('memory/list?limit=4&superseded=false');
    expect(ids(current.body.results)).toEqual([open, replacement, art, expect.any(String)]);
    expect(ids((await get('memory/list?limit=5&superseded=true')).body.results)).toEqual(ids(recent.body.results));

    const cited = await get(`memory/list?source_artifact_id=${art}`);
    expect(ids(cited.body.results)).toEqual([open, expired, old]);
    expect(cited.body.next_before).toBeNull();
    expect(ids((await get(`memory/list?source_artifact_id=${art}&superseded=false&kinds=commitments`)).body.results)).toEqual([open]);
    expect((await get(`memory/list?source_artifact_id=${art}&kinds=source_artifacts`)).body).toEqual({ results: [], next_before: null });
  });
});

describe('snapshots', () => {
  /** The counters as they are now, straight from the tables. */
  const mine = async () =>
    (
      await p.sql(
        `select
          (select count(*)::int from substrate_entities where user_id = $1) as entity_count,
          (select count(*)::int from substrate_decisions where user_id = $1) as decision_count,
          (select count(*)::int from substrate_commitments where user_id = $1) as commitment_count,
          (select count(*)::int from substrate_learnings where user_id = $1) as learning_count,
          (select count(*)::int from substrate_principles where user_id = $1 and status = 'active') as principle_count,
          (select count(*)::int from substrate_artifacts where user_id = $1) as artifact_count,
          (select count(*)::int from substrate_commitments where user_id = $1 and status in ('proposed', 'tentative', 'confirmed')) as open_commitment_count,
          (select count(*)::int from substrate_actions where user_id = $1) as action_count,
          (select count(*)::int from substrate_actions where user_id = $1 and status = 'proposed') as pending_approval_count`,
        [agent.userId],
      )
    )[0];

  it("GET snapshots takes today's when missing; the cron refreshes every active user's; days bounds the range, newest first", async () => {
    await record('upsert_entity', { type: 'person', display_name: 'Ada' });
    await propose({ capability: 'record_principle', payload: { title: 'Pending', applies_to: {}, constraint_spec: { logic: { '==': [1, 1] } } } });
    const today = new Date().toISOString().slice(0, 10);

    const first = await get('snapshots');
    expect(first.status).toBe(200);
    expect(first.body.snapshots).toHaveLength(1);
    const snap = first.body.snapshots[0];
    expect(snap).toEqual({ snapshot_date: today, ...(await mine()), taken_at: expect.any(String) });
    expect(snap.pending_approval_count).toBeGreaterThanOrEqual(1);
    expect(snap.entity_count).toBe(1);

    // A second GET keeps today's row; the cron task refreshes it (and is safe to run again).
    await record('record_learning', { title: 'After the snapshot', description: 'counted by the cron' });
    expect((await get('snapshots')).body.snapshots[0].learning_count).toBe(snap.learning_count);
    const task = toTask(substrateSnapshots, p.services as unknown as WorkerServices);
    const helpers = { job: { attempts: 1, max_attempts: 1 }, logger: { debug() {} } } as unknown as Parameters<typeof task>[1];
    await task({}, helpers);
    await task({}, helpers);
    const refreshed = (await get('snapshots')).body.snapshots;
    expect(refreshed).toHaveLength(1);
    expect(refreshed[0]).toEqual({ snapshot_date: today, ...(await mine()), taken_at: expect.any(String) });
    expect(refreshed[0].learning_count).toBe(snap.learning_count + 1);
    // The other org's user has actions too, so the cron wrote its row.
    expect(await p.sql(`select count(*)::int as n from substrate_snapshots where user_id <> $1`, [agent.userId])).toEqual([{ n: 1 }]);

    await p.sql(
      `insert into substrate_snapshots select user_id, snapshot_date - d, entity_count, decision_count, commitment_count, learning_count, principle_count,
         artifact_count, open_commitment_count, action_count, pending_approval_count, taken_at from substrate_snapshots, (values (1), (3), (9)) v(d)
       where user_id = $1 and snapshot_date = $2`,
      [agent.userId, today],
    );
    const week = (await get('snapshots')).body.snapshots.map((s: { snapshot_date: string }) => s.snapshot_date);
    const day = (n: number) => new Date(Date.parse(today) - n * 86_400_000).toISOString().slice(0, 10);
    expect(week).toEqual([today, day(1), day(3)]);
    expect((await get('snapshots?days=1')).body.snapshots).toHaveLength(1);
    expect((await get('snapshots?days=2')).body.snapshots).toHaveLength(2);
    expect((await get('snapshots?days=365')).body.snapshots).toHaveLength(4);
    expect((await get('snapshots?days=0')).status).toBe(400);
    expect((await get('snapshots?days=366')).status).toBe(400);
  });
});

describe('isolation', () => {
  it("another org sees none of this user's artifacts, memory or snapshots", async () => {
    const art = (await upsert({ kind: 'doc', title: 'Secret kangaroo plan' })).result.artifact_id;
    expect((await get('source-artifacts', otherKey)).body.artifacts.map((a: { title: string }) => a.title)).toEqual(['Theirs']);
    expect((await get('source-artifacts?q=kangaroo', otherKey)).body.artifacts).toEqual([]);
    expect((await get(`source-artifacts/${art}`, otherKey)).status).toBe(404);
    expect((await get('memory?q=quokka&match=or', otherKey)).body.results).toEqual([]);
    expect(ids((await get('memory', otherKey)).body.results)).toEqual(ids((await get('source-artifacts', otherKey)).body.artifacts));
    expect((await get('memory/list?kinds=decisions,commitments,learnings', otherKey)).body).toEqual({ results: [], next_before: null });
    const theirs = (await get('snapshots', otherKey)).body.snapshots;
    expect(theirs[0]).toMatchObject({ decision_count: 0, learning_count: 0, artifact_count: 1, action_count: 1 });
    // A service key is refused.
    const app = (await p.api('POST', '/init', { body: { name: 'mem' } })).body;
    expect((await get('memory', app.service_key.key)).status).toBe(403);
  });
});
