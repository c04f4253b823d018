import { z } from 'zod';
import { toolsUsing } from '../define.ts';
import { AppIdSchema } from '../../src/apps/types.ts';
import { CreatedKeySchema, KeyIdSchema, KeyInfoSchema, KeyNameSchema, PublishableKeySchema } from './schemas.ts';
import { accountOf, personSignedIn } from '../caller.ts';
import { SUBSTRATE_ROLE } from '../shared.ts';
import { personBehind, roleAtLeast, type Caller } from '../../src/core/caller.ts';
import { errors } from '../../src/core/errors.ts';

type Uses = 'keys' | 'substrate';
const defineTool = toolsUsing<Uses>();

export const serviceKeysCreate = defineTool({
  name: 'service_keys_create',
  title: 'Create a service key',
  description:
    'Mint another service key (svc_sk_...) for an app, e.g. one per deployment so each can be revoked alone. ' +
    'A service key has full access to that one app and is refused (403) on every other app. The key is shown only once; ' +
    'it is revoked when the person behind your credential leaves the account or drops below developer.',
  input: z.object({ app_id: AppIdSchema, name: KeyNameSchema.describe('A label to recognise the key by') }),
  output: CreatedKeySchema,
  auth: ['platform'],
  appScoped: true,
  http: { method: 'POST', path: '/apps/{app_id}/keys', status: 201 },
  audit: { action: 'key.create', resource: 'service_key', id: (_input, key) => key.id, details: (input, key) => ({ app_id: input.app_id, name: key.name }) },
  handler: async (input, ctx) => ctx.services.keys.createService(input.app_id, input.name, personBehind(ctx.caller)),
});

export const serviceKeysList = defineTool({
  name: 'service_keys_list',
  title: 'List service keys',
  description: 'List the service keys of an app (id, name, hint, created_at). Secrets are never returned.',
  input: z.object({ app_id: AppIdSchema }),
  output: z.object({ keys: z.array(KeyInfoSchema) }),
  auth: ['platform'],
  appScoped: true,
  http: { method: 'GET', path: '/apps/{app_id}/keys' },
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ({ keys: await ctx.services.keys.list('service', input.app_id) }),
});

export const serviceKeysRevoke = defineTool({
  name: 'service_keys_revoke',
  title: 'Revoke a service key',
  description: 'Revoke one service key of an app; requests using it get 401 from then on. Other keys keep working.',
  input: z.object({ app_id: AppIdSchema, key_id: KeyIdSchema }),
  output: z.object({ revoked: z.literal(true), key_id: z.string() }),
  auth: ['platform'],
  appScoped: true,
  http: { method: 'DELETE', path: '/apps/{app_id}/keys/{key_id}' },
  annotations: { destructiveHint: true },
  audit: { action: 'key.revoke', resource: 'service_key', id: (input) => input.key_id, details: (input) => ({ app_id: input.app_id }) },
  handler: async (input, ctx) => {
    await ctx.services.keys.revoke('service', input.app_id, input.key_id);
    return { revoked: true as const, key_id: input.key_id };
  },
});

export const publishableKeysCreate = defineTool({
  name: 'publishable_keys_create',
  title: 'Create a publishable key',
  description:
    "Mint another publishable key (svc_pub_...) for an app, e.g. to rotate one: browsers send it (supabase-js's key, or apikey / Authorization: Bearer) " +
    'and it acts as an anonymous caller on that app only. Not a secret: it stays listed. Every app has one from apps_create.',
  input: z.object({ app_id: AppIdSchema, name: KeyNameSchema.describe('A label to recognise the key by') }),
  output: PublishableKeySchema,
  auth: ['platform'],
  appScoped: true,
  http: { method: 'POST', path: '/apps/{app_id}/publishable-keys', status: 201 },
  audit: { action: 'key.create', resource: 'publishable_key', id: (_input, key) => key.id, details: (input, key) => ({ app_id: input.app_id, name: key.name }) },
  handler: async (input, ctx) => ctx.services.keys.createPublishable(input.app_id, input.name),
});

export const publishableKeysList = defineTool({
  name: 'publishable_keys_list',
  title: 'List publishable keys',
  description: "List an app's publishable keys with the keys themselves (they are not secrets).",
  input: z.object({ app_id: AppIdSchema }),
  output: z.object({ keys: z.array(PublishableKeySchema) }),
  auth: ['platform', 'service'],
  appScoped: true,
  http: { method: 'GET', path: '/apps/{app_id}/publishable-keys' },
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ({ keys: await ctx.services.keys.listPublishable(input.app_id) }),
});

