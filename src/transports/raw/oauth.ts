// OAuth for MCP clients: the SDK's endpoints (/register, /authorize, /token, /revoke) over the platform's provider, the
// platform's own metadata documents in front of the SDK's, the sign-in page's script, and the person's answer to the
// consent page.
import express, { type Request, type Response, type Router } from 'express';
import { metadataHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/metadata.js';
import { createOAuthMetadata, mcpAuthRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { z } from 'zod';
import { fromZod } from '../../core/errors.ts';
import { toAppError } from '../../core/invoke.ts';
import { identityErrors } from '../../identity/errors.ts';
import { mcpResource, type Decision } from '../../identity/oauth.ts';
import type { Services } from '../../services.ts';
import { sendError } from '../rest.ts';
import { sameOriginWrite } from '../session-cookie.ts';
import type { RawRoutes } from './index.ts';
import { mountSignInScript } from './oauth-pages.ts';
import { consentingSession, oauthIssuer, PlatformOAuthProvider } from './oauth-provider.ts';

const RESOURCE_NAME = 'svc-platform MCP';

/** A consent answer is two short form fields. */
const ANSWER_BODY_LIMIT = '4kb';

const ConsentAnswer = z.object({ consent: z.string().max(200), decision: z.enum(['approve', 'deny']) });

export const oauthRoutes: RawRoutes = {
  platformHostOnly: true,
  early: (router: Router, services: Services) => {
    const { baseUrl } = services.config;
    const issuerUrl = oauthIssuer(baseUrl);
    if (!issuerUrl) return;
    // The issuer identifier, one string in the server metadata, the resource metadata and every `iss`, which clients
    // compare exactly (RFC 8414 §3.3, RFC 9207): the base URL as configured, without the slash URL.href would add.
    const issuer = baseUrl;
    const provider = new PlatformOAuthProvider(services);
    const resourceServerUrl = mcpResource(baseUrl);
    // Mounted before the SDK's own documents, which name the issuer as issuerUrl.href. Every client is public (PKCE,
    // no secret), which the SDK's default list does not say.
    const metadata = {
      ...createOAuthMetadata({ provider, issuerUrl }),
      issuer,
      token_endpoint_auth_methods_supported: ['none'],
      revocation_endpoint_auth_methods_supported: ['none'],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    };
    router.use('/.well-known/oauth-authorization-server', metadataHandler(metadata));
    // At /.well-known/oauth-protected-resource/mcp (RFC 9728 §3.1), and at the root path, where some clients look first.
    const resourceMetadata = metadataHandler({ resource: resourceServerUrl.href, authorization_servers: [issuer], resource_name: RESOURCE_NAME });
    router.use('/.well-known/oauth-protected-resource/mcp', resourceMetadata);
    router.use('/.well-known/oauth-protected-resource', resourceMetadata);
    router.use('/authorize', (_req, res, next) => {
      namingIssuer(res, issuer);
      next();
    });
    router.use(mcpAuthRouter({ provider, issuerUrl, resourceServerUrl, resourceName: RESOURCE_NAME, clientRegistrationOptions: { clientIdGeneration: false } }));
    mountSignInScript(router, services.config.platformOrigin);
    router.post('/oauth/consent', express.urlencoded({ extended: false, limit: ANSWER_BODY_LIMIT }), (req, res) => void answer(req, res, services, issuer));
  },
};

/**
 * RFC 9207: every authorization response names the issuer, errors included, so a client talking to several
 * authorization servers can tell whose response it got. The SDK's authorization handler sends its error responses
 * itself, by res.redirect, so its redirects gain the parameter here.
 */
function namingIssuer(res: Response, issuer: string): void {
  const redirect = res.redirect.bind(res) as (status: number, url: string) => void;
  res.redirect = ((status: number | string, url?: string) =>
    typeof status === 'string' ? redirect(302, withIssuer(status, issuer)) : redirect(status, withIssuer(url!, issuer))) as Response['redirect'];
}

function withIssuer(redirectUri: string, issuer: string): string {
  const url = new URL(redirectUri);
  url.searchParams.set('iss', issuer);
  return url.href;
}

/**
 * POST /oauth/consent: the person's answer, sent back to the client as a 303 redirect. A forged answer fails twice:
 * the browser names the foreign page's origin, and that page cannot know the anti-forgery value, which is bound to
 * the session that saw the consent page.
 */
async function answer(req: Request, res: Response, services: Services, issuer: string): Promise<void> {
  try {
    if (!sameOriginWrite(req, services.config.platformOrigin)) throw identityErrors.crossSiteRequest();
    const parsed = ConsentAnswer.safeParse(req.body);
    if (!parsed.success) throw fromZod(parsed.error, 'body');
    const session = await consentingSession(req, services);
    const decision = session && (await services.oauth.decide(parsed.data.consent, session.token, parsed.data.decision === 'approve'));
    if (!decision) throw identityErrors.oauthConsentInvalid();
    res.redirect(303, withIssuer(authorizationResponse(decision), issuer));
  } catch (err) {
    sendError(res, toAppError(err, req.log, 'oauth_consent'));
  }
}

/** The redirect back to the client (RFC 6749 §4.1.2): the code, or error=access_denied, with the client's state. */
function authorizationResponse(decision: Decision): string {
  const url = new URL(decision.redirectUri);
  if (decision.code) url.searchParams.set('code', decision.code);
  else {
    url.searchParams.set('error', 'access_denied');
    url.searchParams.set('error_description', 'The person denied the client access.');
  }
  if (decision.state !== null) url.searchParams.set('state', decision.state);
  return url.href;
}
