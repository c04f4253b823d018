// supabase-js's auth flows through e-mail at /v1/{app_id}/auth/v1 (GoTrue's protocol): one-time codes and magic links,
// password recovery, resending, and verifying a code or a mailed link. REST only, like the other GoTrue routes; the mail
// goes out over the app's own SMTP server or the platform's (auth_settings_get says which).
import { z } from 'zod';
import { AppIdSchema } from '../../src/apps/types.ts';
import { gotrueSession } from '../../src/auth/gotrue.ts';
import { VERIFY_TYPES, type EndUserMails, type Verified, type VerifyType } from '../../src/auth/mail-flows.ts';
import type { AuthSession } from '../../src/auth/users.ts';
import { AppError, errors } from '../../src/core/errors.ts';
import { enforceLimit } from './auth.ts';
import { ANYONE, checkedEmail, checkedMetadata, defineTool, GotrueSessionSchema, gotrue, limitMailTo, Metadata, MetaSecurity, Pkce, pkceOf, RedirectTo } from './gotrue.ts';

const Email = z.string().max(254);
const VerifyTypeSchema = z.enum(Object.keys(VERIFY_TYPES) as [VerifyType, ...VerifyType[]]);

export const authGotrueOtp = defineTool({
  name: 'auth_gotrue_otp',
  title: 'Mail a sign-in link and code (supabase-js)',
  description:
    "supabase-js's signInWithOtp by email: mails a magic link and a 6-digit code (verifyOtp type 'email'); a new address becomes a user unless create_user is false. {}.",
  input: z.object({
    app_id: AppIdSchema,
    email: Email,
    data: Metadata.optional(),
    create_user: z.boolean().default(true),
    gotrue_meta_security: MetaSecurity,
    ...Pkce,
    redirect_to: RedirectTo,
  }),
  output: z.object({}),
  auth: ANYONE,
  appScoped: true,
  mcp: false,
  http: gotrue({ method: 'POST', path: '/v1/{app_id}/auth/v1/otp', query: ['redirect_to'] }),
  handler: async (input, ctx) => {
    const email = checkedEmail(input.email);
    await enforceLimit(ctx, 'auth_mail', input.app_id);
    await limitMailTo(ctx, input.app_id, email);
    const create = { createUser: input.create_user, metadata: checkedMetadata(input.data) ?? {} };
    await ctx.services.endUserMails.otp(input.app_id, email, create, { redirectTo: input.redirect_to, pkce: pkceOf(input) });
    return {};
  },
});

export const authGotrueRecover = defineTool({
  name: 'auth_gotrue_recover',
  title: 'Mail a password recovery link (supabase-js)',
  description:
    "supabase-js's resetPasswordForEmail: mails a recovery link and code when a user has the address (the same {} either way); verified, it signs in, then updateUser sets the password.",
  input: z.object({ app_id: AppIdSchema, email: Email, gotrue_meta_security: MetaSecurity, ...Pkce, redirect_to: RedirectTo }),
  output: z.object({}),
  auth: ANYONE,
  appScoped: true,
  mcp: false,
  http: gotrue({ method: 'POST', path: '/v1/{app_id}/auth/v1/recover', query: ['redirect_to'] }),
  handler: async (input, ctx) => {
    const email = checkedEmail(input.email);
    await enforceLimit(ctx, 'auth_mail', input.app_id);
    await limitMailTo(ctx, input.app_id, email);
    await ctx.services.endUserMails.recover(input.app_id, email, { redirectTo: input.redirect_to, pkce: pkceOf(input) });
    return {};
  },
});

export const authGotrueResend = defineTool({
  name: 'auth_gotrue_resend',
  title: 'Mail a confirmation again (supabase-js)',
  description: "supabase-js's auth.resend: type signup (an unconfirmed sign-up's confirmation) or email_change (to the new address). {} either way.",
  input: z.object({ app_id: AppIdSchema, type: z.enum(['signup', 'email_change']), email: Email, gotrue_meta_security: MetaSecurity, ...Pkce, redirect_to: RedirectTo }),
  output: z.object({}),
  auth: ANYONE,
  appScoped: true,
  mcp: false,
  http: gotrue({ method: 'POST', path: '/v1/{app_id}/auth/v1/resend', query: ['redirect_to'] }),
  handler: async (input, ctx) => {
    const email = checkedEmail(input.email);
    await enforceLimit(ctx, 'auth_mail', input.app_id);
    await limitMailTo(ctx, input.app_id, email);
    await ctx.services.endUserMails.resend(input.app_id, input.type, email, { redirectTo: input.redirect_to, pkce: pkceOf(input) });
    return {};
  },
});

