// The platform as the OAuth authorization server of its own /mcp (the MCP authorization specification): the SDK's
// mcpAuthRouter serves the endpoints over this provider, which keeps clients, codes and tokens in the control database
// (services.oauth) and asks the person on the platform's own pages: sign-in without a live session, else consent.
// Clients are registered (/register) or known by their metadata document's URL (oauth-client-documents.ts); tokens
// are issued for one resource, /mcp (RFC 8707), and record it.
import type { Request, Response } from 'express';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import type { AuthorizationParams, OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import {
  CustomOAuthError,
  InvalidClientError,
  InvalidClientMetadataError,
  InvalidGrantError,
  InvalidTargetError,
  InvalidTokenError,
  type OAuthError,
} from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { getOAuthProtectedResourceMetadataUrl } from '@modelcontextprotocol/sdk/server/auth/router.js';
import type { OAuthClientInformationFull, OAuthTokenRevocationRequest, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Role } from '../../core/caller.ts';
import { mcpResource, type ConsentingSession, type NewClient } from '../../identity/oauth.ts';
import type { Services } from '../../services.ts';
import { sessionCookieOf } from '../session-cookie.ts';
import { fetchClientDocument, isDocumentClientId } from './oauth-client-documents.ts';
import { sendConsentPage, sendSignInPage } from './oauth-pages.ts';

/** Where /mcp's protected resource metadata is: the well-known name, then the resource's path (RFC 9728 §3.1). */
export function resourceMetadataUrl(baseUrl: string): string {
  return getOAuthProtectedResourceMetadataUrl(mcpResource(baseUrl));
}

/** The hosts on which the SDK's router accepts an http issuer. */
const ISSUER_LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1']);

/**
 * The issuer (SVC_BASE_URL) when the platform may be an authorization server: OAuth 2.1 needs TLS, but on a loopback
 * address (development, tests). Behind a plain-http base URL elsewhere, /mcp takes platform keys only.
 */
export function oauthIssuer(baseUrl: string): URL | undefined {
  const url = new URL(baseUrl);
  return url.protocol === 'https:' || ISSUER_LOOPBACK_HOSTS.has(url.hostname) ? url : undefined;
}

/** The browser's live session, the one a person consents in, with their role in its account. */
export async function consentingSession(req: Request, services: Services): Promise<(ConsentingSession & { role: Role }) | undefined> {
  const token = sessionCookieOf(req, services.config.secureCookies);
  if (token === undefined) return undefined;
  const caller = await services.identity.sessions.resolve(token);
  if (caller?.kind !== 'platform' || caller.personId === null) return undefined;
  return { token, personId: caller.personId, accountId: caller.accountId, role: caller.role };
}

/** Hosts an http redirect URI may have: the person's own machine, where a native client listens (RFC 8252 §7.3). */
const REDIRECT_LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** A client needs one or two redirect URIs; registration is open to anyone, so what it stores is bounded. */
export const MAX_REDIRECT_URIS = 10;
export const MAX_REDIRECT_URI_LENGTH = 1000;
/** The whole registration as stored (its name, URIs, contacts, keys...). */
export const MAX_REGISTRATION_BYTES = 16_384;

/**
 * Schemes that are not an app's own: the browser's or the operating system's (files, scripts, inline documents,
 * mail, calls, Android intents) or sockets. A redirect to them would do something other than hand the code back.
 */
const FOREIGN_SCHEMES = new Set(['file:', 'javascript:', 'data:', 'vbscript:', 'blob:', 'about:', 'filesystem:', 'view-source:', 'ftp:', 'ws:', 'wss:', 'mailto:', 'tel:', 'sms:', 'intent:']);

/**
 * Why a redirect URI may not be registered, or undefined: https; http only to the person's own machine; or a native
 * app's private-use scheme (RFC 8252 §7.1), never one of FOREIGN_SCHEMES. None carries a fragment (RFC 6749 §3.1.2)
 * or a user name, which would let a consent page show one host while the browser goes to another.
 */
export function redirectUriProblem(uri: string): string | undefined {
  if (uri.length > MAX_REDIRECT_URI_LENGTH) return `is longer than ${MAX_REDIRECT_URI_LENGTH} characters`;
  const url = URL.parse(uri);
  if (!url) return 'is not a URL';
  if (uri.includes('#')) return 'has a fragment';
  if (url.username !== '' || url.password !== '') return 'carries a user name or password';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:') return REDIRECT_LOOPBACK_HOSTS.has(url.hostname) ? undefined : 'is plain http to another machine; use https, or http on localhost, 127.0.0.1 or [::1]';
  return FOREIGN_SCHEMES.has(url.protocol) ? `uses ${url.protocol}, which is not an app's own scheme` : undefined;
}

/** The RFC 7591 error a registration (or a metadata document) earns, or undefined when it may be stored. */
function registrationError(registration: NewClient): OAuthError | undefined {
  const uris = registration.redirect_uris;
  if (uris.length === 0 || uris.length > MAX_REDIRECT_URIS) {
    return new CustomOAuthError('invalid_redirect_uri', `Register 1 to ${MAX_REDIRECT_URIS} redirect URIs, not ${uris.length}.`);
  }
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem) return new CustomOAuthError('invalid_redirect_uri', `${uri.slice(0, 100)} ${problem}.`);
  }
  const bytes = Buffer.byteLength(JSON.stringify(registration));
  if (bytes > MAX_REGISTRATION_BYTES) return new InvalidClientMetadataError(`The registration is ${bytes} bytes; at most ${MAX_REGISTRATION_BYTES} are stored.`);
  return undefined;
}

