// Apps linked to the substrate: the link routes, proposals with the app's service key and from its functions
// (ctx.substrate), recorded as an agent with source_app_id; ctx.substrate is absent for an unlinked app.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

let p: TestPlatform;
let app: { app_id: string; service_key: { key: string } };
let substrateKey: string;

const FN = `
export default async (req: Request, ctx: any) => {
  if (!ctx.substrate) return Response.json({ substrate: 'absent' });
  const proposed = await ctx.substrate.propose('record_learning', { title: 'From a function', description: 'written by ctx.substrate' });
  let refused = null;
  try {
    await ctx.substrate.propose('record_learning', { title: 'missing description' });
  } catch (err: any) {
    refused = { name: err.name, code: err.code, status: err.status };
  }
  const entity = await ctx.substrate.propose('upsert_entity', { type: 'person', display_name: 'Ada Lovelace', primary_email: 'ada@example.com' });
  const got = await ctx.substrate.getEntity(entity.result.entity_id);
  const found = await ctx.substrate.findEntities({ type: 'person', q: 'love' });
  const ticket = await ctx.substrate.wsTicket();
  return Response.json({ ticket, proposed, refused, got: got.display_name, found: found.entities.map((e: any) => e.id), entity: entity.result.entity_id });
};`;

beforeAll(async () => {
  p = await startTestPlatform();
  app = (await p.api('POST', '/init', { body: { name: 'linked' } })).body;
  substrateKey = await p.substrateKey('human');
  const deployed = await p.api('POST', `/v1/${app.app_id}/functions`, { body: { name: 'learn', code: FN }, key: app.service_key.key });
  expect(deployed.status, JSON.stringify(deployed.body)).toBe(201);
});
afterAll(() => p?.close());

async function invoke(): Promise<any> {
  const res = await fetch(`${p.url}/v1/${app.app_id}/fn/learn`, { method: 'POST' });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return JSON.parse(text);
}

describe('app links', () => {
  it('an unlinked app has no ctx.substrate and its service key gets 409 SUBSTRATE_NOT_LINKED', async () => {
    expect(await invoke()).toEqual({ substrate: 'absent' });
    const res = await p.api('POST', `/v1/${app.app_id}/substrate/actions/propose`, {
      key: app.service_key.key,
      body: { capability: 'record_decision', payload: { title: 'x', kind: 'operational' } },
    });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('SUBSTRATE_NOT_LINKED');
  });

  it('linked: the service key and ctx.substrate propose as an agent with source_app_id; the human sees them in the ledger', async () => {
    const linked = await p.api('POST', `/apps/${app.app_id}/substrate-link`, { body: {} });
    expect(linked.status).toBe(200);
    expect(linked.body).toEqual({ app_id: app.app_id, substrate_user_id: expect.any(String), end_users_decide: false });

    const viaKey = await p.api('POST', `/v1/${app.app_id}/substrate/actions/propose`, {
      key: app.service_key.key,
      body: { capability: 'record_principle', payload: { title: 'p', applies_to: {}, constraint_spec: { logic: { '==': [1, 1] } } } },
    });
    expect(viaKey.status).toBe(200);
    expect(viaKey.body.verdict.result).toBe('requires_approval');

    const out = await invoke();
    expect(out.proposed).toMatchObject({ verdict: { result: 'auto_approved' }, result: { learning_id: expect.stringMatching(/^lrn_/) } });
    expect(out.refused).toEqual({ name: 'SubstrateError', code: 'VALIDATION_FAILED', status: 400 });
    expect(out.got).toBe('Ada Lovelace');
    expect(out.ticket).toEqual({ ticket: expect.stringMatching(/^wst_/), expires_in: 60 });
    expect(out.found).toEqual([out.entity]);

    const ledger = await p.api('GET', `/v1/me/substrate/actions?source_app_id=${app.app_id}&status=all`, { key: substrateKey });
    expect(ledger.body.actions.map((a: { capability: string; proposer_kind: string; source_app_id: string }) => [a.capability, a.proposer_kind, a.source_app_id])).toEqual([
      ['upsert_entity', 'agent', app.app_id],
      ['record_learning', 'agent', app.app_id],
      ['record_principle', 'agent', app.app_id],
    ]);

    const unlinked = await p.api('DELETE', `/apps/${app.app_id}/substrate-link`);
    expect(unlinked.body).toEqual({ app_id: app.app_id, substrate_user_id: null, end_users_decide: false });
    expect(await invoke()).toEqual({ substrate: 'absent' });
  });

  it("linking to a substrate user that is not the account's is 404", async () => {
    const res = await p.api('POST', `/apps/${app.app_id}/substrate-link`, { body: { substrate_user_id: '00000000-0000-4000-8000-000000000001' } });
    expect(res.status).toBe(404);
  });
});
