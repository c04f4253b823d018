// People search against the fake vendors: person and company search (filters, paging, natural-language routing),
// profiles through the cache with a moved clock, URL normalization, billing with its usage rows and ledger charges,
// the x-people-* headers on every reply, upstream failures, the balance gate and concurrency near it, and ownership.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EXA_COST_USD } from '../fakes/people-exa.ts';
import { profileUrl } from '../fakes/people-proxycurl.ts';
import { balance, charges, FREE_HEADERS, peopleHeaders, resetRig, setBalance, startPeopleRig, usageRows, type PeopleRig } from '../helpers/people.ts';

let rig: PeopleRig;
const P = (path: string) => `/v1/${rig.appId}/people/${path}`;

beforeAll(async () => {
  rig = await startPeopleRig({ SVC_ROLE: 'api' });
});
afterAll(async () => {
  await rig?.close();
});
beforeEach(() => resetRig(rig));

/** Person i as the platform maps it: the spec's camelCase fields. */
function mappedPerson(i: number) {
  const role = i % 2 === 1 ? 'CTO' : 'Engineer';
  const company = `Company ${((i - 1) % 12) + 1}`;
  return {
    fullName: `Person Number${i}`,
    firstName: 'Person',
    lastName: `Number${i}`,
    headline: `${role} at ${company}`,
    city: 'San Francisco',
    state: 'California',
    country: 'United States',
    experiences: [
      { title: role, company, location: 'Remote', startsAt: '2020-03-01', endsAt: null },
      { title: 'Intern', company: 'First Job Inc', location: null, startsAt: '2015-06', endsAt: '2016' },
    ],
    education: [{ school: 'State University', degree: 'BSc', schoolUrl: 'https://www.linkedin.com/school/state-u', dates: { startsAt: '2011', endsAt: '2015' } }],
  };
}