/**
 * Every client is public: a desktop client cannot keep a secret, and PKCE binds each code to the client that asked
 * for it, so a secret the SDK's handler made is dropped. Its redirect URIs and size pass registrationError.
 */
function publicClient(registration: NewClient): NewClient {
  const error = registrationError(registration);
  if (error) throw error;
  return { ...registration, client_secret: undefined, client_secret_expires_at: undefined, token_endpoint_auth_method: 'none' };
}

export class PlatformOAuthProvider implements OAuthServerProvider {
  readonly #services: Services;
  readonly #resource: URL;
  readonly clientsStore: OAuthRegisteredClientsStore;

  constructor(services: Services) {
    this.#services = services;
    this.#resource = mcpResource(services.config.baseUrl);
    const { oauth } = services;
    this.clientsStore = {
      getClient: async (clientId) => (await oauth.client(clientId)) ?? (isDocumentClientId(clientId) ? this.#documentClient(clientId) : undefined),
      registerClient: (registration) => oauth.registerClient(publicClient(registration)),
    };
  }

  /**
   * A client known by its metadata document, whose kept copy is missing or stale: fetched again, held to the rules of
   * registration, and kept in the control database for every process until its cache lifetime ends.
   */
  async #documentClient(clientId: string): Promise<OAuthClientInformationFull> {
    const { client, freshSeconds } = await fetchClientDocument(clientId, this.#services.config.outboundAllowPrivate);
    const error = registrationError(client);
    if (error) throw new InvalidClientError(`The metadata document of client_id ${clientId.slice(0, 200)}: ${error.message}`);
    await this.#services.oauth.storeDocumentClient(client, freshSeconds);
    return client;
  }

  /**
   * Without a live session, the sign-in page (it comes back here once signed in); with one, the consent page naming
   * the client, where it sends the person back to, and the account and role it will act with.
   */
  async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: Response): Promise<void> {
    this.#checkResource(params.resource);
    const session = await consentingSession(res.req, this.#services);
    if (!session) return sendSignInPage(res, this.#services.config.platformOrigin);
    const { identity, oauth } = this.#services;
    const request = { clientId: client.client_id, redirectUri: params.redirectUri, codeChallenge: params.codeChallenge, state: params.state };
    const consent = await oauth.openConsent(request, session);
    const person = await identity.person(session.personId);
    const account = (await identity.memberships(session.personId)).find((m) => m.account_id === session.accountId);
    const view = { client: client.client_name ?? client.client_id, publisher: publisherOf(client), person: person.email, account: account?.account_name ?? session.accountId, role: session.role, consent };
    sendConsentPage(res, view, params.redirectUri);
  }

  async challengeForAuthorizationCode(client: OAuthClientInformationFull, code: string): Promise<string> {
    return (await this.#services.oauth.challenge(client.client_id, code)) ?? refuseGrant();
  }

  async exchangeAuthorizationCode(client: OAuthClientInformationFull, code: string, _verifier?: string, redirectUri?: string, resource?: URL): Promise<OAuthTokens> {
    this.#checkResource(resource);
    return (await this.#services.oauth.exchangeCode(client.client_id, code, redirectUri, this.#resource.href)) ?? refuseGrant();
  }

  async exchangeRefreshToken(client: OAuthClientInformationFull, refreshToken: string, _scopes?: string[], resource?: URL): Promise<OAuthTokens> {
    this.#checkResource(resource);
    return (await this.#services.oauth.refresh(client.client_id, refreshToken, this.#resource.href)) ?? refuseGrant();
  }

  /** The interface's check of a token, for the SDK's bearer middleware; /mcp itself resolves bearer tokens in credentials.ts. */
  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const caller = await this.#services.oauth.resolve(token, this.#resource.href);
    if (caller?.kind !== 'platform') throw new InvalidTokenError('The access token is invalid, revoked or expired.');
    return { token, clientId: caller.accountId, scopes: [], resource: this.#resource, extra: { caller } };
  }

  async revokeToken(client: OAuthClientInformationFull, request: OAuthTokenRevocationRequest): Promise<void> {
    await this.#services.oauth.revoke(client.client_id, request.token);
  }

  /**
   * Tokens are issued for /mcp only (RFC 8707): a client naming another resource is refused, and one naming none
   * (clients before MCP 2025-06-18 name none) gets a token for /mcp. Parsed, scheme and host compare without case, as
   * the MCP specification asks of a canonical URI; the path exactly.
   */
  #checkResource(resource: URL | undefined): void {
    if (resource && resource.href !== this.#resource.href) throw new InvalidTargetError(`This server issues tokens for ${this.#resource.href} only.`);
  }
}

/**
 * Who vouches for a client, for the consent page: the host that publishes its metadata document (draft-ietf-oauth-
 * client-id-metadata-document §8.5), or no one for a client that registered itself. A document client whose every
 * redirect goes to the person's own machine is flagged (MCP security considerations): any program there could take
 * its name.
 */
function publisherOf(client: OAuthClientInformationFull): string {
  if (!isDocumentClientId(client.client_id)) return 'No one: it registered itself, under a name of its own choosing.';
  const host = new URL(client.client_id).host;
  const local = client.redirect_uris.every((uri) => REDIRECT_LOOPBACK_HOSTS.has(URL.parse(uri)?.hostname ?? ''));
  return `${host}, which publishes its description at ${client.client_id}.${local ? ' It sends you back to a program on this computer only, and any program there could use this name.' : ''}`;
}

function refuseGrant(): never {
  throw new InvalidGrantError('The code or refresh token is unknown, used, expired or revoked, or was issued to another client or redirect URI.');
}
