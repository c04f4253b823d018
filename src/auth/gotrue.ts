// The end users' auth as GoTrue (Supabase Auth) answers it, for supabase-js's auth-js at /v1/{app_id}/auth/v1: its
// session and user objects over the same users, sessions and tokens as the platform's own auth routes.
import { AppError } from '../core/errors.ts';
import { APP_METADATA, type AccountRow, type AuthSession } from './users.ts';
import { PASSWORD_MIN_LENGTH } from './passwords.ts';

/** The API version auth-js asks for and reads error codes by (X-Supabase-Api-Version). */
export const GOTRUE_API_VERSION = '2024-01-01';

/** How much user_metadata a user may carry: it rides in every access token. */
export const MAX_USER_METADATA_BYTES = 16 * 1024;

/** GoTrue's user object (auth-js's User): every end user signs in by e-mail (a password, or a mailed link or code). */
export function gotrueUser(row: AccountRow) {
  const created = row.created_at.toISOString();
  const lastSignIn = row.last_sign_in_at?.toISOString() ?? null;
  const updated = (row.updated_at ?? row.created_at).toISOString();
  const confirmed = row.email_confirmed_at?.toISOString() ?? null;
  return {
    id: row.id,
    aud: 'authenticated',
    role: 'authenticated',
    email: row.email,
    email_confirmed_at: confirmed,
    phone: '',
    confirmed_at: confirmed,
    ...(row.new_email ? { new_email: row.new_email } : {}),
    last_sign_in_at: lastSignIn,
    app_metadata: APP_METADATA,
    user_metadata: row.raw_user_meta_data,
    identities: [
      {
        identity_id: row.id,
        id: row.id,
        user_id: row.id,
        identity_data: { sub: row.id, email: row.email, email_verified: confirmed !== null, phone_verified: false },
        provider: 'email',
        last_sign_in_at: lastSignIn,
        created_at: created,
        updated_at: updated,
        email: row.email,
      },
    ],
    created_at: created,
    updated_at: updated,
    is_anonymous: false,
  };
}

/** GoTrue's session (auth-js keeps it and refreshes it before expires_at). */
export function gotrueSession(session: AuthSession) {
  const { access_token, token_type, expires_in, expires_at, refresh_token } = session;
  return { access_token, token_type, expires_in, expires_at, refresh_token, user: gotrueUser(session.account) };
}

/** GoTrue's refusal of a short password: auth-js raises AuthWeakPasswordError with the reasons. */
export function weakPassword(): AppError {
  return named(422, 'VALIDATION_FAILED', `Password should be at least ${PASSWORD_MIN_LENGTH} characters.`, 'Choose a longer password.', { code: 'weak_password', status: 422, weakPassword: ['length'] }, [
    { path: 'password', message: `at least ${PASSWORD_MIN_LENGTH} characters` },
  ]);
}

/** An address GoTrue would not take. */
export function invalidEmail(): AppError {
  return named(400, 'VALIDATION_FAILED', 'Unable to validate email address: invalid format.', 'Send a valid email address.', { code: 'email_address_invalid', status: 400 }, [
    { path: 'email', message: 'not a valid email address' },
  ]);
}

/** A refresh token that is unknown, used, expired or revoked, as GoTrue says it (auth-js then ends the session). */
export function refreshTokenNotFound(cause: AppError): AppError {
  cause.gotrue = { code: 'refresh_token_not_found', status: 400 };
  return cause;
}

/** An access token whose session was signed out (GoTrue's session_not_found: auth-js then drops its session). */
export function sessionNotFound(): AppError {
  return named(403, 'AUTH_INVALID_TOKEN', 'The session of this access token has ended (signed out).', 'Sign in again.', { code: 'session_not_found', status: 403 });
}

/** A GoTrue-named refusal: our status and code for the platform's routes, GoTrue's for auth-js. */
function named(status: number, code: string, message: string, remediation: string, gotrue: NonNullable<AppError['gotrue']>, details?: ConstructorParameters<typeof AppError>[4]): AppError {
  const err = new AppError(status, code, message, remediation, details);
  err.gotrue = gotrue;
  return err;
}

/** A mailed code or link that is wrong, used, expired or void after too many tries (GoTrue says all alike). */
export const otpInvalid = () =>
  named(403, 'AUTH_INVALID_TOKEN', 'Token has expired or is invalid', 'Ask for a new e-mail (auth-js signInWithOtp, resend or resetPasswordForEmail).', { code: 'otp_expired', status: 403 });

/** No mail server can carry the app's mail: the flows that mail are off. */
export const mailUnavailable = () =>
  named(422, 'AUTH_MAIL_UNAVAILABLE', 'Email logins are disabled: the app has no mail server.', "Set the app's smtp_url with auth_settings_set, or ask the operator for SVC_SMTP_URL.", {
    code: 'email_provider_disabled',
    status: 422,
  });

export const signupDisabled = () =>
  named(403, 'AUTH_SIGNUP_DISABLED', 'Signups not allowed for this instance', 'The app closed sign-ups (auth_settings_set allow_signup); existing users sign in.', {
    code: 'signup_disabled',
    status: 422,
  });

/** auth-js's signInWithOtp with create_user false, for an address no user has. */
export const otpSignupRefused = () =>
  named(422, 'AUTH_USER_NOT_FOUND', 'Signups not allowed for otp', 'Sign up first, or send create_user true (shouldCreateUser).', { code: 'otp_disabled', status: 422 });

export const flowStateNotFound = () =>
  named(404, 'RESOURCE_NOT_FOUND', 'invalid flow state, no valid flow state found', 'The code was used or never issued: follow a new link.', { code: 'flow_state_not_found', status: 404 });

export const flowStateExpired = () =>
  named(400, 'AUTH_INVALID_TOKEN', 'invalid flow state, flow state has expired', 'Follow a new link; its code must be exchanged within 5 minutes.', { code: 'flow_state_expired', status: 400 });

export const badCodeVerifier = () =>
  named(400, 'AUTH_INVALID_TOKEN', 'code challenge does not match previously saved code verifier', 'Exchange the code in the browser that asked for the link (its storage holds the verifier).', {
    code: 'bad_code_verifier',
    status: 400,
  });

/** updateUser to an address another user has. */
export const emailExists = (cause: AppError) => Object.assign(cause, { gotrue: { code: 'email_exists', status: 422 } });