export const publishableKeysRevoke = defineTool({
  name: 'publishable_keys_revoke',
  title: 'Revoke a publishable key',
  description: 'Revoke one publishable key of an app; requests sending it get 401 from then on. Create the new one first when rotating.',
  input: z.object({ app_id: AppIdSchema, key_id: KeyIdSchema }),
  output: z.object({ revoked: z.literal(true), key_id: z.string() }),
  auth: ['platform'],
  appScoped: true,
  http: { method: 'DELETE', path: '/apps/{app_id}/publishable-keys/{key_id}' },
  annotations: { destructiveHint: true },
  audit: { action: 'key.revoke', resource: 'publishable_key', id: (input) => input.key_id, details: (input) => ({ app_id: input.app_id }) },
  handler: async (input, ctx) => {
    await ctx.services.keys.revokePublishable(input.app_id, input.key_id);
    return { revoked: true as const, key_id: input.key_id };
  },
});

export const substrateKeysCreate = defineTool({
  name: 'substrate_keys_create',
  title: 'Create a substrate key',
  description:
    'Mint a substrate key (svc_sub_...) for yourself: it reaches your own substrate (/v1/me/substrate/...) as you, never ' +
    "another member's, and can never touch an app database. The key is shown only once. It approves what agents propose, " +
    'so only a person signed in (a browser session) mints one, never a key or an agent; it goes when you leave the account.',
  input: z.object({ name: KeyNameSchema.describe('A label to recognise the key by') }),
  output: CreatedKeySchema,
  role: SUBSTRATE_ROLE,
  auth: ['platform'],
  mcp: false,
  http: { method: 'POST', path: '/substrate-keys', status: 201 },
  audit: { action: 'key.create', resource: 'substrate_key', id: (_input, key) => key.id, details: (_input, key) => ({ name: key.name }) },
  handler: async (input, ctx) => {
    const personId = personSignedIn(ctx.caller, 'mint a substrate key (it approves what agents propose)', 'POST /substrate-keys');
    const { userId } = await ctx.services.substrate.actor(ctx.caller);
    return ctx.services.keys.createSubstrate(accountOf(ctx.caller), personId, userId, input.name);
  },
});

export const substrateKeysList = defineTool({
  name: 'substrate_keys_list',
  title: 'List substrate keys',
  description: 'List your account\'s substrate keys (id, name, hint, created_at). Secrets are never returned.',
  input: z.object({}),
  output: z.object({ keys: z.array(KeyInfoSchema) }),
  auth: ['platform'],
  http: { method: 'GET', path: '/substrate-keys' },
  annotations: { readOnlyHint: true },
  handler: async (_input, ctx) => ({ keys: await ctx.services.keys.list('substrate', accountOf(ctx.caller)) }),
});

/**
 * Whose substrate keys the caller may revoke: an admin any member's (undefined: no limit), a member below admin only
 * their own (another's is then not found), a key below admin none.
 */
function revokerLimit(caller: Caller): string | undefined {
  if (caller.kind !== 'platform' || roleAtLeast(caller.role, 'admin')) return undefined;
  if (caller.personId === null) throw errors.roleTooLow('admin', caller.role);
  return caller.personId;
}

export const substrateKeysRevoke = defineTool({
  name: 'substrate_keys_revoke',
  title: 'Revoke a substrate key',
  description: "Revoke a substrate key: your own, or as an admin any of the account's; requests using it get 401 from then on.",
  input: z.object({ key_id: KeyIdSchema }),
  output: z.object({ revoked: z.literal(true), key_id: z.string() }),
  role: SUBSTRATE_ROLE,
  auth: ['platform'],
  http: { method: 'DELETE', path: '/substrate-keys/{key_id}' },
  annotations: { destructiveHint: true },
  audit: { action: 'key.revoke', resource: 'substrate_key', id: (input) => input.key_id },
  handler: async (input, ctx) => {
    await ctx.services.keys.revoke('substrate', accountOf(ctx.caller), input.key_id, revokerLimit(ctx.caller));
    return { revoked: true as const, key_id: input.key_id };
  },
});
