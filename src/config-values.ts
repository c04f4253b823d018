// Parsers of what some environment variables hold (price tables, people routing, origin lists, comma-separated lists)
// and the types of their results. They are pure: a string in, a frozen value out or a ConfigError. Only src/config.ts,
// the one reader of process.env, calls them; it passes each variable's name so the message names what to fix.
import { isIP } from 'node:net';
import { z } from 'zod';

export class ConfigError extends Error {}

/** Every refusal reads the same: `invalid environment:`, then one indented line per problem. */
export function invalidEnvironment(...problems: string[]): ConfigError {
  return new ConfigError(`invalid environment:\n  ${problems.join('\n  ')}`);
}

/** USD per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
}

export const PEOPLE_SLOTS = ['primary', 'secondary'] as const;
export type PeopleSlot = (typeof PEOPLE_SLOTS)[number];
/** What the routing setting assigns to a slot: each action, and natural-language searches (`query`) of either kind. */
export const PEOPLE_ROUTES = ['search_person', 'search_company', 'query', 'profile', 'profile_email'] as const;
export type PeopleRoute = (typeof PEOPLE_ROUTES)[number];
export type PeopleRouting = Readonly<Record<PeopleRoute, PeopleSlot>>;

export interface PeopleSlotConfig {
  /** proxycurl: a Proxycurl-style v2 API (every action but `query`); exa: a semantic search API (searches only). */
  kind: 'proxycurl' | 'exa';
  baseUrl: string;
  apiKey: string;
}

/** Credits (the unit the spec reports) and USD charged to the account's credit ledger. */
export interface PeoplePrice {
  credits: number;
  usd: number;
}

export interface PeoplePrices {
  /** A search page of up to includedResults results; each result beyond adds the extra price. Empty pages cost 0. */
  search: PeoplePrice & { includedResults: number; extraResultCredits: number; extraResultUsd: number };
  /** A profile fetched from the provider (a cache hit and a not_found cost 0). */
  profile: PeoplePrice;
  /** A work-email lookup queued, and one resolved with an e-mail. */
  emailQueue: PeoplePrice;
  emailResolved: PeoplePrice;
}

/** Which browser origins may call /mcp (requests without Origin always may). */
export type McpOrigins = Readonly<{
  /** Exact origins (scheme://host[:port], as URL.origin writes them), the base URL's among them. */
  allowedOrigins: readonly string[];
  /** http(s)://localhost, 127.0.0.1 and [::1] on any port: the default when SVC_MCP_ALLOWED_ORIGINS is unset. */
  allowLoopbackOrigins: boolean;
  allowAnyOrigin: boolean;
}>;

/** A base URL as the clients join paths to it: trailing slashes dropped (the lookbehind keeps the match linear). */
export function withoutTrailingSlash(url: string): string {
  return url.replace(/(?<!\/)\/+$/, '');
}

/** "a, b,,c" -> ['a', 'b', 'c']: entries trimmed, empty ones dropped. */
export function commaList(setting: string): readonly string[] {
  return Object.freeze(setting.split(',').map((s) => s.trim()).filter(Boolean));
}

function parseJson(variable: string, json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    throw invalidEnvironment(`${variable}: not valid JSON`);
  }
}

const PriceTable = z.record(z.string().min(1), z.strictObject({ input: z.number().nonnegative(), output: z.number().nonnegative() }));

/** {"<vendor>/<model>": {"input": n, "output": n}}, USD per million tokens. */
export function parseModelPrices(variable: string, json: string): Readonly<Record<string, ModelPrice>> {
  const parsed = PriceTable.safeParse(parseJson(variable, json));
  if (!parsed.success) {
    throw invalidEnvironment(`${variable}: expected {"<vendor>/<model>": {"input": <USD per 1M tokens>, "output": <USD per 1M tokens>}}`);
  }
  return Object.freeze(parsed.data);
}

/** "input,output": the environment schema has already checked that both are numbers. */
export function parseModelPrice(pair: string): ModelPrice {
  const [input, output] = pair.split(',') as [string, string];
  return Object.freeze({ input: Number(input), output: Number(output) });
}

/** The spec's typical people pricing. */
const PEOPLE_DEFAULT_PRICES: PeoplePrices = {
  search: { credits: 7, usd: 0.0084, includedResults: 10, extraResultCredits: 1, extraResultUsd: 0.0012 },
  profile: { credits: 2, usd: 0.04 },
  emailQueue: { credits: 3, usd: 0.06 },
  emailResolved: { credits: 1, usd: 0.02 },
};

const PeoplePriceFields = { credits: z.number().int().min(0), usd: z.number().min(0).max(1000) };
const PeoplePriceOverrides = z.strictObject({
  search: z.strictObject({ ...PeoplePriceFields, includedResults: z.number().int().min(1), extraResultCredits: z.number().int().min(0), extraResultUsd: z.number().min(0) }).partial(),
  profile: z.strictObject(PeoplePriceFields).partial(),
  emailQueue: z.strictObject(PeoplePriceFields).partial(),
  emailResolved: z.strictObject(PeoplePriceFields).partial(),
}).partial();

