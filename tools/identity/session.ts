// People on the platform signing up, in and out (src/identity). REST only: a session is a browser's credential, set
// as the HttpOnly cookie svc_session, never handed to an agent.
import { z } from 'zod';
import { toolsUsing, type Ctx } from '../define.ts';
import { EmailSchema, PasswordSchema } from '../auth/auth.ts';
import { rateLimitBucket, routeLimit, type RateLimitedRoute, type RateLimitKey } from '../../src/auth/rate-limit.ts';
import { ROLES, type Caller } from '../../src/core/caller.ts';
import { hashKey } from '../../src/core/crypto.ts';
import type { SessionChannel, ToolContext } from '../../src/core/define.ts';
import { errors } from '../../src/core/errors.ts';
import type { SignedIn } from '../../src/identity/service.ts';

type Uses = 'identity' | 'config' | 'rateLimits';
const defineTool = toolsUsing<Uses>();

const PersonSchema = z.object({ id: z.string(), email: z.string(), name: z.string(), email_verified: z.boolean(), created_at: z.string() });
export const SignedInSchema = z.object({ person: PersonSchema, account_id: z.string(), role: z.enum(ROLES) });
const MembershipSchema = z.object({ account_id: z.string(), account_name: z.string(), role: z.enum(ROLES) });
const SessionSchema = z.object({ person: PersonSchema, account_id: z.string(), role: z.enum(ROLES), accounts: z.array(MembershipSchema) });
/**
 * Signed in (201: person, account_id, role), or an open sign-up where the platform sends mail (202: email,
 * mail_configured), the same answer whether or not the address has a person. One object: MCP schemas are objects.
 */
const SignupAnswerSchema = SignedInSchema.partial().extend({
  email: z.string().optional().describe('202: the address the link to finish signing up was mailed to'),
  mail_configured: z.literal(true).optional().describe('202: the link is mailed (or, to an address that has an account, a notice saying so)'),
});

/** The session channel of a REST request; the session routes are REST only, so it is always there. */
export function sessionOf(ctx: Pick<ToolContext, 'session'>): SessionChannel {
  if (!ctx.session) throw new Error('session routes are served over REST only');
  return ctx.session;
}

/** Sets the new session's cookie and answers without its token. */
export function signedIn(ctx: Pick<ToolContext, 'session'>, result: SignedIn) {
  sessionOf(ctx).set(result.session);
  return { person: result.person, account_id: result.account_id, role: result.role };
}

type PersonCaller = Extract<Caller, { kind: 'platform' }> & { personId: string };

/** The caller as a person (a session or an OAuth token); a key is refused. */
function personCaller(caller: Caller): PersonCaller {
  if (caller.kind !== 'platform' || caller.personId === null) throw errors.wrongCredential(['a person\'s session']);
  return caller as PersonCaller;
}

export function personOf(caller: Caller): string {
  return personCaller(caller).personId;
}

/** Where a session is opened from: the client address (the user agent is not among a tool's inputs). */
export const clientInfo = (ctx: { clientId: string }) => ({ ip: ctx.clientId, userAgent: undefined });

type Limited = Ctx<'config' | 'rateLimits'>;

/** Counted before any password or mail work (argon2 and SMTP are the expensive parts): 429 RATE_LIMITED past it. */
async function enforceLimit(ctx: Limited, route: RateLimitedRoute, by: RateLimitKey, value: string): Promise<void> {
  await ctx.services.rateLimits.enforce(rateLimitBucket(route, by, value), routeLimit(ctx.services.config, route), by);
}

/** The route's limit for the client's address (one source trying many people). */
export function limitByClient(ctx: Limited, route: RateLimitedRoute): Promise<void> {
  return enforceLimit(ctx, route, 'client', ctx.clientId);
}

/**
 * The route's limit for one e-mail address, whichever clients ask (many sources trying one person, or flooding their
 * mailbox); hashed, so the rate_limits table keeps no addresses.
 */
export function limitByEmail(ctx: Limited, route: RateLimitedRoute, email: string): Promise<void> {
  return enforceLimit(ctx, route, 'email', hashKey(email));
}

export const accountSignup = defineTool({
  name: 'account_signup',
  title: 'Sign up as a person',
  description:
    'Create a person on the platform and sign them in (cookie svc_session). With invitation_token they join that ' +
    'account with its role; without, where the operator opened sign-up (SVC_SIGNUP=open), they own a new account. ' +
    'A verification link is mailed to the address (account_verify_email). Without an invitation on a platform that ' +
    'sends mail, nothing is made yet: 202, and the link mailed to the address finishes it (account_signup_confirm); the ' +
    'answer is the same for an address that has an account. Rate-limited per client and, when mailing, per address (429 RATE_LIMITED).',
  input: z.object({
    email: EmailSchema,
    password: PasswordSchema,
    name: z.string().trim().max(200, 'name is at most 200 characters').optional(),
    invitation_token: z.string().max(200, 'invitation_token is at most 200 characters').optional().describe('From an invitation, or the file <data dir>/owner-invitation of a fresh platform'),
  }),
  output: SignupAnswerSchema,
  auth: ['none', 'platform'],
  role: 'viewer',
  mcp: false,
  http: { method: 'POST', path: '/dashboard/signup', status: 201, sameOrigin: true, respond: (out) => (out.person ? {} : { status: 202 }) },
  handler: async (input, ctx) => {
    await limitByClient(ctx, 'person_signup');
    const { identity } = ctx.services;
    // The same limit as the other mails to an address, counted before it is looked at.
    if (identity.signUpByMail(input)) await limitByEmail(ctx, 'person_mail', input.email);
    const result = await identity.signUp(input, clientInfo(ctx));
    return 'mailed' in result ? { email: input.email.toLowerCase(), mail_configured: true as const } : signedIn(ctx, result);
  },
});

