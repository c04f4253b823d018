// Request texts people search derives: the normalized profile URL (the cache key, and what providers are sent), and
// the natural-language description of structured filters (what a semantic provider searches for).
import type { CompanyFilters, PersonFilters } from './provider.ts';

/**
 * Lowercase scheme, host and path, trailing slashes trimmed, query and fragment stripped (spec: Profile body). A
 * string that is not an absolute http(s) URL without credentials gives the reason instead.
 */
export function normalizeProfileUrl(raw: string): { url: string } | { invalid: string } {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return { invalid: 'is not a URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { invalid: 'must be an http(s) URL' };
  if (url.username || url.password) return { invalid: 'may not carry credentials' };
  return { url: `${url.protocol}//${url.host.toLowerCase()}${url.pathname.toLowerCase().replace(/(?<!\/)\/+$/, '')}` };
}

type Phrase<F> = readonly [keyof F, (value: string) => string];

const PERSON_PHRASES: readonly Phrase<PersonFilters>[] = [
  ['currentRoleTitle', (v) => `working as ${v}`],
  ['currentCompanyName', (v) => `at ${v}`],
  ['currentCompanyIndustry', (v) => `in the ${v} industry`],
  ['pastRoleTitle', (v) => `who previously worked as ${v}`],
  ['educationSchoolName', (v) => `who studied at ${v}`],
  ['educationDegreeName', (v) => `with a ${v} degree`],
  ['educationFieldOfStudy', (v) => `in ${v}`],
];

const COMPANY_PHRASES: readonly Phrase<CompanyFilters>[] = [
  ['industry', (v) => `in the ${v} industry`],
  ['employeeCountMax', (v) => `with at most ${v} employees`],
];

/** "People working as CTO at Acme, located in Berlin, Germany": empty when no filter is given. */
export function describePeople(filters: PersonFilters): string {
  return describe('People', PERSON_PHRASES, filters, [filters.city, filters.region, filters.country]);
}

export function describeCompanies(filters: CompanyFilters): string {
  return describe('Companies', COMPANY_PHRASES, filters, [filters.country]);
}

function describe<F extends object>(subject: string, phrases: readonly Phrase<F>[], filters: F, place: readonly (string | undefined)[]): string {
  const parts = phrases.flatMap(([field, phrase]) => {
    const value = filters[field];
    return value === undefined || value === '' ? [] : [phrase(String(value))];
  });
  const where = place.filter((p): p is string => !!p);
  if (where.length > 0) parts.push(`located in ${where.join(', ')}`);
  return parts.length === 0 ? '' : `${subject} ${parts.join(' ')}`;
}
