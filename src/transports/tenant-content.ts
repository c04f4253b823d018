// Tenant content (function responses, hosted sites) is hostile to the platform's people. It is served from hosts of
// its own (the app's subdomain or custom domain, see app-host.ts); what still answers on a path of the platform's
// host (/v1/{app_id}/fn/..., /sites/{app_id}/...) gets an opaque origin through a CSP sandbox, so its scripts can
// neither read nor write anything of the platform's origin (cookies, storage, service workers) nor send its cookie.
// On every host, a tenant never sees the platform's session cookie and never sets it, clears it or widens a service
// worker's scope.
import { PLATFORM_COOKIE_NAMES } from './session-cookie.ts';

/**
 * The policy of tenant documents on a path of a shared host: scripts, forms, popups and dialogs work, but without
 * `allow-same-origin` the document's origin is opaque (no cookies, storage or service workers; its requests carry
 * `Origin: null`). Browsers enforce every CSP a response carries, so a tenant's own policy can add limits, not lift these.
 */
export const TENANT_SANDBOX_POLICY = 'sandbox allow-scripts allow-forms allow-popups allow-popups-to-escape-sandbox allow-modals allow-downloads';

/** Response headers no tenant may send: a service worker's scope beyond its folder, and wiping the host's data. */
const REFUSED_HEADERS = new Set(['service-worker-allowed', 'clear-site-data']);

const PLATFORM_COOKIES_LOWER = new Set([...PLATFORM_COOKIE_NAMES].map((n) => n.toLowerCase()));

/** Whether a cookie name is the platform's (compared without case, as browsers now match the `__Host-` prefix). */
function isPlatformCookie(name: string): boolean {
  return PLATFORM_COOKIES_LOWER.has(name.trim().toLowerCase());
}

/** Whether a tenant's response header (name in lower case) may reach the browser. */
export function tenantHeaderAllowed(lowerName: string, value: string): boolean {
  if (REFUSED_HEADERS.has(lowerName)) return false;
  if (lowerName !== 'set-cookie') return true;
  const eq = value.indexOf('=');
  return eq < 0 || !isPlatformCookie(value.slice(0, eq));
}

/** A request's Cookie header without the platform's session cookie (undefined when nothing else is left). */
export function cookieWithoutPlatform(header: string): string | undefined {
  const kept = header.split(';').filter((pair) => {
    const eq = pair.indexOf('=');
    return !isPlatformCookie(eq < 0 ? pair : pair.slice(0, eq));
  });
  const joined = kept.map((p) => p.trim()).filter((p) => p !== '').join('; ');
  return joined === '' ? undefined : joined;
}
