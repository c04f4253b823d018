import { z } from 'zod';

export const FRAMEWORKS = ['react-vite', 'nextjs-static', 'static', 'other'] as const;
export type Framework = (typeof FRAMEWORKS)[number];

export const STATUSES = ['WAITING', 'UPLOADING', 'BUILDING', 'READY', 'ERROR', 'CANCELED'] as const;
export type DeploymentStatus = (typeof STATUSES)[number];

/** Lifetime of a zip upload URL (spec: expiresIn 900). */
export const UPLOAD_URL_TTL_SECONDS = 900;

export const ENV_NAME = /^[A-Z_][A-Z0-9_]{0,63}$/;
export const ENV_MAX_VALUE_LENGTH = 4096;
export const ENV_MAX_VARS = 100;
/** Injected by the platform into window.__ENV__; a user variable may not start with it. */
export const ENV_RESERVED_PREFIX = 'SVC_';

/**
 * What the platform adds to every site's window.__ENV__, so that a page finds its app's API without the guide. The
 * names are those functions get (SVC_APP_ID, SVC_API_URL) plus the URLs a browser client starts with.
 */
export const PlatformEnvSchema = z
  .object({
    SVC_APP_ID: z.string(),
    SVC_API_URL: z.string().describe('{base_url}/v1/{app_id}: every route of the app is below it'),
    SVC_DATA_URL: z.string().describe('The data API (GET/POST {SVC_DATA_URL}/{table}); the URL for postgrest-js and supabase-js'),
    SVC_AUTH_SIGNUP_URL: z.string().describe('POST { email, password }: a new end user and their session'),
    SVC_AUTH_LOGIN_URL: z.string().describe('POST { email, password }: a session'),
    SVC_AUTH_REFRESH_URL: z.string().describe('POST { refresh_token }: a new session'),
    SVC_PUBLISHABLE_KEY: z.string().optional().describe("The app's publishable key (its first): supabase-js's createClient(SVC_API_URL, SVC_PUBLISHABLE_KEY)"),
  })
  .describe('What the platform adds to the site\'s window.__ENV__ (<script src="__env.js">) beside frontend_env_set\'s variables');
export type PlatformEnv = z.infer<typeof PlatformEnvSchema>;

export const DeploymentIdSchema = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'a deployment id is a UUID, as returned by frontend_deploy_create')
  .describe('Deployment id (frontend_deploy_list)');

export const DeploymentSchema = z.object({
  id: z.string(),
  app_id: z.string(),
  framework: z.enum(FRAMEWORKS),
  status: z.enum(STATUSES).describe('WAITING -> UPLOADING -> BUILDING -> READY, or ERROR, or CANCELED'),
  error: z.string().nullable().describe('Why the deployment ended in ERROR, in words; null otherwise'),
  size_bytes: z.number().int().nullable().describe('Size of the uploaded zip; null until it arrived'),
  unzipped_bytes: z.number().int().nullable().describe('Bytes of the extracted site; null until READY'),
  file_count: z.number().int().nullable().describe('Files in the extracted site; null until READY'),
  live: z.boolean().describe('true for the one deployment served at the app\'s site URL'),
  url: z
    .string()
    .nullable()
    .describe('Where this deployment is served: the site URL when live, {base_url}/sites/{app_id}/d/{id}/ for a kept non-live READY deployment (pro), otherwise null'),
  created_at: z.string(),
  updated_at: z.string(),
  uploaded_at: z.string().nullable(),
  ready_at: z.string().nullable(),
});
export type DeploymentView = z.infer<typeof DeploymentSchema>;
