// The errors people meet signing up, signing in, joining accounts and following the links the platform mails them.
import { AppError } from '../core/errors.ts';
import type { PersonTokenPurpose } from './person-tokens.ts';

/** The tokens the platform mails: a person's (person_tokens), and the one that finishes a sign-up (signup_requests). */
type MailedTokenPurpose = PersonTokenPurpose | 'confirm_signup';

/** Where a token of each purpose is sent, and where a new one is asked for. */
const TOKEN_ROUTES: Record<MailedTokenPurpose, { what: string; take: string; ask: string }> = {
  verify_email: { what: 'e-mail verification', take: 'POST /dashboard/verify-email', ask: 'POST /dashboard/verify-email/send (signed in)' },
  reset_password: { what: 'password reset', take: 'POST /dashboard/password-reset/confirm', ask: 'POST /dashboard/password-reset' },
  confirm_signup: { what: 'sign-up', take: 'POST /dashboard/signup/confirm', ask: 'POST /dashboard/signup (sign up again)' },
};

export const identityErrors = {
  invalidCredentials: () =>
    new AppError(
      401,
      'INVALID_CREDENTIALS',
      'The e-mail or password is wrong.',
      'Check both and try again; a forgotten password is reset by e-mail with POST /dashboard/password-reset.',
    ),
  emailTaken: () =>
    new AppError(
      409,
      'EMAIL_TAKEN',
      'A person with this e-mail already exists.',
      'Sign in with POST /dashboard/signin instead; a forgotten password is reset by e-mail with POST /dashboard/password-reset.',
    ),
  signupPasswordWrong: () =>
    new AppError(
      401,
      'INVALID_CREDENTIALS',
      'The password is not the one chosen when signing up.',
      'Enter the password you chose at sign-up; if you forgot it, sign up again (POST /dashboard/signup) and follow the newest link.',
    ),
  signupInvitationRequired: () =>
    new AppError(
      403,
      'SIGNUP_INVITATION_REQUIRED',
      'Sign-up on this platform needs an invitation.',
      'Ask a member of an account for an invitation and send its token as invitation_token; the operator sets who may sign up with SVC_SIGNUP.',
    ),
  signupClosed: () =>
    new AppError(403, 'SIGNUP_CLOSED', 'Sign-up on this platform is closed.', 'Ask the operator: SVC_SIGNUP decides who may sign up.'),
  invitationInvalid: () =>
    new AppError(400, 'INVITATION_INVALID', 'The invitation is unknown, used, revoked or expired.', 'Ask the account for a new invitation.'),
  invitationOtherEmail: () =>
    new AppError(403, 'INVITATION_OTHER_EMAIL', 'The invitation was sent to another e-mail address.', 'Sign up or sign in with the address the invitation names.'),
  noAccount: () =>
    new AppError(
      403,
      'NO_ACCOUNT',
      'This person is not a member of any account.',
      'Ask a member of an account for an invitation, then sign in and accept it.',
    ),
  tokenInvalid: () =>
    new AppError(
      400,
      'TOKEN_INVALID',
      'The token is not one the platform mailed, or it finished its sign-up already.',
      'Send the token exactly as the e-mail\'s link carries it, or ask for a new e-mail: POST /dashboard/password-reset, POST /dashboard/verify-email/send when signed in, or POST /dashboard/signup again.',
    ),
  tokenWrongPurpose: (purpose: PersonTokenPurpose) =>
    new AppError(
      400,
      'TOKEN_WRONG_PURPOSE',
      `The token is one of ${TOKEN_ROUTES[purpose].what}, which this route does not take.`,
      `Send it to ${TOKEN_ROUTES[purpose].take}.`,
    ),
  tokenUsed: (purpose: PersonTokenPurpose) =>
    new AppError(
      400,
      'TOKEN_USED',
      `This ${TOKEN_ROUTES[purpose].what} link was used already (or a newer link of the same kind was).`,
      `Each link works once: ask for a new e-mail with ${TOKEN_ROUTES[purpose].ask}.`,
    ),
  tokenExpired: (purpose: MailedTokenPurpose) =>
    new AppError(400, 'TOKEN_EXPIRED', `This ${TOKEN_ROUTES[purpose].what} link has expired.`, `Ask for a new e-mail with ${TOKEN_ROUTES[purpose].ask}.`),
  emailAlreadyVerified: () =>
    new AppError(409, 'EMAIL_ALREADY_VERIFIED', 'The e-mail address of this person is verified already.', 'Nothing to do: GET /dashboard/session shows email_verified true.'),
  lastOwner: () =>
    new AppError(
      409,
      'LAST_OWNER',
      'This is the account\'s last owner: an account always keeps one.',
      'Make another member an owner first (PATCH /dashboard/members/{person_id} {"role":"owner"}), then try again.',
    ),
  alreadyMember: () =>
    new AppError(409, 'ALREADY_MEMBER', 'This person is already a member of the account.', 'Nothing to accept; an owner or admin changes a member\'s role.'),
  oidcNotConfigured: () =>
    new AppError(
      404,
      'OIDC_NOT_CONFIGURED',
      'OpenID Connect sign-in is not set up on this platform.',
      'Sign in with e-mail and password (POST /dashboard/signin); the operator sets SVC_OIDC_ISSUER, SVC_OIDC_CLIENT_ID and SVC_OIDC_CLIENT_SECRET to offer it.',
    ),
  oidcStateInvalid: () =>
    new AppError(
      400,
      'OIDC_STATE_INVALID',
      'This sign-in is unknown, already finished, expired, or was started in another browser.',
      'Start again with GET /dashboard/oidc/start in this browser and finish within 10 minutes.',
    ),
  oidcRefused: (providerCode: string | undefined) =>
    new AppError(
      401,
      'OIDC_PROVIDER_REFUSED',
      `The OpenID Connect provider did not sign you in (${providerCode ?? 'no error code'}).`,
      'Start again with GET /dashboard/oidc/start; if it keeps failing, the operator checks the client id and secret and the redirect URI registered at the provider.',
      { provider_error: providerCode ?? null },
    ),
  oidcIdTokenInvalid: () =>
    new AppError(
      401,
      'OIDC_ID_TOKEN_INVALID',
      "The provider's ID token did not verify (signature, issuer, audience, expiry or nonce).",
      'Start again with GET /dashboard/oidc/start; if it keeps failing, the operator checks SVC_OIDC_ISSUER and the client id.',
    ),
  oidcUnavailable: () =>
    new AppError(
      502,
      'OIDC_PROVIDER_UNAVAILABLE',
      'The OpenID Connect provider could not be reached in time, or did not answer as the protocol says.',
      'Try again in a moment; if it lasts, the operator checks SVC_OIDC_ISSUER and the provider.',
    ),
  oidcEmailMissing: () =>
    new AppError(
      400,
      'OIDC_EMAIL_MISSING',
      'The OpenID Connect provider gave no e-mail address for this person.',
      'Let the platform see your e-mail address at the provider, then sign in again.',
    ),
  oidcEmailUnverified: () =>
    new AppError(
      409,
      'OIDC_EMAIL_UNVERIFIED',
      'A person with this e-mail address exists, and the provider does not say it verified the address, so this sign-in is not linked to them.',
      'Verify the address at the provider and sign in again, or sign in with your password (POST /dashboard/signin).',
    ),
  oidcPersonUnverified: () =>
    new AppError(
      409,
      'OIDC_PERSON_UNVERIFIED',
      'A person with this e-mail address signed up here without verifying it, so this sign-in is not linked to them: nothing shows that they are you.',
      'If that person is you: sign in with your password, verify the address (POST /dashboard/verify-email/send), then sign in with the provider again. If you never signed up here, someone else used your address: ask the operator to remove that person (resetting its password would make you that person, in whatever account its maker set up).',
    ),
  crossSiteRequest: () =>
    new AppError(
      403,
      'CROSS_SITE_REQUEST',
      'A request authenticated by the session cookie must come from the platform\'s own pages.',
      'Send it from a page of this platform (same origin), or authenticate with Authorization: Bearer <platform key> instead of the cookie.',
    ),
  oauthConsentInvalid: () =>
    new AppError(
      400,
      'OAUTH_CONSENT_INVALID',
      'This consent page is unknown, already answered, expired, or was opened in another session.',
      'Start connecting again from your MCP client, and answer the consent page it opens in this browser.',
    ),
};
