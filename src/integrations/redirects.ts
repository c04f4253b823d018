// Where a finished connection may send the end user's browser. The callback is public and redirects to a URL a caller
// chose, so without a rule it would be an open redirect on the platform's own domain (a trusted-looking link that
// lands anywhere). The rule: the URL's origin is the app's own (the origin of its URL, as apps_get shows it) or one the
// app's owner listed (integrations_configure redirectOrigins). Checked when the link is made and again on the callback.
import { errors } from '../core/errors.ts';
import { integrationErrors } from './types.ts';

/** A redirect target: absolute http(s), no credentials (a user:pass@ URL is a classic disguise). */
export function parseRedirectUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw errors.validation("'redirectUrl' is not an absolute URL.", [{ path: 'redirectUrl', message: 'must be an absolute http(s) URL' }]);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw errors.validation("'redirectUrl' must use http or https.", [{ path: 'redirectUrl', message: 'must be an absolute http(s) URL' }]);
  }
  if (url.username || url.password) throw errors.validation("'redirectUrl' may not carry credentials.", [{ path: 'redirectUrl', message: 'no user:password@' }]);
  return url;
}

/** Refuses a redirect target whose origin is neither the app's nor listed by its owner. */
export function checkRedirect(url: URL, appOrigin: string, listed: readonly string[]): void {
  if (url.origin !== appOrigin && !listed.includes(url.origin)) throw integrationErrors.redirectNotAllowed(url.origin);
}

/** An owner-listed origin as URL.origin writes it (lower-case host, default port dropped); only scheme, host, port. */
export function normalizeOrigin(raw: string, index: number): string {
  const field = `redirectOrigins.${index}`;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || !/^https?:\/\/[^/?#@]+\/?$/i.test(raw)) {
    throw errors.validation(`'${field}' is not an origin such as https://app.example.com (scheme, host and optional port, no path).`, [
      { path: field, message: 'scheme://host[:port] only' },
    ]);
  }
  return url.origin;
}

/** Appends the callback's outcome to the app's redirect URL, keeping its own query and fragment. */
export function withOutcome(redirectUrl: string, outcome: Record<string, string>): string {
  const url = new URL(redirectUrl);
  for (const [key, value] of Object.entries(outcome)) url.searchParams.set(key, value);
  return url.toString();
}
