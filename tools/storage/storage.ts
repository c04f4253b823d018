import { z } from 'zod';
import { type AnyTool } from '../../src/core/define.ts';
import { toolsUsing, type Ctx } from '../define.ts';
import type { Caller } from '../../src/core/caller.ts';
import { AppIdSchema } from '../../src/apps/types.ts';
import { ALLOW_ENTRY_RE, isMimeType } from '../../src/storage/names.ts';
import { DOWNLOAD_URL_TTL_SECONDS, INLINE_MAX_BYTES, LIST_MAX, UPLOAD_URL_TTL_SECONDS, type Owner } from '../../src/storage/service.ts';
import { BUCKET_ACCESS } from '../../src/storage/buckets.ts';
import { decodeContent, effectiveCaller, encodeContent, ENCODINGS, guideRef, OWN_FILES_NOTE as ACCESS_NOTE, QueryFlag, UserTokenSchema } from '../shared.ts';

type Uses = 'endUserTokens' | 'storage';
const defineTool = toolsUsing<Uses>();

const AUTH = ['platform', 'service', 'user'] as const;
const GUIDE = guideRef('storage');

/** Authentication rule 2: keys act for the app (uploads have no user), an end-user token (or user_token) for that user only. */
async function ownerOf(input: { app_id: string; user_token?: string | undefined }, ctx: Ctx<Uses>): Promise<Owner> {
  const caller: Caller = await effectiveCaller(input, ctx);
  return caller.kind === 'user' ? { kind: 'user', userId: caller.userId } : { kind: 'service' };
}

const INLINE_MB = INLINE_MAX_BYTES / (1024 * 1024);

const ObjectIdSchema = z.string().min(1).max(100).describe('objectId returned by storage_upload (a UUID)');
const BytesSchema = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

const ObjectSchema = z.object({
  id: z.string().describe('objectId'),
  filename: z.string().describe('Sanitised filename'),
  content_type: z.string(),
  size_bytes: z.number().int(),
  created_at: z.string(),
});

const FilenameSchema = z
  .string()
  .min(1, 'filename must not be empty')
  .max(1024)
  .describe('Original filename; paths and unsafe characters are stripped, at most 200 characters kept');
const ContentTypeSchema = z.string().trim().refine(isMimeType, 'contentType must be a MIME type such as image/png or text/plain; charset=utf-8');

export const storageUpload = defineTool({
  name: 'storage_upload',
  title: 'Get an upload URL',
  description:
    'Reserve a file and get a presigned URL for its bytes: then HTTP PUT exactly sizeBytes bytes to uploadUrl with Content-Type equal to ' +
    `contentType (no Authorization header) within expiresIn seconds, and keep objectId; the file is listed once its bytes arrived. ` +
    `Clients without HTTP of their own: storage_upload_inline. Limits (by default 10 MB per file, 1 GB per app) and errors: ${GUIDE}.` +
    ACCESS_NOTE,
  input: z.object({
    app_id: AppIdSchema,
    filename: FilenameSchema,
    contentType: ContentTypeSchema.describe('MIME type of the file; the PUT must send exactly this Content-Type'),
    sizeBytes: BytesSchema.describe('Exact size of the file in bytes (a positive integer)'),
    user_token: UserTokenSchema,
  }),
  output: z.object({
    uploadUrl: z.string().describe('Presigned URL for an HTTP PUT of the bytes'),
    objectKey: z.string(),
    objectId: z.string(),
    expiresIn: z.literal(UPLOAD_URL_TTL_SECONDS),
  }),
  auth: AUTH,
  appScoped: true,
  http: { method: 'POST', path: '/storage/{app_id}/upload', subdomainPath: '/storage/upload' },
  annotations: { destructiveHint: false, idempotentHint: false },
  handler: async (input, ctx) =>
    ctx.services.storage.createUpload(input.app_id, await ownerOf(input, ctx), { filename: input.filename, contentType: input.contentType, sizeBytes: input.sizeBytes }),
});

const EncodingSchema = z.enum(ENCODINGS);

