// Platform keys made by an account's admins (src/auth/keys.ts): each acts with a role no higher than its maker's
// (by default the maker's own) and names the person who made it. Keys are credentials of the whole account, so
// admins hand them out, list and revoke them.
import { z } from 'zod';
import { toolsUsing } from '../define.ts';
import { accountOf } from '../caller.ts';
import { KeyIdSchema, KeyInfoSchema, KeyNameSchema } from '../keys/schemas.ts';
import { managerOf, RoleSchema } from './members.ts';
import { requireRoleFor } from '../../src/identity/members.ts';

type Uses = 'keys';
const defineTool = toolsUsing<Uses>();

const PlatformKeySchema = KeyInfoSchema.extend({
  role: RoleSchema,
  created_by: z.string().nullable().describe("Its person: who made it, or the person behind the key that did; null for the operator's keys"),
});

export const platformKeysCreate = defineTool({
  name: 'platform_keys_create',
  title: 'Create a platform key',
  description: 'Mint a platform key (svc_pk_...) for the account with a role up to your own (default: yours). The key is shown only once.',
  input: z.object({ name: KeyNameSchema.describe('A label to recognise the key by'), role: RoleSchema.optional() }),
  output: PlatformKeySchema.extend({ key: z.string().describe('The secret key. Shown only in this response; it is stored hashed.') }),
  auth: ['platform'],
  role: 'admin',
  http: { method: 'POST', path: '/dashboard/keys', status: 201 },
  audit: { action: 'key.create', resource: 'platform_key', id: (_input, key) => key.id, details: (_input, key) => ({ name: key.name, role: key.role }) },
  handler: async (input, ctx) => {
    const manager = managerOf(ctx);
    const role = input.role ?? manager.role;
    requireRoleFor(manager.role, role);
    return ctx.services.keys.createPlatform(manager.accountId, input.name, { role, createdBy: manager.person });
  },
});

export const platformKeysList = defineTool({
  name: 'platform_keys_list',
  title: 'List platform keys',
  description: "The account's platform keys (id, name, hint, role, created_by, created_at). Secrets are never returned.",
  input: z.object({}),
  output: z.object({ keys: z.array(PlatformKeySchema) }),
  auth: ['platform'],
  role: 'admin',
  http: { method: 'GET', path: '/dashboard/keys' },
  annotations: { readOnlyHint: true },
  handler: async (_input, ctx) => ({ keys: await ctx.services.keys.listPlatform(accountOf(ctx.caller)) }),
});

export const platformKeysRevoke = defineTool({
  name: 'platform_keys_revoke',
  title: 'Revoke a platform key',
  description: 'Revoke a platform key (not one whose role is above yours); calls with it get 401 from then on.',
  input: z.object({ key_id: KeyIdSchema }),
  output: z.object({ revoked: z.literal(true), key_id: z.string() }),
  auth: ['platform'],
  role: 'admin',
  http: { method: 'DELETE', path: '/dashboard/keys/{key_id}' },
  annotations: { destructiveHint: true },
  audit: { action: 'key.revoke', resource: 'platform_key', id: (input) => input.key_id },
  handler: async (input, ctx) => {
    const manager = managerOf(ctx);
    const role = await ctx.services.keys.platformKeyRole(manager.accountId, input.key_id);
    if (role) requireRoleFor(manager.role, role);
    await ctx.services.keys.revoke('platform', manager.accountId, input.key_id);
    return { revoked: true as const, key_id: input.key_id };
  },
});

export const platformKeysTools = [platformKeysCreate, platformKeysList, platformKeysRevoke];
