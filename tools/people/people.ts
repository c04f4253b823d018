import { z } from 'zod';
import { type HttpBinding, type HttpMethod, type WireResponse } from '../../src/core/define.ts';
import { toolsUsing } from '../define.ts';
import { AppIdSchema } from '../../src/apps/types.ts';
import { PEOPLE_SLOTS } from '../../src/config.ts';
import { peopleErrorHeaders, peopleHeaders } from '../../src/people/headers.ts';
import { guideRef } from '../shared.ts';

type Uses = 'people';
const defineTool = toolsUsing<Uses>();

const GUIDE = guideRef('people');
/** Calls that spend credits are the app owner's: a service key of the app or its owner's platform key (rule 3). */
const AUTH = ['platform', 'service'] as const;

const Filter = z.string().trim().min(1).max(500);
const ProfileUrl = z.string().min(1).max(2048).describe('Public professional-network profile URL (normalized: lowercase host and path, no query)');
const SearchPaging = {
  query: z.string().trim().min(1).max(2000).optional().describe('Natural language; takes priority over the filters'),
  pageSize: z.number().int().min(1).max(100).optional().describe('Results per page, 1-100 (default 10)'),
  nextToken: z.string().min(1).max(4000).optional().describe('next_token taken from the previous answer\'s nextPage'),
};

const Text = z.string().nullable().optional();
const Experience = z.object({ title: Text, company: Text, location: Text, startsAt: Text, endsAt: Text });
const Education = z.object({ school: Text, degree: Text, schoolUrl: Text, dates: z.object({ startsAt: z.string().nullable(), endsAt: z.string().nullable() }).nullable().optional() });
const Names = { fullName: Text, firstName: Text, lastName: Text, headline: Text, city: Text, state: Text, country: Text };
const PersonResult = z.object({
  socialProfileUrl: z.string(),
  profile: z
    .object({ ...Names, experiences: z.array(Experience).optional(), education: z.array(Education).optional(), skills: z.array(z.string()).optional(), languages: z.array(z.string()).optional(), profilePicUrl: Text })
    .optional(),
  lastUpdated: Text,
});
const CompanyResult = z.object({ socialUrl: z.string(), name: Text, industry: Text, country: Text, employeeCount: z.number().nullable().optional() });
const EnrichedProfile = z.object({
  publicIdentifier: Text,
  ...Names,
  occupation: Text,
  summary: Text,
  experiences: z.array(Experience).optional(),
  education: z.array(Education).optional(),
});

const Provider = z.enum(PEOPLE_SLOTS).describe('The provider slot that served the call (x-people-provider over REST)');
const Usage = z.object({ creditsConsumed: z.number().int(), usdCharged: z.number() });
const searchOutput = <T extends z.ZodType>(result: T) =>
  z.object({ data: z.object({ results: z.array(result), nextPage: z.string().nullable(), totalResultCount: z.number().int() }), usage: Usage, provider: Provider });
const PersonSearchOutput = searchOutput(PersonResult);
const CompanySearchOutput = searchOutput(CompanyResult);
const ProfileOutput = z.object({ data: EnrichedProfile.nullable(), status: z.enum(['ok', 'not_found']), usage: Usage.extend({ cached: z.boolean() }), provider: Provider });
const EmailQueueOutput = z.object({ lookupId: z.string(), status: z.literal('pending'), usage: Usage, provider: Provider });
const LookupOutput = z.object({ status: z.enum(['pending', 'resolved', 'failed', 'expired']), email: z.string().nullable(), credits_consumed: z.number().int(), provider: Provider });

type Served = { provider: (typeof PEOPLE_SLOTS)[number]; usage?: z.infer<typeof Usage> & { cached?: boolean } };

/**
 * The people routes' wire: the spec's flat errors and x-people-* headers on every reply. The slot travels in the
 * output (MCP shows it) and in a header on REST, where `body` gives the spec's body without it.
 */
function peopleRoute<O extends Served>(method: HttpMethod, path: string, body: (output: O) => unknown, opts: { status?: number; profile?: boolean } = {}): HttpBinding<O> {
  const respond = (output: O): WireResponse => ({
    headers: peopleHeaders({ provider: output.provider, creditsConsumed: output.usage?.creditsConsumed ?? 0, usdCharged: output.usage?.usdCharged ?? 0, cached: output.usage?.cached }),
    body: body(output),
  });
  return {
    method,
    path: `/v1/{app_id}/people/${path}`,
    subdomainPath: `/people/${path}`,
    errorShape: 'people',
    errorHeaders: (err) => peopleErrorHeaders(err, opts.profile === true),
    respond,
    ...(opts.status ? { status: opts.status } : {}),
  };
}

const searchBody = ({ data, usage }: { data: unknown; usage: unknown }) => ({ data, usage });
const SEARCH_NOTE = ' Billed per page of results (empty pages free); to page, send next_token from data.nextPage as nextToken.';