export const storageUploadInline = defineTool({
  name: 'storage_upload_inline',
  title: 'Upload a small file inline',
  description:
    `Store a file sent in the call (at most ${INLINE_MB} MB decoded; base64, or text with encoding "utf8"). ` +
    'Returns { objectId, objectKey, id, filename, content_type, size_bytes, created_at }; keep objectId. ' +
    `Above ${INLINE_MB} MB: 413 INLINE_CONTENT_TOO_LARGE (storage_upload). A refusal stores nothing (${GUIDE}).` +
    ACCESS_NOTE,
  input: z.object({
    app_id: AppIdSchema,
    filename: FilenameSchema,
    contentType: ContentTypeSchema.describe('MIME type of the file, as it will be served'),
    content: z.string().describe('The file: standard padded base64, or text with encoding "utf8"'),
    encoding: EncodingSchema.default('base64'),
    user_token: UserTokenSchema,
  }),
  output: ObjectSchema.extend({
    objectId: z.string().describe('The id to persist; equals id'),
    objectKey: z.string(),
  }),
  auth: AUTH,
  appScoped: true,
  http: { method: 'POST', path: '/storage/{app_id}/upload/inline', subdomainPath: '/storage/upload/inline', status: 201, largeBody: true },
  annotations: { destructiveHint: false, idempotentHint: false },
  handler: async (input, ctx) => {
    const owner = await ownerOf(input, ctx);
    const bytes = decodeContent(input.content, input.encoding, 'content');
    return ctx.services.storage.uploadInline(input.app_id, owner, { filename: input.filename, contentType: input.contentType }, bytes);
  },
});

export const storageRead = defineTool({
  name: 'storage_read',
  title: 'Read a small file inline',
  description:
    `Return a file's bytes in the result (files up to ${INLINE_MB} MB; larger: 413 INLINE_CONTENT_TOO_LARGE, use storage_download), for clients that cannot fetch a URL: ` +
    '{ id, filename, content_type, size_bytes, created_at, encoding, content }. encoding "utf8" is 400 for a file that is not UTF-8 text.' +
    ACCESS_NOTE,
  input: z.object({
    app_id: AppIdSchema,
    object_id: ObjectIdSchema,
    encoding: EncodingSchema.default('base64'),
    user_token: UserTokenSchema,
  }),
  output: ObjectSchema.extend({ encoding: EncodingSchema, content: z.string() }),
  auth: AUTH,
  appScoped: true,
  http: { method: 'GET', path: '/storage/{app_id}/read/{object_id}', subdomainPath: '/storage/read/{object_id}' },
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => {
    const { object, bytes } = await ctx.services.storage.read(input.app_id, await ownerOf(input, ctx), input.object_id);
    return { ...object, encoding: input.encoding, content: encodeContent(bytes, input.encoding) };
  },
});

export const storageList = defineTool({
  name: 'storage_list',
  title: 'List files',
  description:
    'List the files whose bytes have arrived, newest first: id, filename, content_type, size_bytes, created_at. ' +
    `REST returns a bare JSON array; MCP returns { objects }. At most ${LIST_MAX} per call (page with limit and offset).` +
    ACCESS_NOTE,
  input: z.object({
    app_id: AppIdSchema,
    limit: z.coerce.number().int().min(1).max(LIST_MAX).optional().describe(`1-${LIST_MAX}, default ${LIST_MAX}`),
    offset: z.coerce.number().int().min(0).optional().describe('Files to skip, default 0'),
    user_token: UserTokenSchema,
  }),
  output: z.object({ objects: z.array(ObjectSchema) }),
  auth: AUTH,
  appScoped: true,
  http: { method: 'GET', path: '/storage/{app_id}/objects', subdomainPath: '/storage/objects', respond: (out) => ({ body: out.objects }) },
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ({
    objects: await ctx.services.storage.list(input.app_id, await ownerOf(input, ctx), { limit: input.limit, offset: input.offset }),
  }),
});

export const storageDownload = defineTool({
  name: 'storage_download',
  title: 'Get a download URL',
  description:
    `Get a presigned URL to GET a file's bytes (valid ${DOWNLOAD_URL_TTL_SECONDS} seconds; Range supported). ` +
    '404 RESOURCE_NOT_FOUND when it does not exist, is not yours, or its bytes have not arrived yet.' +
    ACCESS_NOTE,
  input: z.object({ app_id: AppIdSchema, object_id: ObjectIdSchema, user_token: UserTokenSchema }),
  output: z.object({ downloadUrl: z.string(), filename: z.string(), expiresIn: z.literal(DOWNLOAD_URL_TTL_SECONDS) }),
  auth: AUTH,
  appScoped: true,
  http: { method: 'GET', path: '/storage/{app_id}/download/{object_id}', subdomainPath: '/storage/download/{object_id}' },
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ctx.services.storage.download(input.app_id, await ownerOf(input, ctx), input.object_id),
});