export const authGotrueVerify = defineTool({
  name: 'auth_gotrue_verify',
  title: 'Verify a mailed code (supabase-js)',
  description:
    "supabase-js's verifyOtp: type and email with the mailed 6-digit token, or type and token_hash (the link's token). Signs in: GoTrue's session. 403 otp_expired when wrong or used.",
  input: z.object({
    app_id: AppIdSchema,
    type: VerifyTypeSchema,
    email: Email.optional(),
    token: z.string().max(20).optional(),
    token_hash: z.string().max(100).optional(),
    gotrue_meta_security: MetaSecurity,
    redirect_to: RedirectTo,
  }),
  output: GotrueSessionSchema,
  auth: ANYONE,
  appScoped: true,
  mcp: false,
  http: gotrue({ method: 'POST', path: '/v1/{app_id}/auth/v1/verify', query: ['redirect_to'] }),
  handler: async (input, ctx) => {
    await enforceLimit(ctx, 'verify', input.app_id);
    const mails = ctx.services.endUserMails;
    if (input.token_hash !== undefined) return gotrueSession((await mails.verifyToken(input.app_id, input.type, input.token_hash)).session);
    if (input.email === undefined || input.token === undefined) {
      throw errors.validation('verifyOtp takes email and token, or token_hash.', [{ path: input.email === undefined ? 'email' : 'token', message: 'required' }]);
    }
    return gotrueSession((await mails.verifyCode(input.app_id, input.type, checkedEmail(input.email), input.token.trim())).session);
  },
});

/** GoTrue's implicit flow: the session in the fragment, which auth-js reads on the page the link leads to. */
function fragmentOf(session: AuthSession, type: VerifyType): string {
  return new URLSearchParams({
    access_token: session.access_token,
    expires_at: String(session.expires_at),
    expires_in: String(session.expires_in),
    refresh_token: session.refresh_token,
    token_type: 'bearer',
    type,
  }).toString();
}

/** Where a verified link leads: with ?code= for PKCE (exchangeCodeForSession), else with the session in the fragment. */
async function landing(mails: EndUserMails, appId: string, verified: Verified, type: VerifyType, target: string): Promise<string> {
  const url = new URL(target);
  if (verified.pkce) {
    url.searchParams.set('code', await mails.issueAuthCode(appId, verified.session.user.id, verified.pkce, verified.kind));
    return url.href;
  }
  url.hash = fragmentOf(verified.session, type);
  return url.href;
}

export const authGotrueVerifyLink = defineTool({
  name: 'auth_gotrue_verify_link',
  title: 'Follow a mailed link',
  description:
    'The link in an end user\'s mail: verifies its token and redirects (303) to redirect_to (as the app allows) with the session in the fragment, ?code= for PKCE, or #error=.',
  input: z.object({ app_id: AppIdSchema, token: z.string().min(1).max(100), type: VerifyTypeSchema, redirect_to: z.string().max(2000).optional() }),
  output: z.object({ location: z.string() }),
  auth: ANYONE,
  appScoped: true,
  mcp: false,
  http: {
    method: 'GET',
    path: '/v1/{app_id}/auth/v1/verify',
    subdomainPath: '/auth/v1/verify',
    errorShape: 'gotrue',
    respond: (out) => ({ status: 303, headers: { location: out.location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' }, body: undefined }),
  },
  handler: async (input, ctx) => {
    await enforceLimit(ctx, 'verify', input.app_id);
    const mails = ctx.services.endUserMails;
    let verified: Verified;
    try {
      verified = await mails.verifyToken(input.app_id, input.type, input.token);
    } catch (err) {
      if (!(err instanceof AppError) || err.gotrue?.code !== 'otp_expired') throw err;
      const target = new URL(await mails.redirectFor(input.app_id, input.redirect_to));
      target.hash = new URLSearchParams({ error: 'access_denied', error_code: 'otp_expired', error_description: 'Email link is invalid or has expired' }).toString();
      return { location: target.href };
    }
    const target = await mails.redirectFor(input.app_id, verified.redirectTo ?? input.redirect_to);
    return { location: await landing(mails, input.app_id, verified, input.type, target) };
  },
});

export const gotrueMailTools = [authGotrueOtp, authGotrueRecover, authGotrueResend, authGotrueVerify, authGotrueVerifyLink];
