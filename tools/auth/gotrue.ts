// The end-user auth routes supabase-js's auth-js calls (GoTrue's protocol) at /v1/{app_id}/auth/v1: REST only (an
// agent has auth_signup and the rest), over the same users and sessions. Inputs name every field auth-js sends.
import { z } from 'zod';
import { toolsUsing, type Ctx } from '../define.ts';
import type { HttpBinding } from '../../src/core/define.ts';
import { AppError, errors } from '../../src/core/errors.ts';
import { AppIdSchema } from '../../src/apps/types.ts';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../src/auth/passwords.ts';
import { emailExists, GOTRUE_API_VERSION, gotrueSession, gotrueUser, invalidEmail, MAX_USER_METADATA_BYTES, refreshTokenNotFound, sessionNotFound, weakPassword } from '../../src/auth/gotrue.ts';
import type { Pkce as PkceInput } from '../../src/auth/mail-flows.ts';
import { rateLimitBucket, routeLimit } from '../../src/auth/rate-limit.ts';
import { hashKey } from '../../src/core/crypto.ts';
import { EmailSchema, enforceLimit } from './auth.ts';

type Uses = 'config' | 'endUsers' | 'endUserMails' | 'rateLimits';
export const defineTool = toolsUsing<Uses>();

export const VERSION_HEADER = { 'X-Supabase-Api-Version': GOTRUE_API_VERSION };

/** A GoTrue route: its errors in GoTrue's shape, every answer with the API version auth-js reads codes by. */
export function gotrue<O>(binding: Omit<HttpBinding<O>, 'errorShape' | 'errorHeaders' | 'subdomainPath'> & { respond?: never }): HttpBinding<O> {
  const short = binding.path.replace('/v1/{app_id}', '');
  return {
    ...binding,
    subdomainPath: short,
    errorShape: 'gotrue',
    errorHeaders: () => VERSION_HEADER,
    respond: (output) => ({ ...(binding.status ? { status: binding.status } : {}), headers: VERSION_HEADER, ...(binding.status === 204 ? {} : { body: output }) }),
  };
}

export const Metadata = z.record(z.string(), z.unknown()).describe('user_metadata: any JSON object (at most 16 KB)');
/** auth-js's captcha envelope; the platform asks for no captcha, so its token is accepted and unused. */
export const MetaSecurity = z.object({ captcha_token: z.string().max(10_000).nullish() }).nullish();
const Password = z.string().max(PASSWORD_MAX_LENGTH, `password must be at most ${PASSWORD_MAX_LENGTH} characters`);
/** PKCE fields auth-js sends with flowType 'pkce' (null otherwise): a mailed link then leads back with ?code=. */
export const Pkce = {
  code_challenge: z.string().min(43).max(128).nullish(),
  code_challenge_method: z.enum(['s256', 'plain', 'S256']).nullish(),
};

/** The PKCE challenge of a request, if it sent one. */
export function pkceOf(input: { code_challenge?: string | null | undefined; code_challenge_method?: 's256' | 'plain' | 'S256' | null | undefined }): PkceInput | null {
  if (!input.code_challenge) return null;
  return { challenge: input.code_challenge, method: input.code_challenge_method === 'plain' ? 'plain' : 's256' };
}

/** Where a mailed link should lead (redirect_to in the query), auth-js's captcha aside. */
export const RedirectTo = z.string().max(2000).optional().describe('In the query string: where the mailed link leads (the app allows it: auth_settings_set)');

export const GotrueUserSchema = z.object({
  id: z.string(),
  aud: z.string(),
  role: z.string(),
  email: z.string(),
  email_confirmed_at: z.string().nullable(),
  phone: z.string(),
  confirmed_at: z.string().nullable(),
  new_email: z.string().optional(),
  last_sign_in_at: z.string().nullable(),
  app_metadata: z.record(z.string(), z.unknown()),
  user_metadata: z.record(z.string(), z.unknown()),
  identities: z.array(z.record(z.string(), z.unknown())),
  created_at: z.string(),
  updated_at: z.string(),
  is_anonymous: z.boolean(),
});

export const GotrueSessionSchema = z.object({
  access_token: z.string(),
  token_type: z.literal('bearer'),
  expires_in: z.number().int(),
  expires_at: z.number().int(),
  refresh_token: z.string(),
  user: GotrueUserSchema,
});

export function checkedEmail(email: string): string {
  const parsed = EmailSchema.safeParse(email);
  if (!parsed.success) throw invalidEmail();
  return parsed.data;
}

function checkedPassword(password: string): string {
  if (password.length < PASSWORD_MIN_LENGTH) throw weakPassword();
  return password;
}

export function checkedMetadata(data: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (data !== undefined && Buffer.byteLength(JSON.stringify(data)) > MAX_USER_METADATA_BYTES) {
    throw errors.validation(`'data' is at most ${MAX_USER_METADATA_BYTES} bytes of JSON: it rides in every access token.`, [{ path: 'data', message: 'too large' }]);
  }
  return data;
}

