// What a linked app's functions do with their own proposals: ask for a person's approval even where the policy is auto,
// read them back (only theirs), and let the app's signed-in end users decide on what they propose once the person whose
// substrate it is allowed it from a browser session (never a platform key, never a call without an end user). An agent
// holding only the platform key cannot approve its own proposal through an end user of its own: not with a service key
// it mints, not with a function it deploys. ctx.asApp writes what end users only read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { signUpMember, type SignedInPerson } from '../e2e/e2e-helpers.ts';

let p: TestPlatform;
let app: { app_id: string; service_key: { key: string } };
let other: { app_id: string; service_key: { key: string } };
let owner: SignedInPerson;
let endUser: string;
const END_USER = '33333333-3333-4333-8333-333333333333';

const FN = `
export default async (req: Request, ctx: any) => {
  const { op, id, reason } = await req.json();
  const run = async () => {
    if (op === 'propose') return ctx.substrate.propose('upsert_entity', { type: 'deal', display_name: 'Acme' }, { require_approval: true });
    if (op === 'auto') return ctx.substrate.propose('upsert_entity', { type: 'deal', display_name: 'Auto' });
    if (op === 'actions') return ctx.substrate.actions({ status: 'proposed' });
    if (op === 'bad-query') return ctx.substrate.actions({ limit: 0, colour: 'red' });
    if (op === 'action') return ctx.substrate.action(id);
    if (op === 'approve') return ctx.substrate.approve(id);
    if (op === 'reject') return ctx.substrate.reject(id, reason);
    if (op === 'write') return ctx.asApp.data.from('notices').insert({ text: 'by the app' });
    if (op === 'write-as-caller') return ctx.data.from('notices').insert({ text: 'by the caller' });
  };
  try {
    return Response.json(await run());
  } catch (err: any) {
    return Response.json({ name: err.name, code: err.code, status: err.status }, { status: 418 });
  }
};`;

async function call(body: Record<string, unknown>, token?: string, appId = app.app_id): Promise<{ status: number; body: any }> {
  const res = await fetch(`${p.url}/v1/${appId}/fn/decide`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  p = await startTestPlatform();
  app = (await p.api('POST', '/init', { body: { name: 'decisions' } })).body;
  other = (await p.api('POST', '/init', { body: { name: 'other' } })).body;
  for (const a of [app, other]) {
    const deployed = await p.api('POST', `/v1/${a.app_id}/functions`, { body: { name: 'decide', code: FN }, key: a.service_key.key });
    expect(deployed.status, JSON.stringify(deployed.body)).toBe(201);
    expect((await p.api('POST', `/apps/${a.app_id}/substrate-link`, { body: {} })).status).toBe(200);
  }
  const schema = { tables: { notices: { columns: { id: { type: 'bigint', primary: true, identity: true }, text: { type: 'text' } }, access: 'public' } } };
  expect((await p.api('POST', `/v1/${app.app_id}/schema/apply`, { body: { schema }, key: app.service_key.key })).status).toBe(200);
  endUser = await p.services.endUserTokens.sign(app.app_id, { sub: END_USER, role: 'authenticated' }, 600);
  owner = await p.owner();
});
afterAll(() => p?.close());

