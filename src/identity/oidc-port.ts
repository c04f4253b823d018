// What OpenID Connect sign-in asks of the protocol, in our terms: the provider's authorization URL for one sign-in,
// and the person its callback proves. The adapter in src/adapters/ (openid-connect.ts) implements it with a library
// made for the job; the composition root builds it from the configuration and hands it to OidcSignIn.

/** The secrets of one sign-in, made by OidcSignIn and kept server-side until its callback. */
export interface OidcChecks {
  state: string;
  nonce: string;
  /** PKCE: the provider is sent its S256 challenge, and the verifier itself only with the code. */
  codeVerifier: string;
}

/** The person the provider vouches for, from the verified ID token (and its UserInfo, for what the token leaves out). */
export interface OidcPerson {
  issuer: string;
  subject: string;
  email: string | undefined;
  /** Only the provider's own email_verified=true counts. */
  emailVerified: boolean;
  name: string | undefined;
}

export interface OidcClient {
  /** The provider's authorization endpoint with this sign-in's request (code, openid email profile, PKCE S256). */
  authorizationUrl(checks: OidcChecks): Promise<string>;
  /**
   * Takes the callback's raw query: exchanges its code and verifies the ID token against the issuer's keys
   * (signature, iss, aud, exp, nonce). Throws OidcProviderError.
   */
  redeem(callbackQuery: string, checks: OidcChecks): Promise<OidcPerson>;
}

/**
 * refused: the provider answered with an OAuth error (the person declined, the code was used, the client is wrong);
 * invalid: its answer did not verify (ID token signature, issuer, audience, expiry, nonce); unavailable: it could not
 * be reached in time, or answered something that is not the protocol.
 */
export type OidcFailure = 'refused' | 'invalid' | 'unavailable';

export class OidcProviderError extends Error {
  readonly failure: OidcFailure;
  /** The provider's OAuth error code (access_denied, invalid_grant, ...), when it gave one. */
  readonly providerCode: string | undefined;

  constructor(failure: OidcFailure, message: string, providerCode?: string) {
    super(message);
    this.failure = failure;
    this.providerCode = providerCode;
  }
}
