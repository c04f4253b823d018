// The OpenID Connect port (src/identity/oidc-port.ts) over openid-client: discovery (cached), the authorization URL
// with PKCE, the code exchange and the ID token's verification against the issuer's keys, and UserInfo for the
// claims a provider keeps out of the ID token. The provider is operator-configured, so the outbound address guard
// for user-supplied URLs does not apply; every request has the configured timeout.
import * as oidc from 'openid-client';
import { OidcProviderError, type OidcChecks, type OidcClient, type OidcPerson } from '../identity/oidc-port.ts';

export interface OpenIdConnectSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** <base URL>/dashboard/oidc/callback, as registered at the provider. */
  redirectUri: string;
  timeoutMs: number;
}

const SCOPE = 'openid email profile';
/** Discovery is fetched again after this long, so that a provider's moved endpoints are followed without a restart. */
const DISCOVERY_TTL_MS = 60 * 60 * 1000;
/** openid-client's codes for an answer that arrived but did not verify (ID token claims, signature, keys). */
const UNVERIFIED_CODES = new Set([
  'OAUTH_JWT_CLAIM_COMPARISON_FAILED',
  'OAUTH_JWT_TIMESTAMP_CHECK_FAILED',
  'OAUTH_INVALID_RESPONSE',
  'OAUTH_KEY_SELECTION_FAILED',
  'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED',
  'OAUTH_PARSE_ERROR',
]);

export class OpenIdConnectClient implements OidcClient {
  readonly #settings: OpenIdConnectSettings;
  #discovered: { at: number; configuration: Promise<oidc.Configuration> } | undefined;

  constructor(settings: OpenIdConnectSettings) {
    this.#settings = settings;
  }

  async authorizationUrl(checks: OidcChecks): Promise<string> {
    const configuration = await this.#configuration();
    const url = oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: this.#settings.redirectUri,
      response_type: 'code',
      scope: SCOPE,
      state: checks.state,
      nonce: checks.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(checks.codeVerifier),
      code_challenge_method: 'S256',
    });
    return url.href;
  }

  async redeem(callbackQuery: string, checks: OidcChecks): Promise<OidcPerson> {
    const configuration = await this.#configuration();
    const callback = new URL(this.#settings.redirectUri);
    callback.search = callbackQuery;
    try {
      const tokens = await oidc.authorizationCodeGrant(configuration, callback, {
        pkceCodeVerifier: checks.codeVerifier,
        expectedState: checks.state,
        expectedNonce: checks.nonce,
      });
      // An expected nonce makes the ID token required: claims() is there once the grant verified.
      const idToken = tokens.claims()!;
      // With an access token, OpenID Connect Core 5.4 lets a provider give the scope's claims at UserInfo only.
      const profile = typeof idToken.email === 'string' ? idToken : await oidc.fetchUserInfo(configuration, tokens.access_token, idToken.sub);
      return personOf(idToken, profile);
    } catch (err) {
      throw failureOf(err);
    }
  }

  /** The discovered configuration, fetched on first use (a provider that is down does not stop the platform's start). */
  #configuration(): Promise<oidc.Configuration> {
    const now = Date.now();
    if (!this.#discovered || now - this.#discovered.at > DISCOVERY_TTL_MS) {
      const configuration = this.#discover();
      this.#discovered = { at: now, configuration };
      // A failed discovery is not kept: the next sign-in tries again.
      configuration.catch(() => {
        if (this.#discovered?.configuration === configuration) this.#discovered = undefined;
      });
    }
    return this.#discovered.configuration;
  }

  async #discover(): Promise<oidc.Configuration> {
    const { issuer, clientId, clientSecret, timeoutMs } = this.#settings;
    const url = new URL(issuer);
    // The ID token is verified against the issuer's keys even though it comes straight from the token endpoint
    // (openid-client's "non-repudiation" checks); http:// is accepted only because the configuration allows it on
    // loopback alone.
    const execute = [oidc.enableNonRepudiationChecks, ...(url.protocol === 'http:' ? [oidc.allowInsecureRequests] : [])];
    try {
      return await oidc.discovery(url, clientId, clientSecret, secretAuthentication(clientSecret), { timeout: timeoutMs / 1000, execute });
    } catch (err) {
      throw new OidcProviderError('unavailable', `discovery at ${issuer} failed: ${messageOf(err)}`);
    }
  }
}

/**
 * client_secret_basic where the provider supports it (RFC 8414: the default when it lists no methods), else
 * client_secret_post; chosen per request from the discovered metadata.
 */
function secretAuthentication(secret: string): oidc.ClientAuth {
  const basic = oidc.ClientSecretBasic(secret);
  const post = oidc.ClientSecretPost(secret);
  return (server, client, body, headers) => {
    const methods = server.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
    (methods.includes('client_secret_basic') ? basic : post)(server, client, body, headers);
  };
}

/** Only a boolean email_verified=true counts as verified: a string or an absent claim is not the provider's word. */
function personOf(idToken: oidc.IDToken, profile: Record<string, unknown>): OidcPerson {
  return {
    issuer: idToken.iss,
    subject: idToken.sub,
    email: typeof profile.email === 'string' ? profile.email : undefined,
    emailVerified: profile.email_verified === true,
    name: typeof profile.name === 'string' ? profile.name : undefined,
  };
}

/** openid-client's errors in the port's terms; the message carries no token or secret (it is logged). */
function failureOf(err: unknown): unknown {
  if (err instanceof OidcProviderError) return err;
  if (err instanceof oidc.AuthorizationResponseError || err instanceof oidc.ResponseBodyError) {
    return new OidcProviderError('refused', `the provider answered ${err.error}`, err.error);
  }
  if (err instanceof oidc.WWWAuthenticateChallengeError) {
    const code = err.cause[0]?.parameters.error;
    return new OidcProviderError('refused', `the provider refused the request (${err.status} ${code ?? 'no error code'})`, code);
  }
  if (err instanceof oidc.ClientError) {
    return new OidcProviderError(err.code && UNVERIFIED_CODES.has(err.code) ? 'invalid' : 'unavailable', messageOf(err));
  }
  // fetch's network failure (its TypeError, not one of openid-client's argument checks) and the timeout's abort.
  const networkFailure = err instanceof TypeError && err.message === 'fetch failed';
  if (networkFailure || (err instanceof DOMException && (err.name === 'TimeoutError' || err.name === 'AbortError'))) {
    return new OidcProviderError('unavailable', messageOf(err));
  }
  return err;
}

/** An error's message with its cause's (openid-client wraps the precise reason), for the log. */
function messageOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  return err.cause instanceof Error ? `${err.message}: ${err.cause.message}` : err.message;
}
