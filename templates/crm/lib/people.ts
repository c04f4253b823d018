// The people vendor (ctx.people: searches, profiles, work-email lookups; billed to the app owner's credit) in the
// CRM's terms: what a profile or a company result says about a contact's or company's columns, and how a refresh
// merges it into a row without overwriting what a person typed.
import { HttpError } from './http.ts';

export interface Experience {
  title?: string | null;
  company?: string | null;
  startsAt?: string | null;
  endsAt?: string | null;
}

/** A profile (people profile's data) or a search result's profile: the fields the CRM reads. */
export interface PersonProfile {
  fullName?: string | null;
  firstName?: string | null;
  lastName?: string | null;
  headline?: string | null;
  occupation?: string | null;
  summary?: string | null;
  city?: string | null;
  country?: string | null;
  experiences?: Experience[];
}

export interface PersonResult {
  socialProfileUrl: string;
  profile?: PersonProfile | null;
}

export interface CompanyResult {
  socialUrl: string;
  name?: string | null;
  industry?: string | null;
  country?: string | null;
  employeeCount?: number | null;
}

export interface Usage {
  creditsConsumed: number;
  usdCharged?: number;
}

/** Credits of a people call's answer (0 when it reports none, e.g. a free cache hit). */
export const creditsOf = (answer: { usage?: Usage } | null | undefined): number => Number(answer?.usage?.creditsConsumed ?? 0);

/** A profile URL as the vendor and the platform normalize it: lower-case, no query, fragment or trailing slash. */
export function normalizeUrl(url: string): string {
  try {
    const u = new URL(url.trim());
    return `${u.protocol}//${u.host}${u.pathname}`.toLowerCase().replace(/\/+$/, '');
  } catch {
    throw new HttpError(400, 'invalid_field', `${url} is not a URL.`);
  }
}

/** The job the person holds now: the first experience without an end, else the first listed. */
const currentJob = (p: PersonProfile): Experience | undefined => p.experiences?.find((e) => !e.endsAt) ?? p.experiences?.[0];

export interface ContactFields {
  full_name: string | null;
  title: string | null;
  location: string | null;
  linkedin_url: string;
  /** The current employer's name (a company row is found or made for it). */
  company_name: string | null;
}

export function contactFields(url: string, p: PersonProfile): ContactFields {
  const job = currentJob(p);
  const name = p.fullName ?? ([p.firstName, p.lastName].filter(Boolean).join(' ') || null);
  return {
    full_name: name,
    title: job?.title ?? p.occupation?.split(' at ')[0] ?? p.headline ?? null,
    location: [p.city, p.country].filter(Boolean).join(', ') || null,
    linkedin_url: normalizeUrl(url),
    company_name: job?.company ?? null,
  };
}

/** Headcount as the usual size bands. */
function sizeBand(n: number | null | undefined): string | null {
  if (typeof n !== 'number' || !Number.isFinite(n) || n <= 0) return null;
  const bands: Array<[number, string]> = [[10, '1-10'], [50, '11-50'], [200, '51-200'], [500, '201-500'], [1000, '501-1000'], [5000, '1001-5000'], [10000, '5001-10000']];
  return bands.find(([max]) => n <= max)?.[1] ?? '10001+';
}

export function companyFields(c: CompanyResult): Record<string, string | null> {
  return { name: c.name ?? null, industry: c.industry ?? null, location: c.country ?? null, size: sizeBand(c.employeeCount), linkedin_url: c.socialUrl ? normalizeUrl(c.socialUrl) : null };
}

const sameName = (a: string | null | undefined, b: string | null | undefined): boolean =>
  !!a && !!b && a.trim().replace(/\s+/g, ' ').toLowerCase() === b.trim().replace(/\s+/g, ' ').toLowerCase();

/** The search result naming this person (structured searches have no name filter, so the CRM matches the name). */
export const personNamed = (results: PersonResult[], name: string): PersonResult | undefined => results.find((r) => sameName(r.profile?.fullName, name));

/** The company result of this name, or whose page is the company's domain's name (acme.com -> /company/acme). */
export function companyMatching(results: CompanyResult[], name: string, domain: string | null): CompanyResult | undefined {
  const slug = domain?.split('.')[0]?.toLowerCase();
  return results.find((r) => sameName(r.name, name)) ?? (slug ? results.find((r) => r.socialUrl.toLowerCase().replace(/\/+$/, '').endsWith(`/company/${slug}`)) : undefined);
}

/**
 * The columns to change: a found value goes where the row is empty, or where the row still holds what the previous
 * enrichment put there (a refresh); a value someone typed over the vendor's stays.
 */
export function fillPatch(row: Record<string, unknown>, found: Record<string, unknown>, previous: Record<string, unknown> | null | undefined): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(found)) {
    if (value === null || value === undefined || value === '' || !(key in row)) continue;
    const current = row[key];
    const empty = current === null || current === undefined || current === '';
    if ((empty || (previous && current === previous[key])) && current !== value) patch[key] = value;
  }
  return patch;
}

/** What enrichment records on the row's `enrichment` column. */
export function enrichmentRecord(status: 'ok' | 'not_found', fields: Record<string, unknown> | null, extra: Record<string, unknown>, credits: number): Record<string, unknown> {
  return { provider: 'people', status, fetched_at: new Date().toISOString(), credits, fields, ...extra };
}
