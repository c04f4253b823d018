// Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document; MCP 2026-07-28 client registration): a
// client_id that is an https URL names a JSON document, published there by the client, that describes it. The platform
// fetches it as it fetches any user-given URL (src/core/outbound.ts: no internal address unless the operator allows
// it, one deadline, no redirect followed) and reads at most 5 KB of it, the size the draft recommends.
import type { IncomingHttpHeaders } from 'node:http';
import { InvalidClientError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { OAuthClientInformationFullSchema, type OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import { AppError } from '../../core/errors.ts';
import { getOutbound, OutboundTooLarge } from '../../core/outbound.ts';

export const MAX_CLIENT_DOCUMENT_BYTES = 5120;
const FETCH_TIMEOUT_MS = 5000;
const MAX_CLIENT_ID_LENGTH = 1000;

/**
 * How long a fetched document is used before it is fetched again: the answer's Cache-Control max-age (or Expires),
 * else DEFAULT, within MIN and MAX. MIN also stands for no-store and no-cache: the client's row stays (its codes and
 * tokens refer to it), and a client exchanges its code within a minute of the authorization that fetched the document.
 */
export const DOCUMENT_FRESH_SECONDS = { min: 60, default: 600, max: 86_400 } as const;

/** Whether a client_id names a metadata document: a URL (the platform's own client ids are UUIDs, never URLs). */
export function isDocumentClientId(clientId: string): boolean {
  return URL.canParse(clientId);
}

export interface ClientDocument {
  client: OAuthClientInformationFull;
  freshSeconds: number;
}

/**
 * The client a client_id URL describes, fetched and checked (§3, §4, §4.1, §5): the URL https with a path and without
 * user name, fragment or dot segments; the answer a 200 within 5 KB; the document a JSON object whose client_id is
 * that URL exactly, with a client_name and redirect URIs, no secret and no authentication method but none. Any
 * failure is an invalid_client naming it (nothing is kept of a failed fetch); the caller checks the redirect URIs.
 */
export async function fetchClientDocument(clientId: string, allowPrivate: boolean): Promise<ClientDocument> {
  const refuse = (problem: string) => new InvalidClientError(`The client_id ${clientId.slice(0, 200)} ${problem}.`);
  const urlProblem = clientIdUrlProblem(clientId);
  if (urlProblem) throw refuse(urlProblem);
  const fetched = await getOutbound(new URL(clientId), { accept: 'application/json' }, { allowPrivate, timeoutMs: FETCH_TIMEOUT_MS, maxBytes: MAX_CLIENT_DOCUMENT_BYTES }).catch(
    (err: unknown) => {
      throw refuse(fetchProblem(err));
    },
  );
  if (fetched.status !== 200) throw refuse(`answered ${fetched.status}, not 200 with its metadata document (redirects are not followed)`);
  let document: unknown;
  try {
    document = JSON.parse(fetched.body.toString('utf8'));
  } catch {
    throw refuse('does not serve a JSON document');
  }
  const parsed = OAuthClientInformationFullSchema.safeParse(document);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw refuse(`serves a document that is not client metadata: ${issue.path.join('.') || 'the document'}: ${issue.message}`);
  }
  const client = parsed.data;
  if (client.client_id !== clientId) throw refuse(`serves the metadata of client_id ${JSON.stringify(client.client_id.slice(0, 200))}; a document must name its own URL`);
  if (client.client_secret !== undefined || client.client_secret_expires_at !== undefined) throw refuse('serves a document with a client secret, which a published document cannot keep');
  if (client.token_endpoint_auth_method !== undefined && client.token_endpoint_auth_method !== 'none') {
    throw refuse(`serves a document asking for token_endpoint_auth_method ${JSON.stringify(client.token_endpoint_auth_method)}; this platform's clients are public ("none")`);
  }
  if (!client.client_name) throw refuse('serves a document without a client_name');
  return { client: { ...client, token_endpoint_auth_method: 'none' }, freshSeconds: freshSeconds(fetched.headers) };
}

/**
 * Why a client_id URL may not name a metadata document, or undefined. Client ids compare as strings (§3), so one that
 * parsing would rewrite (case, default port, dot segments, escapes) is refused rather than fetched under another name.
 */
function clientIdUrlProblem(clientId: string): string | undefined {
  if (clientId.length > MAX_CLIENT_ID_LENGTH) return `is longer than ${MAX_CLIENT_ID_LENGTH} characters`;
  const url = new URL(clientId);
  if (url.protocol !== 'https:') return 'is a URL but not https; a metadata document is served over https';
  if (url.username !== '' || url.password !== '') return 'carries a user name or password';
  if (clientId.includes('#')) return 'has a fragment';
  if (/\/(\.|%2e){1,2}(\/|$)/i.test(clientId.split('?')[0]!)) return 'has a . or .. path segment';
  if (url.href !== clientId) return `is not written as a URL in its normal form (${url.href.slice(0, 200)})`;
  if (url.pathname === '/') return 'has no path; a metadata document is served at one, such as /client.json';
  return undefined;
}

function fetchProblem(err: unknown): string {
  if (err instanceof OutboundTooLarge) return `serves more than ${MAX_CLIENT_DOCUMENT_BYTES} bytes; a metadata document is at most that`;
  const code = (err as NodeJS.ErrnoException).code;
  if ((err instanceof AppError && err.code === 'OUTBOUND_ADDRESS_REFUSED') || code === 'EINTERNAL') {
    return 'is on a loopback, link-local or private address, which the platform does not fetch from';
  }
  return `could not be fetched (${code ?? (err as Error).message})`;
}

/** The lifetime the answer's cache headers give it (RFC 9111 §4.2.1), within DOCUMENT_FRESH_SECONDS. */
function freshSeconds(headers: IncomingHttpHeaders): number {
  const directives = (headers['cache-control'] ?? '').toLowerCase().split(',').map((d) => d.trim());
  let seconds: number = DOCUMENT_FRESH_SECONDS.default;
  const maxAge = directives.map((d) => /^max-age="?(\d+)"?$/.exec(d)?.[1]).find((v) => v !== undefined);
  const expires = headers.expires === undefined ? NaN : Date.parse(headers.expires);
  if (directives.includes('no-store') || directives.includes('no-cache')) seconds = 0;
  else if (maxAge !== undefined) seconds = Number(maxAge);
  else if (!Number.isNaN(expires)) seconds = Math.floor((expires - (Date.parse(headers.date ?? '') || Date.now())) / 1000);
  return Math.min(DOCUMENT_FRESH_SECONDS.max, Math.max(DOCUMENT_FRESH_SECONDS.min, seconds));
}
