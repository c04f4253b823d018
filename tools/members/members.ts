// The people of an account (src/identity/members.ts): members and their roles, invitations. Owners and admins manage
// them (the descriptors say so); the one rule a handler adds is the role bound, which depends on the input: nobody
// grants or touches a role above their own, so only owners make, change or remove owners.
import { z } from 'zod';
import { toolsUsing } from '../define.ts';
import { EmailSchema } from '../auth/auth.ts';
import { personOf } from '../identity/session.ts';
import { accountOf } from '../caller.ts';
import { personBehind, ROLES } from '../../src/core/caller.ts';
import type { ToolContext } from '../../src/core/define.ts';
import { clientAddress, platformActor, type AuditBy } from '../../src/identity/audit.ts';
import type { Manager } from '../../src/identity/members.ts';

type Uses = 'members';
const defineTool = toolsUsing<Uses>();

export const RoleSchema = z.enum(ROLES);

const MemberSchema = z.object({ person_id: z.string(), email: z.string(), name: z.string(), role: RoleSchema, joined_at: z.string() });
const PersonIdSchema = z.guid('person_id is a member\'s id from members_list');

const InvitationSchema = z.object({
  id: z.string(),
  email: z.string().nullable().describe('null: link-only, anyone with the link may accept'),
  role: RoleSchema,
  invited_by: z.string().nullable().describe("The inviting person (a key's person when a key invited); null for the operator's keys"),
  created_at: z.string(),
  expires_at: z.string(),
});

type Acting = Pick<ToolContext, 'caller' | 'clientId'>;

/** Who acts and from where, for the audit log. */
function auditBy(ctx: Acting): AuditBy {
  return { actor: platformActor(platformCaller(ctx)), ip: clientAddress(ctx.clientId) };
}

/** The tools' auth admits platform callers only (keys, sessions, OAuth tokens). */
function platformCaller(ctx: Acting) {
  if (ctx.caller.kind !== 'platform') throw new Error(`caller of kind ${ctx.caller.kind} manages no account`);
  return ctx.caller;
}

/** The caller as the manager of its account: its role bounds what it may grant or touch. */
export function managerOf(ctx: Acting): Manager {
  const caller = platformCaller(ctx);
  return { accountId: caller.accountId, role: caller.role, person: personBehind(caller), by: auditBy(ctx) };
}

export const membersList = defineTool({
  name: 'members_list',
  title: 'List members',
  description: "The account's members: person_id, email, name, role (owner, admin, developer, viewer), joined_at.",
  input: z.object({}),
  output: z.object({ members: z.array(MemberSchema) }),
  auth: ['platform'],
  http: { method: 'GET', path: '/dashboard/members' },
  annotations: { readOnlyHint: true },
  handler: async (_input, ctx) => ({ members: await ctx.services.members.list(accountOf(ctx.caller)) }),
});

export const membersSetRole = defineTool({
  name: 'members_set_role',
  title: "Change a member's role",
  description:
    "Give a member another role; only an owner grants or changes owner. Their platform keys drop to at most the new role; " +
    'below developer their service keys are revoked, below admin their open invitations (above the new role, always). ' +
    'The last owner keeps it: 409 LAST_OWNER.',
  input: z.object({ person_id: PersonIdSchema, role: RoleSchema }),
  output: MemberSchema,
  auth: ['platform'],
  role: 'admin',
  http: { method: 'PATCH', path: '/dashboard/members/{person_id}' },
  annotations: { idempotentHint: true },
  handler: async (input, ctx) => ctx.services.members.setRole(managerOf(ctx), input.person_id, input.role),
});

export const membersRemove = defineTool({
  name: 'members_remove',
  title: 'Remove a member',
  description:
    'Remove a member from the account: the keys they made (platform, service, substrate, and keys made with those), their open ' +
    'invitations, sessions and OAuth grants there end. Not the last owner (409 LAST_OWNER).',
  input: z.object({ person_id: PersonIdSchema }),
  output: z.object({ removed: z.literal(true), person_id: z.string() }),
  auth: ['platform'],
  role: 'admin',
  http: { method: 'DELETE', path: '/dashboard/members/{person_id}' },
  annotations: { destructiveHint: true },
  handler: async (input, ctx) => {
    await ctx.services.members.remove(managerOf(ctx), input.person_id);
    return { removed: true as const, person_id: input.person_id };
  },
});

