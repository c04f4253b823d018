// The substrate ledger over REST on the real control database: credentials, every verdict path, approvals, the
// idempotency rules, principles, reverts, and one org never seeing another's rows.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertSubstrateKey, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { databaseUrl } from '../helpers/db.ts';
import type { SubstrateActor } from '../../src/substrate/types.ts';

let p: TestPlatform;
let key: string;
let agent: SubstrateActor;

const S = '/v1/me/substrate';
const propose = (body: Record<string, unknown>, k = key) => p.api('POST', `${S}/actions/propose`, { body, key: k });
const count = async (table: string) => (await p.sql(`select count(*)::int as n from ${table}`))[0].n as number;

beforeAll(async () => {
  p = await startTestPlatform({ SVC_ROLE: 'api' });
  key = await p.substrateKey('me');
  const accountId = (await p.sql(`select account_id from platform_keys limit 1`))[0].account_id;
  agent = await p.services.substrate.actor({ kind: 'platform', accountId, role: 'owner', via: 'key', keyId: 'k', personId: null });
});
afterAll(() => p?.close());

describe('credentials', () => {
  it('substrate keys only: a service key is 403, a platform key or none 401 AUTH_INVALID_TOKEN', async () => {
    const app = (await p.api('POST', '/init', { body: { name: 'sub' } })).body;
    expect((await p.api('GET', `${S}/settings`, { key })).status).toBe(200);
    const service = await p.api('GET', `${S}/settings`, { key: app.service_key.key });
    expect(service.status).toBe(403);
    expect(service.body.error.code).toBe('FORBIDDEN');
    for (const k of [p.platformKey, null]) {
      const res = await p.api('GET', `${S}/actions`, { key: k });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('AUTH_INVALID_TOKEN');
    }
  });
});

/** What each pg connection of this process sent and had answered while `run` ran, in order: `sent <sql>`, `answered <sql>`. */
async function wireDuring(run: () => Promise<unknown>): Promise<string[][]> {
  const events = new Map<pg.Client, string[]>();
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const text = (typeof args[0] === 'string' ? args[0] : '').replace(/\s+/g, ' ').trim();
    const own = events.get(this) ?? [];
    events.set(this, own);
    own.push(`sent ${text}`);
    const answer = (query as (...a: unknown[]) => unknown).apply(this, args);
    if (answer instanceof Promise) void answer.then(() => own.push(`answered ${text}`), () => own.push(`failed ${text}`));
    return answer;
  } as typeof query;
  try {
    await run();
  } finally {
    pg.Client.prototype.query = query;
  }
  return [...events.values()];
}

