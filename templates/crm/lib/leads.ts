// Lead search: the people vendor's person and company searches for a workspace member, with the credits each page
// cost (the app owner pays: the site shows it before anyone saves a result), and which results the workspace already
// has. Pages continue with next_token. A search for a lead list adds its cost to the list's credits_spent.
import type { Ctx } from './ctx.ts';
import { HttpError, eq, inList, rows, text, uuid } from './http.ts';
import { creditsOf, normalizeUrl } from './people.ts';
import { requireMember } from './workspace.ts';

export const PERSON_FILTERS = [
  'currentRoleTitle',
  'pastRoleTitle',
  'currentCompanyName',
  'currentCompanyIndustry',
  'country',
  'region',
  'city',
  'educationSchoolName',
  'educationDegreeName',
  'educationFieldOfStudy',
] as const;
export const COMPANY_FILTERS = ['industry', 'country', 'employeeCountMax'] as const;

export interface SearchInput {
  workspaceId: string;
  userId: string;
  /** What goes to ctx.people: query and/or filters, pageSize, nextToken. */
  request: Record<string, unknown>;
  leadListId: string | undefined;
}

/**
 * The search a request asks for: a natural-language `query` (a semantic provider answers it) and/or `filters`
 * (structured: only the names the vendor knows), `page_size` 1-100 and `next_token` from the previous page.
 */
export async function searchInput(ctx: Ctx, input: Record<string, unknown>, allowed: readonly string[]): Promise<SearchInput> {
  const workspaceId = uuid(input, 'workspace_id');
  const query = text(input, 'query', { optional: true, max: 2000 });
  const raw = input.filters ?? {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new HttpError(400, 'invalid_field', 'filters must be an object.');
  const filters: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (!allowed.includes(name)) throw new HttpError(400, 'invalid_field', `Unknown filter ${name}: use ${allowed.join(', ')}.`);
    if (name === 'employeeCountMax') {
      if (!Number.isInteger(value) || (value as number) < 1) throw new HttpError(400, 'invalid_field', 'employeeCountMax must be a positive integer.');
      filters[name] = value;
    } else if (value !== undefined && value !== null && value !== '') {
      filters[name] = text(raw as Record<string, unknown>, name, { max: 500 });
    }
  }
  if (!query && !Object.keys(filters).length) throw new HttpError(400, 'missing_field', 'Give a query or at least one filter.');
  const pageSize = input.page_size ?? 10;
  if (!Number.isInteger(pageSize) || (pageSize as number) < 1 || (pageSize as number) > 100) throw new HttpError(400, 'invalid_field', 'page_size must be an integer from 1 to 100.');
  const nextToken = text(input, 'next_token', { optional: true, max: 4000 });
  const leadListId = uuid(input, 'lead_list_id', { optional: true });
  const member = await requireMember(ctx, workspaceId);
  if (leadListId) {
    const [list] = rows(await ctx.data.from('lead_lists').select<{ id: string }>('id', { query: `id=${eq(leadListId)}&workspace_id=${eq(workspaceId)}` }), 'lead list');
    if (!list) throw new HttpError(404, 'not_found', `lead list ${leadListId} not found.`);
  }
  return {
    workspaceId,
    userId: member.user_id,
    request: { ...(query ? { query } : {}), ...filters, pageSize, ...(nextToken ? { nextToken } : {}) },
    leadListId,
  };
}

/** The answer's page cursor: the next_token inside the platform's nextPage URL. */
export function nextTokenOf(nextPage: unknown): string | null {
  if (typeof nextPage !== 'string' || !URL.canParse(nextPage)) return null;
  return new URL(nextPage).searchParams.get('next_token');
}

/** Adds a search's credits to its lead list (read then written: a display figure, not a ledger). */
export async function chargeList(ctx: Ctx, leadListId: string | undefined, credits: number): Promise<void> {
  if (!leadListId || !credits) return;
  const [list] = rows(await ctx.data.from('lead_lists').select<{ credits_spent: string | number }>('credits_spent', { query: `id=${eq(leadListId)}` }), 'lead list');
  rows(await ctx.data.from('lead_lists').update({ credits_spent: Number(list?.credits_spent ?? 0) + credits }, `id=${eq(leadListId)}`), 'lead list');
}

/** Ids of the workspace's rows whose LinkedIn URL is among `urls`, by normalized URL. */
export async function savedByUrl(ctx: Ctx, table: 'contacts' | 'companies', workspaceId: string, urls: string[]): Promise<Map<string, string>> {
  const normalized = [...new Set(urls.map(normalizeUrl))];
  if (!normalized.length) return new Map();
  const found = rows(
    await ctx.data.from(table).select<{ id: string; linkedin_url: string }>('id,linkedin_url', { query: `workspace_id=${eq(workspaceId)}&linkedin_url=${inList(normalized)}` }),
    table,
  );
  return new Map(found.map((r) => [r.linkedin_url, r.id]));
}

/** The shared part of both searches' answers. */
export function searchAnswer(answer: any, results: unknown[]): Record<string, unknown> {
  return {
    results,
    next_token: nextTokenOf(answer?.data?.nextPage),
    total: answer?.data?.totalResultCount ?? results.length,
    credits: creditsOf(answer),
    usd: Number(answer?.usage?.usdCharged ?? 0),
  };
}

export interface ListContact {
  id: string;
  workspace_id: string;
  full_name: string;
  email: string | null;
  email_status: 'unknown' | 'pending' | 'found' | 'not_found';
  email_lookup_id: string | null;
  phone: string | null;
  title: string | null;
  linkedin_url: string | null;
  location: string | null;
  enrichment: Record<string, unknown> | null;
  companies: { name: string; domain: string | null } | null;
}

/** A lead list's contacts with their company, in the order they were added (read as the caller). */
export async function listContacts(ctx: Ctx, leadListId: string): Promise<ListContact[]> {
  const entries = rows(
    await ctx.data.from('lead_list_entries').select<{ added_at: string; contacts: ListContact | null }>('added_at,contacts(*,companies(name,domain))', {
      query: `lead_list_id=${eq(leadListId)}`,
    }),
    'lead list entries',
  );
  // People saved together share added_at: by name within one save.
  entries.sort((a, b) => a.added_at.localeCompare(b.added_at) || (a.contacts?.full_name ?? '').localeCompare(b.contacts?.full_name ?? ''));
  return entries.flatMap((e) => (e.contacts ? [e.contacts] : []));
}