export const membersLeave = defineTool({
  name: 'members_leave',
  title: 'Leave the account',
  description:
    'The signed-in person leaves the account their session acts in: what they made there ends as when removed (keys, ' +
    'invitations, OAuth grants) and the session ends. The last owner cannot leave (409 LAST_OWNER).',
  input: z.object({}),
  output: z.object({ left: z.literal(true), account_id: z.string() }),
  auth: ['platform'],
  role: 'viewer',
  // A person's own act, in their browser.
  mcp: false,
  http: { method: 'POST', path: '/dashboard/members/leave' },
  annotations: { destructiveHint: true },
  handler: async (_input, ctx) => {
    const accountId = accountOf(ctx.caller);
    await ctx.services.members.leave(accountId, personOf(ctx.caller), auditBy(ctx));
    // The session acted in the account just left, and is gone with the membership.
    ctx.session?.set(null);
    return { left: true as const, account_id: accountId };
  },
});

export const invitationsCreate = defineTool({
  name: 'invitations_create',
  title: 'Invite a person',
  description:
    'Invite a person with a role up to your own: by email (only that address may accept; mailed when the platform sends e-mail) ' +
    'or, without email, a link anyone holding it may use. token and url are shown only in this response.',
  input: z.object({
    email: EmailSchema.optional(),
    role: RoleSchema,
    expires_in_days: z.number().int().min(1).max(30).default(7),
  }),
  output: InvitationSchema.extend({
    token: z.string().describe('Shown only here; accepted by POST /dashboard/invitations/accept or as invitation_token at sign-up'),
    url: z.string(),
    emailed: z.boolean(),
  }),
  auth: ['platform'],
  role: 'admin',
  http: { method: 'POST', path: '/dashboard/invitations', status: 201 },
  audit: { action: 'invitation.create', resource: 'invitation', id: (_input, inv) => inv.id, details: (_input, inv) => ({ email: inv.email, role: inv.role }) },
  handler: async (input, ctx) =>
    ctx.services.members.invite(managerOf(ctx), { email: input.email ?? null, role: input.role, days: input.expires_in_days }),
});

export const invitationsList = defineTool({
  name: 'invitations_list',
  title: 'List open invitations',
  description: "The account's invitations not yet accepted, revoked or expired, newest first (never their tokens).",
  input: z.object({}),
  output: z.object({ invitations: z.array(InvitationSchema) }),
  auth: ['platform'],
  role: 'admin',
  http: { method: 'GET', path: '/dashboard/invitations' },
  annotations: { readOnlyHint: true },
  handler: async (_input, ctx) => ({ invitations: await ctx.services.members.invitations(accountOf(ctx.caller)) }),
});

export const invitationsRevoke = defineTool({
  name: 'invitations_revoke',
  title: 'Revoke an invitation',
  description: 'Revoke an open invitation: its link stops working at once.',
  input: z.object({ invitation_id: z.guid('invitation_id is an id from invitations_list') }),
  output: z.object({ revoked: z.literal(true), invitation_id: z.string() }),
  auth: ['platform'],
  role: 'admin',
  http: { method: 'DELETE', path: '/dashboard/invitations/{invitation_id}' },
  annotations: { destructiveHint: true },
  audit: { action: 'invitation.revoke', resource: 'invitation', id: (input) => input.invitation_id },
  handler: async (input, ctx) => {
    await ctx.services.members.revokeInvitation(accountOf(ctx.caller), input.invitation_id);
    return { revoked: true as const, invitation_id: input.invitation_id };
  },
});

export const invitationsAccept = defineTool({
  name: 'invitations_accept',
  title: 'Accept an invitation',
  description:
    "The signed-in person joins the invitation's account with its role. Their session stays in the account it acts in; " +
    'a new sign-in opens the first account they joined.',
  input: z.object({ token: z.string().min(1).max(200, 'token is at most 200 characters') }),
  output: z.object({ account_id: z.string(), role: RoleSchema }),
  auth: ['platform'],
  // Any member may join another account; the invitation names the role there.
  role: 'viewer',
  // A person's own act: the invitation is theirs, not an agent's.
  mcp: false,
  http: { method: 'POST', path: '/dashboard/invitations/accept' },
  handler: async (input, ctx) => ctx.services.members.accept(personOf(ctx.caller), input.token, auditBy(ctx)),
});

export const membersTools = [membersList, membersSetRole, membersRemove, membersLeave, invitationsCreate, invitationsList, invitationsRevoke, invitationsAccept];
