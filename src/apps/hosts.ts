// Where an app's own host is: with subdomain routing (SVC_BASE_DOMAIN, by default localhost's for a loopback base URL)
// `{scheme}//{subdomain}.{base_domain}`, the origin its site and functions' pages are served on.

/** The address of an app's own host, or undefined without subdomain routing. */
export function appHostUrl(hosts: { baseUrl: string; baseDomain: string | undefined }, subdomain: string): string | undefined {
  return hosts.baseDomain ? `${schemeOf(hosts.baseUrl)}//${subdomain}.${hosts.baseDomain}` : undefined;
}

/** The scheme of a URL the configuration validated, with its colon (as URL.protocol), without parsing it again. */
function schemeOf(url: string): string {
  return url.slice(0, url.indexOf(':') + 1).toLowerCase();
}