describe('propose', () => {
  it('a record with nothing to read first is written with its action row in one statement, COMMIT behind it: two round trips, notices in order', async () => {
    const listener = new pg.Client({ connectionString: databaseUrl(p.controlDb) });
    await listener.connect();
    try {
      await listener.query('listen svc_substrate');
      const notices: { tbl: string; id: string }[] = [];
      listener.on('notification', (n) => notices.push(JSON.parse(n.payload!)));
      let out: Awaited<ReturnType<typeof p.services.substrate.propose>> | undefined;
      const wire = await wireDuring(async () => {
        out = await p.services.substrate.propose(agent, { capability: 'record_learning', payload: { title: 'One trip', description: 'both rows at once' } });
      });
      const learningId = (out!.result as { learning_id: string }).learning_id;
      const tx = wire.find((events) => events.some((e) => e.includes('insert into substrate_actions')))!;
      const sent = tx.filter((e) => e.startsWith('sent ')).map((e) => e.slice(5));
      expect(sent).toEqual(['begin', expect.stringMatching(/^select u\.yolo_mode/), expect.stringMatching(/^with execution as \(insert into substrate_learnings .*\) insert into substrate_actions /), 'commit']);
      // The state is written before BEGIN's answer, COMMIT before the insert's: two waits for the server.
      expect(tx.indexOf(`sent ${sent[1]}`)).toBeLessThan(tx.indexOf('answered begin'));
      expect(tx.indexOf('sent commit')).toBeLessThan(tx.indexOf(`answered ${sent[2]}`));
      expect(await p.sql(`select title from substrate_learnings where id = $1`, [learningId])).toEqual([{ title: 'One trip' }]);
      expect(await p.sql(`select status, result, undo from substrate_actions where id = $1`, [out!.action_id])).toEqual([
        { status: 'executed', result: { learning_id: learningId }, undo: { table: 'substrate_learnings', id: learningId } },
      ]);
      // The learning's change notice comes before its action's, as when the learning row is written on its own.
      await expect.poll(() => notices.filter((n) => n.id === learningId || n.id === out!.action_id).map((n) => n.tbl)).toEqual(['learnings', 'action_ledger']);
    } finally {
      await listener.end();
    }
  });

  it('an auto capability executes at once; bad payloads are 400 naming the field; unknown capabilities are 400', async () => {
    const res = await propose({ capability: 'record_decision', payload: { title: 'Use Postgres', kind: 'strategic', rationale: 'one database' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      action_id: expect.stringMatching(/^act_[a-z2-7]{20}$/),
      verdict: { result: 'auto_approved', reason: 'capability policy: auto', conflicts: [] },
      requires_approval: false,
      result: { decision_id: expect.stringMatching(/^dec_/) },
    });
    const bad = await propose({ capability: 'record_decision', payload: { title: 'x', kind: 'whim' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].path).toBe('payload.kind');
    const extra = await propose({ capability: 'record_learning', payload: { title: 't', description: 'd', colour: 'red' } });
    expect(extra.status).toBe(400);
    expect(extra.body.error.message).toContain('"colour"');
    const unknown = await propose({ capability: 'launch_rocket', payload: {} });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain('record_decision');
  });

  it('approval capabilities wait; approve executes once, then 409 wrong_status; reject records the reason', async () => {
    const res = await propose({ capability: 'record_principle', payload: { title: 'Small spends', applies_to: { capabilities: ['record_commitment'] }, constraint_spec: { logic: { '<=': [{ var: 'payload.amount' }, 100] } } } });
    expect(res.body).toMatchObject({ verdict: { result: 'requires_approval' }, requires_approval: true });
    expect(res.body.result).toBeUndefined();
    const approved = await p.api('POST', `${S}/actions/${res.body.action_id}/approve`, { key });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: 'executed', requires_approval: false, result: { principle_id: expect.stringMatching(/^prn_/) } });
    const again = await p.api('POST', `${S}/actions/${res.body.action_id}/approve`, { key });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('wrong_status');
    expect((await p.api('POST', `${S}/actions/${res.body.action_id}/reject`, { key, body: {} })).status).toBe(409);

    // The principle now governs commitments: over 100 needs approval, with the conflict named.
    const big = await propose({ capability: 'record_commitment', payload: { description: 'Buy servers', status: 'proposed', amount: 500 } });
    expect(big.body.verdict).toMatchObject({ result: 'requires_approval', conflicts: [{ title: 'Small spends', mode: 'require_approval' }] });
    const small = await propose({ capability: 'record_commitment', payload: { description: 'Buy coffee', status: 'confirmed', amount: 5 } });
    expect(small.body.verdict.result).toBe('auto_approved');
    const rejected = await p.api('POST', `${S}/actions/${big.body.action_id}/reject`, { key, body: { reason: 'too much' } });
    expect(rejected.body).toMatchObject({ status: 'rejected', reject_reason: 'too much' });
  });

  it('yolo: a human\'s approval capability executes; an agent\'s still waits; the skip flag works for the owner only', async () => {
    await p.api('PUT', `${S}/settings/yolo`, { key, body: { yolo_mode: true } });
    try {
      const human = await propose({ capability: 'retire_principle', payload: { principle_id: 'prn_nonexistent', reason: 'x' } });
      // Yolo executes at once, so a bad reference surfaces as the execution's error and nothing is recorded.
      expect(human.status).toBe(404);
      const learn = await propose({ capability: 'record_principle', payload: { title: 'Be kind', applies_to: {}, constraint_spec: { logic: { '==': [1, 1] } } } });
      expect(learn.body.verdict.result).toBe('auto_approved_yolo');
      const byAgent = await p.services.substrate.propose(agent, { capability: 'record_principle', payload: { title: 'Agent rule', applies_to: {}, constraint_spec: { logic: { '==': [1, 1] } } } });
      expect(byAgent.verdict.result).toBe('requires_approval');
    } finally {
      await p.api('PUT', `${S}/settings/yolo`, { key, body: { yolo_mode: false } });
    }
    await p.api('PUT', `${S}/settings/yolo`, { key, body: { yolo_mode: true } });
    try {
      // Side-effecting: a human's proposal still waits in yolo mode.
      const mail = await propose({ capability: 'send_email_draft', payload: { to: 'bob@example.com', subject: 'Hi', body: 'Hello Bob' } });
      expect(mail.body.verdict).toMatchObject({ result: 'requires_approval', reason: 'acts outside the substrate, so it needs approval even in yolo mode' });
      const sent = await p.api('POST', `${S}/actions/${mail.body.action_id}/approve`, { key });
      expect(sent.body).toMatchObject({ status: 'executed', result: { approved: true, to: ['bob@example.com'], subject: 'Hi' } });
      const badTo = await propose({ capability: 'send_email_draft', payload: { to: 'not-an-address', subject: 'Hi', body: 'x' } });
      expect(badTo.status).toBe(400);
      expect(badTo.body.error.details[0].path).toBe('payload.to');
    } finally {
      await p.api('PUT', `${S}/settings/yolo`, { key, body: { yolo_mode: false } });
    }
    const skipped = await propose({ capability: 'record_principle', dangerously_skip_approval: true, payload: { title: 'Skip', applies_to: { capabilities: ['send_email_draft'] }, constraint_spec: { logic: { '==': [1, 1] } } } });
    expect(skipped.body.verdict).toMatchObject({ result: 'auto_approved', reason: 'dangerously_skip_approval by the owner' });
    const agentSkip = await p.services.substrate.propose(agent, { capability: 'record_principle', dangerously_skip_approval: true, payload: { title: 'Agent skip', applies_to: {}, constraint_spec: { logic: { '==': [1, 1] } } } });
    expect(agentSkip.verdict.result).toBe('requires_approval');
    expect(agentSkip.verdict.reason).toContain('ignored for agents');
    const listed = await p.api('GET', `${S}/actions/${skipped.body.action_id}`, { key });
    expect(listed.body.dangerously_skip_approval).toBe(true);
  });

  it('a principle in reject mode refuses matching proposals (recorded as rejected, nothing executed)', async () => {
    const made = await propose({
      capability: 'record_principle',
      dangerously_skip_approval: true,
      payload: { title: 'No crypto', applies_to: { capabilities: ['record_decision'] }, constraint_spec: { logic: { '!': { in: ['crypto', { var: 'payload.title' }] } }, mode: 'reject' } },
    });
    expect(made.body.verdict.result).toBe('auto_approved');
    const before = await count('substrate_decisions');
    const res = await propose({ capability: 'record_decision', payload: { title: 'Buy crypto', kind: 'operational' } });
    expect(res.body).toMatchObject({ verdict: { result: 'rejected', conflicts: [{ title: 'No crypto', mode: 'reject' }] }, requires_approval: false });
    expect(await count('substrate_decisions')).toBe(before);
    expect((await p.api('GET', `${S}/actions/${res.body.action_id}`, { key })).body.status).toBe('rejected');
    await p.services.substrate.propose(agent, { capability: 'retire_principle', payload: { principle_id: made.body.result.principle_id, reason: 'test over' } });
    await p.sql(`update substrate_principles set status = 'expired' where title = 'No crypto'`);
  });
});

