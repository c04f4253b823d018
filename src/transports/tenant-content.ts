// Tenant content (function responses, hosted sites) is hostile to the platform's people. It is served from hosts of
// its own (the app's subdomain or custom domain, see app-host.ts): a browser that opens a tenant's page on a path of
// the platform's host (/v1/{app_id}/fn/..., /sites/{app_id}/...) is sent there. What a path still serves (to clients
// that are not browsers, and on platforms without apps' hosts) is a document of an opaque origin through a CSP sandbox,
// with only the headers that describe the content itself, so that its scripts can neither read nor write anything of
// the platform's origin (cookies, storage, service workers, reporting, transport settings). On an app's own host the
// app's headers pass, but never the platform's cookies or a wider service worker scope; and a tenant never sees the
// platform's cookies in a request.
import { PLATFORM_COOKIE_NAMES } from './session-cookie.ts';

/**
 * The policy of tenant documents on a path of a shared host: scripts, forms, popups and dialogs work, but without
 * `allow-same-origin` the document's origin is opaque (no cookies, storage or service workers; its requests carry
 * `Origin: null`). Browsers enforce every CSP a response carries, so a tenant's own policy can add limits, not lift these.
 */
export const TENANT_SANDBOX_POLICY = 'sandbox allow-scripts allow-forms allow-popups allow-popups-to-escape-sandbox allow-modals allow-downloads';

/**
 * What a tenant's response may say on a host it shares with the platform: its content and caching, where it redirects,
 * its own CORS and CSP, and headers of its own (`x-...`). Not cookies (a cookie bomb or a planted sign-in binding would
 * hold for the whole host), not NEL/Report-To (the host's every URL reported to the tenant), HSTS, Alt-Svc, Link...
 */
const SHARED_HOST_HEADERS = new Set([
  'content-type',
  'content-length',
  'content-language',
  'content-disposition',
  'content-encoding',
  'content-range',
  'accept-ranges',
  'cache-control',
  'expires',
  'etag',
  'last-modified',
  'vary',
  'location',
  'retry-after',
  'content-security-policy',
]);

/** Response headers no tenant may send even on its own host: a service worker's scope beyond its folder, wiping data. */
const REFUSED_HEADERS = new Set(['service-worker-allowed', 'clear-site-data']);

const PLATFORM_COOKIES_LOWER = new Set([...PLATFORM_COOKIE_NAMES].map((n) => n.toLowerCase()));

/** Whether a cookie name is the platform's (compared without case, as browsers now match the `__Host-` prefix). */
function isPlatformCookie(name: string): boolean {
  return PLATFORM_COOKIES_LOWER.has(name.trim().toLowerCase());
}

/**
 * Whether a tenant's response header (name in lower case) may reach the browser: on a host shared with the platform
 * (`sharedHost`) only what describes the content, elsewhere all but the refused headers and the platform's cookies (a
 * Set-Cookie without a name, which some browsers read as a value alone, counts as one).
 */
export function tenantHeaderAllowed(lowerName: string, value: string, sharedHost: boolean): boolean {
  if (sharedHost) return SHARED_HOST_HEADERS.has(lowerName) || lowerName.startsWith('access-control-') || lowerName.startsWith('x-');
  if (REFUSED_HEADERS.has(lowerName)) return false;
  if (lowerName !== 'set-cookie') return true;
  const eq = value.indexOf('=');
  return eq > 0 && value.slice(0, eq).trim() !== '' && !isPlatformCookie(value.slice(0, eq));
}

/** A request's Cookie header without the platform's cookies (undefined when nothing else is left). */
export function cookieWithoutPlatform(header: string): string | undefined {
  const kept = header.split(';').filter((pair) => {
    const eq = pair.indexOf('=');
    return !isPlatformCookie(eq < 0 ? pair : pair.slice(0, eq));
  });
  const joined = kept.map((p) => p.trim()).filter((p) => p !== '').join('; ');
  return joined === '' ? undefined : joined;
}

/** Fetch destinations of a page a browser shows (a tab, a frame, an embedded document), as Sec-Fetch-Dest names them. */
const DOCUMENT_DESTINATIONS = new Set(['document', 'iframe', 'frame', 'object', 'embed']);

/** Whether a browser asks for a page it will show, as opposed to a script's fetch or a non-browser client. */
export function asksForDocument(secFetchDest: string | string[] | undefined): boolean {
  return typeof secFetchDest === 'string' && DOCUMENT_DESTINATIONS.has(secFetchDest);
}
