// The end-user auth routes supabase-js's auth-js calls (GoTrue's protocol) at /v1/{app_id}/auth/v1: REST only (an
// agent has auth_signup and the rest), over the same users and sessions. Inputs name every field auth-js sends.
import { z } from 'zod';
import { toolsUsing, type Ctx } from '../define.ts';
import type { HttpBinding } from '../../src/core/define.ts';
import { AppError, errors } from '../../src/core/errors.ts';
import { AppIdSchema } from '../../src/apps/types.ts';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../src/auth/passwords.ts';
import { GOTRUE_API_VERSION, gotrueSession, gotrueUser, invalidEmail, MAX_USER_METADATA_BYTES, refreshTokenNotFound, sessionNotFound, weakPassword } from '../../src/auth/gotrue.ts';
import { EmailSchema, enforceLimit } from './auth.ts';

type Uses = 'config' | 'endUsers' | 'rateLimits';
const defineTool = toolsUsing<Uses>();

const VERSION_HEADER = { 'X-Supabase-Api-Version': GOTRUE_API_VERSION };

/** A GoTrue route: its errors in GoTrue's shape, every answer with the API version auth-js reads codes by. */
function gotrue<O>(binding: Omit<HttpBinding<O>, 'errorShape' | 'errorHeaders' | 'subdomainPath'> & { respond?: never }): HttpBinding<O> {
  const short = binding.path.replace('/v1/{app_id}', '');
  return {
    ...binding,
    subdomainPath: short,
    errorShape: 'gotrue',
    errorHeaders: () => VERSION_HEADER,
    respond: (output) => ({ ...(binding.status ? { status: binding.status } : {}), headers: VERSION_HEADER, ...(binding.status === 204 ? {} : { body: output }) }),
  };
}

const Metadata = z.record(z.string(), z.unknown()).describe('user_metadata: any JSON object (at most 16 KB)');
/** auth-js's captcha envelope; the platform asks for no captcha, so its token is accepted and unused. */
const MetaSecurity = z.object({ captcha_token: z.string().max(10_000).nullish() }).nullish();
const Password = z.string().max(PASSWORD_MAX_LENGTH, `password must be at most ${PASSWORD_MAX_LENGTH} characters`);
/** PKCE fields auth-js sends (null without flowType 'pkce'): accepted; no flow of these routes redirects, so none is needed. */
const Pkce = {
  code_challenge: z.string().max(200).nullish(),
  code_challenge_method: z.string().max(10).nullish(),
};

const GotrueUserSchema = z.object({
  id: z.string(),
  aud: z.string(),
  role: z.string(),
  email: z.string(),
  email_confirmed_at: z.string(),
  phone: z.string(),
  confirmed_at: z.string(),
  last_sign_in_at: z.string().nullable(),
  app_metadata: z.record(z.string(), z.unknown()),
  user_metadata: z.record(z.string(), z.unknown()),
  identities: z.array(z.record(z.string(), z.unknown())),
  created_at: z.string(),
  updated_at: z.string(),
  is_anonymous: z.boolean(),
});

const GotrueSessionSchema = z.object({
  access_token: z.string(),
  token_type: z.literal('bearer'),
  expires_in: z.number().int(),
  expires_at: z.number().int(),
  refresh_token: z.string(),
  user: GotrueUserSchema,
});

function checkedEmail(email: string): string {
  const parsed = EmailSchema.safeParse(email);
  if (!parsed.success) throw invalidEmail();
  return parsed.data;
}

function checkedPassword(password: string): string {
  if (password.length < PASSWORD_MIN_LENGTH) throw weakPassword();
  return password;
}

function checkedMetadata(data: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (data !== undefined && Buffer.byteLength(JSON.stringify(data)) > MAX_USER_METADATA_BYTES) {
    throw errors.validation(`'data' is at most ${MAX_USER_METADATA_BYTES} bytes of JSON: it rides in every access token.`, [{ path: 'data', message: 'too large' }]);
  }
  return data;
}

/**
 * The end user a GoTrue route acts for: the access token in Authorization (auth-js sends nothing else), whose session
 * must still be open (a token outlives a sign-out until it expires; GoTrue refuses it at once, and so does this).
 */
async function signedIn(ctx: Ctx<Uses>, appId: string): Promise<{ userId: string; sessionId: string | undefined }> {
  const caller = ctx.caller;
  if (caller.kind !== 'user') throw errors.authRequired();
  const claim = caller.claims.session_id;
  const sessionId = typeof claim === 'string' ? claim : undefined;
  if (sessionId !== undefined && !(await ctx.services.endUsers.sessionOpen(appId, caller.userId, sessionId))) throw sessionNotFound();
  return { userId: caller.userId, sessionId };
}

const ANYONE = ['none', 'service', 'platform', 'user'] as const;