describe('principles scoped to entity types', () => {
  it('apply to proposals about entities of those types only (by payload.type, or the entity an id names)', async () => {
    const made = await propose({
      capability: 'record_principle',
      dangerously_skip_approval: true,
      payload: { title: 'Companies need a domain', applies_to: { entity_types: ['company'] }, constraint_spec: { logic: { '!!': { var: 'payload.canonical_keys.domain' } } } },
    });
    expect(made.body.verdict.result).toBe('auto_approved');
    try {
      const person = await propose({ capability: 'upsert_entity', payload: { type: 'person', display_name: 'Grace' } });
      expect(person.body.verdict.result).toBe('auto_approved');
      const bare = await propose({ capability: 'upsert_entity', payload: { type: 'company', display_name: 'Acme' } });
      expect(bare.body.verdict).toMatchObject({ result: 'requires_approval', conflicts: [{ title: 'Companies need a domain' }] });
      const good = await propose({ capability: 'upsert_entity', payload: { type: 'company', display_name: 'Initech', canonical_keys: { domain: 'initech.com' } } });
      expect(good.body.verdict.result).toBe('auto_approved');
      // An update names the entity by id: its type is looked up.
      const update = await propose({ capability: 'update_entity', payload: { id: good.body.result.entity_id, display_name: 'Initech Inc' } });
      expect(update.body.verdict.result).toBe('requires_approval');
    } finally {
      await p.sql(`update substrate_principles set status = 'expired' where id = $1`, [made.body.result.principle_id]);
    }
  });
});