export const storageDelete = defineTool({
  name: 'storage_delete',
  title: 'Delete a file',
  description:
    'Delete a file (or a pending upload) and its bytes; returns { deleted: true, id }. 404 RESOURCE_NOT_FOUND when it does not exist or is not yours. ' +
    'Issued download URLs stop working.' +
    ACCESS_NOTE,
  input: z.object({ app_id: AppIdSchema, object_id: ObjectIdSchema, user_token: UserTokenSchema }),
  output: z.object({ deleted: z.literal(true), id: z.string() }),
  auth: AUTH,
  appScoped: true,
  http: { method: 'DELETE', path: '/storage/{app_id}/{object_id}', subdomainPath: '/storage/{object_id}' },
  annotations: { destructiveHint: true, idempotentHint: false },
  handler: async (input, ctx) => ctx.services.storage.delete(input.app_id, await ownerOf(input, ctx), input.object_id),
});

const OverridesSchema = z.object({
  max_file_bytes: z.number().int().nullable(),
  max_app_bytes: z.number().int().nullable(),
  allowed_content_types: z.array(z.string()).nullable(),
});

const LimitsSchema = z.object({
  app_id: z.string(),
  max_file_bytes: z.number().int().describe('Effective per-file limit in bytes'),
  max_app_bytes: z.number().int().describe('Effective per-app total in bytes (stored plus pending uploads)'),
  allowed_content_types: z.array(z.string()).describe('Effective allow-list (exact types and type/* wildcards); empty allows every type'),
  max_user_pending_uploads: z.number().int().describe('Pending uploads one end user may hold at once'),
  max_user_pending_bytes: z.number().int().describe('Bytes one end user may hold reserved by pending uploads at once (also their largest file)'),
  overrides: OverridesSchema.describe('This app\'s overrides; null means the platform default'),
  usage: z.object({
    used_bytes: z.number().int().describe('Bytes of files whose bytes arrived'),
    pending_bytes: z.number().int().describe('Bytes reserved by unexpired pending uploads'),
  }),
});

export const storageLimitsGet = defineTool({
  name: 'storage_limits_get',
  title: 'Read storage limits and usage',
  description:
    'Read the storage limits in force for an app (per-file size, per-app total, allowed content types, what one end user may hold in pending uploads), ' +
    'its overrides (null = platform default) and its usage { used_bytes, pending_bytes }; pending_bytes counts only unexpired reservations.',
  input: z.object({ app_id: AppIdSchema }),
  output: LimitsSchema,
  auth: ['platform'],
  appScoped: true,
  http: { method: 'GET', path: '/storage/{app_id}/limits', subdomainPath: '/storage/limits' },
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ctx.services.storage.limits(input.app_id),
});

export const storageLimitsSet = defineTool({
  name: 'storage_limits_set',
  title: 'Set storage limits',
  description:
    'Override an app\'s storage limits. Omitted fields stay as they are; null resets a field to the platform default. ' +
    'Overrides can only tighten the platform limits: a byte limit above the platform\'s, an allow-list admitting a type the platform\'s does not, ' +
    'or an unknown field is a 400 VALIDATION_FAILED naming it, and nothing changes. ' +
    'Uploads already stored are kept. Returns the same shape as storage_limits_get.',
  // Strict: a misspelt limit must be refused, not ignored with a 200 that looks like success.
  input: z.strictObject(
    {
      app_id: AppIdSchema,
      max_file_bytes: BytesSchema.nullable().optional().describe('Per-file limit in bytes (a positive integer), or null for the platform default'),
      max_app_bytes: BytesSchema.nullable().optional().describe('Per-app total in bytes, stored plus pending (a positive integer), or null for the platform default'),
      allowed_content_types: z
        .array(z.string().trim().toLowerCase().regex(ALLOW_ENTRY_RE, 'each entry is a MIME type (image/png) or a wildcard (image/*)'))
        .min(1, 'allowed_content_types needs at least one entry; null allows what the platform allows')
        .max(100)
        .nullable()
        .optional()
        .describe('Array of allowed types, e.g. ["image/*", "application/pdf"], or null for the platform default'),
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? `unknown field ${issue.keys.map((k) => `'${k}'`).join(', ')}; the fields are max_file_bytes, max_app_bytes and allowed_content_types`
          : undefined,
    },
  ),
  output: LimitsSchema,
  auth: ['platform'],
  appScoped: true,
  http: { method: 'PUT', path: '/storage/{app_id}/limits', subdomainPath: '/storage/limits' },
  annotations: { idempotentHint: true },
  handler: async (input, ctx) => {
    const { app_id, ...patch } = input;
    return ctx.services.storage.setLimits(app_id, patch);
  },
});

