import { z } from 'zod';
import { type AnyTool } from '../../src/core/define.ts';
import { toolsUsing, type Ctx } from '../define.ts';
import { AppIdSchema } from '../../src/apps/types.ts';
import {
  DeploymentIdSchema,
  DeploymentSchema,
  type DeploymentView,
  ENV_MAX_VALUE_LENGTH,
  ENV_MAX_VARS,
  ENV_NAME,
  ENV_RESERVED_PREFIX,
  FRAMEWORKS,
  PlatformEnvSchema,
  STATUSES,
  UPLOAD_URL_TTL_SECONDS,
} from '../../src/frontend/types.ts';
import { decodeContent, ENCODINGS, guideRef } from '../shared.ts';

type Uses = 'frontend';
const defineTool = toolsUsing<Uses>();

const AUTH = ['platform', 'service'] as const;
const BASE = '/v1/{app_id}/frontend/deployments';
const GUIDE = guideRef('frontend');
const STATES = 'Status: WAITING (no zip yet) -> UPLOADING (zip received) -> BUILDING -> READY (served), or ERROR (error says why) or CANCELED.';
/** A deploy's result: the deployment, and what its pages get from the platform so they need not ask the guide. */
const DeployResultSchema = DeploymentSchema.extend({ platform_env: PlatformEnvSchema });
async function deployResult(deployment: DeploymentView, ctx: Ctx<Uses>): Promise<z.infer<typeof DeployResultSchema>> {
  return { ...deployment, platform_env: await ctx.services.frontend.platformEnv(ctx.app!.id) };
}
const PLATFORM_ENV_NOTE =
  'Pages get window.__ENV__ from <script src="__env.js">: SVC_APP_ID, SVC_API_URL, SVC_DATA_URL (PostgREST: fetch SVC_DATA_URL+"/table?select=*" ' +
  'with Authorization: Bearer <access_token>), SVC_AUTH_SIGNUP_URL and SVC_AUTH_LOGIN_URL (POST { email, password } -> { access_token, user, ... }), ' +
  'SVC_AUTH_REFRESH_URL; platform_env lists them.';
const FrameworkSchema = z
  .enum(FRAMEWORKS)
  .describe('react-vite (SPA: unknown routes get index.html), nextjs-static (next export), static or other (exact files)');

export const frontendDeployCreate = defineTool({
  name: 'frontend_deploy_create',
  title: 'Create a frontend deployment',
  description:
    'Start deploying a built static site from a zip (index.html at its root or in a single folder such as dist/): ' +
    `returns { id, uploadUrl, expiresIn: ${UPLOAD_URL_TTL_SECONDS}, maxSizeBytes }, status WAITING. Next: HTTP PUT the zip to uploadUrl with ` +
    'Content-Type: application/zip (no Authorization header; once, within expiresIn), then frontend_deploy_start. ' +
    `Clients without HTTP of their own: frontend_deploy_files. Serving and limits: ${GUIDE}.`,
  input: z.object({ app_id: AppIdSchema, framework: FrameworkSchema }),
  output: z.object({
    id: z.string().describe('Deployment id'),
    uploadUrl: z.string().describe('Signed URL: PUT the zip here with Content-Type: application/zip'),
    expiresIn: z.number().int().describe('Seconds the uploadUrl stays valid'),
    maxSizeBytes: z.number().int().describe('Largest zip accepted (compressed bytes)'),
    status: z.enum(STATUSES),
  }),
  auth: AUTH,
  appScoped: true,
  http: { method: 'POST', path: BASE, status: 201 },
  annotations: { destructiveHint: false, idempotentHint: false },
  handler: async (input, ctx) => ctx.services.frontend.create(ctx.app!.id, input.framework),
});

export const frontendDeployStart = defineTool({
  name: 'frontend_deploy_start',
  title: 'Start a frontend build',
  description:
    'Build a deployment whose zip arrived (UPLOADING): BUILDING (202); poll frontend_deploy_get until READY (`url` serves it) or ERROR ' +
    '(`error` says why). 409 INVALID_DEPLOYMENT_STATE before the upload or once started. ' +
    PLATFORM_ENV_NOTE,
  input: z.object({ app_id: AppIdSchema, id: DeploymentIdSchema }),
  output: DeployResultSchema,
  auth: AUTH,
  appScoped: true,
  http: { method: 'POST', path: `${BASE}/{id}/start`, status: 202 },
  annotations: { idempotentHint: false },
  handler: async (input, ctx) => deployResult(await ctx.services.frontend.start(ctx.app!.id, input.id), ctx),
});

