// What a linked app's functions do with their own proposals: ask for a person's approval even where the policy is auto,
// read them back (only theirs), and let the app's signed-in end users decide on them once a person of the account
// allowed it from a browser session (never a platform key, never a call without an end user). ctx.asApp writes what
// end users only read; ctx.rag.deleteDocument removes a document.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey, hashKey } from '../../src/core/crypto.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

let p: TestPlatform;
let app: { app_id: string; service_key: { key: string } };
let other: { app_id: string; service_key: { key: string } };
let cookie: string;
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

/** The platform's own origin (its configured base URL), which a cookie-authenticated request must come from. */
const origin = () => new URL(p.docsUrl()).origin;

/** A person of the platform key's account signed in with a browser session (the cookie). */
async function personSession(): Promise<string> {
  const [account] = await p.sql('select account_id from apps where id = $1', [app.app_id]);
  const token = generateKey('svc_inv_');
  await p.sql(`insert into invitations (account_id, email, role, token_hash, expires_at) values ($1, null, 'owner', $2, now() + interval '1 day')`, [account.account_id, hashKey(token)]);
  const res = await fetch(`${p.url}/dashboard/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: origin() },
    body: JSON.stringify({ email: 'olga@example.com', password: 'correct horse battery', invitation_token: token }),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return res.headers.getSetCookie().find((c) => c.startsWith('svc_session='))!.split(';')[0]!;
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
  cookie = await personSession();
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
    const byPerson = await p.api('POST', `/apps/${app.app_id}/substrate-link`, { body: { end_users_decide: true }, key: null, headers: { cookie, origin: origin() } });
    expect(byPerson.status, JSON.stringify(byPerson.body)).toBe(200);
    expect(byPerson.body).toEqual({ app_id: app.app_id, substrate_user_id: expect.any(String), end_users_decide: true });
  });

  it('then an end user approves: executed, recorded as theirs; deciding again is 409; a call without an end user still may not', async () => {
    expect(await call({ op: 'approve', id: pending })).toEqual({ status: 418, body: { name: 'SubstrateError', code: 'HUMAN_CONFIRMATION_REQUIRED', status: 403 } });
    const approved = await call({ op: 'approve', id: pending }, endUser);
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ action_id: pending, status: 'executed', decided_via: 'app_end_user', decided_by: null, decided_by_end_user: END_USER });
    expect(approved.body.result.entity_id).toMatch(/^ent_/);
    expect(await call({ op: 'reject', id: pending }, endUser)).toEqual({ status: 418, body: { name: 'SubstrateError', code: 'wrong_status', status: 409 } });
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