describe('person search', () => {
  it('filters go to the primary slot as the vendor names them; results come back in the spec shape, billed 7 credits', async () => {
    const res = await rig.p.api('POST', P('search/person'), { body: { currentRoleTitle: 'CTO', country: 'US', pageSize: 5 } });
    expect(res.status).toBe(200);
    expect(peopleHeaders(res.headers)).toEqual({ provider: 'primary', credits: '7', usd: '0.008400', cached: undefined });
    expect(Object.keys(res.body)).toEqual(['data', 'usage']);
    expect(res.body.usage).toEqual({ creditsConsumed: 7, usdCharged: 0.0084 });
    expect(res.body.data.totalResultCount).toBe(8);
    expect(res.body.data.nextPage).toBe(`${rig.p.services.config.baseUrl}/v1/${rig.appId}/people/search/person?next_token=5`);
    expect(res.body.data.results.map((r: any) => r.socialProfileUrl)).toEqual([1, 3, 5, 7, 9].map(profileUrl));
    const { experiences, education, ...names } = mappedPerson(1);
    expect(res.body.data.results[0]).toEqual({
      socialProfileUrl: profileUrl(1),
      profile: { ...names, experiences, education, skills: ['TypeScript', 'Postgres'], languages: ['English'], profilePicUrl: 'https://images.example/person-1.png' },
      lastUpdated: '2026-01-02T03:04:05Z',
    });
    expect(rig.pc.requests).toHaveLength(1);
    expect(rig.pc.requests[0]).toMatchObject({
      path: '/api/v2/search/person',
      authorization: 'Bearer pc-test-key',
      query: { current_role_title: 'CTO', country: 'US', page_size: '5', enrich_profiles: 'enrich' },
    });
    expect(await usageRows(rig)).toEqual([
      { action: 'search_person', slot: 'primary', credits_consumed: 7, usd_cost: 0.0084, usd_charged: 0.0084, response_status: 200, social_url: null, lookup_id: null },
    ]);
    const id = (await rig.p.sql('select id::text from people_usage_logs'))[0].id;
    expect(await charges(rig)).toEqual([{ nanos: '-8400000', source: 'people', usage_ref: `people_usage:${id}` }]);
    expect(await balance(rig)).toEqual({ balance: 10 - 0.0084, reserved: 0 });
  });

  it('pages with the next_token taken from nextPage; the last page has nextPage null', async () => {
    const first = await rig.p.api('POST', P('search/person'), { body: { currentRoleTitle: 'CTO', country: 'US', pageSize: 5 } });
    const token = new URL(first.body.data.nextPage).searchParams.get('next_token');
    const second = await rig.p.api('POST', P('search/person'), { body: { currentRoleTitle: 'CTO', country: 'US', pageSize: 5, nextToken: token } });
    expect(second.status).toBe(200);
    expect(second.body.data.results.map((r: any) => r.socialProfileUrl)).toEqual([11, 13, 15].map(profileUrl));
    expect(second.body.data.nextPage).toBeNull();
    expect(rig.pc.requests[1]!.query.next_token).toBe('5');
  });

  it('results beyond the first 10 cost 1 credit and $0.0012 each', async () => {
    const res = await rig.p.api('POST', P('search/person'), { body: { currentCompanyName: 'Company', pageSize: 25 } });
    expect(res.body.data.results).toHaveLength(25);
    expect(res.body.usage).toEqual({ creditsConsumed: 22, usdCharged: 0.0264 });
    expect(peopleHeaders(res.headers)).toMatchObject({ credits: '22', usd: '0.026400' });
    expect(await balance(rig)).toEqual({ balance: 10 - 0.0264, reserved: 0 });
  });

  it('an empty result set is never billed', async () => {
    const res = await rig.p.api('POST', P('search/person'), { body: { currentRoleTitle: 'Astronaut' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { results: [], nextPage: null, totalResultCount: 0 }, usage: { creditsConsumed: 0, usdCharged: 0 } });
    expect(peopleHeaders(res.headers)).toEqual(FREE_HEADERS());
    expect((await usageRows(rig)).map((r) => [r.action, r.credits_consumed, r.usd_charged])).toEqual([['search_person', 0, 0]]);
    expect(await charges(rig)).toEqual([]);
    expect(await balance(rig)).toEqual({ balance: 10, reserved: 0 });
  });

  it('a natural-language query goes to the slot query is routed to (secondary), which bills what it reports as cost', async () => {
    const res = await rig.p.api('POST', P('search/person'), { body: { query: 'CTOs of fintech startups in Berlin', currentRoleTitle: 'CTO', pageSize: 3 } });
    expect(res.status).toBe(200);
    expect(peopleHeaders(res.headers)).toEqual({ provider: 'secondary', credits: '7', usd: '0.008400', cached: undefined });
    expect(res.body.data).toEqual({
      results: [1, 2, 3].map((i) => ({ socialProfileUrl: profileUrl(i), profile: { fullName: `Person Number${i}`, headline: 'CTO - Company 1' }, lastUpdated: '2026-01-02T00:00:00.000Z' })),
      nextPage: null,
      totalResultCount: 3,
    });
    expect(rig.pc.requests).toEqual([]);
    expect(rig.exa.requests[0]).toMatchObject({ method: 'POST', path: '/search', authorization: 'exa-test-key' });
    expect(rig.exa.requests[0]!.body).toEqual({ query: 'CTOs of fintech startups in Berlin', numResults: 3, category: 'linkedin profile', type: 'auto' });
    expect((await usageRows(rig))[0]).toMatchObject({ action: 'search_person', slot: 'secondary', usd_cost: EXA_COST_USD, usd_charged: 0.0084 });
  });

  it('without query and filters: 400 validation_failed, nothing sent', async () => {
    const res = await rig.p.api('POST', P('search/person'), { body: { pageSize: 10 } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'validation_failed', message: 'Give a query or at least one filter.' });
    expect(peopleHeaders(res.headers)).toEqual(FREE_HEADERS());
    expect(rig.pc.requests).toEqual([]);
  });

  it.each([
    [{ currentRoleTitle: 'CTO', pageSize: 0 }, 'pageSize'],
    [{ currentRoleTitle: 'CTO', pageSize: 101 }, 'pageSize'],
    [{ currentRoleTitle: 'CTO', pageSize: 2.5 }, 'pageSize'],
    [{ currentRoleTitle: 'CTO', seniority: 'vp' }, 'seniority'],
  ])('%j: 400 naming %s, with the headers', async (body, field) => {
    const res = await rig.p.api('POST', P('search/person'), { body });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_failed');
    expect(res.body.message).toContain(field);
    expect(peopleHeaders(res.headers)).toEqual(FREE_HEADERS());
  });
});

describe('company search', () => {
  it('industry, country and employeeCountMax go to the vendor; results are { socialUrl, name, industry, country, employeeCount }', async () => {
    const res = await rig.p.api('POST', P('search/company'), { body: { industry: 'Software', country: 'US', employeeCountMax: 40 } });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      results: [1, 3].map((i) => ({ socialUrl: `https://www.linkedin.com/company/company-${i}`, name: `Company ${i}`, industry: 'Software', country: 'US', employeeCount: 10 * i })),
      nextPage: null,
      totalResultCount: 2,
    });
    expect(res.body.usage).toEqual({ creditsConsumed: 7, usdCharged: 0.0084 });
    expect(rig.pc.requests[0]).toMatchObject({ path: '/api/v2/search/company', query: { industry: 'Software', country: 'US', employee_count_max: '40', page_size: '10' } });
    expect((await usageRows(rig))[0]).toMatchObject({ action: 'search_company', credits_consumed: 7 });
  });

  it('a query goes to the semantic slot as a company search', async () => {
    const res = await rig.p.api('POST', P('search/company'), { body: { query: 'payment processors', pageSize: 2 } });
    expect(res.body.data.results).toEqual([1, 2].map((i) => ({ socialUrl: `https://www.linkedin.com/company/company-${i}`, name: `Company ${i}` })));
    expect(peopleHeaders(res.headers).provider).toBe('secondary');
    expect((rig.exa.requests[0]!.body as any).category).toBe('company');
  });

  it('nextPage points at the company route', async () => {
    const res = await rig.p.api('POST', P('search/company'), { body: { industry: 'o', pageSize: 5 } });
    expect(res.body.data.nextPage).toBe(`${rig.p.services.config.baseUrl}/v1/${rig.appId}/people/search/company?next_token=5`);
  });
});

