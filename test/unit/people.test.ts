// People search's pure parts: configuration parsing, URL normalization, the description of filters, pricing, the
// flat error shape and the reply headers.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { normalizeProfileUrl, describeCompanies, describePeople } from '../../src/people/text.ts';
import { flatCharge, searchCharge } from '../../src/people/pricing.ts';
import { peopleError } from '../../src/core/error-shapes.ts';
import { AppError, errors } from '../../src/core/errors.ts';
import { peopleErrors } from '../../src/people/errors.ts';
import { ProviderFailure } from '../../src/people/provider.ts';
import { peopleErrorHeaders, peopleHeaders } from '../../src/people/headers.ts';

const people = (env: Record<string, string> = {}) => loadConfig(env).people;

describe('people configuration', () => {
  it('defaults: on, no providers, actions on primary and queries on secondary, the spec\'s typical prices, a $0.05 gate, a day to answer', () => {
    expect(people()).toEqual({
      enabled: true,
      emailLookupEnabled: true,
      slots: { primary: undefined, secondary: undefined },
      routing: { search_person: 'primary', search_company: 'primary', query: 'secondary', profile: 'primary', profile_email: 'primary' },
      minBalanceUsd: 0.05,
      prices: {
        search: { credits: 7, usd: 0.0084, includedResults: 10, extraResultCredits: 1, extraResultUsd: 0.0012 },
        profile: { credits: 2, usd: 0.04 },
        emailQueue: { credits: 3, usd: 0.06 },
        emailResolved: { credits: 1, usd: 0.02 },
      },
      timeoutMs: 30_000,
      emailLookupDeadlineSeconds: 86_400,
    });
  });

  it('slots: URL (trailing slash dropped), key and kind', () => {
    const c = people({ SVC_PEOPLE_PRIMARY_URL: 'https://pc.example/', SVC_PEOPLE_PRIMARY_KEY: 'k1', SVC_PEOPLE_SECONDARY_URL: 'https://s.example', SVC_PEOPLE_SECONDARY_KEY: 'k2', SVC_PEOPLE_SECONDARY_KIND: 'proxycurl' });
    expect(c.slots).toEqual({ primary: { kind: 'proxycurl', baseUrl: 'https://pc.example', apiKey: 'k1' }, secondary: { kind: 'proxycurl', baseUrl: 'https://s.example', apiKey: 'k2' } });
  });

  it('routing and price overrides apply over the defaults', () => {
    const c = people({ SVC_PEOPLE_ROUTING: ' query=primary , profile=secondary', SVC_PEOPLE_PRICES: '{"search":{"usd":0.01},"emailResolved":{"credits":2}}' });
    expect(c.routing).toMatchObject({ query: 'primary', profile: 'secondary', search_person: 'primary' });
    expect(c.prices.search).toEqual({ credits: 7, usd: 0.01, includedResults: 10, extraResultCredits: 1, extraResultUsd: 0.0012 });
    expect(c.prices.emailResolved).toEqual({ credits: 2, usd: 0.02 });
  });

  it.each([
    [{ SVC_PEOPLE_PRIMARY_URL: 'https://pc.example' }, 'SVC_PEOPLE_PRIMARY_KEY is required'],
    [{ SVC_PEOPLE_ROUTING: 'profile=tertiary' }, "SVC_PEOPLE_ROUTING: 'profile=tertiary'"],
    [{ SVC_PEOPLE_ROUTING: 'lookup=primary' }, 'SVC_PEOPLE_ROUTING'],
    [{ SVC_PEOPLE_PRICES: '{' }, 'SVC_PEOPLE_PRICES: not valid JSON'],
    [{ SVC_PEOPLE_PRICES: '{"profile":{"usd":-1}}' }, 'SVC_PEOPLE_PRICES: profile.usd'],
    [{ SVC_PEOPLE_PRICES: '{"refund":{}}' }, 'SVC_PEOPLE_PRICES'],
    [{ SVC_PEOPLE_SECONDARY_KIND: 'pdl' }, 'SVC_PEOPLE_SECONDARY_KIND'],
  ])('%j is refused', (env, words) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(words);
  });
});

describe('profile URLs', () => {
  it.each([
    ['https://www.linkedin.com/in/jane-doe', 'https://www.linkedin.com/in/jane-doe'],
    ['HTTPS://WWW.LINKEDIN.COM/in/Jane-Doe/', 'https://www.linkedin.com/in/jane-doe'],
    ['  https://www.linkedin.com/in/jane-doe///?trk=x&utm=y#top ', 'https://www.linkedin.com/in/jane-doe'],
    ['http://LinkedIn.com:8080/IN/Jane', 'http://linkedin.com:8080/in/jane'],
    ['https://www.linkedin.com/', 'https://www.linkedin.com'],
  ])('%s -> %s', (raw, normalized) => {
    expect(normalizeProfileUrl(raw)).toEqual({ url: normalized });
  });

  it.each([
    ['linkedin.com/in/jane', 'is not a URL'],
    ['mailto:jane@example.com', 'must be an http(s) URL'],
    ['https://a:b@www.linkedin.com/in/jane', 'may not carry credentials'],
  ])('%s: %s', (raw, invalid) => {
    expect(normalizeProfileUrl(raw)).toEqual({ invalid });
  });
});