const FileSchema = z.union([
  z.string().describe('The file as UTF-8 text'),
  z.object({
    content: z.string().describe('The file, written as encoding says'),
    encoding: z.enum(ENCODINGS).default('utf8').describe('utf8 (default) or base64 for binary files'),
  }),
]);

export const frontendDeployFiles = defineTool({
  name: 'frontend_deploy_files',
  title: 'Deploy a site from files',
  description:
    'Deploy a built static site from a map of files in one call: { "index.html": "<!doctype html>...", "logo.png": ' +
    '{ "content": "<base64>", "encoding": "base64" } }; index.html at the root or in one folder. Returns the deployment, ' +
    'status BUILDING (202): poll frontend_deploy_get until READY (`url` serves it) or ERROR. A path that leaves the site, a ' +
    'duplicate, too many files or bytes: 400 VALIDATION_FAILED, nothing created. At most 4 MB a request; larger sites, ' +
    `window.__ENV__: ${GUIDE}.`,
  input: z.object({
    app_id: AppIdSchema,
    framework: FrameworkSchema,
    files: z
      .record(z.string().min(1, 'a file path must not be empty').max(1024), FileSchema)
      .describe('Relative path ("assets/app.js") -> UTF-8 text, or { content, encoding }'),
  }),
  output: DeployResultSchema,
  auth: AUTH,
  appScoped: true,
  http: { method: 'POST', path: `${BASE}/files`, status: 202, largeBody: true },
  annotations: { destructiveHint: false, idempotentHint: false },
  handler: async (input, ctx) => {
    const files = Object.entries(input.files).map(([path, file]) => ({
      path,
      bytes: typeof file === 'string' ? Buffer.from(file, 'utf8') : decodeContent(file.content, file.encoding, `files.${path}.content`),
    }));
    return deployResult(await ctx.services.frontend.deployFiles(ctx.app!.id, input.framework, files), ctx);
  },
});

export const frontendDeployList = defineTool({
  name: 'frontend_deploy_list',
  title: 'List frontend deployments',
  description:
    'Deployments, newest first (`limit`, default 50); live: true is the site served. Free plan: only the live one keeps its files; pro: every ' +
    'READY one stays at its own `url` (/sites/{app_id}/d/{id}/) and frontend_deploy_promote rolls back to it.',
  input: z.object({
    app_id: AppIdSchema,
    limit: z.coerce.number().int().min(1).max(100).default(50).describe('1-100'),
  }),
  output: z.object({ deployments: z.array(DeploymentSchema) }),
  auth: AUTH,
  appScoped: true,
  http: { method: 'GET', path: BASE },
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ({ deployments: await ctx.services.frontend.list(ctx.app!.id, input.limit) }),
});

export const frontendDeployGet = defineTool({
  name: 'frontend_deploy_get',
  title: 'Get a frontend deployment',
  description: `Read one deployment: status, error, sizes, file count, whether it is live and the URL serving it. ${STATES}`,
  input: z.object({ app_id: AppIdSchema, id: DeploymentIdSchema }),
  output: DeploymentSchema,
  auth: AUTH,
  appScoped: true,
  http: { method: 'GET', path: `${BASE}/{id}` },
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ctx.services.frontend.get(ctx.app!.id, input.id),
});

export const frontendDeploySync = defineTool({
  name: 'frontend_deploy_sync',
  title: 'Force-sync a frontend deployment',
  description:
    'Unstick a deployment; returns it with `action`: expired (WAITING past its upload URL: now ERROR), requeued (BUILDING with a lost job: ' +
    'runnable again), failed (its job out of retries: ERROR) or none.',
  input: z.object({ app_id: AppIdSchema, id: DeploymentIdSchema }),
  output: DeploymentSchema.extend({ action: z.enum(['none', 'expired', 'requeued', 'failed']) }),
  auth: AUTH,
  appScoped: true,
  http: { method: 'POST', path: `${BASE}/{id}/sync` },
  annotations: { idempotentHint: true },
  handler: async (input, ctx) => {
    const { deployment, action } = await ctx.services.frontend.sync(ctx.app!.id, input.id);
    return { ...deployment, action };
  },
});