export const peopleSearchPerson = defineTool({
  name: 'people_search_person',
  title: 'Search people',
  description:
    'Search professional profiles by a natural-language query, or by filters (combined into a description). Returns { data: { results: ' +
    '[{ socialProfileUrl, profile, lastUpdated }], nextPage, totalResultCount }, usage: { creditsConsumed, usdCharged } }.' +
    SEARCH_NOTE +
    ` Next: people_profile on a socialProfileUrl. Prices, errors: ${GUIDE}.`,
  input: z.object({
    app_id: AppIdSchema,
    ...SearchPaging,
    currentRoleTitle: Filter.optional(),
    pastRoleTitle: Filter.optional(),
    currentCompanyName: Filter.optional(),
    currentCompanyIndustry: Filter.optional(),
    country: Filter.optional(),
    region: Filter.optional(),
    city: Filter.optional(),
    educationSchoolName: Filter.optional(),
    educationDegreeName: Filter.optional(),
    educationFieldOfStudy: Filter.optional(),
  }),
  output: PersonSearchOutput,
  auth: AUTH,
  appScoped: true,
  // Searches for the app: its work, not a change to it.
  governed: false,
  http: peopleRoute<z.output<typeof PersonSearchOutput>>('POST', 'search/person', searchBody),
  annotations: { openWorldHint: true },
  handler: async ({ app_id: _app, ...input }, ctx) => ctx.services.people.searchPerson(ctx.app!, input, { signal: ctx.signal }),
});

export const peopleSearchCompany = defineTool({
  name: 'people_search_company',
  title: 'Search companies',
  description:
    'Search companies by a natural-language query, or by industry, country and employeeCountMax. Returns { data: { results: [{ socialUrl, name, ' +
    'industry, country, employeeCount }], nextPage, totalResultCount }, usage }.' +
    SEARCH_NOTE,
  input: z.object({
    app_id: AppIdSchema,
    ...SearchPaging,
    industry: Filter.optional(),
    country: Filter.optional(),
    employeeCountMax: z.number().int().min(1).optional(),
  }),
  output: CompanySearchOutput,
  auth: AUTH,
  appScoped: true,
  governed: false,
  http: peopleRoute<z.output<typeof CompanySearchOutput>>('POST', 'search/company', searchBody),
  annotations: { openWorldHint: true },
  handler: async ({ app_id: _app, ...input }, ctx) => ctx.services.people.searchCompany(ctx.app!, input, { signal: ctx.signal }),
});

export const peopleProfile = defineTool({
  name: 'people_profile',
  title: 'Enrich a profile',
  description:
    'A person\'s profile by its URL: { data: { publicIdentifier, fullName, headline, occupation, summary, city, country, experiences, education } ' +
    'or null, status: ok | not_found, usage: { creditsConsumed, usdCharged, cached } }. Served from a 30-day cache when it can (free, cached: ' +
    'true); liveFetch: "force" fetches afresh. Next: people_email_queue for a work e-mail.',
  input: z.object({
    app_id: AppIdSchema,
    socialProfileUrl: ProfileUrl,
    liveFetch: z.literal('force').optional().describe('"force": skip the cache'),
  }),
  output: ProfileOutput,
  auth: AUTH,
  appScoped: true,
  governed: false,
  http: peopleRoute<z.output<typeof ProfileOutput>>('POST', 'profile', ({ data, status, usage }) => ({ data, status, usage }), { profile: true }),
  annotations: { openWorldHint: true },
  handler: async ({ app_id: _app, ...input }, ctx) => ctx.services.people.profile(ctx.app!, input, { signal: ctx.signal }),
});

export const peopleEmailQueue = defineTool({
  name: 'people_email_queue',
  title: 'Queue a work-email lookup',
  description:
    'Queue an asynchronous work-email lookup for a profile URL (billed now; the e-mail found is billed when it arrives). Returns { lookupId, ' +
    'status: "pending", usage: { creditsConsumed } }. Next: people_email_lookup_get with lookupId until the status is resolved, failed or expired.',
  input: z.object({ app_id: AppIdSchema, socialProfileUrl: ProfileUrl }),
  output: EmailQueueOutput,
  auth: AUTH,
  appScoped: true,
  governed: false,
  http: peopleRoute<z.output<typeof EmailQueueOutput>>('POST', 'profile/email', ({ lookupId, status, usage }) => ({ lookupId, status, usage: { creditsConsumed: usage.creditsConsumed } }), { status: 202 }),
  annotations: { openWorldHint: true },
  handler: async ({ app_id: _app, ...input }, ctx) => ctx.services.people.queueEmail(ctx.app!, input, { signal: ctx.signal }),
});

export const peopleEmailLookupGet = defineTool({
  name: 'people_email_lookup_get',
  title: 'Poll a work-email lookup',
  description:
    'A lookup queued by people_email_queue: { status: pending | resolved | failed (no e-mail found, not billed) | expired (no answer by the ' +
    'deadline), email (null unless resolved), credits_consumed (the lookup\'s total) }. Free; poll every few seconds while pending.',
  input: z.object({ app_id: AppIdSchema, lookup_id: z.guid().describe('lookupId from people_email_queue') }),
  output: LookupOutput,
  auth: AUTH,
  appScoped: true,
  http: peopleRoute<z.output<typeof LookupOutput>>('GET', 'email-lookup/{lookup_id}', ({ status, email, credits_consumed }) => ({ status, email, credits_consumed })),
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ctx.services.people.lookup(ctx.app!, input.lookup_id, {}),
});

export const peopleTools = [peopleSearchPerson, peopleSearchCompany, peopleProfile, peopleEmailQueue, peopleEmailLookupGet];