describe('descriptions of filters', () => {
  it('every person filter, in words; none: empty', () => {
    expect(
      describePeople({
        currentRoleTitle: 'CTO OR VP Engineering',
        currentCompanyName: 'Acme',
        currentCompanyIndustry: 'Fintech',
        pastRoleTitle: 'Engineer',
        educationSchoolName: 'MIT',
        educationDegreeName: 'PhD',
        educationFieldOfStudy: 'Physics',
        city: 'Berlin',
        region: 'Berlin',
        country: 'Germany',
      }),
    ).toBe('People working as CTO OR VP Engineering at Acme in the Fintech industry who previously worked as Engineer who studied at MIT with a PhD degree in Physics located in Berlin, Berlin, Germany');
    expect(describePeople({})).toBe('');
  });

  it('companies', () => {
    expect(describeCompanies({ industry: 'Retail', country: 'France', employeeCountMax: 200 })).toBe('Companies in the Retail industry with at most 200 employees located in France');
  });
});

describe('pricing', () => {
  const prices = loadConfig({}).people.prices;
  it.each([
    [0, { credits: 0, nanos: 0 }],
    [1, { credits: 7, nanos: 8_400_000 }],
    [10, { credits: 7, nanos: 8_400_000 }],
    [11, { credits: 8, nanos: 9_600_000 }],
    [100, { credits: 97, nanos: 116_400_000 }],
  ])('a page of %i results costs %j', (n, charge) => {
    expect(searchCharge(prices, n)).toEqual(charge);
  });

  it('flat prices', () => {
    expect(flatCharge(prices.profile)).toEqual({ credits: 2, nanos: 40_000_000 });
  });
});

describe('the flat error shape', () => {
  it.each([
    [errors.authRequired(), 403, { error: 'forbidden' }],
    [errors.invalidToken(), 403, { error: 'forbidden' }],
    [errors.wrongCredential(['platform', 'service']), 403, { error: 'forbidden' }],
    [errors.otherApp(), 403, { error: 'forbidden' }],
    [errors.notFound("App 'x'"), 404, { error: 'app_not_found' }],
    [peopleErrors.insufficientCredits('primary', 0.05), 402, { error: 'insufficient_credits' }],
    [peopleErrors.disabled('primary'), 503, { error: 'people_disabled' }],
    [peopleErrors.unavailable('primary'), 503, { error: 'people_unavailable' }],
    [peopleErrors.notRegistered('secondary'), 503, { error: 'provider_not_registered', slot: 'secondary' }],
    [peopleErrors.actionUnsupported('secondary', 'profile'), 503, { error: 'provider_action_unsupported', slot: 'secondary' }],
  ])('%s -> %i %j', (err, status, body) => {
    expect(peopleError(err)).toEqual({ status, body });
  });

  it('502: a transient description; others: the code with message and details', () => {
    expect(peopleError(peopleErrors.upstream('primary', new ProviderFailure('The people provider answered 500: boom', 500)))).toEqual({
      status: 502,
      body: { error: 'The people provider answered 500: boom Retry with backoff; nothing was charged.' },
    });
    expect(peopleError(errors.validation('Invalid x.', [{ path: 'x', message: 'bad' }]))).toEqual({
      status: 400,
      body: { error: 'validation_failed', message: 'Invalid x.', details: [{ path: 'x', message: 'bad' }] },
    });
    expect(peopleError(new AppError(423, 'APP_PAUSED', 'Paused.', 'Restore.'))).toEqual({ status: 423, body: { error: 'app_paused', message: 'Paused.' } });
  });
});

describe('reply headers', () => {
  it('six decimals of USD; cached on profile only', () => {
    expect(peopleHeaders({ provider: 'secondary', creditsConsumed: 22, usdCharged: 0.0264 })).toEqual({
      'x-people-provider': 'secondary',
      'x-people-credits-consumed': '22',
      'x-people-usd-charged': '0.026400',
    });
    expect(peopleHeaders({ provider: 'primary', creditsConsumed: 0, usdCharged: 0, cached: true })['x-people-cached']).toBe('true');
  });

  it('errors: zero, the routed slot when known, else primary', () => {
    expect(peopleErrorHeaders(peopleErrors.notRegistered('secondary'), true)).toEqual({
      'x-people-provider': 'secondary',
      'x-people-credits-consumed': '0',
      'x-people-usd-charged': '0.000000',
      'x-people-cached': 'false',
    });
    expect(peopleErrorHeaders(errors.authRequired(), false)['x-people-provider']).toBe('primary');
  });
});