describe('provider failures', () => {
  it.each([
    [500, 500, 'answered 500'],
    ['drop', null, 'could not be reached'],
    ['hang', null, 'did not answer within 1000 ms'],
  ] as const)('%s: 502 with a transient description, an _error row, nothing charged or held', async (fault, status, words) => {
    rig.pc.fail(fault);
    const res = await rig.p.api('POST', P('search/person'), { body: { currentRoleTitle: 'CTO' } });
    expect(res.status).toBe(502);
    expect(Object.keys(res.body)).toEqual(['error']);
    expect(res.body.error).toContain(words);
    expect(res.body.error).toContain('Retry with backoff');
    expect(peopleHeaders(res.headers)).toEqual(FREE_HEADERS());
    expect(await usageRows(rig)).toEqual([
      { action: 'search_person_error', slot: 'primary', credits_consumed: 0, usd_cost: 0, usd_charged: 0, response_status: status, social_url: null, lookup_id: null },
    ]);
    expect(await charges(rig)).toEqual([]);
    expect(await balance(rig)).toEqual({ balance: 10, reserved: 0 });
  });

  it('a 2xx answer that is not a search page is a 502 too', async () => {
    rig.pc.fail(200);
    const res = await rig.p.api('POST', P('search/company'), { body: { industry: 'Software' } });
    expect(res.status).toBe(502);
    expect(res.body.error).toContain('malformed');
    expect((await usageRows(rig))[0]).toMatchObject({ action: 'search_company_error', response_status: 200 });
  });
});

