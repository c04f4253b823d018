/**
 * A fake Proxycurl-style v2 people API on loopback, for the people tests. Real HTTP (node:http), so the adapter's
 * actual requests (query parameters, bearer key, timeouts, dropped sockets) are exercised.
 *
 * Data is deterministic: PEOPLE_COUNT people `https://www.linkedin.com/in/person-<i>` (i from 1), roles alternating
 * CTO (odd i) and Engineer (even i), countries US (i <= 15) and GB, e-mail person-<i>@example.com except for i = 2
 * (none found); COMPANY_COUNT companies. Unknown profiles answer 404.
 *
 * Routes (Authorization: Bearer <key> required, else 401):
 *   GET /api/v2/search/person     current_role_title, country, city, ... (case-insensitive substring match), page_size,
 *                                 next_token (an offset), enrich_profiles -> { results, next_page, total_result_count }
 *   GET /api/v2/search/company    industry, country, employee_count_max, page_size, next_token
 *   GET /api/v2/linkedin          linkedin_profile_url -> the profile, or 404
 *   GET /api/linkedin/profile/email  linkedin_profile_url, callback_url -> { email_queue_count }; the lookup waits
 *                                 until the test calls deliverEmail()
 * Every request is recorded. `fail()` queues faults taken by the next requests: a status (JSON error body), 'drop'
 * (socket destroyed) or 'hang' (no answer until the client gives up or close()).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeVendorRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  authorization: string | undefined;
  body: unknown;
}

export type Fault = number | 'drop' | 'hang';

export interface FakeVendor {
  /** The base URL to configure (SVC_PEOPLE_*_URL). */
  url: string;
  requests: FakeVendorRequest[];
  /** The next `times` requests (of any route) answer with this fault. */
  fail(fault: Fault, times?: number): void;
  reset(): void;
  close(): Promise<void>;
}

type Answer = { status: number; body: unknown };
type Route = (req: FakeVendorRequest, base: string) => Answer | Promise<Answer>;

