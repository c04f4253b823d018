import { z } from 'zod';
import { toolsUsing } from '../define.ts';
import { AppIdSchema } from '../../src/apps/types.ts';
import { CreatedKeySchema, KeyIdSchema, KeyInfoSchema, KeyNameSchema } from './schemas.ts';
import { accountOf } from '../caller.ts';

type Uses = 'keys';
const defineTool = toolsUsing<Uses>();

export const serviceKeysCreate = defineTool({
  name: 'service_keys_create',
  title: 'Create a service key',
  description:
    'Mint another service key (svc_sk_...) for an app, e.g. one per deployment so each can be revoked alone. ' +
    'A service key has full access to that one app and is refused (403) on every other app. The key is shown only once.',
  input: z.object({ app_id: AppIdSchema, name: KeyNameSchema.describe('A label to recognise the key by') }),
  output: CreatedKeySchema,
  auth: ['platform'],
  appScoped: true,
  http: { method: 'POST', path: '/apps/{app_id}/keys', status: 201 },
  audit: { action: 'key.create', resource: 'service_key', id: (_input, key) => key.id, details: (input, key) => ({ app_id: input.app_id, name: key.name }) },
  handler: async (input, ctx) => ctx.services.keys.create('service', input.app_id, input.name),
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

export const substrateKeysCreate = defineTool({
  name: 'substrate_keys_create',
  title: 'Create a substrate key',
  description:
    'Mint a substrate key (svc_sub_...) for your account. It is accepted only by substrate routes (/v1/me/substrate/...) ' +
    'and can never touch an app database. The key is shown only once. It is a person\'s credential (it approves what agents ' +
    'propose), so it is minted over REST, never by an agent over MCP.',
  input: z.object({ name: KeyNameSchema.describe('A label to recognise the key by') }),
  output: CreatedKeySchema,
  // Keys are credentials of the whole account: admins hand them out and take them back.
  role: 'admin',
  auth: ['platform'],
  mcp: false,
  http: { method: 'POST', path: '/substrate-keys', status: 201 },
  audit: { action: 'key.create', resource: 'substrate_key', id: (_input, key) => key.id, details: (_input, key) => ({ name: key.name }) },
  handler: async (input, ctx) => ctx.services.keys.create('substrate', accountOf(ctx.caller), input.name),
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

export const substrateKeysRevoke = defineTool({
  name: 'substrate_keys_revoke',
  title: 'Revoke a substrate key',
  description: 'Revoke one of your substrate keys; requests using it get 401 from then on.',
  input: z.object({ key_id: KeyIdSchema }),
  output: z.object({ revoked: z.literal(true), key_id: z.string() }),
  // Keys are credentials of the whole account: admins hand them out and take them back.
  role: 'admin',
  auth: ['platform'],
  http: { method: 'DELETE', path: '/substrate-keys/{key_id}' },
  annotations: { destructiveHint: true },
  audit: { action: 'key.revoke', resource: 'substrate_key', id: (input) => input.key_id },
  handler: async (input, ctx) => {
    await ctx.services.keys.revoke('substrate', accountOf(ctx.caller), input.key_id);
    return { revoked: true as const, key_id: input.key_id };
  },
});
