// Substrate entities over REST on the real control database: the five entity capabilities (valid and invalid
// payloads), upsert's dedupe order, merge patch and its lock, merge aliases, reverts, the list query and isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertSubstrateKey, startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { toolAreas } from '../../tools/index.ts';
import { substrateEntityTools } from '../../tools/substrate/entities.ts';
import { mergePatch } from '../../src/substrate/capabilities/entity-writes.ts';
import type { SubstrateActor } from '../../src/substrate/types.ts';

let p: TestPlatform;
let key: string;
let agent: SubstrateActor;

const S = '/v1/me/substrate';
const propose = (body: Record<string, unknown>, k = key) => p.api('POST', `${S}/actions/propose`, { body, key: k });
const get = (id: string, k = key) => p.api('GET', `${S}/entities/${id}`, { key: k });
const approve = (actionId: string) => p.api('POST', `${S}/actions/${actionId}/approve`, { key });

/** Proposes a capability that must execute at once, and returns its result. */
async function run(capability: string, payload: Record<string, unknown>, k = key): Promise<any> {
  const res = await propose({ capability, payload }, k);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.verdict.result).toBe('auto_approved');
  return res.body;
}
const upsert = async (payload: Record<string, unknown>) => (await run('upsert_entity', payload)).result as { entity_id: string; was_insert: boolean };
/** A 400 whose first detail names this path. */
async function badPayload(capability: string, payload: Record<string, unknown>, path: string): Promise<void> {
  const res = await propose({ capability, payload });
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.error.code).toBe('VALIDATION_FAILED');
  expect(res.body.error.details[0].path).toBe(path);
}
const ENTITY_ID = /^ent_[a-z2-7]{20}$/;

beforeAll(async () => {
  p = await startTestPlatform({ SVC_ROLE: 'api' });
  key = await p.substrateKey('me');
  const accountId = (await p.sql(`select account_id from platform_keys limit 1`))[0].account_id;
  agent = await p.services.substrate.actor({ kind: 'platform', accountId, role: 'owner', via: 'key', keyId: 'k', personId: null });
});
afterAll(() => p?.close());

