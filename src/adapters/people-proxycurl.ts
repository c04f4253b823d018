// A Proxycurl-style v2 people API (the one the spec's fields come from): person and company search, profile by
// professional-network URL, work-email lookup with a callback. The only module that knows its wire format: query
// parameters and answers in snake_case, dates as { day, month, year }, the callback's body.
import type {
  CallOptions,
  CompanyFilters,
  CompanyResult,
  Education,
  EmailLookups,
  EnrichedProfile,
  Experience,
  PeopleProvider,
  PersonFilters,
  PersonProfile,
  PersonResult,
  ProfileAnswer,
  SearchPage,
  SearchRequest,
} from '../people/provider.ts';
import { isRecord, malformed, num, str, vendorRequest, type VendorOptions } from './people-http.ts';

type Params = Record<string, string | number | undefined>;

/** Our filter names to the vendor's query parameters. */
const PERSON_PARAMS: Readonly<Record<keyof PersonFilters, string>> = {
  currentRoleTitle: 'current_role_title',
  pastRoleTitle: 'past_role_title',
  currentCompanyName: 'current_company_name',
  currentCompanyIndustry: 'current_company_industry',
  country: 'country',
  region: 'region',
  city: 'city',
  educationSchoolName: 'education_school_name',
  educationDegreeName: 'education_degree_name',
  educationFieldOfStudy: 'education_field_of_study',
};

const COMPANY_PARAMS: Readonly<Record<keyof CompanyFilters, string>> = {
  industry: 'industry',
  country: 'country',
  employeeCountMax: 'employee_count_max',
};

export class ProxycurlPeople implements PeopleProvider {
  readonly naturalLanguage = false;
  readonly #vendor: VendorOptions;

  constructor(vendor: VendorOptions) {
    this.#vendor = vendor;
  }

  async searchPerson(request: SearchRequest<PersonFilters>, opts: CallOptions): Promise<SearchPage<PersonResult>> {
    const body = await this.#get('/api/v2/search/person', { ...renamed(request.filters, PERSON_PARAMS), ...pageParams(request) }, opts);
    return searchPage(body, personResult);
  }

  async searchCompany(request: SearchRequest<CompanyFilters>, opts: CallOptions): Promise<SearchPage<CompanyResult>> {
    const body = await this.#get('/api/v2/search/company', { ...renamed(request.filters, COMPANY_PARAMS), ...pageParams(request) }, opts);
    return searchPage(body, companyResult);
  }

  /** `live`: the vendor fetches the profile afresh instead of answering from its own cache. */
  async profile(url: string, live: boolean, opts: CallOptions): Promise<ProfileAnswer> {
    const params: Params = { linkedin_profile_url: url, use_cache: live ? 'if-recent' : 'if-present', live_fetch: live ? 'force' : undefined };
    const answer = await vendorRequest(this.#url('/api/v2/linkedin', params), { method: 'GET', headers: this.#headers() }, { ...this.#limits(opts), accept: [404] });
    if (answer.status === 404) return { status: 'not_found' };
    if (!isRecord(answer.body)) throw malformed('the profile is not an object', answer.status);
    return { status: 'ok', profile: enrichedProfile(answer.body) };
  }

  readonly emailLookups: EmailLookups = {
    queue: async (url, callbackUrl, opts) => {
      const body = await this.#get('/api/linkedin/profile/email', { linkedin_profile_url: url, callback_url: callbackUrl }, opts);
      if (!isRecord(body)) throw malformed('the e-mail lookup answer is not an object', 200);
    },
    readCallback: readEmailCallback,
  };

  async #get(path: string, params: Params, opts: CallOptions): Promise<unknown> {
    return (await vendorRequest(this.#url(path, params), { method: 'GET', headers: this.#headers() }, this.#limits(opts))).body;
  }

  #url(path: string, params: Params): URL {
    const url = new URL(this.#vendor.baseUrl + path);
    for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== '') url.searchParams.set(name, String(value));
    return url;
  }

  #headers(): Record<string, string> {
    return { authorization: `Bearer ${this.#vendor.apiKey}` };
  }

  #limits(opts: CallOptions): { timeoutMs: number; signal: AbortSignal } {
    return { timeoutMs: this.#vendor.timeoutMs, signal: opts.signal };
  }
}

/** The callback's body: `{ email, status: "email_found" | "email_not_found" | ..., profile_url }`. */
function readEmailCallback(body: unknown): { email: string | null } {
  if (!isRecord(body)) return { email: null };
  const email = str(body.email);
  return { email: email && (body.status === undefined || body.status === 'email_found') ? email : null };
}