describe("an app's own proposals", () => {
  let pending: string;

  it('require_approval holds an auto capability for a person; without it the same capability executes', async () => {
    const held = await call({ op: 'propose' });
    expect(held.body).toMatchObject({ requires_approval: true, verdict: { result: 'requires_approval', reason: "the proposer asked for a person's approval" } });
    pending = held.body.action_id;
    const auto = await call({ op: 'auto' });
    expect(auto.body).toMatchObject({ requires_approval: false, verdict: { result: 'auto_approved' } });
  });

  it("lists and reads only this app's proposals; a query with unknown keys is refused", async () => {
    const theirs = await call({ op: 'propose' }, undefined, other.app_id);
    const listed = await call({ op: 'actions' });
    expect(listed.body.actions.map((a: { action_id: string }) => a.action_id)).toEqual([pending]);
    expect((await call({ op: 'action', id: pending })).body).toMatchObject({ action_id: pending, status: 'proposed', source_app_id: app.app_id });
    expect(await call({ op: 'action', id: theirs.body.action_id })).toEqual({ status: 418, body: { name: 'SubstrateError', code: 'RESOURCE_NOT_FOUND', status: 404 } });
    const bad = await call({ op: 'bad-query' });
    expect(bad).toEqual({ status: 418, body: { name: 'SubstrateError', code: 'VALIDATION_FAILED', status: 400 } });
  });

  it('nobody decides through the app until a person allows it, and a platform key cannot allow it', async () => {
    expect(await call({ op: 'approve', id: pending })).toEqual({ status: 418, body: { name: 'SubstrateError', code: 'HUMAN_CONFIRMATION_REQUIRED', status: 403 } });
    expect(await call({ op: 'approve', id: pending }, endUser)).toEqual({ status: 418, body: { name: 'SubstrateError', code: 'END_USER_DECISIONS_OFF', status: 403 } });
    const byKey = await p.api('POST', `/apps/${app.app_id}/substrate-link`, { body: { end_users_decide: true } });
    expect([byKey.status, byKey.body.error?.code]).toEqual([403, 'HUMAN_CONFIRMATION_REQUIRED']);
    const byPerson = await p.api('POST', `/apps/${app.app_id}/substrate-link`, { body: { end_users_decide: true }, key: null, headers: owner.headers });
    expect(byPerson.status, JSON.stringify(byPerson.body)).toBe(200);
    expect(byPerson.body).toEqual({ app_id: app.app_id, substrate_user_id: expect.any(String), end_users_decide: true });
  });

  it('then an end user approves what its functions propose: executed, recorded as theirs; deciding again is 409; a call without an end user still may not', async () => {
    const fresh = (await call({ op: 'propose' })).body.action_id;
    expect(await call({ op: 'approve', id: fresh })).toEqual({ status: 418, body: { name: 'SubstrateError', code: 'HUMAN_CONFIRMATION_REQUIRED', status: 403 } });
    const approved = await call({ op: 'approve', id: fresh }, endUser);
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ action_id: fresh, status: 'executed', decided_via: 'app_end_user', decided_by: null, decided_by_end_user: END_USER });
    expect(approved.body.result.entity_id).toMatch(/^ent_/);
    expect(await call({ op: 'reject', id: fresh }, endUser)).toEqual({ status: 418, body: { name: 'SubstrateError', code: 'wrong_status', status: 409 } });
  });

  it('what was proposed before the person allowed it stays theirs to decide', async () => {
    expect(await call({ op: 'approve', id: pending }, endUser)).toEqual({ status: 418, body: { name: 'SubstrateError', code: 'HUMAN_CONFIRMATION_REQUIRED', status: 403 } });
    expect((await call({ op: 'action', id: pending })).body).toMatchObject({ status: 'proposed' });
  });

  it('an end user rejects with a reason; another app cannot reach this proposal, nor its end users', async () => {
    const held = (await call({ op: 'propose' })).body.action_id;
    const otherUser = await p.services.endUserTokens.sign(other.app_id, { sub: END_USER, role: 'authenticated' }, 600);
    expect((await call({ op: 'approve', id: held }, otherUser, other.app_id)).body.code).toBe('END_USER_DECISIONS_OFF');
    const rejected = await call({ op: 'reject', id: held, reason: 'not this quarter' }, endUser);
    expect(rejected.body).toMatchObject({ status: 'rejected', reject_reason: 'not this quarter', decided_via: 'app_end_user', decided_by_end_user: END_USER });
    const unlinked = await p.api('DELETE', `/apps/${app.app_id}/substrate-link`);
    expect(unlinked.body).toEqual({ app_id: app.app_id, substrate_user_id: null, end_users_decide: false });
  });

  it("ctx.asApp writes a table end users only read, whoever called; ctx.data as the end user may not", async () => {
    const asCaller = await call({ op: 'write-as-caller' }, endUser);
    expect(asCaller.body).toMatchObject({ data: null, status: 403 });
    const asApp = await call({ op: 'write' }, endUser);
    expect(asApp.body).toMatchObject({ status: 201, data: [{ text: 'by the app' }] });
  });
});

