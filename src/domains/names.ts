// What a custom domain may be: a DNS host name of two or more labels, not an address and not one of the platform's
// own hosts. Used to check what domains_add is given and, before any lookup, the Host header of every request.
import { isIP } from 'node:net';

/** The longest host name DNS carries (253 characters written without the final dot). */
export const MAX_DOMAIN_LENGTH = 253;

const LABEL = /^[a-z0-9-]{1,63}$/;
const DIGITS = /^[0-9]+$/;

/** The platform's own hosts: its base URL's host, and the subdomain routing domain (itself and every name below it). */
export interface PlatformHosts {
  baseUrl: string;
  baseDomain: string | undefined;
}

/** Why `domain` (already lowercase) cannot be a custom domain, or undefined when it can. */
export function domainProblem(domain: string, hosts: PlatformHosts): string | undefined {
  if (domain.length === 0 || domain.length > MAX_DOMAIN_LENGTH) return `a domain is 1-${MAX_DOMAIN_LENGTH} characters`;
  if (isIP(domain) !== 0 || isIP(domain.replace(/^\[|\]$/g, '')) !== 0) return 'an IP address cannot be a custom domain; use a host name such as www.example.com';
  const labels = domain.split('.');
  if (labels.length < 2) return 'a domain has two or more labels, such as example.com or www.example.com';
  for (const label of labels) {
    if (!LABEL.test(label) || label.startsWith('-') || label.endsWith('-')) {
      return `'${label.slice(0, 63)}' is not a DNS label: 1-63 of a-z, 0-9 and '-', not starting or ending with '-'`;
    }
  }
  // WHATWG URLs read a host whose last label is numeric as an IPv4 address (1.2.3 is 1.2.0.3), and no TLD is numeric.
  if (DIGITS.test(labels[labels.length - 1]!)) return 'the last label of a domain is not all digits (that is an IP address)';
  if (domain === platformHost(hosts.baseUrl)) return "the platform's own host cannot be a custom domain";
  const base = hosts.baseDomain?.replace(/:\d+$/, '');
  if (base && (domain === base || domain.endsWith(`.${base}`))) {
    return `names under ${base} are the platform's app subdomains (subdomain routing), not custom domains`;
  }
  return undefined;
}

/** hostOf's answers by Host header: a request reads its host two or three times, and a client sends the same one. */
const hostsByHeader = new Map<string, string>();
/**
 * Headers remembered at most (any client may send any Host: the map starts afresh when full), and the longest one
 * remembered (a DNS name and a port; longer ones are parsed each time), so that it holds at most some 300 KB.
 */
const MAX_HOST_HEADERS = 1024;
const MAX_REMEMBERED_LENGTH = MAX_DOMAIN_LENGTH + 7;

/** The host of a Host header, lowercase, without its port and the final dot of a fully qualified name; '' for none. */
export function hostOf(hostHeader: string | undefined): string {
  if (hostHeader === undefined) return '';
  let host = hostsByHeader.get(hostHeader);
  if (host === undefined) {
    host = parseHost(hostHeader);
    if (hostHeader.length > MAX_REMEMBERED_LENGTH) return host;
    if (hostsByHeader.size >= MAX_HOST_HEADERS) hostsByHeader.clear();
    hostsByHeader.set(hostHeader, host);
  }
  return host;
}

function parseHost(hostHeader: string): string {
  const host = hostHeader.trim().toLowerCase();
  // [::1]:8080 keeps its brackets (an address, which domainProblem refuses); a.example.com.:8080 is a.example.com.
  return host.startsWith('[') ? host.replace(/\]:\d+$/, ']') : host.replace(/:\d+$/, '').replace(/\.$/, '');
}

function platformHost(baseUrl: string): string {
  try {
    return new URL(baseUrl).hostname.toLowerCase();
  } catch {
    return '';
  }
}
