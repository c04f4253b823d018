// Enrichment of one contact or company by the people vendor, shared by the buttons (contact-enrich, company-enrich)
// and the daily refresh (enrich-stale). What was found is recorded on the row (enrichment, enriched_at, empty or
// vendor-filled columns) and on the timeline as a 'system' entry; a miss is recorded too, so the refresh does not
// pay for the same miss every day.
import type { Ctx, DataClient } from './ctx.ts';
import { HttpError, eq, rows } from './http.ts';
import { companyIdFor } from './contacts.ts';
import {
  companyFields,
  companyMatching,
  contactFields,
  creditsOf,
  enrichmentRecord,
  fillPatch,
  personNamed,
  type CompanyResult,
  type PersonProfile,
  type PersonResult,
} from './people.ts';
import { addActivities } from './timeline.ts';

export interface ContactRow {
  id: string;
  workspace_id: string;
  full_name: string;
  company_id: string | null;
  linkedin_url: string | null;
  enrichment: { fields?: Record<string, unknown> } | null;
  [column: string]: unknown;
}

export interface CompanyRow {
  id: string;
  workspace_id: string;
  name: string;
  domain: string | null;
  enrichment: { fields?: Record<string, unknown> } | null;
  [column: string]: unknown;
}

export interface Enriched<T> {
  status: 'ok' | 'not_found';
  row: T;
  credits: number;
  changed: string[];
}

/** Results of a structured search by employer, to find a contact who has no LinkedIn URL yet. */
const SEARCH_PAGE = 25;

/** The contact's profile URL: the row's, else found by name among the people of their company. */
async function profileUrlOf(ctx: Ctx, db: DataClient, contact: ContactRow): Promise<{ url: string | null; credits: number }> {
  if (contact.linkedin_url) return { url: contact.linkedin_url, credits: 0 };
  const [company] = contact.company_id ? rows(await db.from('companies').select<{ name: string }>('name', { query: `id=${eq(contact.company_id)}` }), 'company') : [];
  if (!company) throw new HttpError(409, 'nothing_to_search', 'Add the contact\'s LinkedIn URL or company first: the people vendor finds a person by either.');
  const found = await ctx.people.searchPerson({ currentCompanyName: company.name, pageSize: SEARCH_PAGE });
  const match = personNamed((found?.data?.results ?? []) as PersonResult[], contact.full_name);
  return { url: match?.socialProfileUrl ?? null, credits: creditsOf(found) };
}

/**
 * Enriches a contact (`db` is the caller's client: ctx.data for a member, ctx.asApp.data for a cron). `force` asks the
 * vendor afresh instead of the platform's 30-day profile cache (the refresh).
 */
export async function enrichContact(ctx: Ctx, db: DataClient, contact: ContactRow, opts: { userId: string | null; force?: boolean }): Promise<Enriched<ContactRow>> {
  const { url, credits: searchCredits } = await profileUrlOf(ctx, db, contact);
  let credits = searchCredits;
  let profile: PersonProfile | null = null;
  if (url) {
    const answer = await ctx.people.profile({ socialProfileUrl: url, ...(opts.force ? { liveFetch: 'force' } : {}) });
    credits += creditsOf(answer);
    if (answer?.status === 'ok' && answer.data) profile = answer.data as PersonProfile;
  }
  let patch: Record<string, unknown>;
  if (profile && url) {
    const { company_name, ...fields } = contactFields(url, profile);
    patch = fillPatch(contact, fields, contact.enrichment?.fields);
    // A contact without a company gets their current employer's (found or made in the workspace).
    if (!contact.company_id && company_name) patch.company_id = await companyIdFor(db, contact.workspace_id, opts.userId, { name: company_name });
    const extra = { source_url: url, headline: profile.headline ?? null, summary: profile.summary ?? null, experiences: (profile.experiences ?? []).slice(0, 5) };
    patch.enrichment = enrichmentRecord('ok', { ...fields, company_name }, extra, credits);
  } else {
    patch = { enrichment: enrichmentRecord('not_found', null, { source_url: url }, credits) };
  }
  return saveEnrichment(db, 'contacts', contact, patch, { userId: opts.userId, found: profile !== null, credits, miss: `No profile found${url ? ` at ${url}` : ''}.` });
}

/** Company results per search (a semantic search by name: the vendors' company search has no name filter). */
const COMPANY_PAGE = 10;

/** Enriches a company by its name and domain. */
export async function enrichCompany(ctx: Ctx, db: DataClient, company: CompanyRow, opts: { userId: string | null }): Promise<Enriched<CompanyRow>> {
  const query = [company.name, company.domain].filter(Boolean).join(' ');
  const answer = await ctx.people.searchCompany({ query, pageSize: COMPANY_PAGE });
  const credits = creditsOf(answer);
  const match = companyMatching((answer?.data?.results ?? []) as CompanyResult[], company.name, company.domain);
  let patch: Record<string, unknown>;
  if (match) {
    const { name: _name, ...fields } = companyFields(match);
    patch = fillPatch(company, fields, company.enrichment?.fields);
    patch.enrichment = enrichmentRecord('ok', fields, { query, employee_count: match.employeeCount ?? null }, credits);
  } else {
    patch = { enrichment: enrichmentRecord('not_found', null, { query }, credits) };
  }
  return saveEnrichment(db, 'companies', company, patch, { userId: opts.userId, found: match !== undefined, credits, miss: `No company matched "${query}".` });
}

/** The row updated with what was found (or the miss), and a 'system' entry on its timeline saying what changed. */
async function saveEnrichment<T extends { id: string; workspace_id: string }>(
  db: DataClient,
  table: 'contacts' | 'companies',
  target: T,
  patch: Record<string, unknown>,
  how: { userId: string | null; found: boolean; credits: number; miss: string },
): Promise<Enriched<T>> {
  const now = new Date().toISOString();
  const [row] = rows(await db.from(table).update<T>({ ...patch, enriched_at: now, updated_at: now }, `id=${eq(target.id)}`), table);
  const changed = Object.keys(patch).filter((k) => k !== 'enrichment');
  await addActivities(db, [
    {
      workspace_id: target.workspace_id,
      user_id: how.userId,
      kind: 'system',
      ...(table === 'contacts' ? { contact_id: target.id } : { company_id: target.id }),
      subject: how.found ? 'Enriched from the people vendor' : 'Enrichment found nothing',
      body: `${how.found ? `Updated: ${changed.length ? changed.join(', ') : 'nothing new'}.` : how.miss} ${how.credits} credits.`,
    },
  ]);
  return { status: how.found ? 'ok' : 'not_found', row: row ?? target, credits: how.credits, changed };
}
