// Which host a request came to: the platform's own (its base URL's: the console, the cookie routes, every API), or an
// app's own (`{subdomain}.{base_domain}` with subdomain routing, or a verified custom domain), where the app's content
// is served on an origin of its own and the platform's pages are not.
import express, { type RequestHandler, type Router } from 'express';
import type { Services } from '../services.ts';

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

/** The subdomain a request's Host names with subdomain routing on, if any. */
export function requestSubdomain(hostHeader: string | undefined, services: Services): string | undefined {
  const { baseDomain, baseUrl } = services.config;
  return baseDomain ? subdomainOf(hostHeader, baseDomain, platformHostOf(baseUrl)) : undefined;
}

/** The app served at this Host header: its subdomain with subdomain routing, or its verified custom domain. */
export async function appIdFromHost(hostHeader: string | undefined, services: Services): Promise<string | undefined> {
  const subdomain = requestSubdomain(hostHeader, services);
  if (subdomain) return (await services.apps.bySubdomain(subdomain))?.id;
  return (await services.domains.appForHost(hostHeader)) ?? undefined;
}

/** What markAppHost records on a request. */
export interface AppHostLocals {
  /** The request came to an app's own host (its subdomain or a verified custom domain). */
  onAppHost?: boolean;
}

/**
 * Records whether a request came to an app's own host: cheap (a subdomain is a string test; a custom domain's lookup is
 * cached), so it runs before every route, for the platform's pages to step aside there (platformHostOnly).
 */
export function markAppHost(services: Services): RequestHandler {
  return (req, res, next) => {
    const locals = res.locals as AppHostLocals;
    if (requestSubdomain(req.headers.host, services)) {
      locals.onAppHost = true;
      return next();
    }
    const custom = services.domains.appForHost(req.headers.host);
    if (custom === null || typeof custom === 'string') {
      locals.onAppHost = custom !== null;
      return next();
    }
    custom.then((appId) => {
      locals.onAppHost = appId !== null;
      next();
    }, next);
  };
}

/**
 * The platform's person-facing pages (the console, the approval page, OAuth's sign-in and consent) exist on its own host
 * only: a page of the platform on an app's origin would run beside the app's scripts (a service worker of the app's could
 * read the password typed into it). On an app's host their router steps aside, so those paths are the app's own (its
 * site may well have a /console or an /authorize of its own).
 */
export function platformHostOnly(router: Router): Router {
  const guarded = express.Router();
  guarded.use((_req, res, next) => ((res.locals as AppHostLocals).onAppHost ? next('router') : next()));
  guarded.use(router);
  return guarded;
}
