// What people search asks of a provider, in the spec's terms (camelCase). Adapters in src/adapters/ translate these
// to and from their vendor's wire format; nothing here knows one.

export interface PersonFilters {
  currentRoleTitle?: string | undefined;
  pastRoleTitle?: string | undefined;
  currentCompanyName?: string | undefined;
  currentCompanyIndustry?: string | undefined;
  country?: string | undefined;
  region?: string | undefined;
  city?: string | undefined;
  educationSchoolName?: string | undefined;
  educationDegreeName?: string | undefined;
  educationFieldOfStudy?: string | undefined;
}

export interface CompanyFilters {
  industry?: string | undefined;
  country?: string | undefined;
  employeeCountMax?: number | undefined;
}

/**
 * One page of a search. A structured provider reads `filters`; a semantic one reads `query` when given, else
 * `description` (the filters in words; boolean operators in them are its ranking hints).
 */
export interface SearchRequest<F> {
  query: string | undefined;
  filters: F;
  description: string;
  pageSize: number;
  nextToken: string | undefined;
}

export interface Experience {
  title?: string | null;
  company?: string | null;
  location?: string | null;
  /** ISO 8601 dates (YYYY-MM-DD, or shorter when the provider knows less). */
  startsAt?: string | null;
  endsAt?: string | null;
}

export interface Education {
  school?: string | null;
  degree?: string | null;
  schoolUrl?: string | null;
  dates?: { startsAt: string | null; endsAt: string | null } | null;
}

export interface PersonProfile {
  fullName?: string | null;
  firstName?: string | null;
  lastName?: string | null;
  headline?: string | null;
  city?: string | null;
  state?: string | null;
  country?: string | null;
  experiences?: Experience[];
  education?: Education[];
  skills?: string[];
  languages?: string[];
  profilePicUrl?: string | null;
}

export interface PersonResult {
  socialProfileUrl: string;
  profile?: PersonProfile;
  lastUpdated?: string | null;
}

export interface CompanyResult {
  socialUrl: string;
  name?: string | null;
  industry?: string | null;
  country?: string | null;
  employeeCount?: number | null;
}

export interface EnrichedProfile {
  publicIdentifier?: string | null;
  firstName?: string | null;
  lastName?: string | null;
  fullName?: string | null;
  headline?: string | null;
  occupation?: string | null;
  summary?: string | null;
  city?: string | null;
  state?: string | null;
  country?: string | null;
  experiences?: Experience[];
  education?: Education[];
}

/** What the provider said a call cost, when it says (USD); else the price table stands for it. */
export interface ProviderCost {
  usd?: number | undefined;
}

export interface SearchPage<R> extends ProviderCost {
  results: R[];
  /** The provider's cursor for the next page; null on the last one. */
  nextToken: string | null;
  totalResultCount: number;
}

export type ProfileAnswer = ({ status: 'ok'; profile: EnrichedProfile } | { status: 'not_found' }) & ProviderCost;

/** Why a provider call gave no usable answer; `status` is the provider's HTTP status when it answered at all. */
export class ProviderFailure extends Error {
  readonly status: number | null;

  constructor(message: string, status: number | null) {
    super(message);
    this.status = status;
  }
}

export interface CallOptions {
  signal: AbortSignal;
}

/**
 * A people provider. A method it does not have is an action it lacks (503 provider_action_unsupported when routed to
 * it). Every method throws ProviderFailure when the provider fails, timeouts and network errors included.
 */
export interface PeopleProvider {
  /** Whether its searches take a natural-language `query` (semantic providers); structured ones read the filters. */
  readonly naturalLanguage: boolean;
  searchPerson?(request: SearchRequest<PersonFilters>, opts: CallOptions): Promise<SearchPage<PersonResult>>;
  searchCompany?(request: SearchRequest<CompanyFilters>, opts: CallOptions): Promise<SearchPage<CompanyResult>>;
  profile?(url: string, live: boolean, opts: CallOptions): Promise<ProfileAnswer>;
  emailLookups?: EmailLookups;
}

/** Asynchronous work-email lookups: queued with a callback URL, answered once by the provider POSTing to it. */
export interface EmailLookups {
  queue(url: string, callbackUrl: string, opts: CallOptions): Promise<void>;
  /** The e-mail the callback's body reports, null when the provider found none. */
  readCallback(body: unknown): { email: string | null };
}
