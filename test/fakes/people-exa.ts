/**
 * A fake Exa-style semantic search API on loopback (the natural-language slot of people search): POST /search with
 * { query, numResults, category } and an x-api-key header. Deterministic: the people of the Proxycurl fake, as the
 * web pages a semantic search finds, `numResults` of them unless the query mentions "nobody" (no results); every
 * answer reports costDollars.total = 0.005.
 */
import { PEOPLE_COUNT, profileUrl, startFakeVendor, type FakeVendor } from './people-proxycurl.ts';

export const EXA_COST_USD = 0.005;

export function startFakeExa(key = 'exa-test-key'): Promise<FakeVendor> {
  return startFakeVendor(key, (req) => {
    if (req.method !== 'POST' || req.path !== '/search') return { status: 404, body: { error: `no route ${req.path}` } };
    const body = req.body as { query: string; numResults: number; category: string };
    const count = /nobody/i.test(body.query) ? 0 : Math.min(body.numResults, PEOPLE_COUNT);
    const results = Array.from({ length: count }, (_, k) =>
      body.category === 'company'
        ? { id: `c${k}`, url: `https://www.linkedin.com/company/company-${k + 1}`, title: `Company ${k + 1} | LinkedIn` }
        : { id: `p${k}`, url: profileUrl(k + 1), title: `Person Number${k + 1} - CTO - Company 1 | LinkedIn`, author: `Person Number${k + 1}`, publishedDate: '2026-01-02T00:00:00.000Z' },
    );
    return { status: 200, body: { requestId: 'req-1', resolvedSearchType: 'neural', results, costDollars: { total: EXA_COST_USD } } };
  });
}
