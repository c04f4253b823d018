// Templates and clones: publish an app as a template, see the templates an account can, read a manifest, clone one
// into a new app (in a region) and follow, retry or delete the clone.
import { z } from 'zod';
import { type AnyTool } from '../../src/core/define.ts';
import { toolsUsing } from '../define.ts';
import { accountOf } from '../caller.ts';
import { AppIdSchema, AppNameSchema, RegionNameSchema } from '../../src/apps/types.ts';
import { CloneSchema, ManifestSchema, TemplateOptionsSchema, TemplateSummarySchema } from '../../src/templates/types.ts';

type Uses = 'templates';
const defineTool = toolsUsing<Uses>();

const CloneIdSchema = z.string().uuid().describe('The clone_id templates_clone returned');
const POLL = 'Poll templates_clone_get until status is ready (then read todo) or failed (then templates_clone_retry or templates_clone_delete).';

export const templatesPublish = defineTool({
  name: 'templates_publish',
  title: 'Publish an app as a template',
  description:
    'Publish (or update) one of your apps as a template others can clone: visibility account (your account) or public (every account, when the operator allows it). ' +
    "Function variables are secrets the cloner sets unless options.env says 'copy' or 'generate'. Seed rows are pinned as they are now, without end users' rows; publish again to update them. " +
    'Returns the manifest: what a clone creates and what the new owner must supply.',
  input: z.object({
    app_id: AppIdSchema,
    title: z.string().trim().min(1).max(200),
    description: z.string().max(4000).optional(),
    visibility: z.enum(['account', 'public']).default('account'),
    options: TemplateOptionsSchema.default({}),
  }),
  output: ManifestSchema,
  role: 'admin',
  auth: ['platform'],
  appScoped: true,
  http: { method: 'POST', path: '/v1/templates' },
  annotations: { idempotentHint: true },
  audit: { action: 'template.publish', resource: 'app', id: (input) => input.app_id, details: (input) => ({ visibility: input.visibility }) },
  handler: async (input, ctx) =>
    ctx.services.templates.catalog.publish(ctx.app!, { title: input.title, description: input.description, visibility: input.visibility, options: input.options }),
});

export const templatesUnpublish = defineTool({
  name: 'templates_unpublish',
  title: 'Unpublish a template',
  description: 'Stop offering one of your apps as a template; the app and clones already made are untouched.',
  input: z.object({ app_id: AppIdSchema }),
  output: z.object({ unpublished: z.literal(true), app_id: z.string() }),
  role: 'admin',
  auth: ['platform'],
  appScoped: true,
  billingGate: 'exempt',
  http: { method: 'DELETE', path: '/v1/templates/{app_id}' },
  annotations: { destructiveHint: true, idempotentHint: false },
  audit: { action: 'template.unpublish', resource: 'app', id: (input) => input.app_id },
  handler: async (input, ctx) => {
    await ctx.services.templates.catalog.unpublish(input.app_id);
    return { unpublished: true as const, app_id: input.app_id };
  },
});

export const templatesList = defineTool({
  name: 'templates_list',
  title: 'List templates',
  description: "The templates you can clone: the platform's shipped ones, your account's and the public ones, each with its version. Next: templates_get for a manifest.",
  input: z.object({}),
  output: z.object({ templates: z.array(TemplateSummarySchema) }),
  auth: ['platform'],
  http: { method: 'GET', path: '/v1/templates' },
  annotations: { readOnlyHint: true },
  handler: async (_input, ctx) => ({ templates: await ctx.services.templates.catalog.list(accountOf(ctx.caller)) }),
});

export const templatesGet = defineTool({
  name: 'templates_get',
  title: 'Get a template manifest',
  description: 'What cloning the template creates (tables, functions with triggers, site, RAG collections, integrations, plans, seed rows) and owner_must_supply (secrets, onboarding).',
  input: z.object({ app_id: AppIdSchema.describe("The template's app_id, from templates_list") }),
  output: ManifestSchema,
  auth: ['platform'],
  http: { method: 'GET', path: '/v1/templates/{app_id}' },
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => (await ctx.services.templates.catalog.manifest(accountOf(ctx.caller), input.app_id)).manifest,
});

