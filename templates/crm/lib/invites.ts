// Invitation links: a random token goes to the invitee (in the link) and only its SHA-256 hash is stored, so a leak of
// the table reveals no usable link. Links expire after a week.
export const INVITE_DAYS = 7;

const hex = (bytes: ArrayBuffer): string => [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, '0')).join('');

/** A fresh token: 32 random bytes, base64url. */
export function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

/** The stored form of a token: hex SHA-256. */
export async function tokenHash(token: string): Promise<string> {
  return hex(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(token)));
}

/** The site's invitation route (hash routing, so the token never reaches a server log); relative without SITE_URL. */
export function inviteLink(siteUrl: string | undefined, token: string): string {
  return `${(siteUrl ?? '').replace(/\/+$/, '')}/#/invite/${token}`;
}

/** A plausible e-mail address (the mail system is the real check), lower-cased. */
export function emailAddress(value: string): string | null {
  const email = value.trim().toLowerCase();
  return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) && email.length <= 254 ? email : null;
}