describe('the balance gate', () => {
  it('below $0.05 available: 402 { error: "insufficient_credits" } with zero headers, and no provider call', async () => {
    await setBalance(rig, 0.0499);
    for (const [path, body, cached] of [
      ['search/person', { currentRoleTitle: 'CTO' }, undefined],
      ['search/company', { industry: 'Software' }, undefined],
      ['profile', { socialProfileUrl: profileUrl(4) }, 'false'],
      ['profile/email', { socialProfileUrl: profileUrl(4) }, undefined],
    ] as const) {
      const res = await rig.p.api('POST', P(path), { body });
      expect(res.status, path).toBe(402);
      expect(res.body).toEqual({ error: 'insufficient_credits' });
      expect(peopleHeaders(res.headers)).toEqual(FREE_HEADERS('primary', cached));
    }
    expect(rig.pc.requests).toEqual([]);
    expect(await usageRows(rig)).toEqual([]);
    expect(await balance(rig)).toEqual({ balance: 0.0499, reserved: 0 });
  });

  it('at the gate a call goes through; a page that could cost more than what is left does not', async () => {
    await setBalance(rig, 0.05);
    expect((await rig.p.api('POST', P('search/person'), { body: { currentRoleTitle: 'CTO' } })).status).toBe(200);
    await setBalance(rig, 0.1);
    // 100 results could cost $0.1164.
    const res = await rig.p.api('POST', P('search/person'), { body: { currentRoleTitle: 'CTO', pageSize: 100 } });
    expect(res.status).toBe(402);
    expect(rig.pc.requests).toHaveLength(1);
  });

  it('concurrent requests near the gate never spend more than the balance', async () => {
    await setBalance(rig, 0.2);
    // Each may cost $0.0264 (25 results) and needs $0.05 available: 0.2, 0.1736, ... 0.068 pass; 0.0416 does not.
    const replies = await Promise.all(
      Array.from({ length: 12 }, () => rig.p.api('POST', P('search/person'), { body: { currentCompanyName: 'Company', pageSize: 25 } })),
    );
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array<number>(6).fill(200), ...Array<number>(6).fill(402)]);
    expect(rig.pc.requests).toHaveLength(6);
    const after = await balance(rig);
    expect(after.reserved).toBe(0);
    expect(after.balance).toBeCloseTo(0.2 - 6 * 0.0264, 9);
    expect(after.balance).toBeGreaterThanOrEqual(0);
  });
});

describe('who may call (the app owner only)', () => {
  it('the app\'s service key and its owner\'s platform key are served', async () => {
    expect((await rig.p.api('POST', P('search/person'), { body: { currentRoleTitle: 'CTO' }, key: rig.serviceKey })).status).toBe(200);
    expect((await rig.p.api('POST', P('search/person'), { body: { currentRoleTitle: 'CTO' } })).status).toBe(200);
  });

  it('anyone else: 403 { error: "forbidden" } with the headers; an unknown app: 404 { error: "app_not_found" }', async () => {
    const user = (await rig.p.api('POST', `/v1/${rig.appId}/auth/signup`, { body: { email: 'people@example.com', password: 'correct horse battery' }, key: null })).body;
    const otherApp = (await rig.p.api('POST', '/init', { body: { name: 'not mine' } })).body;
    const strangerAccount = (await rig.p.sql(`insert into accounts (name) values ('stranger') returning id`))[0].id;
    const stranger = (await rig.p.services.keys.create('platform', strangerAccount, 'x')).key;
    const substrate = await rig.p.substrateKey('sub');
    for (const key of [null, 'garbage', 'svc_sk_notakey', user.access_token, otherApp.service_key.key, stranger, substrate]) {
      for (const [method, path, body, cached] of [
        ['POST', 'search/person', { currentRoleTitle: 'CTO' }, undefined],
        ['POST', 'search/company', { industry: 'Software' }, undefined],
        ['POST', 'profile', { socialProfileUrl: profileUrl(1) }, 'false'],
        ['POST', 'profile/email', { socialProfileUrl: profileUrl(1) }, undefined],
        ['GET', 'email-lookup/00000000-0000-4000-8000-000000000000', undefined, undefined],
      ] as const) {
        const res = await rig.p.api(method, P(path), { body, key });
        expect(res.status, `${String(key).slice(0, 12)} ${path}`).toBe(403);
        expect(res.body).toEqual({ error: 'forbidden' });
        expect(peopleHeaders(res.headers)).toEqual(FREE_HEADERS('primary', cached));
      }
    }
    expect(rig.pc.requests).toEqual([]);
    const unknown = await rig.p.api('POST', '/v1/zzzzzzzzzzzzzzzz/people/profile', { body: { socialProfileUrl: profileUrl(1) } });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'app_not_found' });
    expect(peopleHeaders(unknown.headers)).toEqual(FREE_HEADERS('primary', 'false'));
  });

  it('a body that is not JSON is refused in the people shape, with the headers', async () => {
    const res = await rig.p.api('POST', P('profile'), { body: '{"socialProfileUrl":', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_json' });
    expect(peopleHeaders(res.headers)).toEqual(FREE_HEADERS('primary', 'false'));
  });
});
