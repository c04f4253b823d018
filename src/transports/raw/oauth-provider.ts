// The platform as the OAuth authorization server of its own /mcp (the MCP authorization specification): the SDK's
// mcpAuthRouter serves the endpoints over this provider, which keeps clients, codes and tokens in the control database
// (services.oauth) and asks the person on the platform's own pages: sign-in without a live session, else consent.
import type { Request, Response } from 'express';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import type { AuthorizationParams, OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { CustomOAuthError, InvalidGrantError, InvalidTargetError, InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { getOAuthProtectedResourceMetadataUrl } from '@modelcontextprotocol/sdk/server/auth/router.js';
import type { OAuthClientInformationFull, OAuthTokenRevocationRequest, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Role } from '../../core/caller.ts';
import type { ConsentingSession, NewClient } from '../../identity/oauth.ts';
import type { Services } from '../../services.ts';
import { sessionCookieOf } from '../session-cookie.ts';
import { sendConsentPage, sendSignInPage } from './oauth-pages.ts';

/** The protected resource: /mcp, the one route that accepts OAuth access tokens. */
export function mcpResource(baseUrl: string): URL {
  return new URL(`${baseUrl}/mcp`);
}

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
  const token = sessionCookieOf(req);
  if (token === undefined) return undefined;
  const caller = await services.identity.sessions.resolve(token);
  if (caller?.kind !== 'platform' || caller.personId === null) return undefined;
  return { token, personId: caller.personId, accountId: caller.accountId, role: caller.role };
}

/** Hosts an http redirect URI may have: the person's own machine, where a native client listens (RFC 8252 §7.3). */
const REDIRECT_LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Every client is public: a desktop client cannot keep a secret, and PKCE binds each code to the client that asked
 * for it, so a secret the SDK's handler made is dropped. Redirect URIs are https, loopback http, or a native app's own
 * scheme (RFC 8252 §7.1); the SDK's handler has already refused javascript:, data: and vbscript:.
 */
function publicClient(registration: NewClient): NewClient {
  const plain = registration.redirect_uris.find((uri) => {
    const url = new URL(uri);
    return url.protocol === 'http:' && !REDIRECT_LOOPBACK_HOSTS.has(url.hostname);
  });
  if (plain) throw new CustomOAuthError('invalid_redirect_uri', `${plain} is plain http to another machine; use https, or http on localhost.`);
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
      getClient: (clientId) => oauth.client(clientId),
      registerClient: (registration) => oauth.registerClient(publicClient(registration)),
    };
  }

  /**
   * Without a live session, the sign-in page (it comes back here once signed in); with one, the consent page naming
   * the client, where it sends the person back to, and the account and role it will act with.
   */
  async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: Response): Promise<void> {
    this.#checkResource(params.resource);
    const session = await consentingSession(res.req, this.#services);
    if (!session) return sendSignInPage(res);
    const { identity, oauth } = this.#services;
    const request = { clientId: client.client_id, redirectUri: params.redirectUri, codeChallenge: params.codeChallenge, state: params.state };
    const consent = await oauth.openConsent(request, session);
    const person = await identity.person(session.personId);
    const account = (await identity.memberships(session.personId)).find((m) => m.account_id === session.accountId);
    const view = { client: client.client_name ?? client.client_id, person: person.email, account: account?.account_name ?? session.accountId, role: session.role, consent };
    sendConsentPage(res, view, params.redirectUri);
  }

  async challengeForAuthorizationCode(client: OAuthClientInformationFull, code: string): Promise<string> {
    return (await this.#services.oauth.challenge(client.client_id, code)) ?? refuseGrant();
  }

  async exchangeAuthorizationCode(client: OAuthClientInformationFull, code: string, _verifier?: string, redirectUri?: string, resource?: URL): Promise<OAuthTokens> {
    this.#checkResource(resource);
    return (await this.#services.oauth.exchangeCode(client.client_id, code, redirectUri)) ?? refuseGrant();
  }

  async exchangeRefreshToken(client: OAuthClientInformationFull, refreshToken: string, _scopes?: string[], resource?: URL): Promise<OAuthTokens> {
    this.#checkResource(resource);
    return (await this.#services.oauth.refresh(client.client_id, refreshToken)) ?? refuseGrant();
  }

  /** The interface's check of a token, for the SDK's bearer middleware; /mcp itself resolves bearer tokens in credentials.ts. */
  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const caller = await this.#services.oauth.resolve(token);
    if (caller?.kind !== 'platform') throw new InvalidTokenError('The access token is invalid, revoked or expired.');
    return { token, clientId: caller.accountId, scopes: [], resource: this.#resource, extra: { caller } };
  }

  async revokeToken(client: OAuthClientInformationFull, request: OAuthTokenRevocationRequest): Promise<void> {
    await this.#services.oauth.revoke(client.client_id, request.token);
  }

  /** Tokens are issued for /mcp only (RFC 8707): a client naming another resource is refused. */
  #checkResource(resource: URL | undefined): void {
    if (resource && resource.href !== this.#resource.href) throw new InvalidTargetError(`This server issues tokens for ${this.#resource.href} only.`);
  }
}

function refuseGrant(): never {
  throw new InvalidGrantError('The code or refresh token is unknown, used, expired or revoked, or was issued to another client or redirect URI.');
}