export const authGotrueSignup = defineTool({
  name: 'auth_gotrue_signup',
  title: 'Sign up (supabase-js)',
  description:
    "supabase-js's auth.signUp: creates the end user (data as user_metadata) and answers GoTrue's session, signed in (no email confirmation).",
  input: z.object({ app_id: AppIdSchema, email: z.string().max(254), password: Password, data: Metadata.optional(), gotrue_meta_security: MetaSecurity, ...Pkce, redirect_to: z.string().max(2000).optional() }),
  output: GotrueSessionSchema,
  auth: ANYONE,
  appScoped: true,
  mcp: false,
  http: gotrue({ method: 'POST', path: '/v1/{app_id}/auth/v1/signup', query: ['redirect_to'] }),
  handler: async (input, ctx) => {
    const email = checkedEmail(input.email);
    const password = checkedPassword(input.password);
    const metadata = checkedMetadata(input.data) ?? {};
    await enforceLimit(ctx, 'signup', input.app_id);
    return gotrueSession(await ctx.services.endUsers.signup(input.app_id, email, password, metadata));
  },
});

export const authGotrueToken = defineTool({
  name: 'auth_gotrue_token',
  title: 'Sign in or refresh (supabase-js)',
  description:
    "supabase-js's signInWithPassword (grant_type=password: email, password) and session refresh (grant_type=refresh_token): GoTrue's session.",
  input: z.object({
    app_id: AppIdSchema,
    grant_type: z.enum(['password', 'refresh_token']).describe('In the query string, as auth-js sends it'),
    email: z.string().max(254).optional(),
    password: Password.optional(),
    refresh_token: z.string().min(1).max(512).optional(),
    gotrue_meta_security: MetaSecurity,
  }),
  output: GotrueSessionSchema,
  auth: ANYONE,
  appScoped: true,
  billingGate: 'session',
  mcp: false,
  http: gotrue({ method: 'POST', path: '/v1/{app_id}/auth/v1/token', query: ['grant_type'] }),
  handler: async (input, ctx) => {
    if (input.grant_type === 'password') {
      if (input.email === undefined || input.password === undefined) {
        throw errors.validation('grant_type=password takes email and password.', [{ path: input.email === undefined ? 'email' : 'password', message: 'required' }]);
      }
      await enforceLimit(ctx, 'login', input.app_id);
      return gotrueSession(await ctx.services.endUsers.login(input.app_id, input.email.trim().toLowerCase(), input.password));
    }
    if (input.refresh_token === undefined) throw errors.validation('grant_type=refresh_token takes refresh_token.', [{ path: 'refresh_token', message: 'required' }]);
    await enforceLimit(ctx, 'refresh', input.app_id);
    try {
      return gotrueSession(await ctx.services.endUsers.refresh(input.app_id, input.refresh_token));
    } catch (err) {
      throw err instanceof AppError && err.code === 'AUTH_INVALID_TOKEN' ? refreshTokenNotFound(err) : err;
    }
  },
});

export const authGotrueUser = defineTool({
  name: 'auth_gotrue_user',
  title: 'The signed-in user (supabase-js)',
  description: "supabase-js's auth.getUser: the end user of the access token in Authorization, as GoTrue's user.",
  input: z.object({ app_id: AppIdSchema }),
  output: GotrueUserSchema,
  auth: ['user'],
  appScoped: true,
  mcp: false,
  http: gotrue({ method: 'GET', path: '/v1/{app_id}/auth/v1/user' }),
  handler: async (input, ctx) => gotrueUser(await ctx.services.endUsers.account(input.app_id, (await signedIn(ctx, input.app_id)).userId)),
});

export const authGotrueUserUpdate = defineTool({
  name: 'auth_gotrue_user_update',
  title: 'Update the signed-in user (supabase-js)',
  description:
    "supabase-js's auth.updateUser: data merged into user_metadata (a null value removes its key) and a new password; the email cannot change here.",
  input: z.object({ app_id: AppIdSchema, data: Metadata.optional(), password: Password.optional(), email: z.string().max(254).optional(), nonce: z.string().max(100).optional(), ...Pkce }),
  output: GotrueUserSchema,
  auth: ['user'],
  appScoped: true,
  mcp: false,
  http: gotrue({ method: 'PUT', path: '/v1/{app_id}/auth/v1/user' }),
  handler: async (input, ctx) => {
    const { userId } = await signedIn(ctx, input.app_id);
    if (input.email !== undefined) {
      throw errors.validation("Changing an end user's email is not supported: sign up the new address instead.", [{ path: 'email', message: 'not supported' }]);
    }
    const password = input.password === undefined ? undefined : checkedPassword(input.password);
    const row = await ctx.services.endUsers.update(input.app_id, userId, { metadata: checkedMetadata(input.data), password });
    return gotrueUser(row);
  },
});

export const authGotrueLogout = defineTool({
  name: 'auth_gotrue_logout',
  title: 'Sign out (supabase-js)',
  description:
    "supabase-js's auth.signOut: scope global (every session of the user, the default), local (this token's session) or others; 204.",
  input: z.object({ app_id: AppIdSchema, scope: z.enum(['global', 'local', 'others']).default('global').describe('In the query string') }),
  output: z.object({}),
  auth: ['user'],
  appScoped: true,
  billingGate: 'session',
  mcp: false,
  http: gotrue({ method: 'POST', path: '/v1/{app_id}/auth/v1/logout', query: ['scope'], status: 204 }),
  handler: async (input, ctx) => {
    const { userId, sessionId } = await signedIn(ctx, input.app_id);
    await ctx.services.endUsers.logoutScope(input.app_id, userId, sessionId, input.scope);
    return {};
  },
});

export const gotrueTools = [authGotrueSignup, authGotrueToken, authGotrueUser, authGotrueUserUpdate, authGotrueLogout];
