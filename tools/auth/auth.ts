import { z } from 'zod';
import { type AnyTool } from '../../src/core/define.ts';
import { toolsUsing, type Ctx } from '../define.ts';
import { AppIdSchema } from '../../src/apps/types.ts';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../src/auth/passwords.ts';
import { rateLimitBucket, routeLimit, type RateLimitedRoute } from '../../src/auth/rate-limit.ts';
import { confirmationSent, USERS_LIST_LIMIT } from '../../src/auth/users.ts';
import { endUserCaller, UserTokenSchema } from '../shared.ts';

type Uses = 'config' | 'endUserTokens' | 'endUsers' | 'endUserMails' | 'rateLimits';
const defineTool = toolsUsing<Uses>();

// .email() after trim/toLowerCase: the format is checked on the normalized value, and the JSON Schema keeps format: email.
export const EmailSchema = z.string().trim().toLowerCase().max(254, 'email is at most 254 characters').email('email must be a valid email address');

export const PasswordSchema = z
  .string()
  .min(PASSWORD_MIN_LENGTH, `password must be at least ${PASSWORD_MIN_LENGTH} characters`)
  .max(PASSWORD_MAX_LENGTH, `password must be at most ${PASSWORD_MAX_LENGTH} characters`);

// Only the shape is checked here: any wrong token is a 401, not a 400, so nothing is learnt from the format.
const RefreshTokenSchema = z.string().min(1, 'refresh_token must not be empty').max(512, 'refresh_token is at most 512 characters');

const CredentialsInput = z.object({
  app_id: AppIdSchema,
  email: EmailSchema.describe('The end user\'s email; compared case-insensitively'),
  password: PasswordSchema.describe(`${PASSWORD_MIN_LENGTH}-${PASSWORD_MAX_LENGTH} characters`),
});

const SessionUserSchema = z.object({ id: z.string(), email: z.string(), created_at: z.string() });

const EndUserSchema = SessionUserSchema.extend({ last_sign_in_at: z.string().nullable() });

const SessionSchema = z.object({
  access_token: z.string().describe('ES256 JWT for Authorization: Bearer; audience is the app_id'),
  token_type: z.literal('bearer'),
  expires_in: z.number().int().describe('Seconds until the access token expires'),
  refresh_token: z.string().describe('Single-use; exchange it at auth_refresh for a new pair'),
  user: SessionUserSchema,
});

const JwkSchema = z.object({
  kty: z.string(),
  crv: z.string(),
  x: z.string(),
  y: z.string(),
  kid: z.string(),
  alg: z.literal('ES256'),
  use: z.literal('sig'),
});

const ANYONE = ['none', 'service', 'platform', 'user'] as const;

/** Counted before any password work: argon2 is the expensive part, so a flood never reaches it. */
export async function enforceLimit(ctx: Ctx<'config' | 'rateLimits'>, route: RateLimitedRoute, appId: string): Promise<void> {
  const { rateLimits, config } = ctx.services;
  await rateLimits.enforce(rateLimitBucket(route, appId, ctx.clientId), routeLimit(config, route));
}

/** Tools for the signed-in end user: their token, or a key of the app acting as them with user_token. */
const END_USER = ['user', 'service', 'platform'] as const;
const END_USER_NOTE = " With a platform or service key, pass the user's access token as user_token (required then).";

export const authSignup = defineTool({
  name: 'auth_signup',
  title: 'Sign up an end user',
  description:
    'Create an end user of an app and sign them in: { access_token, token_type, expires_in, refresh_token, user }. ' +
    'access_token is the user_token of tools acting as them (REST: Bearer); auth_refresh renews it. A registered email: 409 ' +
    'CONFLICT (auth_login). Sign-ups to confirm (auth_settings_get): 403 AUTH_EMAIL_NOT_CONFIRMED, a link is mailed. ' +
    '429 RATE_LIMITED (details.retry_after_seconds). No credential needed.',
  input: CredentialsInput,
  output: SessionSchema,
  auth: ANYONE,
  appScoped: true,
  http: { method: 'POST', path: '/v1/{app_id}/auth/signup', subdomainPath: '/auth/signup', status: 201 },
  annotations: { destructiveHint: false, idempotentHint: false },
  handler: async (input, ctx) => {
    await enforceLimit(ctx, 'signup', input.app_id);
    const made = await ctx.services.endUserMails.signup(input.app_id, { email: input.email, password: input.password, metadata: {} }, { redirectTo: undefined, pkce: null });
    if (!('access_token' in made)) throw confirmationSent();
    return made;
  },
});

export const authLogin = defineTool({
  name: 'auth_login',
  title: 'Log in an end user',
  description:
    'Sign an end user of an app in with email and password. Returns the same body as auth_signup: a short-lived access ' +
    'token and a refresh token. A wrong password and an unknown email both give 401 AUTH_INVALID_CREDENTIALS. ' +
    'Rate-limited per client and app (429 RATE_LIMITED with details.retry_after_seconds).',
  input: CredentialsInput,
  output: SessionSchema,
  auth: ANYONE,
  appScoped: true,
  billingGate: 'session',
  http: { method: 'POST', path: '/v1/{app_id}/auth/login', subdomainPath: '/auth/login' },
  annotations: { destructiveHint: false, idempotentHint: false },
  handler: async (input, ctx) => {
    await enforceLimit(ctx, 'login', input.app_id);
    return ctx.services.endUsers.login(input.app_id, input.email, input.password);
  },
});

