import { z } from 'zod';
import { toolsUsing, type Ctx } from '../define.ts';
import { AppIdSchema } from '../../src/apps/types.ts';
import { EMBEDDING_MODELS, RAG_LIMITS, type RagCaller } from '../../src/rag/types.ts';
import { effectiveCaller, UserTokenSchema } from '../shared.ts';
import { roleAtLeast } from '../../src/core/caller.ts';
import { errors } from '../../src/core/errors.ts';

type Uses = 'endUserTokens' | 'rag';
const defineTool = toolsUsing<Uses>();

const NameSchema = z
  .string()
  .regex(/^[a-z0-9_-]{1,100}$/, 'a collection name is 1-100 lowercase letters, digits, hyphens and underscores')
  .describe('Collection name (lowercase letters, digits, - and _), unique in the app');
/** Metadata is copied onto every chunk of a document: kept small so a document cannot multiply it into gigabytes. */
const METADATA_MAX_BYTES = 8192;
const MetadataSchema = z
  .record(z.string().max(200), z.unknown())
  .refine((m) => Buffer.byteLength(JSON.stringify(m)) <= METADATA_MAX_BYTES, { message: `at most ${METADATA_MAX_BYTES} bytes as JSON` });
const DocumentIdSchema = z.string().uuid().describe('Document id, from rag_ingest or rag_documents_list');

const Collection = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  accessMode: z.enum(['private', 'shared', 'custom']),
  chunkSize: z.number().int(),
  chunkOverlap: z.number().int(),
  embeddingModel: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