export const accountSignin = defineTool({
  name: 'account_signin',
  title: 'Sign in as a person',
  description:
    'Sign in with e-mail and password; the session is the HttpOnly cookie svc_session, in the account the person joined first. ' +
    'Rate-limited per client and per e-mail address (429 RATE_LIMITED).',
  input: z.object({ email: EmailSchema, password: z.string().max(200, 'password is at most 200 characters') }),
  output: SignedInSchema,
  auth: ['none', 'platform'],
  role: 'viewer',
  mcp: false,
  http: { method: 'POST', path: '/dashboard/signin', sameOrigin: true },
  handler: async (input, ctx) => {
    await limitByClient(ctx, 'person_signin');
    await limitByEmail(ctx, 'person_signin', input.email);
    const session = sessionOf(ctx);
    // Sign-in rotates: a session the browser still held ends here.
    if (session.token) await ctx.services.identity.sessions.end(session.token);
    return signedIn(ctx, await ctx.services.identity.signIn(input.email, input.password, clientInfo(ctx)));
  },
});

export const accountSignout = defineTool({
  name: 'account_signout',
  title: 'Sign out',
  description: 'End this browser\'s session and clear its cookie. Idempotent.',
  input: z.object({}),
  output: z.object({}),
  auth: ['none', 'platform'],
  role: 'viewer',
  mcp: false,
  http: { method: 'POST', path: '/dashboard/signout', status: 204 },
  handler: async (_input, ctx) => {
    const session = sessionOf(ctx);
    if (session.token) await ctx.services.identity.sessions.end(session.token);
    session.set(null);
    return {};
  },
});

export const accountSignoutAll = defineTool({
  name: 'account_signout_all',
  title: 'Sign out everywhere',
  description: 'End every session of the signed-in person, on every device, and clear this browser\'s cookie.',
  input: z.object({}),
  output: z.object({ ended: z.number().int() }),
  auth: ['platform'],
  role: 'viewer',
  mcp: false,
  http: { method: 'POST', path: '/dashboard/signout-all' },
  handler: async (_input, ctx) => {
    const ended = await ctx.services.identity.sessions.endAll(personOf(ctx.caller));
    sessionOf(ctx).set(null);
    return { ended };
  },
});

export const accountSession = defineTool({
  name: 'account_session',
  title: 'The signed-in person',
  description: 'Who is signed in: the person, the account the session acts in with their role, and every account they belong to.',
  input: z.object({}),
  output: SessionSchema,
  auth: ['platform'],
  mcp: false,
  annotations: { readOnlyHint: true },
  http: { method: 'GET', path: '/dashboard/session' },
  handler: async (_input, ctx) => {
    const { personId, accountId, role } = personCaller(ctx.caller);
    const { identity } = ctx.services;
    return { person: await identity.person(personId), account_id: accountId, role, accounts: await identity.memberships(personId) };
  },
});

export const accountSessionSwitch = defineTool({
  name: 'account_session_switch',
  title: 'Act in another account',
  description: 'Moves this browser session to another account the person belongs to (account_session lists them); its role there applies at once.',
  input: z.object({ account_id: z.string().max(64) }),
  output: SessionSchema,
  auth: ['platform'],
  mcp: false,
  // Any member may choose which of their accounts the session acts in; the role there is what it then gets.
  role: 'viewer',
  http: { method: 'POST', path: '/dashboard/session/account' },
  annotations: { idempotentHint: true },
  handler: async (input, ctx) => {
    const { personId, sessionId } = personCaller(ctx.caller);
    if (!sessionId) throw errors.wrongCredential(["a person's browser session"]);
    const { identity } = ctx.services;
    if (!(await identity.sessions.switchAccount(sessionId, personId, input.account_id))) {
      throw errors.notFound(`Account '${input.account_id}' of yours`, 'Choose one of the accounts GET /dashboard/session lists.');
    }
    const memberships = await identity.memberships(personId);
    const role = memberships.find((m) => m.account_id === input.account_id)!.role;
    return { person: await identity.person(personId), account_id: input.account_id, role, accounts: memberships };
  },
});

export const identityTools = [accountSignup, accountSignin, accountSignout, accountSignoutAll, accountSession, accountSessionSwitch];