export const templatesClone = defineTool({
  name: 'templates_clone',
  title: 'Clone a template',
  description:
    'Copy a template into a new app of yours: schema and migrations, functions, site, AI and RAG settings, integrations, plans, seed rows; never keys, secrets, end users or files. ' +
    `Answers 202 at once; the copy runs as a job. ${POLL}`,
  input: z.object({
    app_id: AppIdSchema.describe("The template's app_id, from templates_list"),
    name: AppNameSchema.describe('Name of the new app'),
    region: RegionNameSchema.optional(),
  }),
  output: CloneSchema,
  auth: ['platform'],
  http: { method: 'POST', path: '/v1/templates/{app_id}/clone', status: 202 },
  annotations: { destructiveHint: false, idempotentHint: false },
  audit: { action: 'template.clone', resource: 'app', id: (_input, clone) => clone.app_id, details: (input, clone) => ({ template_app_id: input.app_id, region: clone.region }) },
  handler: async (input, ctx) => ctx.services.templates.clone(accountOf(ctx.caller), input.app_id, { name: input.name, region: input.region }),
});

export const templatesCloneGet = defineTool({
  name: 'templates_clone_get',
  title: 'Get a clone',
  description: "A clone's status (queued, the step running, ready or failed with failed_step and error) and todo: what the owner must do before the app fully works.",
  input: z.object({ clone_id: CloneIdSchema }),
  output: CloneSchema,
  auth: ['platform'],
  http: { method: 'GET', path: '/v1/clones/{clone_id}' },
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ctx.services.templates.clones.get(accountOf(ctx.caller), input.clone_id),
});

export const templatesClonesList = defineTool({
  name: 'templates_clones_list',
  title: 'List clones',
  description: "Your account's clones, newest first (the last 100).",
  input: z.object({}),
  output: z.object({ clones: z.array(CloneSchema) }),
  auth: ['platform'],
  http: { method: 'GET', path: '/v1/clones' },
  annotations: { readOnlyHint: true },
  handler: async (_input, ctx) => ({ clones: await ctx.services.templates.clones.list(accountOf(ctx.caller)) }),
});

export const templatesCloneRetry = defineTool({
  name: 'templates_clone_retry',
  title: 'Retry a clone',
  description: `Run a failed clone's failed step again (and the steps after it), or a ready clone's billing once Stripe Connect onboarding has started. ${POLL}`,
  input: z.object({ clone_id: CloneIdSchema }),
  output: CloneSchema,
  auth: ['platform'],
  http: { method: 'POST', path: '/v1/clones/{clone_id}/retry', status: 202 },
  annotations: { idempotentHint: false },
  handler: async (input, ctx) => ctx.services.templates.clones.retry(accountOf(ctx.caller), input.clone_id, ctx.caller),
});

export const templatesCloneDelete = defineTool({
  name: 'templates_clone_delete',
  title: 'Delete a clone',
  description: 'Delete an unfinished or failed clone and everything it created (its app, database and files). A ready clone is an app: use apps_delete.',
  input: z.object({ clone_id: CloneIdSchema }),
  output: z.object({ deleted: z.literal(true), clone_id: z.string() }),
  auth: ['platform'],
  http: { method: 'DELETE', path: '/v1/clones/{clone_id}' },
  annotations: { destructiveHint: true, idempotentHint: false },
  audit: { action: 'template.clone_delete', resource: 'clone', id: (input) => input.clone_id },
  handler: async (input, ctx) => {
    await ctx.services.templates.clones.delete(accountOf(ctx.caller), input.clone_id, ctx.caller);
    return { deleted: true as const, clone_id: input.clone_id };
  },
});

export const templatesTools: readonly AnyTool[] = [
  templatesList,
  templatesGet,
  templatesClone,
  templatesCloneGet,
  templatesClonesList,
  templatesCloneRetry,
  templatesCloneDelete,
  templatesPublish,
  templatesUnpublish,
];
