// Work-email lookups: queued and billed (3 credits, the resolution's credit held), polled, resolved by the provider's
// callback (1 credit; verified with the lookup's secret; redeliveries change nothing), failed when the provider finds
// no e-mail, expired at the deadline (the job queued with the lookup, or a poll past it), and refused before anything
// is created when the provider fails or credit is short.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { emailOf, profileUrl } from '../fakes/people-proxycurl.ts';
import { balance, charges, FREE_HEADERS, peopleHeaders, resetRig, setBalance, startPeopleRig, usageRows, type PeopleRig } from '../helpers/people.ts';

const DEADLINE_SECONDS = 3;
let rig: PeopleRig;
const P = (path: string) => `/v1/${rig.appId}/people/${path}`;

beforeAll(async () => {
  // Role all: the expiry job runs in this process's worker.
  rig = await startPeopleRig({ SVC_PEOPLE_EMAIL_LOOKUP_DEADLINE_SECONDS: String(DEADLINE_SECONDS) });
});
afterAll(async () => {
  await rig?.close();
});
beforeEach(() => resetRig(rig));

async function queue(i: number): Promise<string> {
  const res = await rig.p.api('POST', P('profile/email'), { body: { socialProfileUrl: profileUrl(i) } });
  expect(res.status).toBe(202);
  return res.body.lookupId;
}

const poll = (id: string, key?: string) => rig.p.api('GET', P(`email-lookup/${id}`), key ? { key } : {});
/** The callback as the vendor sends it, to this process's listening address. */
const deliver = (index: number, opts: { email?: string | null; token?: string } = {}) => rig.pc.deliverEmail(index, { ...opts, origin: rig.p.url });

describe('queue and resolve', () => {
  it('queues (202, 3 credits, the resolution credit held), polls pending, resolves by callback (1 credit) and polls resolved', async () => {
    const res = await rig.p.api('POST', P('profile/email'), { body: { socialProfileUrl: `${profileUrl(4).toUpperCase()}/` } });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ lookupId: expect.stringMatching(/^[0-9a-f-]{36}$/), status: 'pending', usage: { creditsConsumed: 3 } });
    expect(peopleHeaders(res.headers)).toEqual({ provider: 'primary', credits: '3', usd: '0.060000', cached: undefined });
    const id = res.body.lookupId as string;
    const [lookup] = rig.pc.lookups;
    expect(lookup!.profileUrl).toBe(profileUrl(4));
    const callback = new URL(lookup!.callbackUrl);
    expect(`${callback.origin}${callback.pathname}`).toBe(`${rig.p.services.config.baseUrl}/webhooks/people/email/${id}`);
    expect(callback.searchParams.get('token')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(rig.pc.requests[0]!.path).toBe('/api/linkedin/profile/email');
    // The secret is kept only as its hash.
    const [row] = await rig.p.sql('select secret_sha256 from people_email_lookups where id = $1', [id]);
    expect(row.secret_sha256).toBe(createHash('sha256').update(callback.searchParams.get('token')!).digest('hex'));
    expect(await balance(rig)).toEqual({ balance: 10 - 0.06, reserved: 0.02 });

    const pending = await poll(id);
    expect(pending.status).toBe(200);
    expect(pending.body).toEqual({ status: 'pending', email: null, credits_consumed: 3 });
    expect(peopleHeaders(pending.headers)).toEqual(FREE_HEADERS());

    const delivered = await deliver(0);
    expect(delivered).toEqual({ status: 200, body: { received: true, status: 'resolved' } });
    expect((await poll(id)).body).toEqual({ status: 'resolved', email: emailOf(4), credits_consumed: 4 });
    expect(await balance(rig)).toEqual({ balance: 10 - 0.08, reserved: 0 });
    expect(await usageRows(rig)).toEqual([
      { action: 'profile_email_queue', slot: 'primary', credits_consumed: 3, usd_cost: 0.06, usd_charged: 0.06, response_status: 200, social_url: profileUrl(4), lookup_id: id },
      { action: 'profile_email_resolved', slot: 'primary', credits_consumed: 1, usd_cost: 0.02, usd_charged: 0.02, response_status: 200, social_url: profileUrl(4), lookup_id: id },
    ]);
    expect((await charges(rig)).map((c) => c.nanos)).toEqual(['-60000000', '-20000000']);

    // Redelivered: answered the same, nothing changes.
    expect(await deliver(0)).toEqual({ status: 200, body: { received: true, status: 'resolved' } });
    expect((await charges(rig)).length).toBe(2);
    expect((await poll(id)).body.credits_consumed).toBe(4);
  });

  it('a forged or missing token is refused (401) and changes nothing; an unknown lookup is 404', async () => {
    const id = await queue(6);
    const forged = await deliver(0, { token: 'x'.repeat(43) });
    expect(forged.status).toBe(401);
    expect(forged.body.error.code).toBe('AUTH_INVALID_TOKEN');
    const bare = await fetch(`${rig.p.url}/webhooks/people/email/${id}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"email":"evil@example.com"}' });
    expect(bare.status).toBe(401);
    expect((await poll(id)).body).toEqual({ status: 'pending', email: null, credits_consumed: 3 });
    for (const other of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const res = await fetch(`${rig.p.url}/webhooks/people/email/${other}?token=abc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(res.status, other).toBe(404);
    }
  });

  it('the provider found no e-mail: failed, free, the held credit given back', async () => {
    const id = await queue(2);
    expect(await deliver(0)).toEqual({ status: 200, body: { received: true, status: 'failed' } });
    expect((await poll(id)).body).toEqual({ status: 'failed', email: null, credits_consumed: 3 });
    expect(await balance(rig)).toEqual({ balance: 10 - 0.06, reserved: 0 });
    expect((await usageRows(rig)).map((r) => [r.action, r.credits_consumed])).toEqual([
      ['profile_email_queue', 3],
      ['profile_email_resolved_error', 0],
    ]);
  });

  it("another app's lookup is not found here (404 lookup_not_found)", async () => {
    const id = await queue(8);
    const other = (await rig.p.api('POST', '/init', { body: { name: 'second' } })).body;
    const res = await rig.p.api('GET', `/v1/${other.app_id}/people/email-lookup/${id}`);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ error: 'lookup_not_found' });
    expect(peopleHeaders(res.headers)).toEqual(FREE_HEADERS());
    expect((await poll(id, rig.serviceKey)).status).toBe(200);
  });
});