/** The HTTP part every fake people vendor shares: recording, the key, faults. */
export async function startFakeVendor(key: string, route: Route): Promise<FakeVendor> {
  const requests: FakeVendorRequest[] = [];
  const faults: Fault[] = [];
  const server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, { status: 500, body: { description: `fake vendor bug: ${String(err)}` } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', base);
    const recorded: FakeVendorRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      authorization: req.headers.authorization ?? (req.headers['x-api-key'] as string | undefined),
      body: text ? JSON.parse(text) : undefined,
    };
    requests.push(recorded);
    const fault = faults.shift();
    if (fault === 'drop') return void res.socket?.destroy();
    if (fault === 'hang') return;
    if (typeof fault === 'number') return send(res, { status: fault, body: { code: fault, description: 'fake fault', name: 'Fault' } });
    if (recorded.authorization !== `Bearer ${key}` && recorded.authorization !== key) return send(res, { status: 401, body: { description: 'Invalid API key' } });
    send(res, await route(recorded, base));
  }

  return {
    url: base,
    requests,
    fail: (fault, times = 1) => faults.push(...Array<Fault>(times).fill(fault)),
    reset: () => {
      requests.length = 0;
      faults.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function send(res: ServerResponse, answer: Answer): void {
  res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
}

export const PEOPLE_COUNT = 25;
export const COMPANY_COUNT = 12;
export const profileUrl = (i: number): string => `https://www.linkedin.com/in/person-${i}`;
export const emailOf = (i: number): string | null => (i === 2 ? null : `person-${i}@example.com`);

/** Person i in the vendor's wire format (snake_case, dates as { day, month, year }). */
export function vendorPerson(i: number): Record<string, unknown> {
  const role = i % 2 === 1 ? 'CTO' : 'Engineer';
  const company = `Company ${((i - 1) % COMPANY_COUNT) + 1}`;
  return {
    public_identifier: `person-${i}`,
    first_name: 'Person',
    last_name: `Number${i}`,
    full_name: `Person Number${i}`,
    headline: `${role} at ${company}`,
    occupation: `${role} at ${company}`,
    summary: `Person ${i} builds things.`,
    city: i <= 15 ? 'San Francisco' : 'London',
    state: i <= 15 ? 'California' : 'England',
    country: i <= 15 ? 'US' : 'GB',
    country_full_name: i <= 15 ? 'United States' : 'United Kingdom',
    experiences: [
      { title: role, company, location: 'Remote', starts_at: { day: 1, month: 3, year: 2020 }, ends_at: null },
      { title: 'Intern', company: 'First Job Inc', location: null, starts_at: { day: null, month: 6, year: 2015 }, ends_at: { day: null, month: null, year: 2016 } },
    ],
    education: [
      { school: 'State University', degree_name: 'BSc', field_of_study: 'Computer Science', school_linkedin_profile_url: 'https://www.linkedin.com/school/state-u', starts_at: { year: 2011 }, ends_at: { year: 2015 } },
    ],
    skills: ['TypeScript', 'Postgres'],
    languages: ['English'],
    profile_pic_url: `https://images.example/person-${i}.png`,
  };
}

function vendorCompany(i: number): Record<string, unknown> {
  return {
    linkedin_profile_url: `https://www.linkedin.com/company/company-${i}`,
    profile: { name: `Company ${i}`, industry: i % 2 === 1 ? 'Software' : 'Retail', hq: { country: i <= 6 ? 'US' : 'DE' }, company_size: [1, 50 * i], company_size_on_linkedin: 10 * i },
    last_updated: '2026-01-02T03:04:05Z',
  };
}

/** Case-insensitive: every given filter is a substring of the record's field. */
function matches(fields: Record<string, string | number | undefined>, query: Record<string, string>): boolean {
  return Object.entries(fields).every(([param, value]) => query[param] === undefined || String(value ?? '').toLowerCase().includes(query[param]!.toLowerCase()));
}

/** A page of `all` after next_token (an offset), with next_page embedding the next offset as the vendor does. */
function page(all: Record<string, unknown>[], req: FakeVendorRequest, base: string): Answer {
  const size = Number(req.query.page_size ?? 10);
  const offset = Number(req.query.next_token ?? 0);
  const results = all.slice(offset, offset + size);
  const next = offset + size < all.length ? `${base}${req.path}?page_size=${size}&next_token=${offset + size}` : null;
  return { status: 200, body: { results, next_page: next, total_result_count: all.length } };
}

export interface FakeProxycurl extends FakeVendor {
  /** E-mail lookups queued, in order. */
  lookups: { profileUrl: string; callbackUrl: string }[];
  /**
   * POSTs lookup `index`'s outcome to its callback URL (on `origin` instead of the URL's own when given: the
   * in-process platform's base URL is not its listening address); the person's e-mail unless `email` says otherwise.
   */
  deliverEmail(index: number, opts?: { email?: string | null; origin?: string; token?: string }): Promise<{ status: number; body: any }>;
}

export async function startFakeProxycurl(key = 'pc-test-key'): Promise<FakeProxycurl> {
  const lookups: FakeProxycurl['lookups'] = [];
  const people = Array.from({ length: PEOPLE_COUNT }, (_, k) => k + 1);
  const vendor = await startFakeVendor(key, (req, base) => {
    if (req.path === '/api/v2/search/person') {
      const found = people.filter((i) => {
        const p = vendorPerson(i);
        const fields = { current_role_title: (p.headline as string).split(' at ')[0], country: p.country as string, city: p.city as string, current_company_name: (p.headline as string).split(' at ')[1] };
        return matches(fields, req.query);
      });
      return page(found.map((i) => ({ linkedin_profile_url: profileUrl(i), profile: req.query.enrich_profiles === 'enrich' ? vendorPerson(i) : null, last_updated: '2026-01-02T03:04:05Z' })), req, base);
    }
    if (req.path === '/api/v2/search/company') {
      const found = Array.from({ length: COMPANY_COUNT }, (_, k) => vendorCompany(k + 1)).filter((c) => {
        const p = c.profile as { industry: string; hq: { country: string }; company_size_on_linkedin: number };
        const max = req.query.employee_count_max === undefined ? Infinity : Number(req.query.employee_count_max);
        return p.company_size_on_linkedin <= max && matches({ industry: p.industry, country: p.hq.country }, req.query);
      });
      return page(found, req, base);
    }
    if (req.path === '/api/v2/linkedin') {
      const i = people.find((n) => profileUrl(n) === req.query.linkedin_profile_url);
      return i ? { status: 200, body: vendorPerson(i) } : { status: 404, body: { code: 404, description: 'Person profile does not exist', name: 'Not Found' } };
    }
    if (req.path === '/api/linkedin/profile/email') {
      lookups.push({ profileUrl: req.query.linkedin_profile_url ?? '', callbackUrl: req.query.callback_url ?? '' });
      return { status: 200, body: { email_queue_count: lookups.length } };
    }
    return { status: 404, body: { description: `no route ${req.path}` } };
  });
  return {
    ...vendor,
    lookups,
    reset: () => {
      vendor.reset();
      lookups.length = 0;
    },
    async deliverEmail(index, opts = {}) {
      const lookup = lookups[index];
      if (!lookup) throw new Error(`no e-mail lookup #${index}`);
      const target = new URL(lookup.callbackUrl);
      const url = new URL(opts.origin ? `${opts.origin}${target.pathname}${target.search}` : lookup.callbackUrl);
      if (opts.token !== undefined) url.searchParams.set('token', opts.token);
      const i = people.find((n) => profileUrl(n) === lookup.profileUrl);
      const email = opts.email !== undefined ? opts.email : i ? emailOf(i) : null;
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, status: email ? 'email_found' : 'email_not_found', profile_url: lookup.profileUrl }),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
  };
}
