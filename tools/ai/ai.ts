import { z } from 'zod';
import { type HttpBinding } from '../../src/core/define.ts';
import { toolsUsing, type Ctx } from '../define.ts';
import { AppIdSchema } from '../../src/apps/types.ts';
import type { AiCaller } from '../../src/ai/gateway.ts';
import { effectiveCaller, UserTokenSchema } from '../shared.ts';
import { aiErrors } from '../../src/ai/errors.ts';
import { errors } from '../../src/core/errors.ts';

type Uses = 'ai' | 'aiSettings' | 'endUserTokens';
const defineTool = toolsUsing<Uses>();

const ModelSchema = z
  .string()
  .max(200)
  .regex(/^[^\s/]+\/\S+$/, "a model id is '<vendor>/<model>', e.g. 'openai/gpt-4o-mini'")
  .describe("Model id '<vendor>/<model>' as the upstream router names it, e.g. 'openai/gpt-4o-mini'");

const MessageSchema = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
  content: z.union([z.string(), z.array(z.unknown()), z.null()]).optional(),
});

/** The upstream's answer as it came (pre-serialized JSON, or a stream of events): passed on, not re-parsed. */
const RelayedOutput = z.custom<unknown>((v) => typeof v === 'object' && v !== null).meta({ type: 'object' });

const AUTH = ['platform', 'service', 'user'] as const;
const ADMIN = ['platform', 'service'] as const;
/** OpenAI's error shape, for the routes OpenAI clients call (the rest of the area answers the standard envelope). */
const openai = <O>(binding: HttpBinding<O>): HttpBinding<O> => ({ ...binding, errorShape: 'openai' });
const PASS_THROUGH = ' Other OpenAI fields (tools, response_format, ...) pass through.';
const BILLING =
  " Billed to the account's AI credits (402 insufficient_credits when out) unless the app has its own key; end users' calls count against " +
  'endUserDailyTokenLimit. Usage: ai_usage.';

/** The call's app and end user: an end-user JWT, or a key with user_token, makes it an end-user call. */
async function aiCaller(input: { app_id: string; user_token?: string | undefined }, ctx: Ctx<Uses>): Promise<AiCaller> {
  const caller = await effectiveCaller(input, ctx);
  return { app: ctx.app!, endUserId: caller.kind === 'user' ? caller.userId : null };
}

/** The OpenAI body: the input without the platform's own arguments. */
function openAiBody(input: Record<string, unknown>): Record<string, unknown> {
  const { app_id: _app, user_token: _token, ...body } = input;
  return body;
}

export const aiChat = defineTool({
  name: 'ai_chat',
  title: 'Chat completion',
  description:
    "OpenAI-compatible chat completion through the app's AI gateway; returns OpenAI's chat.completion (choices[0].message, usage). " +
    'model defaults to the app\'s defaultModel. Apps use it with the openai SDK: baseURL {base_url}/v1/{app_id}, apiKey = a service key or an ' +
    'end-user JWT.' +
    PASS_THROUGH +
    BILLING,
  input: z.looseObject({
    app_id: AppIdSchema,
    model: ModelSchema.optional(),
    messages: z.array(MessageSchema).min(1).max(10_000).describe('Conversation: [{ role: "system" | "user" | "assistant" | "tool", content }]'),
    max_tokens: z.number().int().positive().optional().describe("Output token limit; at most the app's maxTokensPerRequest, which is sent when absent"),
    max_completion_tokens: z.number().int().positive().optional().describe('Same as max_tokens, as newer OpenAI clients name it'),
    temperature: z.number().min(0).max(2).optional(),
    stream: z.boolean().optional().describe('true: server-sent events (REST only)'),
    stream_options: z.looseObject({ include_usage: z.boolean().optional() }).optional(),
    user_token: UserTokenSchema,
  }),
  output: RelayedOutput.describe('An OpenAI chat.completion object, or with stream: true a text/event-stream of chat.completion.chunk events ending with data: [DONE]'),
  auth: AUTH,
  appScoped: true,
  // Long conversations and inline images exceed SVC_BODY_LIMIT; the 4 MB of /mcp applies, as for code and file bytes.
  http: openai({ method: 'POST', path: '/v1/{app_id}/chat/completions', subdomainPath: '/chat/completions', largeBody: true }),
  annotations: { openWorldHint: true },
  handler: async (input, ctx) =>
    ctx.services.ai.chat(await aiCaller(input, ctx), openAiBody(input), { signal: ctx.signal, canStream: ctx.canStream === true }),
});