describe('expiry', () => {
  it('the job queued with the lookup expires it at the deadline and gives back the held credit; a late callback changes nothing', async () => {
    const id = await queue(10);
    const [job] = await rig.p.sql(`select run_at from graphile_worker.jobs where key = $1`, [`people_email_expire:${id}`]);
    const [row] = await rig.p.sql('select deadline from people_email_lookups where id = $1', [id]);
    expect(job.run_at).toEqual(row.deadline);
    // Read the row, not the poll: a poll past the deadline would expire it by itself.
    const started = Date.now();
    while ((await rig.p.sql('select status from people_email_lookups where id = $1', [id]))[0].status === 'pending') {
      expect(Date.now() - started).toBeLessThan(20_000);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect((await poll(id)).body).toEqual({ status: 'expired', email: null, credits_consumed: 3 });
    expect(await balance(rig)).toEqual({ balance: 10 - 0.06, reserved: 0 });
    expect(await deliver(0)).toEqual({ status: 200, body: { received: true, status: 'expired' } });
    expect((await charges(rig)).length).toBe(1);
  });

  it('with a moved clock: not before the deadline; a poll past it expires the lookup itself', async () => {
    const out = await rig.p.services.people.queueEmail(rig.app, { socialProfileUrl: profileUrl(12) }, { now: new Date('2030-01-01T00:00:00Z') });
    const deadline = new Date('2030-01-01T00:00:00Z').getTime() + DEADLINE_SECONDS * 1000;
    expect(await rig.p.services.people.expire(out.lookupId, new Date(deadline - 1))).toBe(false);
    expect(await rig.p.services.people.lookup(rig.app, out.lookupId, { now: new Date(deadline + 1) })).toEqual({
      status: 'expired',
      email: null,
      credits_consumed: 3,
      provider: 'primary',
    });
    expect(await rig.p.services.people.expire(out.lookupId, new Date(deadline + 2))).toBe(false);
  });
});

describe('refusals', () => {
  it('a provider failure at queue time: 502, no lookup left, nothing charged or held', async () => {
    rig.pc.fail(500);
    const res = await rig.p.api('POST', P('profile/email'), { body: { socialProfileUrl: profileUrl(14) } });
    expect(res.status).toBe(502);
    expect(peopleHeaders(res.headers)).toEqual(FREE_HEADERS());
    expect(await rig.p.sql(`select 1 from people_email_lookups where social_url = $1`, [profileUrl(14)])).toEqual([]);
    expect(await rig.p.sql(`select 1 from graphile_worker.jobs j where j.task_identifier = 'people_email_expire' and not exists (select 1 from people_email_lookups l where j.key = 'people_email_expire:' || l.id)`)).toEqual([]);
    expect(await balance(rig)).toEqual({ balance: 10, reserved: 0 });
    expect((await usageRows(rig)).map((r) => [r.action, r.response_status])).toEqual([['profile_email_queue_error', 500]]);
  });

  it('the queue needs the gate and both prices available: $0.079 is refused, $0.08 queues', async () => {
    await setBalance(rig, 0.079);
    const refused = await rig.p.api('POST', P('profile/email'), { body: { socialProfileUrl: profileUrl(16) } });
    expect(refused.status).toBe(402);
    expect(refused.body).toEqual({ error: 'insufficient_credits' });
    expect(rig.pc.requests).toEqual([]);
    await setBalance(rig, 0.08);
    expect((await rig.p.api('POST', P('profile/email'), { body: { socialProfileUrl: profileUrl(16) } })).status).toBe(202);
    expect(await balance(rig)).toEqual({ balance: 0.02, reserved: 0.02 });
  });
});