export const frontendDeployCancel = defineTool({
  name: 'frontend_deploy_cancel',
  title: 'Cancel a frontend deployment',
  description:
    'Cancel a WAITING, UPLOADING or BUILDING deployment: CANCELED, its zip removed, a running build discarded. Otherwise 409 ' +
    'INVALID_DEPLOYMENT_STATE (a READY site is taken down by frontend_deploy_delete).',
  input: z.object({ app_id: AppIdSchema, id: DeploymentIdSchema }),
  output: DeploymentSchema,
  auth: AUTH,
  appScoped: true,
  // Stopping a build changes nothing that serves.
  governed: false,
  http: { method: 'POST', path: `${BASE}/{id}/cancel` },
  annotations: { destructiveHint: true, idempotentHint: false },
  handler: async (input, ctx) => ctx.services.frontend.cancel(ctx.app!.id, input.id),
});

export const frontendDeployPromote = defineTool({
  name: 'frontend_deploy_promote',
  title: 'Roll back a site',
  description:
    'Roll back: a READY deployment with its files kept becomes the live site; 409 INVALID_DEPLOYMENT_STATE if not READY or files gone.',
  input: z.object({ app_id: AppIdSchema, id: DeploymentIdSchema }),
  output: DeploymentSchema,
  auth: AUTH,
  appScoped: true,
  http: { method: 'POST', path: `${BASE}/{id}/promote` },
  annotations: { idempotentHint: true },
  handler: async (input, ctx) => ctx.services.frontend.promote(ctx.app!.id, input.id),
});

export const frontendDeployDelete = defineTool({
  name: 'frontend_deploy_delete',
  title: 'Delete a frontend deployment',
  description:
    'Delete a deployment and its files; deleting the live one takes the site offline (404) until another is READY or promoted. ' +
    'Returns { deleted: true, id, was_live }.',
  input: z.object({ app_id: AppIdSchema, id: DeploymentIdSchema }),
  output: z.object({ deleted: z.literal(true), id: z.string(), was_live: z.boolean() }),
  auth: AUTH,
  appScoped: true,
  http: { method: 'DELETE', path: `${BASE}/{id}` },
  annotations: { destructiveHint: true, idempotentHint: false },
  handler: async (input, ctx) => ctx.services.frontend.delete(ctx.app!.id, input.id),
});

const EnvMapSchema = z
  .record(
    z.string().regex(ENV_NAME, 'a variable name is 1-64 characters: uppercase letters, digits and underscores, not starting with a digit'),
    z.string().max(ENV_MAX_VALUE_LENGTH, `a value is at most ${ENV_MAX_VALUE_LENGTH} characters`),
  )
  .refine((env) => Object.keys(env).length <= ENV_MAX_VARS, `at most ${ENV_MAX_VARS} variables`)
  .describe('Map of NAME to string value, e.g. { "GREETING": "Hello" }');

export const frontendEnvSet = defineTool({
  name: 'frontend_env_set',
  title: 'Set the frontend environment',
  description:
    `Replace the app's frontend environment ({} clears it; ${ENV_RESERVED_PREFIX} names are reserved). The values are PUBLIC: every visitor ` +
    'reads them as window.__ENV__ from __env.js (beside the SVC_ ones), so never put secrets here. Takes effect at once.',
  input: z.object({ app_id: AppIdSchema, env: EnvMapSchema }),
  output: z.object({ keys: z.array(z.string()), updated_at: z.string() }),
  auth: AUTH,
  appScoped: true,
  billingGate: 'write',
  http: { method: 'PUT', path: '/v1/{app_id}/frontend/env', bodyField: 'env' },
  annotations: { destructiveHint: true, idempotentHint: true },
  handler: async (input, ctx) => ctx.services.frontend.setEnv(ctx.app!.id, input.env),
});

export const frontendEnvGet = defineTool({
  name: 'frontend_env_get',
  title: 'List frontend environment keys',
  description: "The names of the app's frontend variables (sorted; values are never returned).",
  input: z.object({ app_id: AppIdSchema }),
  output: z.object({ keys: z.array(z.string()) }),
  auth: AUTH,
  appScoped: true,
  http: { method: 'GET', path: '/v1/{app_id}/frontend/env' },
  annotations: { readOnlyHint: true },
  handler: async (_input, ctx) => ({ keys: await ctx.services.frontend.envKeys(ctx.app!.id) }),
});

/** Registered before the data tools: /v1/{app_id}/{table}/{id} would otherwise shadow these paths. */
export const frontendTools: readonly AnyTool[] = [
  frontendDeployCreate,
  frontendDeployStart,
  frontendDeployFiles,
  frontendDeployList,
  frontendDeployGet,
  frontendDeploySync,
  frontendDeployCancel,
  frontendDeployPromote,
  frontendDeployDelete,
  frontendEnvSet,
  frontendEnvGet,
];
