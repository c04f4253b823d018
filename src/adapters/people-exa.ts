// A semantic (neural) web search API in Exa's style, as the natural-language slot of people search: POST /search
// with { query, numResults, category } and an x-api-key header; results are pages of the professional network
// ({ url, title, author, publishedDate }) and the call's price in costDollars.total. It searches people and
// companies only (no profiles, no e-mail lookups) and has no cursor: every answer is one page.
import type { CallOptions, CompanyFilters, CompanyResult, PeopleProvider, PersonFilters, PersonResult, SearchPage, SearchRequest } from '../people/provider.ts';
import { isRecord, malformed, num, str, vendorRequest, type VendorOptions } from './people-http.ts';

type Category = 'linkedin profile' | 'company';

export class ExaPeople implements PeopleProvider {
  readonly naturalLanguage = true;
  readonly #vendor: VendorOptions;

  constructor(vendor: VendorOptions) {
    this.#vendor = vendor;
  }

  async searchPerson(request: SearchRequest<PersonFilters>, opts: CallOptions): Promise<SearchPage<PersonResult>> {
    return this.#search(request, 'linkedin profile', opts, (r) => {
      const { name, rest } = titleParts(r);
      return { socialProfileUrl: r.url, profile: { fullName: str(r.author) ?? name, headline: rest }, lastUpdated: str(r.publishedDate) };
    });
  }

  async searchCompany(request: SearchRequest<CompanyFilters>, opts: CallOptions): Promise<SearchPage<CompanyResult>> {
    return this.#search(request, 'company', opts, (r) => ({ socialUrl: r.url, name: titleParts(r).name }));
  }

  async #search<R>(request: SearchRequest<unknown>, category: Category, opts: CallOptions, map: (r: Record<string, unknown> & { url: string }) => R): Promise<SearchPage<R>> {
    // The page after the last is empty: a cursor from another provider must not restart the search at its beginning.
    if (request.nextToken) return { results: [], nextToken: null, totalResultCount: 0 };
    const answer = await vendorRequest(
      new URL(`${this.#vendor.baseUrl}/search`),
      {
        method: 'POST',
        headers: { 'x-api-key': this.#vendor.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ query: request.query ?? request.description, numResults: request.pageSize, category, type: 'auto' }),
      },
      { timeoutMs: this.#vendor.timeoutMs, signal: opts.signal },
    );
    const body = answer.body;
    if (!isRecord(body) || !Array.isArray(body.results)) throw malformed('no results array', answer.status);
    const results = body.results.filter((r): r is Record<string, unknown> & { url: string } => isRecord(r) && typeof r.url === 'string').map(map);
    const usd = isRecord(body.costDollars) ? num(body.costDollars.total) : null;
    return { results, nextToken: null, totalResultCount: results.length, ...(usd === null ? {} : { usd }) };
  }
}

/** "Jane Doe - Head of Sales - Acme | LinkedIn": the name before the first dash, the rest as a headline. */
function titleParts(r: Record<string, unknown>): { name: string | null; rest: string | null } {
  const title = (str(r.title) ?? '').replace(/(?<!\s)\s*\|[^|]*$/, '');
  const [name, ...rest] = title.split(/(?<!\s)\s+[-–]\s+/);
  return { name: str(name?.trim()), rest: str(rest.join(' - ').trim()) };
}
