// People on the platform proving their e-mail address, finishing an open sign-up and resetting a forgotten password
// with the links the platform mails them (src/identity/mail.ts). REST only, like the session routes: the console's
// pages call them.
import { z } from 'zod';
import { toolsUsing, type Ctx } from '../define.ts';
import { EmailSchema, PasswordSchema } from '../auth/auth.ts';
import { clientInfo, limitByClient, limitByEmail, personOf, SignedInSchema, signedIn } from './session.ts';
import { SIGNUP_LINK_HOURS } from '../../src/identity/signup-requests.ts';

type Uses = 'identity' | 'config' | 'rateLimits';
const defineTool = toolsUsing<Uses>();

const TokenSchema = z.string().min(1, 'token must not be empty').max(200, 'token is at most 200 characters').describe("The token parameter of the e-mail's link");

const MailQueuedSchema = z.object({
  mail_configured: z.boolean().describe('false: this platform sends no e-mail (the operator has not set SVC_SMTP_URL), so none will arrive'),
});

/**
 * The end of both mailing routes: counted against the address's mail limit, queued, and answered with whether this
 * platform sends mail at all (its setting, so nothing about the address).
 */
async function mailQueued(ctx: Ctx<Uses>, email: string, queue: () => Promise<void>): Promise<z.input<typeof MailQueuedSchema>> {
  await limitByEmail(ctx, 'person_mail', email);
  await queue();
  return { mail_configured: ctx.services.identity.mail.configured };
}

export const accountVerifyEmail = defineTool({
  name: 'account_verify_email',
  title: "Verify a person's e-mail address",
  description:
    'Take the token of the verification link mailed at sign-up (or by account_verify_email_send): the address is verified. ' +
    'Each link works once, for 24 hours.',
  input: z.object({ token: TokenSchema }),
  output: z.object({ email: z.string(), email_verified: z.literal(true) }),
  auth: ['none', 'platform'],
  role: 'viewer',
  mcp: false,
  http: { method: 'POST', path: '/dashboard/verify-email', sameOrigin: true },
  handler: async (input, ctx) => {
    const { email } = await ctx.services.identity.verifyEmail(input.token);
    return { email, email_verified: true as const };
  },
});

export const accountVerifyEmailSend = defineTool({
  name: 'account_verify_email_send',
  title: 'Send a new verification e-mail',
  description:
    'Mail the signed-in person a new verification link; 409 EMAIL_ALREADY_VERIFIED once verified. Rate-limited per client and ' +
    'per address (429 RATE_LIMITED).',
  input: z.object({}),
  output: MailQueuedSchema,
  auth: ['platform'],
  role: 'viewer',
  mcp: false,
  http: { method: 'POST', path: '/dashboard/verify-email/send', status: 202 },
  handler: async (_input, ctx) => {
    await limitByClient(ctx, 'verify_email_send');
    const { identity } = ctx.services;
    const person = await identity.person(personOf(ctx.caller));
    return mailQueued(ctx, person.email, () => identity.requestVerification(person));
  },
});

export const accountPasswordReset = defineTool({
  name: 'account_password_reset',
  title: 'Ask for a password reset e-mail',
  description:
    'Mail a password reset link (it works once, for 1 hour) to the person with this e-mail, if there is one. The answer is ' +
    '202 either way: it never tells whether the address is known. Rate-limited per client and per address (429 RATE_LIMITED).',
  input: z.object({ email: EmailSchema }),
  output: MailQueuedSchema,
  auth: ['none', 'platform'],
  role: 'viewer',
  mcp: false,
  http: { method: 'POST', path: '/dashboard/password-reset', status: 202, sameOrigin: true },
  handler: async (input, ctx) => {
    await limitByClient(ctx, 'password_reset');
    return mailQueued(ctx, input.email, () => ctx.services.identity.requestPasswordReset(input.email));
  },
});

export const accountPasswordResetConfirm = defineTool({
  name: 'account_password_reset_confirm',
  title: 'Set a new password with a reset link',
  description:
    "Take the token of a password reset link and set the new password. Every session of the person ends (sign in again " +
    'with account_signin), and the address counts as verified.',
  input: z.object({ token: TokenSchema, password: PasswordSchema }),
  output: z.object({ email: z.string(), sessions_ended: z.number().int() }),
  auth: ['none', 'platform'],
  role: 'viewer',
  mcp: false,
  http: { method: 'POST', path: '/dashboard/password-reset/confirm', sameOrigin: true },
  handler: async (input, ctx) => {
    const { email, sessionsEnded } = await ctx.services.identity.resetPassword(input.token, input.password);
    return { email, sessions_ended: sessionsEnded };
  },
});

export const accountSignupConfirm = defineTool({
  name: 'account_signup_confirm',
  title: 'Finish signing up with the mailed link',
  description:
    'Take the token of the link mailed by an open sign-up (account_signup) with the password chosen there: the person is ' +
    'made, with the address verified, owns a new account and is signed in (cookie svc_session). Each link works once, for ' +
    `${SIGNUP_LINK_HOURS} hours; 409 EMAIL_TAKEN when the address got an account meanwhile. Rate-limited per client (429 RATE_LIMITED).`,
  input: z.object({ token: TokenSchema, password: z.string().max(200, 'password is at most 200 characters') }),
  output: SignedInSchema,
  auth: ['none', 'platform'],
  role: 'viewer',
  mcp: false,
  http: { method: 'POST', path: '/dashboard/signup/confirm', status: 201, sameOrigin: true },
  handler: async (input, ctx) => {
    await limitByClient(ctx, 'person_signup');
    return signedIn(ctx, await ctx.services.identity.confirmSignup(input.token, input.password, clientInfo(ctx)));
  },
});

export const identityMailTools = [accountVerifyEmail, accountVerifyEmailSend, accountPasswordReset, accountPasswordResetConfirm, accountSignupConfirm];