describe('idempotency', () => {
  it('a known key replays the first outcome and executes nothing; concurrent proposals with one key execute once', async () => {
    const body = { capability: 'record_learning', payload: { title: 'Cache', description: 'cache invalidation is hard' }, idempotency_key: 'k-1' };
    const first = await propose(body);
    const again = await propose(body);
    expect(again.body).toEqual({ ...first.body, replay: true });
    const before = await count('substrate_learnings');
    const racing = await Promise.all(Array.from({ length: 5 }, () => propose({ ...body, idempotency_key: 'k-2' })));
    expect(new Set(racing.map((r) => r.body.action_id)).size).toBe(1);
    expect(racing.filter((r) => r.body.replay === true)).toHaveLength(4);
    expect(await count('substrate_learnings')).toBe(before + 1);
  });

  it('a replay of an approval action shows requires_approval as it is now, with conflicts empty', async () => {
    const body = { capability: 'retire_principle', payload: { principle_id: 'prn_x', reason: 'r' }, idempotency_key: 'k-3' };
    const first = await propose(body);
    expect(first.body.requires_approval).toBe(true);
    await p.api('POST', `${S}/actions/${first.body.action_id}/reject`, { key, body: {} });
    const replay = await propose(body);
    expect(replay.body).toMatchObject({ action_id: first.body.action_id, requires_approval: false, replay: true, verdict: { conflicts: [] } });
  });
});

describe('reverts', () => {
  it('revert_action undoes a reversible action once; non-reversible and unknown actions are refused; bulk revert collects failures', async () => {
    const learning = await propose({ capability: 'record_learning', payload: { title: 'Temp', description: 'to be reverted' } });
    const id = learning.body.result.learning_id;
    const revert = await propose({ capability: 'revert_action', payload: { action_id: learning.body.action_id } });
    expect(revert.body).toMatchObject({ verdict: { result: 'auto_approved' }, result: { reverted: learning.body.action_id } });
    expect(await p.sql(`select id from substrate_learnings where id = $1`, [id])).toEqual([]);
    expect((await p.api('GET', `${S}/actions/${learning.body.action_id}`, { key })).body.reverted_by).toBe(revert.body.action_id);
    const twice = await propose({ capability: 'revert_action', payload: { action_id: learning.body.action_id } });
    expect(twice.status).toBe(409);
    expect(twice.body.error.code).toBe('ALREADY_REVERTED');

    const a = await propose({ capability: 'record_decision', payload: { title: 'A', kind: 'operational' } });
    const b = await propose({ capability: 'record_decision', payload: { title: 'B', kind: 'operational' } });
    const bulk = await propose({ capability: 'bulk_revert_actions', payload: { action_ids: [a.body.action_id, learning.body.action_id, 'act_aaaaaaaaaaaaaaaaaaaa', b.body.action_id], reason: 'cleanup' } });
    expect(bulk.body.requires_approval).toBe(true);
    const done = await p.api('POST', `${S}/actions/${bulk.body.action_id}/approve`, { key });
    expect(done.body.result).toEqual({
      reverted: [a.body.action_id, b.body.action_id],
      failed: [
        { action_id: learning.body.action_id, code: 'ALREADY_REVERTED', message: expect.any(String) },
        { action_id: 'act_aaaaaaaaaaaaaaaaaaaa', code: 'RESOURCE_NOT_FOUND', message: expect.any(String) },
      ],
    });
    expect(await p.sql(`select id from substrate_decisions where id = any($1)`, [[a.body.result.decision_id, b.body.result.decision_id]])).toEqual([]);
  });
});

