// OAuth for MCP clients: the SDK's endpoints (metadata, /register, /authorize, /token, /revoke) over the platform's
// provider, the resource metadata at the root well-known path too, the sign-in page's script, and the person's answer
// to the consent page.
import express, { type Request, type Response, type Router } from 'express';
import { metadataHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/metadata.js';
import { createOAuthMetadata, mcpAuthRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { z } from 'zod';
import { fromZod } from '../../core/errors.ts';
import { toAppError } from '../../core/invoke.ts';
import { identityErrors } from '../../identity/errors.ts';
import type { Decision } from '../../identity/oauth.ts';
import type { Services } from '../../services.ts';
import { sendError } from '../rest.ts';
import { sameOriginWrite } from '../session-cookie.ts';
import type { RawRoutes } from './index.ts';
import { mountSignInScript } from './oauth-pages.ts';
import { consentingSession, mcpResource, oauthIssuer, PlatformOAuthProvider } from './oauth-provider.ts';

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
    const provider = new PlatformOAuthProvider(services);
    const resourceServerUrl = mcpResource(baseUrl);
    // Mounted before the SDK's own: every client is public (PKCE, no secret), which the SDK's default list does not say.
    const metadata = { ...createOAuthMetadata({ provider, issuerUrl }), token_endpoint_auth_methods_supported: ['none'], revocation_endpoint_auth_methods_supported: ['none'] };
    router.use('/.well-known/oauth-authorization-server', metadataHandler(metadata));
    router.use(mcpAuthRouter({ provider, issuerUrl, resourceServerUrl, resourceName: RESOURCE_NAME, clientRegistrationOptions: { clientIdGeneration: false } }));
    // The router serves the resource metadata at /.well-known/oauth-protected-resource/mcp (RFC 9728 §3.1); clients
    // that look at the root path first find the same document there.
    router.use('/.well-known/oauth-protected-resource', metadataHandler({ resource: resourceServerUrl.href, authorization_servers: [issuerUrl.href], resource_name: RESOURCE_NAME }));
    mountSignInScript(router, services.config.platformOrigin);
    router.post('/oauth/consent', express.urlencoded({ extended: false, limit: ANSWER_BODY_LIMIT }), (req, res) => void answer(req, res, services));
  },
};

/**
 * POST /oauth/consent: the person's answer, sent back to the client as a 303 redirect. A forged answer fails twice:
 * the browser names the foreign page's origin, and that page cannot know the anti-forgery value, which is bound to
 * the session that saw the consent page.
 */
async function answer(req: Request, res: Response, services: Services): Promise<void> {
  try {
    if (!sameOriginWrite(req, services.config.platformOrigin)) throw identityErrors.crossSiteRequest();
    const parsed = ConsentAnswer.safeParse(req.body);
    if (!parsed.success) throw fromZod(parsed.error, 'body');
    const session = await consentingSession(req, services);
    const decision = session && (await services.oauth.decide(parsed.data.consent, session.token, parsed.data.decision === 'approve'));
    if (!decision) throw identityErrors.oauthConsentInvalid();
    res.redirect(303, authorizationResponse(decision));
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
