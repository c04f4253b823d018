import { z } from 'zod';
import { toolsUsing } from '../define.ts';
import { AppDetailsSchema, AppIdSchema, AppNameSchema, AppSchema, RegionNameSchema, RegionSchema } from '../../src/apps/types.ts';
import { CreatedKeySchema, PublishableKeyValueSchema } from '../keys/schemas.ts';
import { accountOf } from '../caller.ts';
import { personBehind } from '../../src/core/caller.ts';

type Uses = 'apps';
const defineTool = toolsUsing<Uses>();

export const appsList = defineTool({
  name: 'apps_list',
  title: 'List apps',
  description:
    'List the apps your platform key owns, oldest first. Call this first to find an app_id; every app-scoped tool takes one.',
  input: z.object({}),
  output: z.object({ apps: z.array(AppSchema) }),
  auth: ['platform'],
  http: { method: 'GET', path: '/apps' },
  annotations: { readOnlyHint: true },
  handler: async (_input, ctx) => {
    const apps = await ctx.services.apps.list(accountOf(ctx.caller));
    return { apps: apps.map((a) => ctx.services.apps.view(a)) };
  },
});

export const appsCreate = defineTool({
  name: 'apps_create',
  title: 'Create an app',
  description:
    'Create an app with its own Postgres database. Returns app_id, subdomain, the first service key (svc_sk_..., shown ' +
    'once: store it; as Bearer: full access to this app) and publishable_key (browsers: anonymous, this app only).',
  input: z.object({ name: AppNameSchema.describe('Human-readable app name; the subdomain is derived from it'), region: RegionNameSchema.optional() }),
  output: AppSchema.extend({ service_key: CreatedKeySchema, publishable_key: PublishableKeyValueSchema }),
  auth: ['platform'],
  http: { method: 'POST', path: '/init', status: 201 },
  annotations: { destructiveHint: false, idempotentHint: false },
  audit: { action: 'app.create', resource: 'app', id: (_input, app) => app.app_id, details: (_input, app) => ({ name: app.name, region: app.region }) },
  handler: async (input, ctx) => ctx.services.apps.create(accountOf(ctx.caller), input.name, input.region, personBehind(ctx.caller)),
});

export const appsRegions = defineTool({
  name: 'apps_regions',
  title: 'List regions',
  description: 'Regions for apps_create and templates_clone.',
  input: z.object({}),
  output: z.object({ regions: z.array(RegionSchema) }),
  auth: ['platform'],
  http: { method: 'GET', path: '/regions' },
  annotations: { readOnlyHint: true },
  handler: async (_input, ctx) => ({ regions: ctx.services.apps.regions() }),
});

export const appsGet = defineTool({
  name: 'apps_get',
  title: 'Get an app',
  description:
    'Read one app by app_id, with migration_version (the platform migration its database is at). ' +
    "With subdomain routing on, GET /app on the app's own host returns the same record.",
  input: z.object({ app_id: AppIdSchema }),
  output: AppDetailsSchema,
  auth: ['platform', 'service'],
  appScoped: true,
  billingGate: 'exempt',
  http: { method: 'GET', path: '/apps/{app_id}', subdomainPath: '/app' },
  annotations: { readOnlyHint: true },
  handler: async (_input, ctx) => ctx.services.apps.details(ctx.app!),
});

export const appsDelete = defineTool({
  name: 'apps_delete',
  title: 'Delete an app',
  description:
    'Permanently delete an app: its database with every table and row is dropped and all of its service keys stop working at once. ' +
    'This cannot be undone. Returns { deleted: true, app_id }.',
  input: z.object({ app_id: AppIdSchema }),
  output: z.object({ deleted: z.literal(true), app_id: z.string() }),
  auth: ['platform'],
  appScoped: true,
  billingGate: 'exempt',
  http: { method: 'DELETE', path: '/apps/{app_id}' },
  annotations: { destructiveHint: true, idempotentHint: false },
  audit: { action: 'app.delete', resource: 'app', id: (input) => input.app_id },
  handler: async (input, ctx) => {
    await ctx.services.apps.delete(input.app_id);
    return { deleted: true as const, app_id: input.app_id };
  },
});

export const appsRestore = defineTool({
  name: 'apps_restore',
  title: 'Restore a paused app',
  description:
    'Bring back an app paused for inactivity (its calls answer 423 APP_PAUSED): it serves again at once, data intact. Returns the app.',
  input: z.object({ app_id: AppIdSchema }),
  output: AppSchema,
  auth: ['platform'],
  appScoped: true,
  // Restoring a paused app serves it again; it changes nothing of it.
  governed: false,
  billingGate: 'exempt',
  http: { method: 'POST', path: '/apps/{app_id}/restore' },
  annotations: { idempotentHint: true },
  audit: { action: 'app.restore', resource: 'app', id: (input) => input.app_id },
  handler: async (input, ctx) => ctx.services.apps.view((await ctx.services.apps.restore(input.app_id)) ?? ctx.app!),
});
