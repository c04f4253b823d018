// People search: person and company search, profile enrichment through the profile cache, and asynchronous
// work-email lookups, through the provider slots, billed to the account's credit ledger (reserve before the provider
// is called, charge with the usage row after; empty answers and cache hits cost nothing).
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config, PeopleRoute, PeopleSlot } from '../config.ts';
import type { AppRecord } from '../apps/types.ts';
import type { CreditLedger } from '../credits/ledger.ts';
import { AppError } from '../core/errors.ts';
import { PeopleSlots, type PeopleProviders, type Routed } from './slots.ts';
import { peopleErrors } from './errors.ts';
import { ProviderFailure, type CompanyFilters, type CompanyResult, type EnrichedProfile, type PeopleProvider, type PersonFilters, type PersonResult, type SearchPage, type SearchRequest } from './provider.ts';
import { FREE, flatCharge, searchCharge, toNanos, toUsd, type Charge } from './pricing.ts';
import { describeCompanies, describePeople, normalizeProfileUrl } from './text.ts';
import { readCache, writeCache } from './cache.ts';
import { recordUsage, releaseCredit, reserveCredit, type PeopleAction } from './usage.ts';
import { addCredits, dropLookup, expireLookup, findLookup, insertLookup, newSecret, secretMatches, settleLookup, type LookupStatus } from './lookups.ts';
import { isUuid } from '../core/uuid.ts';
import type { ControlDatabase } from '../db/types.ts';

export interface Usage {
  creditsConsumed: number;
  usdCharged: number;
}

/** Every answer names the slot that served it: the x-people-provider header on REST. */
interface Served {
  provider: PeopleSlot;
}

export interface SearchOutput<R> extends Served {
  data: { results: R[]; nextPage: string | null; totalResultCount: number };
  usage: Usage;
}

export interface ProfileOutput extends Served {
  data: EnrichedProfile | null;
  status: 'ok' | 'not_found';
  usage: Usage & { cached: boolean };
}

export interface EmailQueueOutput extends Served {
  lookupId: string;
  status: 'pending';
  usage: Usage;
}

export interface LookupOutput extends Served {
  status: LookupStatus;
  email: string | null;
  credits_consumed: number;
}

interface SearchInput {
  query?: string | undefined;
  pageSize?: number | undefined;
  nextToken?: string | undefined;
}

export interface CallOpts {
  signal?: AbortSignal | undefined;
  /** The clock of this call (tests move it); default the service's. */
  now?: Date | undefined;
}

/** One billed provider call: reserved before, recorded with its charge after (or as an `_error` row, free). */
interface BilledCall<T> {
  app: AppRecord;
  slot: PeopleSlot;
  action: PeopleAction;
  /** The most the call may cost: what is reserved. */
  max: Charge;
  /** Credit that must be available; default the balance gate or `max`, whichever is more. */
  floorNanos?: number;
  socialUrl: string | null;
  lookupId?: string;
  run: (signal: AbortSignal) => Promise<T>;
  price: (answer: T) => { charge: Charge; costUsd: number | undefined; responseStatus: number };
}

const DEFAULT_PAGE_SIZE = 10;
const SEARCH_PATHS = { search_person: 'search/person', search_company: 'search/company' } as const;
/** A reservation outlives the call it is for by this much, so it cannot lapse before the call is settled. */
const RESERVATION_MARGIN_SECONDS = 60;
/** A lookup's held credit outlives its deadline by this much: the expiry job, which releases it, may run late. */
const HOLD_MARGIN_SECONDS = 3600;

export class PeopleService {
  readonly #db: Kysely<ControlDatabase>;
  readonly #ledger: CreditLedger;
  readonly #config: Config['people'];
  readonly #baseUrl: string;
  readonly #slots: PeopleSlots;
  readonly #clock: () => Date;
  readonly #log: Logger;

