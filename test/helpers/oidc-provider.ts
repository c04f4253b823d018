// A real OpenID provider (oidc-provider) on loopback, for the tests of the platform's OpenID Connect sign-in: a client
// for the platform, people whose claims the test sets, and a login page answered as the person the test names (or
// declining), with consent granted up front (the platform is a first-party client). Its token endpoint's answer can
// be rewritten to play a provider that misbehaves.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { type KoaContextWithOIDC } from 'oidc-provider';

export const OIDC_CLIENT_ID = 'svc-platform';
export const OIDC_CLIENT_SECRET = 'oidc-test-client-secret-3f9a1c';
export const OIDC_SIGNING_KEY_ID = 'test-key';
export const OIDC_CALLBACK_PATH = '/dashboard/oidc/callback';

export interface OidcClaims {
  email?: string;
  email_verified?: boolean;
  name?: string;
}

export interface OidcProvider {
  issuer: string;
  /** The platform's settings for this provider (SVC_OIDC_*). */
  env: Record<string, string>;
  /** The provider's people, by subject. */
  accounts: Map<string, OidcClaims>;
  /** The next login signs in `subject`, or, when `decline`, the person declines. */
  next: { loginAs: string; decline: boolean };
  /** Set: rewrites the answer of the token endpoint (an ID token signed with another key, an outage). */
  tamperToken: ((ctx: KoaContextWithOIDC) => Promise<void>) | undefined;
  /** Serves the provider for platforms at these origins (http://localhost:<port>), once they have started. */
  serve(platformOrigins: string[]): Promise<void>;
  close(): Promise<void>;
}

export async function startOidcProvider(name = 'Test IdP'): Promise<OidcProvider> {
  let handle: http.RequestListener = (_req, res) => res.writeHead(503).end();
  const idp = http.createServer((req, res) => handle(req, res));
  await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
  const self: OidcProvider = {
    issuer,
    env: { SVC_OIDC_ISSUER: issuer, SVC_OIDC_CLIENT_ID: OIDC_CLIENT_ID, SVC_OIDC_CLIENT_SECRET: OIDC_CLIENT_SECRET, SVC_OIDC_NAME: name },
    accounts: new Map(),
    next: { loginAs: '', decline: false },
    tamperToken: undefined,
    async serve(platformOrigins) {
      const { privateKey } = await generateKeyPair('RS256', { extractable: true });
      const signingKey = { ...(await exportJWK(privateKey)), kid: OIDC_SIGNING_KEY_ID, alg: 'RS256', use: 'sig' };
      const provider = new Provider(issuer, configuration(self, platformOrigins.map((o) => `${o}${OIDC_CALLBACK_PATH}`), signingKey));
      provider.use(async (ctx: KoaContextWithOIDC, next: () => Promise<void>) => {
        await next();
        if (self.tamperToken && ctx.path === '/token') await self.tamperToken(ctx);
      });
      handle = handler(self, provider);
    },
    close: () => new Promise((resolve) => idp.close(() => resolve())),
  };
  return self;
}

function configuration(self: OidcProvider, redirectUris: string[], signingKey: object): ConstructorParameters<typeof Provider>[1] {
  const tenMinutes = 600;
  return {
    jwks: { keys: [signingKey] },
    ttl: { Interaction: tenMinutes, Session: tenMinutes, Grant: tenMinutes, AccessToken: tenMinutes, IdToken: tenMinutes, AuthorizationCode: 60 },
    clients: [{ client_id: OIDC_CLIENT_ID, client_secret: OIDC_CLIENT_SECRET, redirect_uris: redirectUris, grant_types: ['authorization_code'], response_types: ['code'] }],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    findAccount: (_ctx, sub) => (self.accounts.has(sub) ? { accountId: sub, claims: () => ({ sub, ...self.accounts.get(sub) }) } : undefined),
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
    cookies: { keys: ['identity-oidc-test-cookie-key'] },
  };
}

/** The provider's routes, with its login page answered as `next` says. */
function handler(self: OidcProvider, provider: Provider): http.RequestListener {
  const callback = provider.callback();
  return (req, res) => {
    if (!req.url?.startsWith('/interaction/')) return void callback(req, res);
    const result = self.next.decline ? { error: 'access_denied', error_description: 'the person declined' } : { login: { accountId: self.next.loginAs } };
    self.next.decline = false;
    provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false }).catch((err: unknown) => res.writeHead(500).end(String(err)));
  };
}