function renamed<F extends object>(filters: F, names: Readonly<Record<keyof F, string>>): Params {
  const params: Params = {};
  for (const [field, value] of Object.entries(filters) as [keyof F & string, string | number | undefined][]) params[names[field]] = value;
  return params;
}

/** Full profiles in the results (enrich_profiles), as the spec's results carry them. */
function pageParams(request: SearchRequest<unknown>): Params {
  return { page_size: request.pageSize, next_token: request.nextToken, enrich_profiles: 'enrich' };
}

function searchPage<R>(body: unknown, map: (item: Record<string, unknown>) => R | null): SearchPage<R> {
  if (!isRecord(body) || !Array.isArray(body.results)) throw malformed('no results array', 200);
  const results = body.results.filter(isRecord).map(map).filter((r): r is R => r !== null);
  return { results, nextToken: nextTokenOf(body.next_page), totalResultCount: num(body.total_result_count) ?? results.length };
}

/** The vendor's next_page is a URL of its own API; the cursor in it is all the caller needs. */
function nextTokenOf(nextPage: unknown): string | null {
  const page = str(nextPage);
  if (!page) return null;
  try {
    return new URL(page).searchParams.get('next_token');
  } catch {
    return null;
  }
}

function personResult(item: Record<string, unknown>): PersonResult | null {
  const url = str(item.linkedin_profile_url);
  if (!url) return null;
  const result: PersonResult = { socialProfileUrl: url, lastUpdated: str(item.last_updated) };
  if (isRecord(item.profile)) result.profile = personProfile(item.profile);
  return result;
}

function personProfile(p: Record<string, unknown>): PersonProfile {
  return {
    ...names(p),
    headline: str(p.headline),
    city: str(p.city),
    state: str(p.state),
    country: str(p.country_full_name) ?? str(p.country),
    experiences: list(p.experiences, experience),
    education: list(p.education, education),
    skills: strings(p.skills),
    languages: strings(p.languages),
    profilePicUrl: str(p.profile_pic_url),
  };
}

function enrichedProfile(p: Record<string, unknown>): EnrichedProfile {
  return {
    publicIdentifier: str(p.public_identifier),
    ...names(p),
    headline: str(p.headline),
    occupation: str(p.occupation),
    summary: str(p.summary),
    city: str(p.city),
    state: str(p.state),
    country: str(p.country_full_name) ?? str(p.country),
    experiences: list(p.experiences, experience),
    education: list(p.education, education),
  };
}

function names(p: Record<string, unknown>): Pick<PersonProfile, 'fullName' | 'firstName' | 'lastName'> {
  return { fullName: str(p.full_name), firstName: str(p.first_name), lastName: str(p.last_name) };
}

function companyResult(item: Record<string, unknown>): CompanyResult | null {
  const url = str(item.linkedin_profile_url);
  if (!url) return null;
  const p = isRecord(item.profile) ? item.profile : {};
  const size = Array.isArray(p.company_size) ? p.company_size : [];
  return {
    socialUrl: url,
    name: str(p.name),
    industry: str(p.industry),
    country: isRecord(p.hq) ? str(p.hq.country) : null,
    employeeCount: num(p.company_size_on_linkedin) ?? num(size[1]) ?? num(size[0]),
  };
}

function experience(e: Record<string, unknown>): Experience {
  return { title: str(e.title), company: str(e.company), location: str(e.location), startsAt: date(e.starts_at), endsAt: date(e.ends_at) };
}

function education(e: Record<string, unknown>): Education {
  return {
    school: str(e.school),
    degree: str(e.degree_name),
    schoolUrl: str(e.school_linkedin_profile_url),
    dates: { startsAt: date(e.starts_at), endsAt: date(e.ends_at) },
  };
}

/** { day, month, year } (any of them null) to YYYY-MM-DD, YYYY-MM or YYYY. */
function date(v: unknown): string | null {
  if (!isRecord(v)) return null;
  const [year, month, day] = [num(v.year), num(v.month), num(v.day)];
  if (year === null) return null;
  const pad = (n: number) => String(n).padStart(2, '0');
  return [String(year).padStart(4, '0'), month === null ? null : pad(month), month === null || day === null ? null : pad(day)].filter(Boolean).join('-');
}

function list<T>(v: unknown, map: (item: Record<string, unknown>) => T): T[] {
  return Array.isArray(v) ? v.filter(isRecord).map(map) : [];
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [];
}