describe('an agent holding only the platform key, once a person let end users decide', () => {
  const APPROVER = `
export default async (req: Request, ctx: any) => {
  const { id } = await req.json();
  try {
    return Response.json(await ctx.substrate.approve(id));
  } catch (err: any) {
    return Response.json({ name: err.name, code: err.code, status: err.status }, { status: 418 });
  }
};`;
  const principle = { capability: 'record_principle', payload: { title: 'Agents decide for me', applies_to: {}, constraint_spec: { logic: { '==': [1, 1] } } } };
  let target: { app_id: string; service_key: { key: string } };
  const link = (body: Record<string, unknown>, headers?: Record<string, string>) =>
    p.api('POST', `/apps/${target.app_id}/substrate-link`, { body, ...(headers ? { key: null, headers } : {}) });
  const approveAs = async (token: string, id: string) => {
    const res = await fetch(`${p.url}/v1/${target.app_id}/fn/approver`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ id }) });
    return { status: res.status, body: await res.json() };
  };
  let agentEndUser: string;

  beforeAll(async () => {
    target = (await p.api('POST', '/init', { body: { name: 'agentic' } })).body;
    expect((await link({ end_users_decide: true }, owner.headers)).body).toMatchObject({ end_users_decide: true });
    const signedUp = await p.api('POST', `/v1/${target.app_id}/auth/signup`, { body: { email: 'agent@example.com', password: 'an agent password' }, key: null });
    expect(signedUp.status, JSON.stringify(signedUp.body)).toBe(201);
    agentEndUser = signedUp.body.access_token;
  });

  it("proposes with a service key it mints and approves through a function it deploys, as an end user it signed up: refused, the person's consent ended", async () => {
    const minted = await p.api('POST', `/apps/${target.app_id}/keys`, { body: { name: 'mine' } });
    expect(minted.status).toBe(201);
    const proposed = await p.api('POST', `/v1/${target.app_id}/substrate/actions/propose`, { body: principle, key: minted.body.key });
    expect(proposed.body).toMatchObject({ requires_approval: true });
    const deployed = await p.api('POST', `/v1/${target.app_id}/functions`, { body: { name: 'approver', code: APPROVER } });
    expect(deployed.status, JSON.stringify(deployed.body)).toBe(201);

    expect(await approveAs(agentEndUser, proposed.body.action_id)).toEqual({ status: 418, body: { name: 'SubstrateError', code: 'END_USER_DECISIONS_OFF', status: 403 } });
    expect((await link({})).body).toMatchObject({ end_users_decide: false });
    const action = await p.api('GET', `/v1/me/substrate/actions/${proposed.body.action_id}`, { key: null, headers: owner.headers });
    expect(action.body).toMatchObject({ status: 'proposed', proposer_kind: 'agent', source_app_id: target.app_id });
  });

  it('what a service key proposed is never an end user\'s to decide, even with the consent given again over the same code', async () => {
    const proposed = await p.api('POST', `/v1/${target.app_id}/substrate/actions/propose`, { body: principle, key: target.service_key.key });
    expect((await link({ end_users_decide: true }, owner.headers)).body).toMatchObject({ end_users_decide: true });
    expect(await approveAs(agentEndUser, proposed.body.action_id)).toEqual({ status: 418, body: { name: 'SubstrateError', code: 'HUMAN_CONFIRMATION_REQUIRED', status: 403 } });
    expect((await p.api('GET', `/v1/me/substrate/actions/${proposed.body.action_id}`, { key: null, headers: owner.headers })).body).toMatchObject({ status: 'proposed' });
  });

  it('the person who allowed it changes the functions signed in and the consent stands; a platform key changing their variables or deleting one ends it', async () => {
    expect((await p.api('POST', `/v1/${target.app_id}/functions`, { body: { name: 'approver', code: APPROVER, description: 'by the owner' }, key: null, headers: owner.headers })).status).toBe(200);
    expect((await link({})).body).toMatchObject({ end_users_decide: true });
    expect((await p.api('PATCH', `/v1/${target.app_id}/functions/approver/env`, { body: { MODE: 'any' } })).status).toBe(200);
    expect((await link({})).body).toMatchObject({ end_users_decide: false });
    expect((await link({ end_users_decide: true }, owner.headers)).body).toMatchObject({ end_users_decide: true });
    expect((await p.api('DELETE', `/v1/${target.app_id}/functions/approver`, { key: target.service_key.key })).status).toBe(200);
    expect((await link({})).body).toMatchObject({ end_users_decide: false });
  });

  it("a person allows it for their own substrate only, and it ends when they leave the account", async () => {
    const dev = await signUpMember(p, 'developer');
    const ownerUser = (await p.api('GET', '/v1/me/substrate/settings', { key: null, headers: owner.headers })).body.user_id;
    const foreign = await link({ end_users_decide: true, substrate_user_id: ownerUser }, dev.headers);
    expect([foreign.status, foreign.body.error.code]).toEqual([403, 'HUMAN_CONFIRMATION_REQUIRED']);
    const own = await link({ end_users_decide: true }, dev.headers);
    expect(own.body).toMatchObject({ end_users_decide: true, substrate_user_id: expect.not.stringMatching(ownerUser) });
    expect((await p.api('DELETE', `/dashboard/members/${dev.personId}`)).status).toBe(200);
    expect((await link({})).body).toMatchObject({ end_users_decide: false });
  });

  it("the account's audit log records who let end users decide, and what ended it", async () => {
    const entries = (await p.api('GET', `/dashboard/audit?resource_type=app&resource_id=${target.app_id}&limit=200`)).body.entries as { action: string; actor_kind: string; actor_id: string; details: Record<string, unknown> }[];
    // Each consent by the person who gave it (the owner three times, the developer once for their own substrate).
    const allowedBy = entries.filter((e) => e.action === 'substrate.link' && e.details.end_users_decide === true && e.actor_kind === 'person').map((e) => e.actor_id);
    expect(allowedBy).toEqual([expect.not.stringMatching(owner.personId), owner.personId, owner.personId, owner.personId]);
    expect(entries.filter((e) => e.action === 'substrate.end_users_decide_end').map((e) => [e.actor_kind, e.details])).toEqual([
      ['key', { change: 'function.delete', allowed_by: owner.personId }],
      ['key', { change: 'function.env_update', allowed_by: owner.personId }],
      ['key', { change: 'function.deploy', allowed_by: owner.personId }],
    ]);
  });
});