describe('listing and isolation', () => {
  it('filters by status and capability, pages with before, and another org sees none of it', async () => {
    const proposed = await p.api('GET', `${S}/actions?status=proposed&limit=2`, { key });
    expect(proposed.status).toBe(200);
    expect(proposed.body.actions.length).toBeLessThanOrEqual(2);
    expect(proposed.body.actions.every((a: { status: string }) => a.status === 'proposed')).toBe(true);
    const decisions = await p.api('GET', `${S}/actions?capability=record_decision&status=all`, { key });
    expect(decisions.body.actions.every((a: { capability: string }) => a.capability === 'record_decision')).toBe(true);
    const first = decisions.body.actions[0];
    const older = await p.api('GET', `${S}/actions?capability=record_decision&before=${encodeURIComponent(first.created_at)}`, { key });
    expect(older.body.actions.map((a: { action_id: string }) => a.action_id)).not.toContain(first.action_id);
    expect((await p.api('GET', `${S}/actions?limit=501`, { key })).status).toBe(400);

    const otherAccount = (await p.sql(`insert into accounts (name) values ('other') returning id`))[0].id;
    const otherKey = `svc_sub_${'o'.repeat(43)}`;
    await insertSubstrateKey(p, otherAccount, otherKey);
    expect((await p.api('GET', `${S}/actions`, { key: otherKey })).body.actions).toEqual([]);
    expect((await p.api('GET', `${S}/actions/${first.action_id}`, { key: otherKey })).status).toBe(404);
    expect((await p.api('POST', `${S}/actions/${first.action_id}/approve`, { key: otherKey })).status).toBe(404);
  });
});

describe('guards from review', () => {
  it('principles may use only bounded JSON-Logic and known capabilities; a reject-everything principle can still be retired', async () => {
    const merge = await propose({ capability: 'record_principle', payload: { title: 'x', applies_to: {}, constraint_spec: { logic: { merge: [[1], [2]] } } } });
    expect(merge.status).toBe(400);
    expect(merge.body.error.message).toContain("operator 'merge' is not allowed");
    const huge = await propose({ capability: 'record_principle', payload: { title: 'x', applies_to: {}, constraint_spec: { logic: { and: Array.from({ length: 600 }, () => true) } } } });
    expect(huge.status).toBe(400);
    expect(huge.body.error.message).toContain('at most 500 nodes');
    const typo = await propose({ capability: 'record_principle', payload: { title: 'x', applies_to: { capabilities: ['record_decison'] }, constraint_spec: { logic: { '==': [1, 1] } } } });
    expect(typo.status).toBe(400);
    expect(typo.body.error.details[0].path).toBe('payload.applies_to.capabilities');

    const wall = await propose({
      capability: 'record_principle',
      dangerously_skip_approval: true,
      payload: { title: 'Refuse everything', applies_to: {}, constraint_spec: { logic: { '==': [1, 0] }, mode: 'reject' } },
    });
    expect(wall.body.verdict.result).toBe('auto_approved');
    expect((await propose({ capability: 'record_learning', payload: { title: 't', description: 'd' } })).body.verdict.result).toBe('rejected');
    const retire = await propose({ capability: 'retire_principle', payload: { principle_id: wall.body.result.principle_id, reason: 'locked out' } });
    expect(retire.body.verdict.result).toBe('requires_approval');
    const approved = await p.api('POST', `${S}/actions/${retire.body.action_id}/approve`, { key });
    expect(approved.body).toMatchObject({ status: 'executed', decided_via: 'rest' });
    expect((await propose({ capability: 'record_learning', payload: { title: 't', description: 'd' } })).body.verdict.result).toBe('auto_approved');
  });

  it("an agent's skip flag is not recorded as used; lists leave out large payloads; a fresh account's first calls agree on its user", async () => {
    const agentSkip = await p.services.substrate.propose(agent, { capability: 'record_learning', dangerously_skip_approval: true, payload: { title: 't', description: 'd' } });
    expect((await p.services.substrate.get(agent, agentSkip.action_id)).dangerously_skip_approval).toBe(false);

    const big = await propose({ capability: 'record_learning', payload: { title: 'big', description: 'x'.repeat(10_000) } });
    const listed = (await p.api('GET', `${S}/actions?capability=record_learning&limit=1`, { key })).body.actions[0];
    expect(listed.action_id).toBe(big.body.action_id);
    expect(listed.payload).toEqual({ omitted: true, bytes: expect.any(Number) });
    expect((await p.api('GET', `${S}/actions/${big.body.action_id}`, { key })).body.payload.description).toHaveLength(10_000);

    const fresh = (await p.sql(`insert into accounts (name) values ('fresh') returning id`))[0].id;
    const users = await Promise.all(Array.from({ length: 8 }, (_, i) => p.services.substrate.actor({ kind: 'platform', accountId: fresh, role: 'owner', via: 'key', keyId: `k${i}`, personId: null })));
    expect(new Set(users.map((u) => u.userId)).size).toBe(1);
  });
});