// Checked where buckets are (an unknown id is 404, a bad new one 400 InvalidBucketName): no schema bytes spent here.
const BucketIdSchema = z.string();
// A bucket as the tools show it (storage-js's name, owner and type left out: z.object drops them).
const BucketSchema = z.object({
  id: z.string(),
  access: z.enum(BUCKET_ACCESS),
  public: z.boolean(),
  file_size_limit: z.number().int().nullable(),
  allowed_mime_types: z.array(z.string()).nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
const BUCKET_AUTH = ['platform', 'service'] as const;

export const storageBucketsList = defineTool({
  name: 'storage_buckets_list',
  title: 'List buckets',
  description: `The app's buckets (storage-js's; the tools above use 'files'). ${GUIDE}.`,
  input: z.object({ app_id: AppIdSchema }),
  output: z.object({ buckets: z.array(BucketSchema) }),
  auth: BUCKET_AUTH,
  appScoped: true,
  http: { method: 'GET', path: '/storage/{app_id}/buckets', subdomainPath: '/storage/buckets' },
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ({ buckets: await ctx.services.storage.buckets.list(input.app_id) }),
});

export const storageBucketsSet = defineTool({
  name: 'storage_buckets_set',
  title: 'Create or update a bucket',
  description:
    "Create a bucket, or update it; omitted fields stay. access: owner (end users see their own files), authenticated (signed-in users read), public (anyone reads). Limits only tighten the app's.",
  input: z.strictObject({
    app_id: AppIdSchema,
    bucket_id: BucketIdSchema,
    access: z.enum(BUCKET_ACCESS).optional(),
    file_size_limit: z.number().int().positive().nullable().optional(),
    allowed_mime_types: z.array(z.string()).nullable().optional(),
  }),
  output: BucketSchema,
  auth: BUCKET_AUTH,
  appScoped: true,
  http: { method: 'PUT', path: '/storage/{app_id}/buckets/{bucket_id}', subdomainPath: '/storage/buckets/{bucket_id}' },
  annotations: { idempotentHint: true },
  handler: async ({ app_id, bucket_id, ...fields }, ctx) => ctx.services.storage.buckets.set(app_id, bucket_id, fields),
});

export const storageBucketsDelete = defineTool({
  name: 'storage_buckets_delete',
  title: 'Delete a bucket',
  description: "Delete a bucket; 409 unless empty. empty: true removes its files first. 'files' stays.",
  input: z.strictObject({ app_id: AppIdSchema, bucket_id: BucketIdSchema, empty: QueryFlag.default(false) }),
  output: z.object({ deleted: z.literal(true), id: z.string() }),
  auth: BUCKET_AUTH,
  appScoped: true,
  http: { method: 'DELETE', path: '/storage/{app_id}/buckets/{bucket_id}', subdomainPath: '/storage/buckets/{bucket_id}' },
  annotations: { destructiveHint: true, idempotentHint: false },
  handler: async ({ app_id, bucket_id, empty }, ctx) => {
    const { storage } = ctx.services;
    await storage.buckets.delete(app_id, bucket_id, empty ? () => storage.paths.empty(app_id, bucket_id) : undefined);
    return { deleted: true as const, id: bucket_id };
  },
});

export const storageTools: readonly AnyTool[] = [
  storageUpload,
  storageUploadInline,
  storageRead,
  storageList,
  storageDownload,
  storageDelete,
  storageLimitsGet,
  storageLimitsSet,
  storageBucketsList,
  storageBucketsSet,
  storageBucketsDelete,
];
