// The deployment's people configuration: the feature flags, no provider at all, a routed slot without a provider, a
// provider without the routed action, and the routing setting moving actions between slots. Each is a 503 in the
// spec's words (with `slot` where the table says) and the x-people-* headers naming the routed slot.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { profileUrl, startFakeProxycurl, type FakeProxycurl } from '../fakes/people-proxycurl.ts';
import { startFakeExa } from '../fakes/people-exa.ts';
import type { FakeVendor } from '../fakes/people-proxycurl.ts';
import { FREE_HEADERS, peopleHeaders, setBalance } from '../helpers/people.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

let pc: FakeProxycurl;
let exa: FakeVendor;
const PRIMARY = () => ({ SVC_PEOPLE_PRIMARY_URL: pc.url, SVC_PEOPLE_PRIMARY_KEY: 'pc-test-key' });
const SECONDARY_EXA = () => ({ SVC_PEOPLE_SECONDARY_URL: exa.url, SVC_PEOPLE_SECONDARY_KEY: 'exa-test-key' });

beforeAll(async () => {
  pc = await startFakeProxycurl();
  exa = await startFakeExa();
});
afterAll(async () => {
  await pc?.close();
  await exa?.close();
});

/** A platform with this people configuration, an app with credit, and what each route answers. */
async function withPlatform(env: Record<string, string>, check: (call: Call, p: TestPlatform) => Promise<void>): Promise<void> {
  const p = await startTestPlatform({ SVC_ROLE: 'api', ...env });
  try {
    const appId = (await p.api('POST', '/init', { body: { name: 'slots' } })).body.app_id as string;
    const accountId = (await p.sql('select account_id from apps where id = $1', [appId]))[0].account_id;
    await setBalance({ p, accountId }, 10);
    await check((method, path, body) => p.api(method, `/v1/${appId}/people/${path}`, { body }), p);
  } finally {
    await p.close();
  }
}

type Call = (method: 'GET' | 'POST', path: string, body?: unknown) => Promise<{ status: number; body: any; headers: Headers }>;

const ROUTES = [
  ['POST', 'search/person', { currentRoleTitle: 'CTO' }, undefined],
  ['POST', 'search/company', { industry: 'Software' }, undefined],
  ['POST', 'profile', { socialProfileUrl: profileUrl(1) }, 'false'],
  ['POST', 'profile/email', { socialProfileUrl: profileUrl(1) }, undefined],
] as const;

describe('people configuration', () => {
  it('SVC_PEOPLE_ENABLED=false: every route, the poll too, answers 503 { error: "people_disabled" }', async () => {
    await withPlatform({ ...PRIMARY(), SVC_PEOPLE_ENABLED: 'false' }, async (call) => {
      for (const [method, path, body, cached] of [...ROUTES, ['GET', 'email-lookup/00000000-0000-4000-8000-000000000000', undefined, undefined] as const]) {
        const res = await call(method, path, body);
        expect(res.status, path).toBe(503);
        expect(res.body).toEqual({ error: 'people_disabled' });
        expect(peopleHeaders(res.headers)).toEqual(FREE_HEADERS('primary', cached));
      }
    });
  });

  it('no provider in any slot: 503 { error: "people_unavailable" } on every route', async () => {
    await withPlatform({}, async (call) => {
      for (const [method, path, body, cached] of ROUTES) {
        const res = await call(method, path, body);
        expect(res.status, path).toBe(503);
        expect(res.body).toEqual({ error: 'people_unavailable' });
        expect(peopleHeaders(res.headers)).toEqual(FREE_HEADERS('primary', cached));
      }
    });
  });

  it('a natural-language query routed to an empty secondary slot: 503 provider_not_registered with the slot', async () => {
    await withPlatform(PRIMARY(), async (call) => {
      for (const path of ['search/person', 'search/company']) {
        const res = await call('POST', path, { query: 'fintech founders' });
        expect(res.status).toBe(503);
        expect(res.body).toEqual({ error: 'provider_not_registered', slot: 'secondary' });
        expect(peopleHeaders(res.headers)).toEqual(FREE_HEADERS('secondary'));
      }
      // Structured searches stay on the primary slot.
      expect((await call('POST', 'search/person', { currentRoleTitle: 'CTO' })).status).toBe(200);
    });
  });

  it('an action routed to a provider that lacks it: 503 provider_action_unsupported with the slot', async () => {
    await withPlatform({ ...PRIMARY(), ...SECONDARY_EXA(), SVC_PEOPLE_ROUTING: 'profile=secondary,profile_email=secondary' }, async (call) => {
      for (const [method, path, body, cached] of ROUTES.slice(2)) {
        const res = await call(method, path, body);
        expect(res.status, path).toBe(503);
        expect(res.body).toEqual({ error: 'provider_action_unsupported', slot: 'secondary' });
        expect(peopleHeaders(res.headers)).toEqual(FREE_HEADERS('secondary', cached));
      }
    });
    // A structured provider takes no natural-language query.
    await withPlatform({ ...PRIMARY(), SVC_PEOPLE_ROUTING: 'query=primary' }, async (call) => {
      const res = await call('POST', 'search/person', { query: 'fintech founders' });
      expect(res.body).toEqual({ error: 'provider_action_unsupported', slot: 'primary' });
    });
  });

  it('routing moves actions between slots: a semantic provider serves structured searches from their description', async () => {
    exa.reset();
    await withPlatform({ ...PRIMARY(), ...SECONDARY_EXA(), SVC_PEOPLE_ROUTING: 'search_person=secondary' }, async (call) => {
      const res = await call('POST', 'search/person', { currentRoleTitle: 'CTO', currentCompanyName: 'Acme', city: 'Berlin', country: 'Germany', pageSize: 2 });
      expect(res.status).toBe(200);
      expect(peopleHeaders(res.headers)).toMatchObject({ provider: 'secondary', credits: '7' });
      expect((exa.requests[0]!.body as { query: string }).query).toBe('People working as CTO at Acme located in Berlin, Germany');
    });
  });

  it('SVC_PEOPLE_EMAIL_LOOKUP_ENABLED=false: profile/email answers 503 email_lookup_disabled; the rest works', async () => {
    await withPlatform({ ...PRIMARY(), SVC_PEOPLE_EMAIL_LOOKUP_ENABLED: 'false' }, async (call) => {
      const res = await call('POST', 'profile/email', { socialProfileUrl: profileUrl(1) });
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ error: 'email_lookup_disabled' });
      expect(peopleHeaders(res.headers)).toEqual(FREE_HEADERS());
      expect((await call('POST', 'profile', { socialProfileUrl: profileUrl(1) })).status).toBe(200);
    });
  });

  it('the operator\'s price table and gate apply', async () => {
    const prices = JSON.stringify({ profile: { credits: 5, usd: 0.1 } });
    await withPlatform({ ...PRIMARY(), SVC_PEOPLE_PRICES: prices, SVC_PEOPLE_MIN_BALANCE_USD: '20' }, async (call, p) => {
      expect((await call('POST', 'profile', { socialProfileUrl: profileUrl(1) })).body).toEqual({ error: 'insufficient_credits' });
      await p.sql('update credit_balances set balance_nanos = 25000000000');
      const res = await call('POST', 'profile', { socialProfileUrl: profileUrl(1) });
      expect(res.body.usage).toEqual({ creditsConsumed: 5, usdCharged: 0.1, cached: false });
      expect(peopleHeaders(res.headers)).toMatchObject({ credits: '5', usd: '0.100000' });
    });
  });
});