export const aiEmbed = defineTool({
  name: 'ai_embed',
  title: 'Embeddings',
  description:
    "OpenAI-compatible embeddings through the app's AI gateway; returns { object: 'list', data: [{ index, embedding }], model, usage }. " +
    'Models: <vendor>/text-embedding-3-small (1536 dimensions), -3-large (3072), -ada-002 (1536).' +
    BILLING,
  input: z.object({
    app_id: AppIdSchema,
    model: ModelSchema,
    input: z.union([z.string(), z.array(z.string()).min(1).max(2048)]).describe('Text, or an array of texts for a batch'),
    encoding_format: z.enum(['float', 'base64']).optional().describe('float (default): arrays of numbers; base64: little-endian float32 bytes'),
    dimensions: z.number().int().min(1).max(4096).optional().describe('Fewer dimensions (text-embedding-3 models)'),
    user: z.string().max(256).optional().describe("OpenAI's end-user identifier, passed on"),
    user_token: UserTokenSchema,
  }),
  output: RelayedOutput.describe('An OpenAI embeddings list'),
  auth: AUTH,
  appScoped: true,
  http: openai({ method: 'POST', path: '/v1/{app_id}/embeddings', subdomainPath: '/embeddings', largeBody: true }),
  annotations: { openWorldHint: true },
  handler: async (input, ctx) => ctx.services.ai.embed(await aiCaller(input, ctx), openAiBody(input), { signal: ctx.signal, canStream: false }),
});

const ModelEntry = z.object({ id: z.string(), object: z.literal('model'), created: z.number().int(), owned_by: z.string() });

export const aiModelsList = defineTool({
  name: 'ai_models_list',
  title: 'List AI models',
  description: "The app's models, OpenAI's { object: 'list', data: [{ id, object, created, owned_by }] }: allowedModels when set, else the upstream's list.",
  input: z.object({ app_id: AppIdSchema }),
  output: z.object({ object: z.literal('list'), data: z.array(ModelEntry) }),
  auth: AUTH,
  appScoped: true,
  // For OpenAI clients (models.list()); an agent reads allowedModels with ai_config_get.
  mcp: false,
  // An app's table named models (made before the name was reserved) keeps the data route.
  http: openai({ method: 'GET', path: '/v1/{app_id}/models', subdomainPath: '/models', shadowedByTable: 'models' }),
  annotations: { readOnlyHint: true, openWorldHint: true },
  handler: async (input, ctx) => ({ object: 'list' as const, data: await ctx.services.ai.models({ app: ctx.app!, endUserId: null }, ctx.signal) }),
});

export const aiModelsGet = defineTool({
  name: 'ai_models_get',
  title: 'Get an AI model',
  description: 'One model of ai_models_list; 404 model_not_found otherwise.',
  input: z.object({ app_id: AppIdSchema, model: z.string().min(1).max(200) }),
  output: ModelEntry,
  auth: AUTH,
  appScoped: true,
  mcp: false,
  http: openai({ method: 'GET', path: '/v1/{app_id}/models/{model}', subdomainPath: '/models/{model}', shadowedByTable: 'models' }),
  annotations: { readOnlyHint: true, openWorldHint: true },
  handler: async (input, ctx) => ctx.services.ai.model({ app: ctx.app!, endUserId: null }, input.model, ctx.signal),
});

export const aiResponsesCreate = defineTool({
  name: 'ai_responses_create',
  title: 'Create a response',
  description:
    "OpenAI's Responses API as an ai_chat call (billed as one), returning a response object. See platform_guide area=ai.",
  input: z.looseObject({
    app_id: AppIdSchema,
    // A model id as ai_chat's, checked by the handler (its pattern kept out of tools/list, for the budget).
    model: z.string().min(1).max(200).optional(),
    input: z.union([z.string(), z.array(z.unknown()).min(1).max(10_000)]),
    user_token: UserTokenSchema,
  }),
  output: RelayedOutput,
  auth: AUTH,
  appScoped: true,
  http: openai({ method: 'POST', path: '/v1/{app_id}/responses', subdomainPath: '/responses', largeBody: true, shadowedByTable: 'responses' }),
  annotations: { openWorldHint: true },
  handler: async (input, ctx) => {
    const model = input.model === undefined ? undefined : ModelSchema.safeParse(input.model);
    if (model && !model.success) throw errors.validation(`Invalid 'model': ${model.error.issues[0]!.message}.`, [{ path: 'model', message: model.error.issues[0]!.message }]);
    return ctx.services.ai.responses(await aiCaller(input, ctx), openAiBody(input), { signal: ctx.signal, canStream: ctx.canStream === true });
  },
});

export const aiResponsesGet = defineTool({
  name: 'ai_responses_get',
  title: 'Get a stored response',
  description: 'Responses are not stored: always 404 not_found (openai SDK: responses.retrieve), in OpenAI\'s shape.',
  input: z.object({ app_id: AppIdSchema, response_id: z.string().min(1).max(200) }),
  output: RelayedOutput,
  auth: AUTH,
  appScoped: true,
  // For OpenAI clients, which would otherwise get the data API's answer for a table named responses.
  mcp: false,
  http: openai({ method: 'GET', path: '/v1/{app_id}/responses/{response_id}', subdomainPath: '/responses/{response_id}', shadowedByTable: 'responses' }),
  annotations: { readOnlyHint: true },
  handler: async (input) => {
    throw aiErrors.responseNotStored(input.response_id);
  },
});

