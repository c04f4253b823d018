// The auth area's hand-written guide (GET /llms.txt?area=auth); src/platform/area-guides.ts lists it.
import type { AreaGuide } from '../platform/area-guide.ts';

export const AUTH_GUIDE: AreaGuide = {
  summary:
    "End users of an app: sign up, log in, refresh and log out, read the signed-in account; list an app's users; the public keys that verify their tokens; e-mail settings.",
  reference: `
- \`auth_signup\` and \`auth_login\` (no credential needed) return \`{ access_token, token_type: "bearer", expires_in,
  refresh_token, user }\`. Send the access token as \`Authorization: Bearer\` to the app's routes, or pass it as
  \`user_token\` with your key to any tool that serves end users (data, storage, auth_user, auth_logout,
  functions_invoke): the call then sees and does exactly what that user would.
- Passwords are 8-200 characters; emails are case-insensitive. An email already registered is 409 CONFLICT; a wrong
  password or unknown email 401 AUTH_INVALID_CREDENTIALS. Signup and login are rate-limited per client and app: 429
  RATE_LIMITED with \`details.retry_after_seconds\`.
- Access tokens are ES256 JWTs (issuer the base URL, audience the app_id, claims \`sub\`, \`email\`,
  \`role: "authenticated"\`), short-lived and stateless: they stay valid until they expire, also after logout. Refresh
  tokens work once: \`auth_refresh\` returns a new pair; presenting a used one again ends that whole session. An
  invalid, expired or revoked token is 401 AUTH_INVALID_TOKEN.
- auth_user and auth_logout act for an end user: their own token as the credential, or a key with \`user_token\`
  (a key without it is 400 VALIDATION_FAILED).
- supabase-js: \`createClient('{base}/v1/{app_id}', publishable_key)\`; its auth (auth-js) speaks GoTrue at
  \`/v1/{app_id}/auth/v1\` over the same users and sessions: signUp (\`data\` becomes \`user_metadata\`),
  signInWithPassword, refreshSession, getUser, updateUser (metadata merged, a null removes its key; a new password; a new
  email), signOut with scope global, local or others, and the flows through e-mail: signInWithOtp (a magic link and a
  6-digit code), resetPasswordForEmail, resend, verifyOtp, and exchangeCodeForSession for flowType 'pkce' (the mailed
  link then leads back with \`?code=\`; otherwise with the session in the URL fragment). Errors are GoTrue's
  \`{ code, error_code, msg, message }\` (user_already_exists 422, weak_password 422, email_address_invalid 400,
  invalid_credentials 400, email_not_confirmed 400, otp_expired 403, refresh_token_not_found 400, bad_jwt 403,
  no_authorization 401, email_provider_disabled 422, signup_disabled 422). Tokens also carry \`session_id\`,
  \`user_metadata\` and \`app_metadata\`; on these routes a token whose session was signed out is 403
  session_not_found at once. auth-js's getClaims reads the app's keys at \`/v1/{app_id}/auth/v1/.well-known/jwks.json\`.
  Not served: OAuth providers, phone, MFA, anonymous sign-in, admin.
- \`auth_settings_set\`: \`confirm_email\` (no session until the mailed link or code confirms the address; auth_signup
  and auth_login are then 403 AUTH_EMAIL_NOT_CONFIRMED, the account made and mailed), \`allow_signup\`, \`site_url\`
  and \`redirect_urls\` (a link's redirect_to must share the site's origin or lie under one, else it leads to
  site_url), \`smtp_url\`/\`mail_from\` (the app's mail server, else the platform's; \`mail_route\` says which, and
  with none the mailing routes are 422 email_provider_disabled). Links and codes work once, for an hour; a code is
  void after 5 wrong tries.
`,
};
