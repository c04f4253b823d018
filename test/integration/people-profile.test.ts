// Profile enrichment: the cache (ok 30 days, not_found 7 days, failed 1 hour and never served) with a moved clock,
// liveFetch "force", URL normalization, billing and the x-people-cached header on every path.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { profileUrl } from '../fakes/people-proxycurl.ts';
import { balance, charges, FREE_HEADERS, peopleHeaders, resetRig, setBalance, startPeopleRig, usageRows, type PeopleRig } from '../helpers/people.ts';

let rig: PeopleRig;
const PROFILE = () => `/v1/${rig.appId}/people/profile`;
const SECOND = 1000;
const HOUR = 3600 * SECOND;
const DAY = 24 * HOUR;

beforeAll(async () => {
  rig = await startPeopleRig({ SVC_ROLE: 'api' });
});
afterAll(async () => {
  await rig?.close();
});
beforeEach(() => resetRig(rig));

const ENRICHED_3 = {
  publicIdentifier: 'person-3',
  fullName: 'Person Number3',
  firstName: 'Person',
  lastName: 'Number3',
  headline: 'CTO at Company 3',
  occupation: 'CTO at Company 3',
  summary: 'Person 3 builds things.',
  city: 'San Francisco',
  state: 'California',
  country: 'United States',
  experiences: [
    { title: 'CTO', company: 'Company 3', location: 'Remote', startsAt: '2020-03-01', endsAt: null },
    { title: 'Intern', company: 'First Job Inc', location: null, startsAt: '2015-06', endsAt: '2016' },
  ],
  education: [{ school: 'State University', degree: 'BSc', schoolUrl: 'https://www.linkedin.com/school/state-u', dates: { startsAt: '2011', endsAt: '2015' } }],
};

const profile = (socialProfileUrl: string, liveFetch?: 'force') => rig.p.api('POST', PROFILE(), { body: liveFetch ? { socialProfileUrl, liveFetch } : { socialProfileUrl } });

describe('profile', () => {
  it('a miss is fetched and billed 2 credits; the same profile again is a free cache hit', async () => {
    const miss = await profile(profileUrl(3));
    expect(miss.status).toBe(200);
    expect(miss.body).toEqual({ data: ENRICHED_3, status: 'ok', usage: { creditsConsumed: 2, usdCharged: 0.04, cached: false } });
    expect(peopleHeaders(miss.headers)).toEqual({ provider: 'primary', credits: '2', usd: '0.040000', cached: 'false' });
    expect(rig.pc.requests[0]).toMatchObject({ path: '/api/v2/linkedin', query: { linkedin_profile_url: profileUrl(3), use_cache: 'if-present' } });

    const hit = await profile(profileUrl(3));
    expect(hit.body).toEqual({ data: ENRICHED_3, status: 'ok', usage: { creditsConsumed: 0, usdCharged: 0, cached: true } });
    expect(peopleHeaders(hit.headers)).toEqual({ provider: 'primary', credits: '0', usd: '0.000000', cached: 'true' });
    expect(rig.pc.requests).toHaveLength(1);
    expect(await usageRows(rig)).toEqual([
      { action: 'profile', slot: 'primary', credits_consumed: 2, usd_cost: 0.04, usd_charged: 0.04, response_status: 200, social_url: profileUrl(3), lookup_id: null },
      { action: 'profile_cache_hit', slot: 'primary', credits_consumed: 0, usd_cost: 0, usd_charged: 0, response_status: 200, social_url: profileUrl(3), lookup_id: null },
    ]);
    expect((await charges(rig)).map((c) => c.nanos)).toEqual(['-40000000']);
  });

  it('URLs are normalized (lowercase host and path, trailing slash, query and fragment dropped) for the provider and the cache', async () => {
    const res = await profile('HTTPS://WWW.LinkedIn.COM/in/Person-3/?utm_source=x#about');
    expect(res.status).toBe(200);
    expect(rig.pc.requests[0]!.query.linkedin_profile_url).toBe(profileUrl(3));
    for (const variant of [profileUrl(3), `${profileUrl(3)}/`, `${profileUrl(3).toUpperCase()}//`, `${profileUrl(3)}?trk=1`]) {
      expect((await profile(variant)).body.usage.cached, variant).toBe(true);
    }
    expect(rig.pc.requests).toHaveLength(1);
    expect((await usageRows(rig)).map((r) => r.social_url)).toEqual(Array<string>(5).fill(profileUrl(3)));
  });

  it.each([['not a url'], ['ftp://www.linkedin.com/in/x'], ['https://user:pw@www.linkedin.com/in/x']])('%s: 400 with x-people-cached false', async (url) => {
    const res = await profile(url);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'validation_failed', details: [{ path: 'socialProfileUrl' }] });
    expect(peopleHeaders(res.headers)).toEqual(FREE_HEADERS('primary', 'false'));
    expect(rig.pc.requests).toEqual([]);
  });

  it('liveFetch "force" skips the cache, asks the vendor for a fresh fetch and is billed', async () => {
    await profile(profileUrl(3));
    const forced = await profile(profileUrl(3), 'force');
    expect(forced.body.usage).toEqual({ creditsConsumed: 2, usdCharged: 0.04, cached: false });
    expect(peopleHeaders(forced.headers).cached).toBe('false');
    expect(rig.pc.requests[1]!.query).toMatchObject({ use_cache: 'if-recent', live_fetch: 'force' });
    expect(await balance(rig)).toEqual({ balance: 10 - 0.08, reserved: 0 });
  });

  it('a profile the provider does not know: status not_found, data null, free; cached as such', async () => {
    const miss = await profile('https://www.linkedin.com/in/nobody-here');
    expect(miss.status).toBe(200);
    expect(miss.body).toEqual({ data: null, status: 'not_found', usage: { creditsConsumed: 0, usdCharged: 0, cached: false } });
    expect(peopleHeaders(miss.headers)).toEqual(FREE_HEADERS('primary', 'false'));
    const hit = await profile('https://www.linkedin.com/in/nobody-here');
    expect(hit.body).toEqual({ data: null, status: 'not_found', usage: { creditsConsumed: 0, usdCharged: 0, cached: true } });
    expect(rig.pc.requests).toHaveLength(1);
    expect((await usageRows(rig)).map((r) => [r.action, r.response_status, r.credits_consumed])).toEqual([
      ['profile', 404, 0],
      ['profile_cache_hit', 404, 0],
    ]);
    expect(await charges(rig)).toEqual([]);
  });

  it('a provider failure: 502 with x-people-cached false, nothing charged, a failed entry that is never served', async () => {
    rig.pc.fail(503);
    const failed = await profile(profileUrl(5));
    expect(failed.status).toBe(502);
    expect(typeof failed.body.error).toBe('string');
    expect(peopleHeaders(failed.headers)).toEqual(FREE_HEADERS('primary', 'false'));
    expect(await rig.p.sql('select result from people_profile_cache')).toEqual([{ result: 'failed' }]);
    const retried = await profile(profileUrl(5));
    expect(retried.body).toMatchObject({ status: 'ok', usage: { creditsConsumed: 2, cached: false } });
    expect(rig.pc.requests).toHaveLength(2);
    expect((await usageRows(rig)).map((r) => [r.action, r.response_status])).toEqual([
      ['profile_error', 503],
      ['profile', 200],
    ]);
  });

  it('a forced fetch that fails keeps the profile cached before it', async () => {
    await profile(profileUrl(3));
    rig.pc.fail('drop');
    expect((await profile(profileUrl(3), 'force')).status).toBe(502);
    expect((await profile(profileUrl(3))).body.usage.cached).toBe(true);
  });

  it('below the gate a cached profile is still served (free, no provider call)', async () => {
    await profile(profileUrl(3));
    await setBalance(rig, 0);
    const hit = await profile(profileUrl(3));
    expect(hit.status).toBe(200);
    expect(hit.body.usage).toEqual({ creditsConsumed: 0, usdCharged: 0, cached: true });
    expect((await profile(profileUrl(7))).status).toBe(402);
  });
});

