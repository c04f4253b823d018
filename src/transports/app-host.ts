// Which host a request came to: the platform's own (its base URL's: the console, the cookie routes, every API), or an
// app's own (`{subdomain}.{base_domain}` with subdomain routing, or a verified custom domain), where the app's content
// is served on an origin of its own and the platform's pages are not.
import { isIP } from 'node:net';
import express, { type RequestHandler, type Router } from 'express';
import type { Services } from '../services.ts';
import { hostOf } from '../domains/names.ts';

/**
 * The subdomain of a `{subdomain}.{base_domain}` Host header (port and a final dot ignored), or undefined for any other
 * host. The platform's own host (`platformHost`, its base URL's) is never an app's, even when it lies under the domain.
 */
function subdomainOf(hostHeader: string | undefined, baseDomain: string, platformHost: string): string | undefined {
  const suffix = '.' + baseDomain.replace(/:\d+$/, '');
  const host = hostOf(hostHeader);
  if (!host.endsWith(suffix) || host === platformHost) return undefined;
  const subdomain = host.slice(0, -suffix.length);
  return /^[a-z0-9-]{1,63}$/.test(subdomain) ? subdomain : undefined;
}

/** The subdomain a request's Host names with subdomain routing on, if any. */
export function requestSubdomain(hostHeader: string | undefined, services: Services): string | undefined {
  const { baseDomain, platformHost } = services.config;
  return baseDomain ? subdomainOf(hostHeader, baseDomain, platformHost) : undefined;
}

/**
 * Whether a request came to a host that is some app's other than `appId` (a subdomain under the base domain, or a
 * custom domain): a path route of one app's content (/v1/{app_id}/fn/..., /sites/{app_id}/...) does not answer there,
 * or one tenant's pages would run on another's origin. Known at once (no query) on the platform's host or an address.
 */
export function onAnotherAppsHost(hostHeader: string | undefined, services: Services, appId: string): boolean | Promise<boolean> {
  const subdomain = requestSubdomain(hostHeader, services);
  if (subdomain) return services.apps.bySubdomain(subdomain).then((app) => app?.id !== appId);
  const custom = services.domains.appForHost(hostHeader);
  if (custom === null || typeof custom === 'string') return custom !== null && custom !== appId;
  return custom.then((found) => found !== null && found !== appId);
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
  const own = services.config.platformHost;
  return (req, res, next) => {
    (res.locals as PlatformHostLocals).onPlatformHost = isPlatformHost(req.headers.host, own);
    next();
  };
}

/** Whether a Host header names the platform's own host (`own`, its base URL's), localhost or an IP address. */
export function isPlatformHost(hostHeader: string | undefined, own: string): boolean {
  const host = hostOf(hostHeader);
  return host === own || host === 'localhost' || isIP(host.replace(/^\[|\]$/g, '')) !== 0;
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