describe('upsert_entity', () => {
  it('inserts with an ent_ id, copies primary_email into canonical_keys.email, and GET shows every field', async () => {
    const res = await run('upsert_entity', { type: 'person', display_name: 'Ada Lovelace', primary_email: 'Ada@Example.com', canonical_keys: { github: 'ada' }, attrs: { role: 'analyst' } });
    expect(res.result).toEqual({ entity_id: expect.stringMatching(ENTITY_ID), was_insert: true });
    const one = await get(res.result.entity_id);
    expect(one.status).toBe(200);
    expect(one.body).toEqual({
      id: res.result.entity_id,
      type: 'person',
      display_name: 'Ada Lovelace',
      primary_email: 'Ada@Example.com',
      canonical_keys: { github: 'ada', email: 'Ada@Example.com' },
      attrs: { role: 'analyst' },
      linked_app_user_id: null,
      linked_app_id: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    // A canonical email sent explicitly is kept as sent.
    const own = await upsert({ type: 'person', display_name: 'Own key', primary_email: 'own@example.com', canonical_keys: { email: 'other@example.com' } });
    expect((await get(own.entity_id)).body.canonical_keys).toEqual({ email: 'other@example.com' });
  });

  it('dedupes in order: id, then canonical keys of the same type containing every pair sent, then (type, lower(email)); else inserts', async () => {
    const acme = await upsert({ type: 'company', display_name: 'Acme', canonical_keys: { domain: 'acme.com', crm: 42 }, attrs: { size: 10, city: 'Berlin' } });
    const grace = await upsert({ type: 'person', display_name: 'Grace', primary_email: 'grace@navy.mil' });

    // 1. id: wins over canonical keys and email that point elsewhere; sets type and name, merges keys and attrs.
    const byId = await upsert({ id: acme.entity_id, type: 'company', display_name: 'Acme Inc', primary_email: 'GRACE@navy.mil', canonical_keys: { vat: 'DE1' }, attrs: { size: 12 } });
    expect(byId).toEqual({ entity_id: acme.entity_id, was_insert: false });
    expect((await get(acme.entity_id)).body).toMatchObject({
      display_name: 'Acme Inc',
      primary_email: 'GRACE@navy.mil',
      canonical_keys: { domain: 'acme.com', crm: 42, vat: 'DE1' },
      attrs: { size: 12, city: 'Berlin' },
    });

    // 2. canonical keys: a subset of the stored pairs matches, of the same type only, before the email step.
    expect(await upsert({ type: 'company', display_name: 'Acme', canonical_keys: { domain: 'acme.com' } })).toEqual({ entity_id: acme.entity_id, was_insert: false });
    const viaKeys = await upsert({ type: 'person', display_name: 'Grace H', canonical_keys: { email: 'grace@navy.mil' }, primary_email: 'someone@else.org' });
    expect(viaKeys).toEqual({ entity_id: grace.entity_id, was_insert: false });
    const otherType = await upsert({ type: 'fund', display_name: 'Acme Fund', canonical_keys: { domain: 'acme.com' } });
    expect(otherType.was_insert).toBe(true);
    const notContained = await upsert({ type: 'company', display_name: 'Acme?', canonical_keys: { domain: 'acme.com', crm: 43 } });
    expect(notContained.was_insert).toBe(true);

    // 3. (type, lower(primary_email)): case-insensitive, same type only.
    const hopper = await upsert({ type: 'person', display_name: 'Hopper', primary_email: 'hopper@navy.mil' });
    expect(await upsert({ type: 'person', display_name: 'G. Hopper', primary_email: 'HOPPER@Navy.MIL' })).toEqual({ entity_id: hopper.entity_id, was_insert: false });
    expect((await upsert({ type: 'agent', display_name: 'Hopper bot', primary_email: 'hopper@navy.mil' })).was_insert).toBe(true);

    // An id that names nothing falls through to the other steps (never reused for an insert).
    const unknownId = 'ent_aaaaaaaaaaaaaaaaaaaa';
    expect(await upsert({ id: unknownId, type: 'person', display_name: 'Hopper', primary_email: 'hopper@navy.mil' })).toEqual({ entity_id: hopper.entity_id, was_insert: false });
    const fresh = await upsert({ id: unknownId, type: 'project', display_name: 'Fresh' });
    expect(fresh.was_insert).toBe(true);
    expect(fresh.entity_id).not.toBe(unknownId);
  });

  it('concurrent upserts of one new entity make one row', async () => {
    const results = await Promise.all(Array.from({ length: 5 }, () => upsert({ type: 'team', display_name: 'Racers', canonical_keys: { slack: 'T-race' } })));
    expect(new Set(results.map((r) => r.entity_id)).size).toBe(1);
    expect(results.filter((r) => r.was_insert)).toHaveLength(1);
  });

  it('invalid payloads are 400 naming the field, and nothing is recorded', async () => {
    const before = (await p.sql(`select count(*)::int as n from substrate_actions`))[0].n;
    await badPayload('upsert_entity', { display_name: 'x' }, 'payload.type');
    await badPayload('upsert_entity', { type: 'planet', display_name: 'x' }, 'payload.type');
    await badPayload('upsert_entity', { type: 'person' }, 'payload.display_name');
    await badPayload('upsert_entity', { type: 'person', display_name: '  ' }, 'payload.display_name');
    await badPayload('upsert_entity', { type: 'person', display_name: 'x', primary_email: 'not-an-email' }, 'payload.primary_email');
    await badPayload('upsert_entity', { type: 'person', display_name: 'x', id: 'usr_1' }, 'payload.id');
    await badPayload('upsert_entity', { type: 'person', display_name: 'x', canonical_keys: { nested: { a: 1 } } }, 'payload.canonical_keys.nested');
    await badPayload('upsert_entity', { type: 'person', display_name: 'x', linked_app_user_id: 'nope' }, 'payload.linked_app_user_id');
    await badPayload('upsert_entity', { type: 'person', display_name: 'x', attrs: [1] }, 'payload.attrs');
    const extra = await propose({ capability: 'upsert_entity', payload: { type: 'person', display_name: 'x', name: 'y' } });
    expect(extra.status).toBe(400);
    expect(extra.body.error.message).toContain('"name"');
    expect((await p.sql(`select count(*)::int as n from substrate_actions`))[0].n).toBe(before);
  });
});

describe('update_entity and patch_entity', () => {
  it('update replaces attrs wholesale, sets the fields sent, and null clears primary_email', async () => {
    const e = await upsert({ type: 'person', display_name: 'Linus', primary_email: 'linus@kernel.org', attrs: { a: 1, b: { c: 2 } } });
    const res = await run('update_entity', { id: e.entity_id, attrs: { z: true } });
    expect(res.result).toEqual({ entity_id: e.entity_id, updated_at: expect.any(String) });
    expect((await get(e.entity_id)).body).toMatchObject({ display_name: 'Linus', primary_email: 'linus@kernel.org', attrs: { z: true }, updated_at: res.result.updated_at });
    await run('update_entity', { id: e.entity_id, display_name: 'Linus T', primary_email: null });
    expect((await get(e.entity_id)).body).toMatchObject({ display_name: 'Linus T', primary_email: null, attrs: { z: true } });

    await badPayload('update_entity', {}, 'payload.id');
    await badPayload('update_entity', { id: e.entity_id }, 'payload');
    await badPayload('update_entity', { id: e.entity_id, attrs: 'x' }, 'payload.attrs');
    await badPayload('update_entity', { id: e.entity_id, primary_email: 'x@' }, 'payload.primary_email');
    const missing = await propose({ capability: 'update_entity', payload: { id: 'ent_bbbbbbbbbbbbbbbbbbbb', display_name: 'x' } });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('RESOURCE_NOT_FOUND');
  });

  it('patch applies attrs_patch as an RFC 7396 merge patch', async () => {
    const e = await upsert({ type: 'project', display_name: 'Apollo', attrs: { a: 1, b: { c: 2, d: 3 }, arr: [1, 2], e: 'x' } });
    const res = await run('patch_entity', { id: e.entity_id, attrs_patch: { b: { c: null, f: 4 }, arr: [3], e: null, g: { h: 1 } } });
    expect(res.result.entity_id).toBe(e.entity_id);
    expect((await get(e.entity_id)).body.attrs).toEqual({ a: 1, b: { d: 3, f: 4 }, arr: [3], g: { h: 1 } });
    expect(mergePatch({ a: 'b', c: { d: 'e', f: 'g' } }, { a: 'z', c: { f: null } })).toEqual({ a: 'z', c: { d: 'e' } });
    expect(mergePatch({ a: [{ b: 'c' }] }, { a: [1] })).toEqual({ a: [1] });
    expect(mergePatch({ e: null }, { a: 1 })).toEqual({ e: null, a: 1 });
    expect(mergePatch(['a'], { a: 'b' })).toEqual({ a: 'b' });
    expect(mergePatch({ a: 'foo' }, 'bar')).toBe('bar');
    expect(Object.getPrototypeOf(mergePatch({}, JSON.parse('{"__proto__": {"x": 1}}')))).toBe(Object.prototype);

    await badPayload('patch_entity', { id: e.entity_id }, 'payload');
    await badPayload('patch_entity', { id: e.entity_id, attrs_patch: [1] }, 'payload.attrs_patch');
    await badPayload('patch_entity', { id: e.entity_id, attrs_patch: {}, if_updated_at: 'yesterday' }, 'payload.if_updated_at');
    await badPayload('patch_entity', { attrs_patch: {} }, 'payload.id');
  });

  it('if_updated_at is an optimistic lock: a stale one is 409 STALE_ENTITY naming both times, and nothing is written', async () => {
    const e = await upsert({ type: 'person', display_name: 'Barbara', attrs: { v: 1 } });
    const read = (await get(e.entity_id)).body;
    const ok = await run('patch_entity', { id: e.entity_id, attrs_patch: { v: 2 }, if_updated_at: read.updated_at });
    expect(ok.result.updated_at > read.updated_at).toBe(true);
    const before = (await p.sql(`select count(*)::int as n from substrate_actions`))[0].n;
    const stale = await propose({ capability: 'patch_entity', payload: { id: e.entity_id, attrs_patch: { v: 3 }, if_updated_at: read.updated_at } });
    expect(stale.status).toBe(409);
    expect(stale.body.error.code).toBe('STALE_ENTITY');
    expect(stale.body.error.message).toContain(read.updated_at);
    expect(stale.body.error.message).toContain(ok.result.updated_at);
    expect(stale.body.error.details).toEqual({ entity_id: e.entity_id, updated_at: ok.result.updated_at, if_updated_at: read.updated_at });
    expect((await get(e.entity_id)).body.attrs).toEqual({ v: 2 });
    expect((await p.sql(`select count(*)::int as n from substrate_actions`))[0].n).toBe(before);
    // The same instant in another offset is the same time.
    const shifted = new Date(ok.result.updated_at);
    const plusTwo = new Date(shifted.getTime() + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    await run('patch_entity', { id: e.entity_id, display_name: 'Barbara L', if_updated_at: plusTwo });
  });

  it('PATCH entities/{id} proposes patch_entity and answers like propose', async () => {
    const e = await upsert({ type: 'person', display_name: 'Katherine', attrs: { team: 'math', x: 1 } });
    const read = (await get(e.entity_id)).body;
    const res = await p.api('PATCH', `${S}/entities/${e.entity_id}`, { key, body: { attrs_patch: { x: null }, display_name: 'Katherine J', if_updated_at: read.updated_at, idempotency_key: 'patch-1' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      action_id: expect.stringMatching(/^act_/),
      verdict: { result: 'auto_approved', reason: 'capability policy: auto', conflicts: [] },
      requires_approval: false,
      result: { entity_id: e.entity_id, updated_at: expect.any(String) },
    });
    expect((await get(e.entity_id)).body).toMatchObject({ display_name: 'Katherine J', attrs: { team: 'math' } });
    const action = (await p.api('GET', `${S}/actions/${res.body.action_id}`, { key })).body;
    expect(action).toMatchObject({ capability: 'patch_entity', proposer_kind: 'human', payload: { id: e.entity_id, attrs_patch: { x: null }, display_name: 'Katherine J' } });
    const replay = await p.api('PATCH', `${S}/entities/${e.entity_id}`, { key, body: { attrs_patch: { y: 1 }, idempotency_key: 'patch-1' } });
    expect(replay.body).toMatchObject({ action_id: res.body.action_id, replay: true });

    const stale = await p.api('PATCH', `${S}/entities/${e.entity_id}`, { key, body: { attrs_patch: { y: 1 }, if_updated_at: read.updated_at } });
    expect(stale.status).toBe(409);
    expect(stale.body.error.code).toBe('STALE_ENTITY');
    const empty = await p.api('PATCH', `${S}/entities/${e.entity_id}`, { key, body: {} });
    expect(empty.status).toBe(400);
    const notObject = await p.api('PATCH', `${S}/entities/${e.entity_id}`, { key, body: { attrs_patch: 'x' } });
    expect(notObject.status).toBe(400);
    expect(notObject.body.error.details[0].path).toBe('attrs_patch');
    const unknownField = await p.api('PATCH', `${S}/entities/${e.entity_id}`, { key, body: { attrs: {} } });
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.error.message).toContain('"attrs"');
    expect((await p.api('PATCH', `${S}/entities/ent_cccccccccccccccccccc`, { key, body: { display_name: 'x' } })).status).toBe(404);
    expect((await p.api('PATCH', `${S}/entities/nonsense`, { key, body: { display_name: 'x' } })).status).toBe(404);
  });
});

describe('merge_entities and delete_entity', () => {
  it('merge needs approval; the loser is deleted, its id answers the winner, which gains what it lacked', async () => {
    const winner = await upsert({ type: 'person', display_name: 'Alan Turing', canonical_keys: { github: 'alan' }, attrs: { field: 'math' } });
    const loser = await upsert({ type: 'person', display_name: 'A. Turing', primary_email: 'alan@bletchley.uk', attrs: { field: 'crypto', born: 1912 } });
    const proposed = await propose({ capability: 'merge_entities', payload: { loser_id: loser.entity_id, winner_id: winner.entity_id, reason: 'same person' } });
    expect(proposed.body).toMatchObject({ verdict: { result: 'requires_approval' }, requires_approval: true });
    expect((await get(loser.entity_id)).body.id).toBe(loser.entity_id);

    const done = await approve(proposed.body.action_id);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: 'executed', result: { winner_id: winner.entity_id, loser_id: loser.entity_id } });
    expect(await p.sql(`select id from substrate_entities where id = $1`, [loser.entity_id])).toEqual([]);
    expect(await p.sql(`select alias_id, entity_id from substrate_entity_aliases where alias_id = $1`, [loser.entity_id])).toEqual([
      { alias_id: loser.entity_id, entity_id: winner.entity_id },
    ]);
    const viaLoser = await get(loser.entity_id);
    expect(viaLoser.status).toBe(200);
    expect(viaLoser.body).toMatchObject({
      id: winner.entity_id,
      display_name: 'Alan Turing',
      primary_email: 'alan@bletchley.uk',
      canonical_keys: { github: 'alan', email: 'alan@bletchley.uk' },
      attrs: { field: 'math', born: 1912 },
    });
    const listed = (await p.api('GET', `${S}/entities?q=turing`, { key })).body.entities.map((e: { id: string }) => e.id);
    expect(listed).toEqual([winner.entity_id]);

    // Payload ids resolve aliases; the loser's old email now dedupes to the winner.
    await run('patch_entity', { id: loser.entity_id, attrs_patch: { via: 'alias' } });
    expect((await get(winner.entity_id)).body.attrs.via).toBe('alias');
    expect(await upsert({ type: 'person', display_name: 'Turing', primary_email: 'ALAN@bletchley.uk' })).toEqual({ entity_id: winner.entity_id, was_insert: false });

    // A second merge carries the first alias along.
    const third = await upsert({ type: 'person', display_name: 'Alan M. Turing' });
    const again = await propose({ capability: 'merge_entities', payload: { loser_id: winner.entity_id, winner_id: third.entity_id, reason: 'dup' } });
    await approve(again.body.action_id);
    expect((await get(loser.entity_id)).body.id).toBe(third.entity_id);
    expect((await get(winner.entity_id)).body.id).toBe(third.entity_id);

    // An agent's merge waits for approval too; merging an entity with itself (also through an alias) is refused.
    const byAgent = await p.services.substrate.propose(agent, { capability: 'merge_entities', payload: { loser_id: loser.entity_id, winner_id: third.entity_id, reason: 'x' } });
    expect(byAgent.requires_approval).toBe(true);
    const self = await approve(byAgent.action_id);
    expect(self.status).toBe(409);
    expect((await p.api('GET', `${S}/actions/${byAgent.action_id}`, { key })).body.status).toBe('proposed');
    await p.api('POST', `${S}/actions/${byAgent.action_id}/reject`, { key, body: {} });

    await badPayload('merge_entities', { loser_id: third.entity_id, winner_id: third.entity_id, reason: 'x' }, 'payload.winner_id');
    await badPayload('merge_entities', { loser_id: third.entity_id, winner_id: winner.entity_id }, 'payload.reason');
    await badPayload('merge_entities', { loser_id: 'x', winner_id: winner.entity_id, reason: 'r' }, 'payload.loser_id');
    const gone = await propose({ capability: 'merge_entities', payload: { loser_id: 'ent_dddddddddddddddddddd', winner_id: third.entity_id, reason: 'r' } });
    expect((await approve(gone.body.action_id)).status).toBe(404);
  });

  it('delete needs approval, then the entity and its aliases are gone', async () => {
    const a = await upsert({ type: 'event', display_name: 'Launch' });
    const b = await upsert({ type: 'event', display_name: 'Launch day' });
    await approve((await propose({ capability: 'merge_entities', payload: { loser_id: b.entity_id, winner_id: a.entity_id, reason: 'dup' } })).body.action_id);
    const proposed = await propose({ capability: 'delete_entity', payload: { id: a.entity_id, reason: 'cancelled' } });
    expect(proposed.body).toMatchObject({ verdict: { result: 'requires_approval' }, requires_approval: true });
    expect((await get(a.entity_id)).status).toBe(200);
    const done = await approve(proposed.body.action_id);
    expect(done.body).toMatchObject({ status: 'executed', result: { entity_id: a.entity_id, deleted: true } });
    for (const id of [a.entity_id, b.entity_id]) {
      const res = await get(id);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('RESOURCE_NOT_FOUND');
    }
    await badPayload('delete_entity', { id: a.entity_id }, 'payload.reason');
    await badPayload('delete_entity', { reason: 'x' }, 'payload.id');
    const missing = await propose({ capability: 'delete_entity', payload: { id: a.entity_id, reason: 'again' } });
    expect((await approve(missing.body.action_id)).status).toBe(404);
  });
});

describe('reverts', () => {
  const revert = (actionId: string) => propose({ capability: 'revert_action', payload: { action_id: actionId } });
  const fields = async (id: string) => {
    const { updated_at: _u, ...rest } = (await get(id)).body;
    return rest;
  };

  it('revert of an inserting upsert deletes the entity; of a matching upsert, update or patch restores the previous fields', async () => {
    const inserted = await run('upsert_entity', { type: 'company', display_name: 'Temp Co', canonical_keys: { domain: 'temp.co' } });
    expect((await revert(inserted.action_id)).status).toBe(200);
    expect((await get(inserted.result.entity_id)).status).toBe(404);

    const e = await upsert({ type: 'company', display_name: 'Keep Co', primary_email: 'hi@keep.co', canonical_keys: { domain: 'keep.co' }, attrs: { a: 1 } });
    const original = await fields(e.entity_id);
    const originalUpdatedAt = (await get(e.entity_id)).body.updated_at;
    const steps = [
      await run('upsert_entity', { id: e.entity_id, type: 'company', display_name: 'Keep Corp', canonical_keys: { lei: 'X' }, attrs: { b: 2 }, linked_app_id: 'app_1' }),
      await run('update_entity', { id: e.entity_id, primary_email: null, attrs: { c: 3 } }),
      await run('patch_entity', { id: e.entity_id, display_name: 'Keep', attrs_patch: { c: null, d: [1] } }),
    ];
    expect(await fields(e.entity_id)).toMatchObject({ display_name: 'Keep', primary_email: null, attrs: { d: [1] }, linked_app_id: 'app_1' });
    // Undo newest first: each revert puts back the fields as they were before its action.
    expect((await revert(steps[2]!.action_id)).status).toBe(200);
    expect(await fields(e.entity_id)).toMatchObject({ display_name: 'Keep Corp', primary_email: null, attrs: { c: 3 } });
    expect((await revert(steps[1]!.action_id)).status).toBe(200);
    expect(await fields(e.entity_id)).toMatchObject({ display_name: 'Keep Corp', primary_email: 'hi@keep.co', attrs: { a: 1, b: 2 }, canonical_keys: { domain: 'keep.co', email: 'hi@keep.co', lei: 'X' } });
    expect((await revert(steps[0]!.action_id)).status).toBe(200);
    expect(await fields(e.entity_id)).toEqual(original);
    // A revert is a write: updated_at moves on, so a reader of the old state must read again.
    expect((await get(e.entity_id)).body.updated_at > originalUpdatedAt).toBe(true);
    const twice = await revert(steps[0]!.action_id);
    expect(twice.status).toBe(409);
    expect(twice.body.error.code).toBe('ALREADY_REVERTED');
  });

  it('a revert finds the entity gone after a delete (409 ENTITY_GONE); merge and delete are not reversible', async () => {
    const e = await upsert({ type: 'person', display_name: 'Gone' });
    const upd = await run('update_entity', { id: e.entity_id, display_name: 'Gone soon' });
    const del = await propose({ capability: 'delete_entity', payload: { id: e.entity_id, reason: 'bye' } });
    await approve(del.body.action_id);
    const res = await revert(upd.action_id);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('ENTITY_GONE');
    const notReversible = await revert(del.body.action_id);
    expect(notReversible.status).toBe(409);
    expect(notReversible.body.error.code).toBe('NOT_REVERSIBLE');
  });

  it('undoing the creation of an entity that has absorbed another in a merge is refused', async () => {
    const created = await run('upsert_entity', { type: 'fund', display_name: 'Big Fund' });
    const other = await upsert({ type: 'fund', display_name: 'Big Fund LP' });
    await approve((await propose({ capability: 'merge_entities', payload: { loser_id: other.entity_id, winner_id: created.result.entity_id, reason: 'dup' } })).body.action_id);
    const res = await revert(created.action_id);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('ENTITY_MERGED_INTO');
    expect((await get(created.result.entity_id)).status).toBe(200);
  });
});

describe('list', () => {
  it('filters by type and q, limits, counts, and ranks exact and prefix name matches first', async () => {
    await upsert({ type: 'workspace', display_name: 'Zeta 100% Labs' });
    await upsert({ type: 'workspace', display_name: 'Labs' });
    await upsert({ type: 'workspace', display_name: 'Labster' });
    await upsert({ type: 'workspace', display_name: 'Old labs' });
    await upsert({ type: 'self', display_name: 'Me (labs)' });

    const ws = await p.api('GET', `${S}/entities?type=workspace&q=LABS&count=true`, { key });
    expect(ws.status).toBe(200);
    expect(ws.body.total).toBe(4);
    expect(ws.body.entities.map((e: { display_name: string }) => e.display_name)).toEqual(['Labs', 'Labster', 'Old labs', 'Zeta 100% Labs']);
    expect(ws.body.entities.every((e: { type: string }) => e.type === 'workspace')).toBe(true);
    const prefix = await p.api('GET', `${S}/entities?type=workspace&q=lab`, { key });
    expect(prefix.body.entities.map((e: { display_name: string }) => e.display_name)).toEqual(['Labster', 'Labs', 'Old labs', 'Zeta 100% Labs']);
    expect(prefix.body.total).toBeUndefined();
    // Wildcards are literal.
    expect((await p.api('GET', `${S}/entities?q=100%25`, { key })).body.entities.map((e: { display_name: string }) => e.display_name)).toEqual(['Zeta 100% Labs']);
    expect((await p.api('GET', `${S}/entities?q=_`, { key })).body.entities).toEqual([]);

    const limited = await p.api('GET', `${S}/entities?limit=2&count=true`, { key });
    expect(limited.body.entities).toHaveLength(2);
    expect(limited.body.total).toBeGreaterThan(2);
    const all = await p.api('GET', `${S}/entities?limit=200`, { key });
    expect(all.body.entities).toHaveLength(limited.body.total);
    const times = all.body.entities.map((e: { updated_at: string }) => e.updated_at);
    expect([...times].sort().reverse()).toEqual(times);
    expect((await p.api('GET', `${S}/entities`, { key })).body.entities).toHaveLength(Math.min(50, limited.body.total));
    expect((await p.api('GET', `${S}/entities?count=false`, { key })).body.total).toBeUndefined();

    for (const [query, path] of [
      ['limit=0', 'limit'],
      ['limit=201', 'limit'],
      ['type=planet', 'type'],
      ['count=yes', 'count'],
      ['sort=name', ''],
    ] as const) {
      const res = await p.api('GET', `${S}/entities?${query}`, { key });
      expect(res.status, query).toBe(400);
      expect(res.body.error.details[0].path, query).toBe(path);
    }
  });
});

describe('isolation and credentials', () => {
  it("another org's key sees none of these entities and cannot write them; a service key is 403", async () => {
    const mine = await upsert({ type: 'person', display_name: 'Private Person', canonical_keys: { secret: 's1' } });
    const otherAccount = (await p.sql(`insert into accounts (name) values ('other') returning id`))[0].id;
    const otherKey = `svc_sub_${'q'.repeat(43)}`;
    await insertSubstrateKey(p, otherAccount, otherKey);

    const list = await p.api('GET', `${S}/entities?count=true`, { key: otherKey });
    expect(list.body).toEqual({ entities: [], next_before: null, total: 0 });
    expect((await get(mine.entity_id, otherKey)).status).toBe(404);
    expect((await p.api('PATCH', `${S}/entities/${mine.entity_id}`, { key: otherKey, body: { display_name: 'mine now' } })).status).toBe(404);
    expect((await propose({ capability: 'update_entity', payload: { id: mine.entity_id, display_name: 'x' } }, otherKey)).status).toBe(404);
    // Their upsert with my id or my canonical keys makes their own entity.
    const theirs = await run('upsert_entity', { id: mine.entity_id, type: 'person', display_name: 'Theirs', canonical_keys: { secret: 's1' } }, otherKey);
    expect(theirs.result.was_insert).toBe(true);
    expect(theirs.result.entity_id).not.toBe(mine.entity_id);
    const merge = await propose({ capability: 'merge_entities', payload: { loser_id: mine.entity_id, winner_id: theirs.result.entity_id, reason: 'steal' } }, otherKey);
    expect((await p.api('POST', `${S}/actions/${merge.body.action_id}/approve`, { key: otherKey })).status).toBe(404);
    expect((await get(mine.entity_id)).body.display_name).toBe('Private Person');

    const app = (await p.api('POST', '/init', { body: { name: 'ent' } })).body;
    expect((await p.api('GET', `${S}/entities`, { key: app.service_key.key })).status).toBe(403);
    const none = await p.api('GET', `${S}/entities`, { key: null });
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe('AUTH_INVALID_TOKEN');
  });

  it('an agent (MCP, platform key) reads and patches the same entities, recorded as proposer agent', async () => {
    const e = await upsert({ type: 'person', display_name: 'Shared' });
    expect((await p.services.substrate.entities.get(agent.userId, e.entity_id)).display_name).toBe('Shared');
    const res = await p.services.substrate.propose(agent, { capability: 'patch_entity', payload: { id: e.entity_id, attrs_patch: { by: 'agent' } } });
    expect(res.verdict.result).toBe('auto_approved');
    expect((await p.api('GET', `${S}/actions/${res.action_id}`, { key })).body.proposer_kind).toBe('agent');
  });
});

describe('tools', () => {
  it('are in the substrate area, short, and written for a model', () => {
    const names = substrateEntityTools.map((t) => t.name);
    expect(names).toEqual(['substrate_entities_list', 'substrate_entities_get', 'substrate_entities_patch']);
    for (const t of substrateEntityTools) {
      expect(toolAreas.substrate).toContain(t);
      expect(t.description.length, t.name).toBeLessThanOrEqual(350);
      expect(t.auth).toEqual(['substrate', 'platform']);
      expect(t.http && t.http.restAuth).toEqual(['substrate', 'session']);
    }
    expect(substrateEntityTools[2]!.description).toContain('if_updated_at');
    expect(substrateEntityTools[1]!.description).toContain('merged');
  });
});
