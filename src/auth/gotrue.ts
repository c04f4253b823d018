// The end users' auth as GoTrue (Supabase Auth) answers it, for supabase-js's auth-js at /v1/{app_id}/auth/v1: its
// session and user objects over the same users, sessions and tokens as the platform's own auth routes.
import { AppError } from '../core/errors.ts';
import { APP_METADATA, type AccountRow, type AuthSession } from './users.ts';
import { PASSWORD_MIN_LENGTH } from './passwords.ts';

/** The API version auth-js asks for and reads error codes by (X-Supabase-Api-Version). */
export const GOTRUE_API_VERSION = '2024-01-01';

/** How much user_metadata a user may carry: it rides in every access token. */
export const MAX_USER_METADATA_BYTES = 16 * 1024;

/** GoTrue's user object (auth-js's User): every end user signs in with email and password, confirmed at sign-up. */
export function gotrueUser(row: AccountRow) {
  const created = row.created_at.toISOString();
  const lastSignIn = row.last_sign_in_at?.toISOString() ?? null;
  const updated = (row.updated_at ?? row.created_at).toISOString();
  return {
    id: row.id,
    aud: 'authenticated',
    role: 'authenticated',
    email: row.email,
    email_confirmed_at: created,
    phone: '',
    confirmed_at: created,
    last_sign_in_at: lastSignIn,
    app_metadata: APP_METADATA,
    user_metadata: row.raw_user_meta_data,
    identities: [
      {
        identity_id: row.id,
        id: row.id,
        user_id: row.id,
        identity_data: { sub: row.id, email: row.email, email_verified: true, phone_verified: false },
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
  const err = new AppError(422, 'VALIDATION_FAILED', `Password should be at least ${PASSWORD_MIN_LENGTH} characters.`, 'Choose a longer password.', [
    { path: 'password', message: `at least ${PASSWORD_MIN_LENGTH} characters` },
  ]);
  err.gotrue = { code: 'weak_password', status: 422, weakPassword: ['length'] };
  return err;
}

/** An address GoTrue would not take. */
export function invalidEmail(): AppError {
  const err = new AppError(400, 'VALIDATION_FAILED', 'Unable to validate email address: invalid format.', 'Send a valid email address.', [
    { path: 'email', message: 'not a valid email address' },
  ]);
  err.gotrue = { code: 'email_address_invalid', status: 400 };
  return err;
}

/** A refresh token that is unknown, used, expired or revoked, as GoTrue says it (auth-js then ends the session). */
export function refreshTokenNotFound(cause: AppError): AppError {
  cause.gotrue = { code: 'refresh_token_not_found', status: 400 };
  return cause;
}

/** An access token whose session was signed out (GoTrue's session_not_found: auth-js then drops its session). */
export function sessionNotFound(): AppError {
  const err = new AppError(403, 'AUTH_INVALID_TOKEN', 'The session of this access token has ended (signed out).', 'Sign in again.');
  err.gotrue = { code: 'session_not_found', status: 403 };
  return err;
}