const ConfigView = z.object({
  defaultModel: z.string().nullable(),
  byokKeySet: z.boolean(),
  byokKeyHint: z.string().nullable(),
  maxTokensPerRequest: z.number().int().nullable(),
  allowedModels: z.array(z.string()).nullable(),
  endUserDailyTokenLimit: z.number().int().nullable(),
  updatedAt: z.string().nullable(),
});

export const aiConfigGet = defineTool({
  name: 'ai_config_get',
  title: 'Read AI configuration',
  description:
    "The app's AI gateway settings { defaultModel, byokKeySet, byokKeyHint, maxTokensPerRequest, allowedModels, endUserDailyTokenLimit, updatedAt } " +
    '(null: unset); the own key is never returned.',
  input: z.object({ app_id: AppIdSchema }),
  output: ConfigView,
  auth: ADMIN,
  appScoped: true,
  http: { method: 'GET', path: '/v1/{app_id}/ai/config', subdomainPath: '/ai/config' },
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ctx.services.aiSettings.view(input.app_id),
});

export const aiConfigSet = defineTool({
  name: 'ai_config_set',
  title: 'Change AI configuration',
  description:
    "Change the app's AI gateway settings; omitted fields keep their value, null clears one. byokKey: the app's own provider key (encrypted at rest, " +
    'never returned); its calls use no platform credits. Returns the settings (ai_config_get).',
  input: z.object({
    app_id: AppIdSchema,
    defaultModel: ModelSchema.nullable().optional().describe('Model used when a request names none'),
    byokKey: z.string().min(8).max(1000).nullable().optional().describe("The app's own key for the upstream provider; null removes it"),
    maxTokensPerRequest: z.number().int().min(1).max(100_000).nullable().optional().describe('Cap on max_tokens per request (1-100000)'),
    allowedModels: z.array(ModelSchema).min(1).max(200).nullable().optional().describe('Only these models may be used; null allows any'),
    endUserDailyTokenLimit: z.number().int().min(1).max(1_000_000_000).nullable().optional().describe('Tokens one end user may use per UTC day; null: no limit'),
  }),
  output: ConfigView,
  auth: ADMIN,
  appScoped: true,
  http: { method: 'PUT', path: '/v1/{app_id}/ai/config', subdomainPath: '/ai/config' },
  annotations: { idempotentHint: true },
  // The own key decides who pays for the app's AI calls: whether it was set or removed is kept, with its hint, never the key.
  audit: {
    action: 'ai_config.update',
    resource: 'app',
    id: (input) => input.app_id,
    details: ({ app_id: _app, ...patch }, out) => ({
      fields: Object.keys(patch),
      ...(patch.byokKey === undefined ? {} : { byok_key: patch.byokKey === null ? 'removed' : 'set', byok_key_hint: out.byokKeyHint }),
    }),
  },
  handler: async ({ app_id, ...patch }, ctx) => ctx.services.aiSettings.update(app_id, patch),
});

const DateSchema = z.iso.date('a date is YYYY-MM-DD');
const Totals = z.object({ tokens: z.number(), cost: z.number(), requests: z.number() });

export const aiUsage = defineTool({
  name: 'ai_usage',
  title: 'AI usage',
  description:
    "The app's AI usage between two UTC dates (inclusive; default the last 30 days): { totalTokens, totalCost (USD), creditsUsed (USD of " +
    'platform credits), byModel: { <model>: { tokens, cost, requests } }, byUser (top 50 end users; otherUsers: the rest), byDay: [{ date, ... }] }.',
  input: z.object({ app_id: AppIdSchema, startDate: DateSchema.optional(), endDate: DateSchema.optional() }),
  output: z.object({
    startDate: z.string(),
    endDate: z.string(),
    totalTokens: z.number(),
    totalCost: z.number(),
    creditsUsed: z.number(),
    byModel: z.record(z.string(), Totals),
    byUser: z.record(z.string(), Totals),
    otherUsers: Totals.extend({ users: z.number() }).nullable(),
    byDay: z.array(Totals.extend({ date: z.string() })),
  }),
  auth: ADMIN,
  appScoped: true,
  http: { method: 'GET', path: '/v1/{app_id}/ai/usage', subdomainPath: '/ai/usage' },
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ctx.services.ai.usage(input.app_id, input.startDate, input.endDate),
});

export const aiTools = [aiChat, aiEmbed, aiModelsList, aiModelsGet, aiResponsesCreate, aiResponsesGet, aiConfigGet, aiConfigSet, aiUsage];