  constructor(deps: { db: Kysely<ControlDatabase>; ledger: CreditLedger; config: Config; providers: PeopleProviders; log: Logger; clock?: () => Date }) {
    this.#db = deps.db;
    this.#ledger = deps.ledger;
    this.#config = deps.config.people;
    this.#baseUrl = deps.config.baseUrl;
    this.#slots = new PeopleSlots(deps.providers, deps.config.people.routing);
    this.#clock = deps.clock ?? (() => new Date());
    this.#log = deps.log;
  }

  searchPerson(app: AppRecord, input: SearchInput & PersonFilters, opts: CallOpts = {}): Promise<SearchOutput<PersonResult>> {
    const { query, pageSize, nextToken, ...filters } = input;
    return this.#search(app, 'search_person', { query, filters, description: describePeople(filters), pageSize: pageSize ?? DEFAULT_PAGE_SIZE, nextToken }, (p) => p.searchPerson?.bind(p), opts);
  }

  searchCompany(app: AppRecord, input: SearchInput & CompanyFilters, opts: CallOpts = {}): Promise<SearchOutput<CompanyResult>> {
    const { query, pageSize, nextToken, ...filters } = input;
    return this.#search(app, 'search_company', { query, filters, description: describeCompanies(filters), pageSize: pageSize ?? DEFAULT_PAGE_SIZE, nextToken }, (p) => p.searchCompany?.bind(p), opts);
  }