const Document = z.object({
  id: z.string(),
  collectionId: z.string(),
  filename: z.string().nullable(),
  status: z.enum(['pending', 'processing', 'ready', 'failed']),
  chunkCount: z.number().int(),
  metadata: z.record(z.string(), z.unknown()),
  errorMessage: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
const Chunk = z.object({ text: z.string(), score: z.number(), documentId: z.string(), metadata: z.record(z.string(), z.unknown()) });

const ADMIN = ['platform', 'service'] as const;
const ANY = ['platform', 'service', 'user'] as const;
const BASE = '/v1/{app_id}/rag/collections';
const ACCESS =
  " Keys see all; end users (JWT or user_token) only 'shared' and 'custom' collections, in 'custom' only unowned documents and theirs.";

/** The caller for access rules: an end user (JWT or user_token) or the app's keys. */
async function ragCaller(input: { app_id: string; user_token?: string | undefined }, ctx: Ctx<Uses>): Promise<RagCaller> {
  const caller = await effectiveCaller(input, ctx);
  return { app: ctx.app!, endUserId: caller.kind === 'user' ? caller.userId : null };
}

export const ragCollectionsCreate = defineTool({
  name: 'rag_collections_create',
  title: 'Create a RAG collection',
  description:
    "Create a collection for retrieval (201). accessMode: 'private' (default: keys only), 'shared' (end users may query), 'custom' (end users " +
    "add documents and see theirs and the app's). Next: rag_ingest, rag_query.",
  input: z.object({
    app_id: AppIdSchema,
    name: NameSchema,
    description: z.string().max(2000).optional(),
    accessMode: z.enum(['private', 'shared', 'custom']).default('private'),
    chunkSize: z.number().int().min(32).max(8000).default(512).describe('Tokens per chunk (default 512)'),
    chunkOverlap: z.number().int().min(0).max(4000).default(64).describe('Tokens shared by consecutive chunks (default 64)'),
    embeddingModel: z
      .string()
      .regex(new RegExp(`^[^\\s/]+/(${EMBEDDING_MODELS.join('|')})$`), `'<vendor>/' followed by one of ${EMBEDDING_MODELS.join(', ')}`)
      .optional()
      .describe('Default openai/text-embedding-3-small; every collection stores 1536 dimensions'),
  }),
  output: Collection,
  auth: ADMIN,
  appScoped: true,
  http: { method: 'POST', path: BASE, subdomainPath: '/rag/collections', status: 201 },
  handler: async ({ app_id: _a, ...input }, ctx) => ctx.services.rag.createCollection(ctx.app!, input),
});

export const ragCollectionsList = defineTool({
  name: 'rag_collections_list',
  title: 'List RAG collections',
  description: "The app's collections, oldest first (REST: a bare array); end users see the shared and custom ones.",
  input: z.object({ app_id: AppIdSchema, user_token: UserTokenSchema }),
  output: z.object({ collections: z.array(Collection) }),
  auth: ANY,
  appScoped: true,
  http: { method: 'GET', path: BASE, subdomainPath: '/rag/collections', respond: (out) => ({ body: out.collections }) },
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ({ collections: await ctx.services.rag.listCollections(await ragCaller(input, ctx)) }),
});

export const ragCollectionsGet = defineTool({
  name: 'rag_collections_get',
  title: 'Get a RAG collection',
  description: 'One collection by name, with documentCount and chunkCount.',
  input: z.object({ app_id: AppIdSchema, name: NameSchema, user_token: UserTokenSchema }),
  output: Collection.extend({ documentCount: z.number().int(), chunkCount: z.number().int() }),
  auth: ANY,
  appScoped: true,
  http: { method: 'GET', path: `${BASE}/{name}`, subdomainPath: '/rag/collections/{name}' },
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ctx.services.rag.getCollection(await ragCaller(input, ctx), input.name),
});

export const ragCollectionsDelete = defineTool({
  name: 'rag_collections_delete',
  title: 'Delete a RAG collection',
  description: 'Delete a collection with all its documents, chunks and embeddings, irreversibly (REST: 204).',
  input: z.object({ app_id: AppIdSchema, name: NameSchema }),
  output: z.object({ deleted: z.literal(true), name: z.string() }),
  auth: ADMIN,
  appScoped: true,
  http: { method: 'DELETE', path: `${BASE}/{name}`, subdomainPath: '/rag/collections/{name}', status: 204 },
  annotations: { destructiveHint: true, idempotentHint: true },
  handler: async (input, ctx) => {
    await ctx.services.rag.deleteCollection(ctx.app!, input.name);
    return { deleted: true as const, name: input.name };
  },
});

export const ragIngest = defineTool({
  name: 'rag_ingest',
  title: 'Ingest a document',
  description:
    'Add a document: `text`, or `storage_object_id` of a stored file (text, Markdown, HTML, PDF, DOCX, JSON). Answers 202 { documentId, status: ' +
    '"pending" }; poll rag_documents_get until ready or failed (errorMessage). metadata is kept on every chunk (rag_query filter). Embeddings are ' +
    "billed like ai_embed. End users ingest only into 'custom' collections, as the document's owner.",
  input: z
    .object({
      app_id: AppIdSchema,
      name: NameSchema,
      text: z.string().max(RAG_LIMITS.maxTextChars).optional().describe(`The document's text (at most ${RAG_LIMITS.maxTextChars} characters)`),
      storage_object_id: z.string().uuid().optional().describe("A file of this app's storage (storage_upload or storage_upload_inline)"),
      filename: z.string().max(1024).optional(),
      metadata: MetadataSchema.optional().describe(`Stored with each chunk (at most ${METADATA_MAX_BYTES} bytes as JSON); rag_query filter matches it`),
      user_token: UserTokenSchema,
    })
    .refine((v) => (v.text === undefined) !== (v.storage_object_id === undefined), {
      message: 'give exactly one of text and storage_object_id',
      path: ['text'],
    }),
  output: z.object({ documentId: z.string(), status: z.literal('pending'), message: z.string() }),
  auth: ANY,
  appScoped: true,
  http: { method: 'POST', path: `${BASE}/{name}/ingest`, subdomainPath: '/rag/collections/{name}/ingest', status: 202, largeBody: true },
  handler: async ({ app_id, name, user_token, ...input }, ctx) => ctx.services.rag.ingest(await ragCaller({ app_id, user_token }, ctx), name, input),
});

export const ragDocumentsList = defineTool({
  name: 'rag_documents_list',
  title: 'List documents',
  description: "A collection's documents and status, oldest first, paged (REST: a bare array, next_before in X-Next-Before).",
  input: z.object({
    app_id: AppIdSchema,
    name: NameSchema,
    before: z.string().max(100).optional().describe('next_before of the last page'),
    limit: z.coerce.number().int().min(1).max(1000).default(1000),
    user_token: UserTokenSchema,
  }),
  output: z.object({ documents: z.array(Document), next_before: z.string().nullable() }),
  auth: ANY,
  appScoped: true,
  http: {
    method: 'GET',
    path: `${BASE}/{name}/documents`,
    subdomainPath: '/rag/collections/{name}/documents',
    respond: (out) => ({ body: out.documents, ...(out.next_before ? { headers: { 'X-Next-Before': out.next_before } } : {}) }),
  },
  annotations: { readOnlyHint: true },
  handler: async ({ app_id, name, user_token, ...page }, ctx) => ctx.services.rag.listDocuments(await ragCaller({ app_id, user_token }, ctx), name, page),
});

export const ragDocumentsGet = defineTool({
  name: 'rag_documents_get',
  title: 'Get a document',
  description: 'One document: poll its status after rag_ingest (pending -> processing -> ready, or failed with errorMessage).',
  input: z.object({ app_id: AppIdSchema, name: NameSchema, document_id: DocumentIdSchema, user_token: UserTokenSchema }),
  output: Document,
  auth: ANY,
  appScoped: true,
  http: { method: 'GET', path: `${BASE}/{name}/documents/{document_id}`, subdomainPath: '/rag/collections/{name}/documents/{document_id}' },
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ctx.services.rag.getDocument(await ragCaller(input, ctx), input.name, input.document_id),
});

export const ragDocumentsDelete = defineTool({
  name: 'rag_documents_delete',
  title: 'Delete a document',
  description: 'Delete a document and its chunks, irreversibly (REST: 204). An end user may delete only their own documents.',
  input: z.object({ app_id: AppIdSchema, name: NameSchema, document_id: DocumentIdSchema, user_token: UserTokenSchema }),
  output: z.object({ deleted: z.literal(true), id: z.string() }),
  auth: ANY,
  appScoped: true,
  http: { method: 'DELETE', path: `${BASE}/{name}/documents/{document_id}`, subdomainPath: '/rag/collections/{name}/documents/{document_id}', status: 204 },
  annotations: { destructiveHint: true, idempotentHint: true },
  handler: async (input, ctx) => {
    await ctx.services.rag.deleteDocument(await ragCaller(input, ctx), input.name, input.document_id);
    return { deleted: true as const, id: input.document_id };
  },
});

export const ragQuery = defineTool({
  name: 'rag_query',
  title: 'Query a collection',
  description:
    'The topK chunks most similar to `query` (cosine `score` >= `threshold`) whose metadata contains `filter`: { chunks: [{ text, score, ' +
    "documentId, metadata }] }. synthesize: true adds `answer` by `model` (default: the app's defaultModel, else openai/gpt-4o-mini) from those " +
    'chunks, citing [1], [2]; it spends AI credits (a platform caller needs role developer).' +
    ACCESS,
  input: z.object({
    app_id: AppIdSchema,
    name: NameSchema,
    query: z.string().min(1).max(8000),
    topK: z.number().int().min(1).max(RAG_LIMITS.topKMax).default(5),
    threshold: z.number().min(0).max(1).optional().describe('Minimum cosine similarity (0-1)'),
    filter: MetadataSchema.optional().describe('Metadata key-values every returned chunk must have'),
    synthesize: z.boolean().default(false),
    model: z.string().max(200).optional().describe("Model for the answer, '<vendor>/<model>'"),
    user_token: UserTokenSchema,
  }),
  output: z.object({ chunks: z.array(Chunk), answer: z.string().optional(), model: z.string().optional() }),
  auth: ANY,
  appScoped: true,
  http: { method: 'POST', path: `${BASE}/{name}/query`, subdomainPath: '/rag/collections/{name}/query' },
  // A read, but an answer spends AI credit: refused where the gateway's chat would be (a soft-locked account).
  billingGate: (input) => (input.synthesize ? 'write' : undefined),
  annotations: { readOnlyHint: true, openWorldHint: true },
  handler: async ({ app_id, name, user_token, ...input }, ctx) => {
    // Reading is a viewer's, but an answer spends the account's AI credits: a person spending them needs developer.
    if (input.synthesize && ctx.caller.kind === 'platform' && !roleAtLeast(ctx.caller.role, 'developer')) throw errors.roleTooLow('developer', ctx.caller.role);
    return ctx.services.rag.query(await ragCaller({ app_id, user_token }, ctx), name, input);
  },
});

export const ragTools = [
  ragCollectionsCreate,
  ragCollectionsList,
  ragCollectionsGet,
  ragCollectionsDelete,
  ragIngest,
  ragDocumentsList,
  ragDocumentsGet,
  ragDocumentsDelete,
  ragQuery,
];
