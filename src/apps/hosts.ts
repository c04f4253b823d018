// Where an app's own host is: with subdomain routing (SVC_BASE_DOMAIN, by default localhost's for a loopback base URL)
// `{scheme}//{subdomain}.{base_domain}`, the origin its site and functions' pages are served on.

/** The address of an app's own host, or undefined without subdomain routing. */
export function appHostUrl(hosts: { baseUrl: string; baseDomain: string | undefined }, subdomain: string): string | undefined {
  return hosts.baseDomain ? `${new URL(hosts.baseUrl).protocol}//${subdomain}.${hosts.baseDomain}` : undefined;
}