  /** A profile from the cache (free) unless `live`, else from the provider: billed when found, cached either way. */
  async profile(app: AppRecord, input: { socialProfileUrl: string; liveFetch?: 'force' | undefined }, opts: CallOpts = {}): Promise<ProfileOutput> {
    const routed = this.#route('profile', (p) => p.profile?.bind(p));
    const { slot } = routed;
    const url = this.#normalize(slot, input.socialProfileUrl);
    const now = opts.now ?? this.#clock();
    if (input.liveFetch !== 'force') {
      const hit = await readCache(this.#db, url, now);
      if (hit) {
        await recordUsage(this.#db, this.#ledger, { ...this.#usageOf(app, slot, url), action: 'profile_cache_hit', charge: FREE, costUsd: 0, responseStatus: hit.result === 'ok' ? 200 : 404 }, undefined);
        return { data: hit.profile, status: hit.result, usage: { ...usageOf(FREE), cached: true }, provider: slot };
      }
    }
    const price = flatCharge(this.#config.prices.profile);
    try {
      const { answer, charge } = await this.#billed({
        app,
        slot,
        action: 'profile',
        max: price,
        socialUrl: url,
        run: (signal) => routed.call(url, input.liveFetch === 'force', { signal }),
        price: (a) => ({ charge: a.status === 'ok' ? price : FREE, costUsd: a.usd, responseStatus: a.status === 'ok' ? 200 : 404 }),
      }, opts.signal);
      const profile = answer.status === 'ok' ? answer.profile : null;
      await writeCache(this.#db, url, answer.status, profile, slot, now);
      return { data: profile, status: answer.status, usage: { ...usageOf(charge), cached: false }, provider: slot };
    } catch (err) {
      if (err instanceof AppError && err.status === 502) await writeCache(this.#db, url, 'failed', null, slot, now);
      throw err;
    }
  }

  /**
   * Queues a work-email lookup: billed at queue time; the resolution's price is held from now until the provider's
   * callback (or the deadline), so that it can always be charged.
   */
  async queueEmail(app: AppRecord, input: { socialProfileUrl: string }, opts: CallOpts = {}): Promise<EmailQueueOutput> {
    this.#enabled('profile_email');
    if (!this.#config.emailLookupEnabled) throw peopleErrors.emailLookupDisabled(this.#slots.slotOf('profile_email'));
    const routed = this.#route('profile_email', (p) => p.emailLookups);
    const { slot } = routed;
    const url = this.#normalize(slot, input.socialProfileUrl);
    const queued = flatCharge(this.#config.prices.emailQueue);
    const resolved = flatCharge(this.#config.prices.emailResolved);
    const deadline = new Date((opts.now ?? this.#clock()).getTime() + this.#config.emailLookupDeadlineSeconds * 1000);
    const holdSeconds = this.#config.emailLookupDeadlineSeconds + HOLD_MARGIN_SECONDS;
    const hold = await this.#reserve(app, slot, resolved.nanos, this.#gateFloor(queued.nanos + resolved.nanos), holdSeconds);
    const id = randomUUID();
    const secret = newSecret();
    try {
      await insertLookup(this.#db, { id, appId: app.id, accountId: app.account_id, slot, socialUrl: url, secret, hold, deadline });
      const { charge } = await this.#billed({
        app,
        slot,
        action: 'profile_email_queue',
        max: queued,
        // The hold above passed the gate for both charges; this one only needs to be covered.
        floorNanos: queued.nanos,
        socialUrl: url,
        lookupId: id,
        run: (signal) => routed.call.queue(url, this.#callbackUrl(id, secret), { signal }),
        price: () => ({ charge: queued, costUsd: undefined, responseStatus: 200 }),
      }, opts.signal);
      return { lookupId: id, status: 'pending', usage: usageOf(charge), provider: slot };
    } catch (err) {
      await dropLookup(this.#db, id);
      await releaseCredit(this.#db, this.#ledger, app.account_id, hold);
      throw err;
    }
  }

  /** A lookup of this app; one past its deadline expires now (the expiry job may not have run yet). */
  async lookup(app: AppRecord, id: string, opts: CallOpts = {}): Promise<LookupOutput> {
    const slot = this.#enabled('profile_email');
    let row = await findLookup(this.#db, id);
    if (!row || row.app_id !== app.id) throw peopleErrors.lookupNotFound(slot, id);
    const now = opts.now ?? this.#clock();
    if (row.status === 'pending' && row.deadline <= now) {
      // Read again either way: a callback may have settled it first.
      await expireLookup(this.#db, this.#ledger, id, now);
      row = (await findLookup(this.#db, id))!;
    }
    return { status: row.status, email: row.email, credits_consumed: row.credits_consumed, provider: row.slot };
  }

  /** The provider's callback for a lookup: verified with the lookup's secret; a redelivery changes nothing. */
  async receiveEmailCallback(id: string, secret: string, body: unknown, opts: CallOpts = {}): Promise<{ received: true; status: LookupStatus }> {
    const row = isUuid(id) ? await findLookup(this.#db, id) : undefined;
    if (!row) throw peopleErrors.callbackUnknown(id);
    if (!secretMatches(row, secret)) throw peopleErrors.callbackRefused();
    const lookups = this.#slots.provider(row.slot)?.emailLookups;
    if (!lookups) throw peopleErrors.notRegistered(row.slot);
    const { email } = lookups.readCallback(body);
    const status = (await settleLookup(this.#db, this.#ledger, id, email, flatCharge(this.#config.prices.emailResolved), opts.now ?? this.#clock())) ?? row.status;
    this.#log.info({ lookup_id: id, app_id: row.app_id, status }, 'people e-mail lookup callback');
    return { received: true, status };
  }

  /** The expiry job's work: true when the lookup was pending past its deadline and is now `expired`. */
  expire(id: string, now: Date = this.#clock()): Promise<boolean> {
    return expireLookup(this.#db, this.#ledger, id, now);
  }

  async #search<F, R>(
    app: AppRecord,
    action: 'search_person' | 'search_company',
    request: SearchRequest<F>,
    pick: (p: PeopleProvider) => ((r: SearchRequest<F>, o: { signal: AbortSignal }) => Promise<SearchPage<R>>) | undefined,
    opts: CallOpts,
  ): Promise<SearchOutput<R>> {
    // A natural-language query goes where `query` is routed, to a provider that reads one.
    const routed = request.query ? this.#route('query', (p) => (p.naturalLanguage ? pick(p) : undefined)) : this.#route(action, pick);
    if (!request.query && !request.description) throw peopleErrors.emptySearch(routed.slot);
    const { answer, charge } = await this.#billed({
      app,
      slot: routed.slot,
      action,
      max: searchCharge(this.#config.prices, request.pageSize),
      socialUrl: null,
      // Never more than asked for, so that nothing is charged beyond the reservation.
      run: async (signal) => {
        const page = await routed.call(request, { signal });
        return { ...page, results: page.results.slice(0, request.pageSize) };
      },
      price: (page) => ({ charge: searchCharge(this.#config.prices, page.results.length), costUsd: page.usd, responseStatus: 200 }),
    }, opts.signal);
    // A carrier of the cursor in the spec's form (a URL embedding next_token), on our own route rather than the vendor's.
    const nextPage = answer.nextToken === null ? null : `${this.#baseUrl}/v1/${app.id}/people/${SEARCH_PATHS[action]}?next_token=${encodeURIComponent(answer.nextToken)}`;
    return { data: { results: answer.results, nextPage, totalResultCount: answer.totalResultCount }, usage: usageOf(charge), provider: routed.slot };
  }

  async #billed<T>(c: BilledCall<T>, signal: AbortSignal | undefined): Promise<{ answer: T; charge: Charge }> {
    const ttlSeconds = Math.ceil(this.#config.timeoutMs / 1000) + RESERVATION_MARGIN_SECONDS;
    const reservation = await this.#reserve(c.app, c.slot, c.max.nanos, c.floorNanos ?? this.#gateFloor(c.max.nanos), ttlSeconds);
    const base = { ...this.#usageOf(c.app, c.slot, c.socialUrl), lookupId: c.lookupId ?? null };
    let answer: T;
    try {
      answer = await c.run(signal ?? new AbortController().signal);
    } catch (err) {
      if (!(err instanceof ProviderFailure)) {
        await releaseCredit(this.#db, this.#ledger, c.app.account_id, reservation);
        throw err;
      }
      await recordUsage(this.#db, this.#ledger, { ...base, action: `${c.action}_error`, charge: FREE, costUsd: 0, responseStatus: err.status }, reservation);
      throw peopleErrors.upstream(c.slot, err);
    }
    const { charge, costUsd, responseStatus } = c.price(answer);
    const also = c.lookupId ? addCredits(c.lookupId, charge.credits) : undefined;
    await recordUsage(this.#db, this.#ledger, { ...base, action: c.action, charge, costUsd, responseStatus }, reservation, also);
    return { answer, charge };
  }

  #reserve(app: AppRecord, slot: PeopleSlot, nanos: number, floorNanos: number, ttlSeconds: number) {
    return reserveCredit(this.#ledger, { accountId: app.account_id, slot, nanos, floorNanos, ttlSeconds }, this.#config.minBalanceUsd);
  }

  #gateFloor(nanos: number): number {
    return Math.max(toNanos(this.#config.minBalanceUsd), nanos);
  }

  /** The route's slot; 503 people_disabled when the feature is off. */
  #enabled(route: PeopleRoute): PeopleSlot {
    const slot = this.#slots.slotOf(route);
    if (!this.#config.enabled) throw peopleErrors.disabled(slot);
    return slot;
  }

  #route<M>(route: PeopleRoute, pick: (p: PeopleProvider) => M | undefined): Routed<M> {
    this.#enabled(route);
    return this.#slots.resolve(route, pick);
  }

  #normalize(slot: PeopleSlot, raw: string): string {
    const normalized = normalizeProfileUrl(raw);
    if ('invalid' in normalized) throw peopleErrors.invalidUrl(slot, normalized.invalid);
    return normalized.url;
  }

  /** Where the provider POSTs a lookup's outcome; the secret rides in the query, which request logs leave out. */
  #callbackUrl(id: string, secret: string): string {
    return `${this.#baseUrl}/webhooks/people/email/${id}?token=${secret}`;
  }

  #usageOf(app: AppRecord, slot: PeopleSlot, socialUrl: string | null) {
    return { appId: app.id, accountId: app.account_id, slot, socialUrl, lookupId: null };
  }
}

function usageOf(charge: Charge): Usage {
  return { creditsConsumed: charge.credits, usdCharged: toUsd(charge.nanos) };
}