/** Overrides by action over the defaults: unnamed actions and fields keep the spec's prices. */
export function parsePeoplePrices(variable: string, json: string): PeoplePrices {
  const parsed = PeoplePriceOverrides.safeParse(parseJson(variable, json));
  if (!parsed.success) {
    throw invalidEnvironment(`${variable}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`).join('; ')}`);
  }
  const o = parsed.data;
  const d = PEOPLE_DEFAULT_PRICES;
  return Object.freeze({
    search: Object.freeze({ ...d.search, ...o.search }),
    profile: Object.freeze({ ...d.profile, ...o.profile }),
    emailQueue: Object.freeze({ ...d.emailQueue, ...o.emailQueue }),
    emailResolved: Object.freeze({ ...d.emailResolved, ...o.emailResolved }),
  });
}

/** "query=secondary,profile=primary" over the defaults: every action on primary, natural-language queries on secondary. */
export function parsePeopleRouting(variable: string, setting: string): PeopleRouting {
  const routing: Record<PeopleRoute, PeopleSlot> = { search_person: 'primary', search_company: 'primary', query: 'secondary', profile: 'primary', profile_email: 'primary' };
  for (const entry of commaList(setting)) {
    const [route, slot] = entry.split('=').map((s) => s.trim());
    if (!PEOPLE_ROUTES.includes(route as PeopleRoute) || !PEOPLE_SLOTS.includes(slot as PeopleSlot)) {
      throw invalidEnvironment(`${variable}: '${entry}' is not <${PEOPLE_ROUTES.join('|')}>=<primary|secondary>`);
    }
    routing[route as PeopleRoute] = slot as PeopleSlot;
  }
  return Object.freeze(routing);
}

/** A comma-separated list of origins, `*` for any; unset (undefined) allows loopback origins. The base URL's origin is always in. */
export function parseMcpOrigins(variable: string, list: string | undefined, baseUrl: string): McpOrigins {
  const entries = commaList(list ?? '');
  const origins = new Set<string>();
  const base = originOf(baseUrl);
  if (base) origins.add(base);
  for (const entry of entries) {
    if (entry === '*') continue;
    const origin = originOf(entry);
    if (!origin || !/^https?:\/\/[^/?#@]+\/?$/i.test(entry)) {
      throw invalidEnvironment(`${variable}: '${entry}' is not an origin such as https://app.example.com (scheme, host and optional port, no path)`);
    }
    origins.add(origin);
  }
  return Object.freeze({
    allowedOrigins: Object.freeze([...origins]),
    allowLoopbackOrigins: list === undefined,
    allowAnyOrigin: entries.includes('*'),
  });
}

function originOf(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * "1.1.1.1, 127.0.0.1:5353, 2606:4700::1111, [::1]:5353": DNS servers as node:dns takes them (an IPv4 or IPv6 address,
 * with a port written ip:port or [ipv6]:port). Host names are refused: the resolver that would resolve them is the one
 * being configured.
 */
export function parseDnsServers(variable: string, setting: string): readonly string[] {
  return Object.freeze(
    commaList(setting).map((entry) => {
      const bracketed = /^\[([0-9a-fA-F:.]+)\](?::(\d{1,5}))?$/.exec(entry);
      const v4 = /^([0-9.]+)(?::(\d{1,5}))?$/.exec(entry);
      const [address, port] = bracketed ? [bracketed[1]!, bracketed[2]] : v4 ? [v4[1]!, v4[2]] : [entry, undefined];
      const family = isIP(address);
      if (family === 0 || (v4 && !bracketed && family !== 4) || (port !== undefined && (Number(port) < 1 || Number(port) > 65535))) {
        throw invalidEnvironment(`${variable}: '${entry}' is not a DNS server address such as 1.1.1.1, 127.0.0.1:5353 or [::1]:5353`);
      }
      return entry;
    }),
  );
}


/** Where apps' databases live: named regions, each the Postgres cluster of its connection string. */
export interface Regions {
  /** The region of SVC_APP_DATABASE_URL's cluster, where apps go when no region is asked for. */
  defaultRegion: string;
  /** Every region (the default one first) and its cluster's connection string (its database name is ignored). */
  clusters: ReadonlyMap<string, string>;
}

export const REGION_NAME = /^[a-z][a-z0-9-]{0,31}$/;

/**
 * "eu=postgres://db-eu:5432,us=postgres://db-us:5432": the regions beside the default one (SVC_DEFAULT_REGION on
 * SVC_APP_DATABASE_URL). A region's name is how apps record it, so a name once used must keep naming its cluster.
 */
export function parseRegions(variable: string, setting: string, defaultRegion: string, defaultUrl: string): Regions {
  const clusters = new Map<string, string>([[defaultRegion, defaultUrl]]);
  for (const entry of commaList(setting)) {
    const at = entry.indexOf('=');
    const name = entry.slice(0, Math.max(at, 0)).trim();
    const url = entry.slice(at + 1).trim();
    if (at < 0 || !REGION_NAME.test(name)) {
      throw invalidEnvironment(`${variable}: '${entry}' is not name=postgres://host:port (a name of lowercase letters, digits and dashes)`);
    }
    if (!/^postgres(ql)?:\/\//.test(url) || !URL.canParse(url)) throw invalidEnvironment(`${variable}: region '${name}' needs a postgres:// connection string`);
    if (clusters.has(name)) throw invalidEnvironment(`${variable}: region '${name}' is named twice (the default region is '${defaultRegion}')`);
    clusters.set(name, url);
  }
  return Object.freeze({ defaultRegion, clusters });
}

/**
 * Where apps' own hosts are when SVC_BASE_DOMAIN is unset and the platform runs on this machine: `{subdomain}.localhost`
 * on the base URL's port, which browsers (and curl) resolve to loopback, so tenant content has origins of its own in
 * development too. Elsewhere there is no default: the operator names the apps' domain (docs/security.md, "Origins").
 */
export function loopbackAppsDomain(baseUrl: string): string | undefined {
  const url = new URL(baseUrl);
  if (!['localhost', '127.0.0.1', '[::1]'].includes(url.hostname)) return undefined;
  return url.port ? `localhost:${url.port}` : 'localhost';
}
