// Which host a request came to: the platform's own (its base URL's: the console, the cookie routes, every API), or an
// app's own (`{subdomain}.{base_domain}` with subdomain routing, or a verified custom domain), where the app's content
// is served on an origin of its own and the platform's pages are not.
import { isIP } from 'node:net';
import express, { type RequestHandler, type Router } from 'express';
import type { Services } from '../services.ts';
import { hostOf } from '../domains/names.ts';

/** The host of a Host header, lowercase and without its port. */
function hostName(hostHeader: string | undefined): string {
  return (hostHeader ?? '').toLowerCase().replace(/:\d+$/, '');
}

/**
 * The subdomain of a `{subdomain}.{base_domain}` Host header (port ignored), or undefined for any other host. The
 * platform's own host (`platformHost`, its base URL's) is never an app's, even when it lies under the base domain.
 */
export function subdomainOf(hostHeader: string | undefined, baseDomain: string, platformHost: string): string | undefined {
  const suffix = '.' + baseDomain.replace(/:\d+$/, '');
  const host = hostName(hostHeader);
  if (!host.endsWith(suffix) || host === platformHost) return undefined;
  const subdomain = host.slice(0, -suffix.length);
  return /^[a-z0-9-]{1,63}$/.test(subdomain) ? subdomain : undefined;
}

/** The platform's own host name (lowercase, no port). */
export function platformHostOf(baseUrl: string): string {
  return new URL(baseUrl).hostname.toLowerCase();
}

/** The platform's own host name, parsed once per config. */
const platformHosts = new WeakMap<object, string>();
function platformHost(config: Services['config']): string {
  let host = platformHosts.get(config);
  if (host === undefined) platformHosts.set(config, (host = platformHostOf(config.baseUrl)));
  return host;
}

/** The subdomain a request's Host names with subdomain routing on, if any. */
export function requestSubdomain(hostHeader: string | undefined, services: Services): string | undefined {
  const { baseDomain } = services.config;
  return baseDomain ? subdomainOf(hostHeader, baseDomain, platformHost(services.config)) : undefined;
}

/** The address of an app's own host, `{scheme}//{subdomain}.{base_domain}`, or undefined without subdomain routing. */
export function appHostUrl(config: Services['config'], subdomain: string): string | undefined {
  return config.baseDomain ? `${new URL(config.baseUrl).protocol}//${subdomain}.${config.baseDomain}` : undefined;
}

/**
 * Whether a request came to a host that is some app's other than `appId` (a subdomain under the base domain, or a
 * custom domain): a path route of one app's content (/v1/{app_id}/fn/..., /sites/{app_id}/...) does not answer there,
 * or one tenant's pages would run on another's origin. Costs no query on the platform's host or an address.
 */
export async function onAnotherAppsHost(hostHeader: string | undefined, services: Services, appId: string): Promise<boolean> {
  const subdomain = requestSubdomain(hostHeader, services);
  if (subdomain) return (await services.apps.bySubdomain(subdomain))?.id !== appId;
  const custom = await services.domains.appForHost(hostHeader);
  return custom !== null && custom !== appId;
}

/** The app served at this Host header: its subdomain with subdomain routing, or its verified custom domain. */
export async function appIdFromHost(hostHeader: string | undefined, services: Services): Promise<string | undefined> {
  const subdomain = requestSubdomain(hostHeader, services);
  if (subdomain) return (await services.apps.bySubdomain(subdomain))?.id;
  return (await services.domains.appForHost(hostHeader)) ?? undefined;
}

/** What markPlatformHost records on a request. */
export interface PlatformHostLocals {
  /** The request came to the platform's own host (its base URL's), an address, or localhost. */
  onPlatformHost?: boolean;
}

/**
 * Records whether a request came to the platform's own host: its base URL's host name (port and a final dot
 * ignored), an IP address (clients on the machine or inside the cluster) or localhost. No query: it runs before every
 * route, for the platform's pages (platformHostOnly).
 */
export function markPlatformHost(services: Services): RequestHandler {
  const own = platformHost(services.config);
  return (req, res, next) => {
    const host = hostOf(req.headers.host);
    (res.locals as PlatformHostLocals).onPlatformHost = host === own || host === 'localhost' || isIP(host.replace(/^\[|\]$/g, '')) !== 0;
    next();
  };
}

/**
 * The platform's person-facing pages (the console, the approval page, OAuth's sign-in, consent and endpoints) exist on
 * its own host only: a page of the platform on another origin would run beside that origin's scripts (an app's service
 * worker could read the password typed into it). Elsewhere their router steps aside, so on an app's host those paths
 * are the app's own (its site may well have a /console or an /authorize of its own).
 */
export function platformHostOnly(router: Router): Router {
  const guarded = express.Router();
  guarded.use((_req, res, next) => ((res.locals as PlatformHostLocals).onPlatformHost ? next() : next('router')));
  guarded.use(router);
  return guarded;
}
