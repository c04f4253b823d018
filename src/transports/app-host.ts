import type { Services } from '../services.ts';

/** The subdomain of a `{subdomain}.{base_domain}` Host header (port ignored), or undefined for any other host. */
export function subdomainOf(hostHeader: string | undefined, baseDomain: string): string | undefined {
  const suffix = '.' + baseDomain.replace(/:\d+$/, '');
  const host = (hostHeader ?? '').toLowerCase().replace(/:\d+$/, '');
  if (!host.endsWith(suffix)) return undefined;
  const subdomain = host.slice(0, -suffix.length);
  return /^[a-z0-9-]{1,63}$/.test(subdomain) ? subdomain : undefined;
}

/** The app served at this Host header: its subdomain with subdomain routing, or its verified custom domain. */
export async function appIdFromHost(hostHeader: string | undefined, services: Services): Promise<string | undefined> {
  const { baseDomain } = services.config;
  const subdomain = baseDomain ? subdomainOf(hostHeader, baseDomain) : undefined;
  if (subdomain) return (await services.apps.bySubdomain(subdomain))?.id;
  return (await services.domains.appForHost(hostHeader)) ?? undefined;
}