export const authRefresh = defineTool({
  name: 'auth_refresh',
  title: 'Refresh an end-user session',
  description:
    'A refresh token for a new access and refresh token. Each works once (keep the new one): a used one presented again ' +
    'ends that whole session as theft; an invalid, expired or revoked one is 401 AUTH_INVALID_TOKEN (log in again).',
  input: z.object({ app_id: AppIdSchema, refresh_token: RefreshTokenSchema.describe('The refresh_token of the last auth_signup, auth_login or auth_refresh') }),
  output: SessionSchema,
  auth: ANYONE,
  appScoped: true,
  billingGate: 'session',
  http: { method: 'POST', path: '/v1/{app_id}/auth/refresh', subdomainPath: '/auth/refresh' },
  annotations: { destructiveHint: false, idempotentHint: false },
  handler: async (input, ctx) => {
    await enforceLimit(ctx, 'refresh', input.app_id);
    return ctx.services.endUsers.refresh(input.app_id, input.refresh_token);
  },
});

export const authLogout = defineTool({
  name: 'auth_logout',
  title: 'Log out an end user',
  description:
    "End the end user's sessions: with refresh_token that session only, without all of them. Refresh tokens stop working at once; " +
    'access tokens stay valid until they expire, so clients should discard them. REST answers 204. Idempotent.' +
    END_USER_NOTE,
  input: z.object({
    app_id: AppIdSchema,
    refresh_token: RefreshTokenSchema.optional().describe('Ends only the session of this refresh token; omit to end all sessions'),
    user_token: UserTokenSchema,
  }),
  output: z.object({ logged_out: z.literal(true), revoked_tokens: z.number().int() }),
  auth: END_USER,
  appScoped: true,
  billingGate: 'session',
  http: { method: 'POST', path: '/v1/{app_id}/auth/logout', subdomainPath: '/auth/logout', status: 204 },
  annotations: { destructiveHint: true, idempotentHint: true },
  handler: async (input, ctx) => {
    const user = await endUserCaller(input, ctx);
    const revoked = await ctx.services.endUsers.logout(input.app_id, user.userId, input.refresh_token);
    return { logged_out: true as const, revoked_tokens: revoked };
  },
});

export const authUser = defineTool({
  name: 'auth_user',
  title: 'Get the signed-in end user',
  description:
    "The calling end user's account: { id, email, created_at, last_sign_in_at }; 404 RESOURCE_NOT_FOUND if deleted since the token was issued." +
    END_USER_NOTE,
  input: z.object({ app_id: AppIdSchema, user_token: UserTokenSchema }),
  output: EndUserSchema,
  auth: END_USER,
  appScoped: true,
  http: { method: 'GET', path: '/v1/{app_id}/auth/user', subdomainPath: '/auth/user' },
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ctx.services.endUsers.get(input.app_id, (await endUserCaller(input, ctx)).userId),
});

export const authUsersList = defineTool({
  name: 'auth_users_list',
  title: 'List an app\'s end users',
  description:
    "An app's end users, newest first: { users: [{ id, email, created_at, last_sign_in_at }], next_cursor } (pass it as cursor " +
    'for the next page; null at the end). Owner or service key.',
  input: z.object({
    app_id: AppIdSchema,
    limit: z.coerce.number().int().min(1).max(USERS_LIST_LIMIT).optional().describe(`1-${USERS_LIST_LIMIT} (default)`),
    cursor: z.string().max(200).optional(),
    q: z.string().min(1).max(200).optional().describe('E-mail contains'),
  }),
  output: z.object({ users: z.array(EndUserSchema), next_cursor: z.string().nullable() }),
  auth: ['platform', 'service'],
  appScoped: true,
  http: { method: 'GET', path: '/v1/{app_id}/auth/users', subdomainPath: '/auth/users' },
  annotations: { readOnlyHint: true },
  handler: async ({ app_id, ...page }, ctx) => ctx.services.endUsers.list(app_id, page),
});

export const authJwks = defineTool({
  name: 'auth_jwks',
  title: 'Get an app\'s token signing keys (JWKS)',
  description:
    'The public keys (JWKS) that verify an app\'s end-user access tokens: ES256, issuer the platform base URL, audience ' +
    'the app_id. Public: point any JWT library (e.g. jose createRemoteJWKSet) at this URL to verify tokens in your own services.',
  input: z.object({ app_id: AppIdSchema }),
  output: z.object({ keys: z.array(JwkSchema) }),
  auth: ['none', 'platform', 'service', 'user', 'substrate'],
  appScoped: true,
  http: {
    method: 'GET',
    path: '/v1/{app_id}/.well-known/jwks.json',
    subdomainPath: '/.well-known/jwks.json',
    // Public and rarely changing; verifiers refetch on an unknown kid anyway.
    respond: () => ({ headers: { 'cache-control': 'public, max-age=300' } }),
  },
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ctx.services.endUserTokens.jwks(input.app_id),
});

/** End-user auth tools. */
export const authTools: readonly AnyTool[] = [authSignup, authLogin, authRefresh, authLogout, authUser, authUsersList, authJwks];
