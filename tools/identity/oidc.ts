// OpenID Connect sign-in of people (src/identity/oidc.ts). REST only, for a browser: start and callback answer 302.
// Every failure of the flow sends the browser back to the platform's page as /?signin_error=<CODE> (the codes of
// src/identity/errors.ts) rather than a JSON body it would show raw; only a malformed start link (its redirect or
// invitation_token) is the standard 400 envelope.
import { parse, serialize } from 'cookie';
import { z } from 'zod';
import { toolsUsing } from '../define.ts';
import { AppError } from '../../src/core/errors.ts';
import { isLocalPath, OIDC_CALLBACK_PATH, OIDC_SIGNIN_SECONDS, OIDC_START_PATH, oidcBindingCookieName } from '../../src/identity/oidc.ts';
import { clientInfo, sessionOf } from './session.ts';

type Uses = 'config' | 'identity' | 'oidc';
const defineTool = toolsUsing<Uses>();

/**
 * The binding cookie (oidcBindingCookieName): HttpOnly; SameSite=Lax, which the provider's redirect back (a top-level
 * GET from its site) still carries; on plain http sent only to the OpenID Connect routes (a `__Host-` cookie must have
 * Path=/), and gone when the sign-in expires. The sign-in row is single-use, so the callback leaves it to expire.
 */
function bindingCookie(binding: string, secure: boolean): string {
  const path = secure ? '/' : '/dashboard/oidc';
  return serialize(oidcBindingCookieName(secure), binding, { httpOnly: true, sameSite: 'lax', secure, path, maxAge: OIDC_SIGNIN_SECONDS });
}

function bindingOf(cookieHeader: string | undefined, secure: boolean): string | undefined {
  return cookieHeader ? parse(cookieHeader)[oidcBindingCookieName(secure)] || undefined : undefined;
}

/** Where a failed sign-in sends the browser: the platform's page, with the error's code. Anything else is a bug and stays one. */
function failedSignIn(err: unknown): { location: string } {
  if (!(err instanceof AppError)) throw err;
  return { location: `/?signin_error=${encodeURIComponent(err.code)}` };
}

const RedirectSchema = z.object({ location: z.string(), set_cookie: z.string().optional() });

/** The 302 of start and callback; never cached, since each one is single-use. */
function redirectWire(out: z.output<typeof RedirectSchema>) {
  const headers: Record<string, string> = { location: out.location, 'cache-control': 'no-store' };
  if (out.set_cookie) headers['set-cookie'] = out.set_cookie;
  return { status: 302, headers, body: undefined };
}

export const accountOidcProviders = defineTool({
  name: 'account_oidc_providers',
  title: 'OpenID Connect providers',
  description:
    'The OpenID Connect providers people may sign in with (none, or the one the operator configured): the button label ' +
    'and the link that starts the sign-in, GET /dashboard/oidc/start.',
  input: z.object({}),
  output: z.object({ providers: z.array(z.object({ name: z.string(), start_url: z.string() })) }),
  auth: ['none', 'platform'],
  role: 'viewer',
  mcp: false,
  annotations: { readOnlyHint: true },
  http: { method: 'GET', path: '/dashboard/oidc' },
  handler: async (_input, ctx) => ({ providers: ctx.services.oidc.providers() }),
});

export const accountOidcStart = defineTool({
  name: 'account_oidc_start',
  title: 'Sign in with OpenID Connect',
  description:
    "A browser link: 302 to the provider's sign-in (authorization code with PKCE, state and nonce), bound to this browser " +
    'by the short-lived HttpOnly cookie svc_oidc. The provider sends the browser back to GET /dashboard/oidc/callback. ' +
    'A failure goes to /?signin_error=<code>.',
  input: z.object({
    redirect: z
      .string()
      .max(2000, 'redirect is at most 2000 characters')
      .refine(isLocalPath, 'redirect must be a path on this platform, such as /apps')
      .optional()
      .describe('Where to land once signed in (default /)'),
    invitation_token: z.string().max(200, 'invitation_token is at most 200 characters').optional().describe('An invitation a new person signs up with'),
  }),
  output: RedirectSchema,
  auth: ['none', 'platform'],
  role: 'viewer',
  mcp: false,
  http: { method: 'GET', path: OIDC_START_PATH, respond: redirectWire },
  handler: async (input, ctx) => {
    try {
      const started = await ctx.services.oidc.start(input);
      return { location: started.location, set_cookie: bindingCookie(started.binding, ctx.services.config.secureCookies) };
    } catch (err) {
      return failedSignIn(err);
    }
  },
});

export const accountOidcCallback = defineTool({
  name: 'account_oidc_callback',
  title: 'OpenID Connect callback',
  description:
    'Where the provider sends the browser back (register <base URL>/dashboard/oidc/callback at the provider). Signs the ' +
    'person in (cookie svc_session) and answers 302 to the redirect given at the start; a failure goes to /?signin_error=<code>.',
  input: z.object({
    query: z.string().max(8192).describe('The raw query string (code, state, or the provider\'s error)'),
    cookie: z.string().max(16384).optional().describe('The Cookie header; only svc_oidc is read'),
  }),
  output: RedirectSchema,
  auth: ['none', 'platform'],
  role: 'viewer',
  mcp: false,
  http: { method: 'GET', path: OIDC_CALLBACK_PATH, queryField: 'query', headers: { cookie: 'cookie' }, respond: redirectWire },
  handler: async (input, ctx) => {
    try {
      const { signedIn, redirect } = await ctx.services.oidc.finish(input.query, bindingOf(input.cookie, ctx.services.config.secureCookies), clientInfo(ctx));
      const session = sessionOf(ctx);
      // Sign-in rotates: a session the browser still held ends here.
      if (session.token) await ctx.services.identity.sessions.end(session.token);
      session.set(signedIn.session);
      return { location: redirect };
    } catch (err) {
      return failedSignIn(err);
    }
  },
});

export const oidcTools = [accountOidcProviders, accountOidcStart, accountOidcCallback];