/** The mails to one address of an app, whichever route asks (a mailbox is not flooded through the platform). */
export async function limitMailTo(ctx: Ctx<Uses>, appId: string, email: string): Promise<void> {
  const { rateLimits, config } = ctx.services;
  await rateLimits.enforce(rateLimitBucket('end_user_mail', appId, hashKey(email)), routeLimit(config, 'end_user_mail'), 'email').catch((err: unknown) => {
    if (err instanceof AppError) err.gotrue = { code: 'over_email_send_rate_limit', status: 429 };
    throw err;
  });
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

export const ANYONE = ['none', 'service', 'platform', 'user'] as const;

export const authGotrueSignup = defineTool({
  name: 'auth_gotrue_signup',
  title: 'Sign up (supabase-js)',
  description:
    "supabase-js's auth.signUp: creates the end user (data as user_metadata) and answers GoTrue's session; when the app asks sign-ups to confirm (auth_settings_set), the user alone, and a confirmation mail.",
  input: z.object({ app_id: AppIdSchema, email: z.string().max(254), password: Password, data: Metadata.optional(), gotrue_meta_security: MetaSecurity, ...Pkce, redirect_to: RedirectTo }),
  // A session, or (confirmation asked) the user alone: one object schema with either's fields.
  output: GotrueSessionSchema.partial().extend(GotrueUserSchema.partial().shape),
  auth: ANYONE,
  appScoped: true,
  mcp: false,
  http: gotrue({ method: 'POST', path: '/v1/{app_id}/auth/v1/signup', query: ['redirect_to'] }),
  handler: async (input, ctx) => {
    const email = checkedEmail(input.email);
    const password = checkedPassword(input.password);
    const metadata = checkedMetadata(input.data) ?? {};
    await enforceLimit(ctx, 'signup', input.app_id);
    await limitMailTo(ctx, input.app_id, email);
    const made = await ctx.services.endUserMails.signup(input.app_id, { email, password, metadata }, { redirectTo: input.redirect_to, pkce: pkceOf(input) });
    return 'access_token' in made ? gotrueSession(made) : gotrueUser(made);
  },
});

export const authGotrueToken = defineTool({
  name: 'auth_gotrue_token',
  title: 'Sign in or refresh (supabase-js)',
  description:
    "supabase-js's signInWithPassword (grant_type=password: email, password), session refresh (grant_type=refresh_token) and exchangeCodeForSession (grant_type=pkce: auth_code, code_verifier): GoTrue's session.",
  input: z.object({
    app_id: AppIdSchema,
    grant_type: z.enum(['password', 'refresh_token', 'pkce']).describe('In the query string, as auth-js sends it'),
    email: z.string().max(254).optional(),
    password: Password.optional(),
    refresh_token: z.string().min(1).max(512).optional(),
    auth_code: z.string().min(1).max(100).optional(),
    code_verifier: z.string().min(43).max(128).optional(),
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
    if (input.grant_type === 'pkce') {
      if (input.auth_code === undefined || input.code_verifier === undefined) {
        throw errors.validation('grant_type=pkce takes auth_code and code_verifier.', [{ path: input.auth_code === undefined ? 'auth_code' : 'code_verifier', message: 'required' }]);
      }
      await enforceLimit(ctx, 'verify', input.app_id);
      return gotrueSession(await ctx.services.endUserMails.exchange(input.app_id, input.auth_code, input.code_verifier));
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
    "supabase-js's auth.updateUser: data merged into user_metadata (a null value removes its key), a new password, a new email (confirmed by mail first when the app asks sign-ups to confirm).",
  input: z.object({ app_id: AppIdSchema, data: Metadata.optional(), password: Password.optional(), email: z.string().max(254).optional(), nonce: z.string().max(100).optional(), ...Pkce, redirect_to: RedirectTo }),
  output: GotrueUserSchema,
  auth: ['user'],
  appScoped: true,
  mcp: false,
  http: gotrue({ method: 'PUT', path: '/v1/{app_id}/auth/v1/user', query: ['redirect_to'] }),
  handler: async (input, ctx) => {
    const { userId } = await signedIn(ctx, input.app_id);
    const password = input.password === undefined ? undefined : checkedPassword(input.password);
    const email = input.email === undefined ? undefined : checkedEmail(input.email);
    let row = await ctx.services.endUsers.update(input.app_id, userId, { metadata: checkedMetadata(input.data), password });
    if (email !== undefined && email !== row.email) {
      await limitMailTo(ctx, input.app_id, email);
      row = await ctx.services.endUserMails.changeEmail(input.app_id, userId, email, { redirectTo: input.redirect_to, pkce: pkceOf(input) }).catch((err: unknown) => {
        throw err instanceof AppError && err.code === 'CONFLICT' ? emailExists(err) : err;
      });
    }
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