describe('cache lifetimes (a moved clock)', () => {
  const people = () => rig.p.services.people;
  const at = (t0: Date, ms: number) => new Date(t0.getTime() + ms);

  it('ok: served for 30 days, fetched again after', async () => {
    const t0 = new Date('2030-01-01T00:00:00Z');
    await people().profile(rig.app, { socialProfileUrl: profileUrl(9) }, { now: t0 });
    expect((await people().profile(rig.app, { socialProfileUrl: profileUrl(9) }, { now: at(t0, 30 * DAY - SECOND) })).usage.cached).toBe(true);
    const after = await people().profile(rig.app, { socialProfileUrl: profileUrl(9) }, { now: at(t0, 30 * DAY + SECOND) });
    expect(after.usage).toEqual({ creditsConsumed: 2, usdCharged: 0.04, cached: false });
    expect(rig.pc.requests).toHaveLength(2);
  });

  it('not_found: served for 7 days, asked again after', async () => {
    const t0 = new Date('2030-02-01T00:00:00Z');
    const url = 'https://www.linkedin.com/in/gone-person';
    await people().profile(rig.app, { socialProfileUrl: url }, { now: t0 });
    expect(await people().profile(rig.app, { socialProfileUrl: url }, { now: at(t0, 7 * DAY - SECOND) })).toMatchObject({ status: 'not_found', usage: { cached: true } });
    expect(await people().profile(rig.app, { socialProfileUrl: url }, { now: at(t0, 7 * DAY + SECOND) })).toMatchObject({ status: 'not_found', usage: { cached: false } });
    expect(rig.pc.requests).toHaveLength(2);
  });

  it('failed: kept for an hour, never served; an ok entry past its lifetime is replaced by a failure', async () => {
    const t0 = new Date('2030-03-01T00:00:00Z');
    rig.pc.fail(500);
    await expect(people().profile(rig.app, { socialProfileUrl: profileUrl(11) }, { now: t0 })).rejects.toMatchObject({ status: 502 });
    const [entry] = await rig.p.sql('select result, expires_at from people_profile_cache');
    expect(entry).toEqual({ result: 'failed', expires_at: at(t0, HOUR) });
    expect((await people().profile(rig.app, { socialProfileUrl: profileUrl(11) }, { now: at(t0, 10 * SECOND) })).usage.cached).toBe(false);
    rig.pc.fail(500);
    await expect(people().profile(rig.app, { socialProfileUrl: profileUrl(11) }, { now: at(t0, 31 * DAY) })).rejects.toMatchObject({ status: 502 });
    expect((await rig.p.sql('select result from people_profile_cache'))[0].result).toBe('failed');
  });
});
