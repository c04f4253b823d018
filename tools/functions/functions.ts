import { z } from 'zod';
import { type AnyTool } from '../../src/core/define.ts';
import { toolsUsing, type Ctx } from '../define.ts';
import { AppIdSchema } from '../../src/apps/types.ts';
import type { EndUser } from '../../src/functions/protocol.ts';
import { errors } from '../../src/core/errors.ts';
import { actAs, guideRef, UserTokenSchema } from '../shared.ts';
import { BUCKETS, bucketCount, MAX_BUCKETS, type Bucket } from '../../src/functions/metrics.ts';
import {
  EnvMapSchema,
  EnvNameSchema,
  FunctionNameSchema,
  FunctionSchema,
  LIMITS,
  LogEntrySchema,
  MetricsSchema,
  TriggerSchema,
} from '../../src/functions/types.ts';

type Uses = 'endUserTokens' | 'functions' | 'substrate';
const defineTool = toolsUsing<Uses>();

const AUTH = ['platform', 'service'] as const;
const BASE = '/v1/{app_id}/functions';
const SHORT = '/functions';

const GUIDE = guideRef('functions');

/**
 * What an app's functions do is what a person allowed when they let its end users decide on its proposals: a change
 * by anyone else ends that consent first (src/substrate/service.ts).
 */
const beforeCodeChange = (ctx: Ctx<Uses>, change: string) => ctx.services.substrate.endUserDecisionsBefore(ctx.app!.id, ctx.caller, ctx.clientId, change);

/** A function in the audit log: names are unique per app only. */
const functionRef = (appId: string, name: string) => `${appId}/${name}`;

const DeployInput = z.object({
  app_id: AppIdSchema,
  name: FunctionNameSchema,
  code: z
    .string()
    .min(1, 'code must not be empty')
    .max(LIMITS.codeMaxBytes, 'code is at most 1 MB')
    .describe('Module source (TypeScript or JavaScript) that default-exports the handler'),
  description: z.string().max(LIMITS.descriptionMax).optional().describe('What the function does'),
  envVars: EnvMapSchema.optional().describe('{ NAME: "value" }, encrypted, read as ctx.env.NAME; replaces the whole set'),
  timeoutMs: z.number().int().min(LIMITS.timeoutMin).max(LIMITS.timeoutMax).optional().describe(`Wall-clock limit per invocation in ms, default ${LIMITS.timeoutDefault}`),
  memoryLimitMb: z.number().int().min(LIMITS.memoryMin).max(LIMITS.memoryMax).optional().describe(`Memory limit in MB, default ${LIMITS.memoryDefault}`),
  trigger: TriggerSchema.optional(),
});

export const functionsDeploy = defineTool({
  name: 'functions_deploy',
  title: 'Deploy a function',
  description:
    'Deploy a function, or update the one with this name (omitted fields keep their values). ' +
    'code default-exports `async (request: Request, ctx) => Response` (TypeScript or JavaScript, no build step); ' +
    'ctx.data, ctx.ai, ctx.rag and ctx.storage reach this app as the calling end user (else as the app), without a key. ' +
    'The code is loaded first: 400 FUNCTION_INVALID with the compiler message, and the previous version keeps serving. ' +
    '201 when created, 200 when updated; an http function is then public at url. Next: functions_invoke, functions_logs. ' +
    `ctx, triggers, sandbox and limits: ${GUIDE}. ` +
    'Example: export default async (req) => Response.json({ hello: new URL(req.url).searchParams.get("name") });',
  input: DeployInput,
  output: FunctionSchema.extend({ created: z.boolean().describe('true when this deploy created the function, false when it updated it') }),
  auth: AUTH,
  appScoped: true,
  http: { method: 'POST', path: BASE, subdomainPath: SHORT, largeBody: true, respond: (out) => ({ status: out.created ? 201 : 200 }) },
  annotations: { destructiveHint: false, idempotentHint: true },
  audit: {
    action: 'function.deploy',
    resource: 'function',
    id: (_input, fn) => functionRef(fn.app_id, fn.name),
    details: (_input, fn) => ({ app_id: fn.app_id, name: fn.name, version: fn.version, created: fn.created }),
  },
  handler: async (input, ctx) => {
    await beforeCodeChange(ctx, 'function.deploy');
    const { fn, created } = await ctx.services.functions.deploy(ctx.app!, input);
    return { ...fn, created };
  },
});

export const functionsList = defineTool({
  name: 'functions_list',
  title: 'List functions',
  description: "The app's functions by name (no code: functions_get); variables by name only; 1 MB pages.",
  input: z.object({ app_id: AppIdSchema, before: z.string().max(100).optional().describe('next_before') }),
  output: z.object({
    functions: z.array(FunctionSchema),
    next_before: z.string().nullable().describe('The `before` of the next page (the last name) while more follow; null on the last page'),
  }),
  auth: AUTH,
  appScoped: true,
  http: { method: 'GET', path: BASE, subdomainPath: SHORT },
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ctx.services.functions.list(ctx.app!.id, { limit: LIMITS.listMax, before: input.before }),
});

export const functionsGet = defineTool({
  name: 'functions_get',
  title: 'Get a function with metrics',
  description:
    'One function: record, code, lifetime metrics (total_invocations, error_count: status >= 500 or failed, error_rate %, avg_duration_ms, ' +
    'last_invocation). Over time: functions_metrics; per invocation: functions_logs.',
  input: z.object({ app_id: AppIdSchema, name: FunctionNameSchema }),
  output: FunctionSchema.extend({ code: z.string(), metrics: MetricsSchema }),
  auth: AUTH,
  appScoped: true,
  http: { method: 'GET', path: `${BASE}/{name}`, subdomainPath: `${SHORT}/{name}` },
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ctx.services.functions.get(ctx.app!.id, input.name),
});

export const functionsDelete = defineTool({
  name: 'functions_delete',
  title: 'Delete a function',
  description: 'Delete a function, its variables and its logs; its running processes are stopped. Returns { deleted: true, name }.',
  input: z.object({ app_id: AppIdSchema, name: FunctionNameSchema }),
  output: z.object({ deleted: z.literal(true), name: z.string() }),
  auth: AUTH,
  appScoped: true,
  http: { method: 'DELETE', path: `${BASE}/{name}`, subdomainPath: `${SHORT}/{name}` },
  annotations: { destructiveHint: true, idempotentHint: false },
  audit: { action: 'function.delete', resource: 'function', id: (input) => functionRef(input.app_id, input.name), details: (input) => ({ app_id: input.app_id, name: input.name }) },
  handler: async (input, ctx) => {
    await beforeCodeChange(ctx, 'function.delete');
    await ctx.services.functions.delete(ctx.app!.id, input.name);
    return { deleted: true as const, name: input.name };
  },
});

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;

export const functionsInvoke = defineTool({
  name: 'functions_invoke',
  title: 'Test-invoke a function',
  description:
    'Run a function once with a request you describe (a cron function expects POST { scheduled_at }, a websocket one POST { event, data }): ' +
    '{ status, headers, body, body_encoding (json|text|base64|none), truncated, error, console, duration_ms }. ' +
    `The function failing is a result (status >= 500, error says why; codes: ${GUIDE}), not a tool error. Logged as trigger "test".`,
  input: z.object({
    app_id: AppIdSchema,
    name: FunctionNameSchema,
    method: z.enum(METHODS).optional().describe('Default POST with a body, else GET'),
    path: z.string().max(2000).default('/').describe('After the function name, e.g. "/items/42?x=1"'),
    query: z.record(z.string(), z.string()).default({}),
    headers: z.record(z.string(), z.string()).default({}),
    body: z.unknown().optional().describe('A string as is; other JSON values as application/json'),
    user_token: UserTokenSchema,
  }),
  output: z.object({
    status: z.number().int(),
    headers: z.record(z.string(), z.string()),
    body: z.unknown(),
    body_encoding: z.enum(['json', 'text', 'base64', 'none']),
    truncated: z.boolean().describe('The body was cut at 6 MB'),
    error: z.string().nullable(),
    console: z.array(z.object({ level: z.string(), message: z.string() })),
    duration_ms: z.number().int(),
  }),
  auth: AUTH,
  appScoped: true,
  // Running a function is the app at work, not a change to it.
  governed: false,
  http: { method: 'POST', path: `${BASE}/{name}/invoke`, subdomainPath: `${SHORT}/{name}/invoke` },
  annotations: { openWorldHint: true },
  handler: async (input, ctx) => {
    const caller = input.user_token ? await actAs(input.user_token, input.app_id, ctx) : null;
    const user: EndUser | null = caller && { id: caller.userId, claims: caller.claims };
    return ctx.services.functions.testInvoke(ctx.app!.id, input.name, {
      method: input.method ?? (input.body === undefined ? 'GET' : 'POST'),
      path: input.path,
      query: input.query,
      headers: input.headers,
      body: input.body,
      user,
      token: user ? input.user_token! : null,
    });
  },
});

const ISO_DATE = /^\d{4}-\d{2}-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?$/;
/** Checked in a refinement rather than a regex: the pattern would be repeated in tools/list for every date input. */
const IsoDate = z
  .string()
  .refine((s) => ISO_DATE.test(s), 'an ISO 8601 date or date-time, e.g. 2025-01-31T12:00:00Z')
  .refine((s) => !Number.isNaN(Date.parse(s)), 'not a valid date');

export const functionsLogs = defineTool({
  name: 'functions_logs',
  title: 'Read function logs',
  description:
    "A function's invocations, newest first, with their console.* output (trigger runtime: why the platform stopped a process). The newest 1000 are kept; 1 MB pages.",
  input: z.object({
    app_id: AppIdSchema,
    name: FunctionNameSchema,
    limit: z.coerce.number().int().min(1).max(LIMITS.logsLimitMax).default(LIMITS.logsLimitDefault),
    since: IsoDate.optional().describe('At or after this ISO time'),
    until: IsoDate.optional().describe('Before this ISO time'),
    before: z.string().regex(/^[0-9]{1,18}$/, 'an entry id').optional().describe("A page's next_before"),
    level: z.enum(['error', 'info']).optional().describe('error: failed; info: succeeded'),
  }),
  output: z.object({
    logs: z.array(LogEntrySchema),
    next_before: z.string().nullable().describe('The `before` of the next page while older entries match; null on the last page'),
  }),
  auth: AUTH,
  appScoped: true,
  http: { method: 'GET', path: `${BASE}/{name}/logs`, subdomainPath: `${SHORT}/{name}/logs` },
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) =>
    ctx.services.functions.logs(ctx.app!.id, input.name, {
      limit: input.limit,
      since: input.since ? new Date(input.since) : undefined,
      until: input.until ? new Date(input.until) : undefined,
      before: input.before,
      level: input.level,
    }),
});

/** Without dates: the last day of hours, or the last 30 days. */
const DEFAULT_SPAN_MS: Record<Bucket, number> = { hour: 86_400_000, day: 30 * 86_400_000 };

function metricsWindow(input: { bucket: Bucket; startDate?: string | undefined; endDate?: string | undefined }): { start: Date; end: Date } {
  const end = input.endDate ? new Date(input.endDate) : new Date();
  const start = input.startDate ? new Date(input.startDate) : new Date(end.getTime() - DEFAULT_SPAN_MS[input.bucket]);
  if (start >= end) throw errors.validation("Invalid 'startDate': it must be before endDate.", [{ path: 'startDate', message: 'not before endDate' }]);
  if (bucketCount(input.bucket, start, end) > MAX_BUCKETS[input.bucket]) {
    throw errors.validation(`Invalid 'startDate': at most ${MAX_BUCKETS[input.bucket]} ${input.bucket}s per call.`, [{ path: 'startDate', message: 'window too long' }]);
  }
  return { start, end };
}

export const functionsMetrics = defineTool({
  name: 'functions_metrics',
  title: 'Function metrics over time',
  description:
    'Invocations, errors, avg/max duration per UTC hour (max 31 days) or day (366) from startDate to endDate (default: last day / 30 days); empty buckets included.',
  input: z.object({
    app_id: AppIdSchema,
    name: FunctionNameSchema,
    bucket: z.enum(BUCKETS).default('hour'),
    startDate: IsoDate.optional(),
    endDate: IsoDate.optional(),
  }),
  output: z.object({
    name: z.string(),
    bucket: z.enum(BUCKETS),
    start: z.string(),
    end: z.string(),
    buckets: z.array(z.object({ start: z.string(), invocations: z.number().int(), errors: z.number().int(), avg_duration_ms: z.number(), max_duration_ms: z.number().int() })),
  }),
  auth: AUTH,
  appScoped: true,
  http: { method: 'GET', path: `${BASE}/{name}/metrics`, subdomainPath: `${SHORT}/{name}/metrics` },
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => {
    const { start, end } = metricsWindow(input);
    const buckets = await ctx.services.functions.metrics(ctx.app!.id, input.name, input.bucket, start, end);
    return { name: input.name, bucket: input.bucket, start: start.toISOString(), end: end.toISOString(), buckets };
  },
});

export const functionsEnvUpdate = defineTool({
  name: 'functions_env_update',
  title: 'Update function variables',
  description:
    'Merge variables into a function: the REST body is the map itself, e.g. { "API_KEY": "new", "OLD": null } (null removes a variable); over MCP pass it as `env`. ' +
    'Values are encrypted, never returned (the answer lists names), and seen by new invocations at once.',
  input: z.object({
    app_id: AppIdSchema,
    name: FunctionNameSchema,
    env: z
      .record(EnvNameSchema, z.string().max(LIMITS.envMaxValueBytes).nullable())
      .refine((m) => Object.keys(m).length > 0, 'name at least one variable')
      .describe('Map of variable name to value; null removes the variable'),
  }),
  output: z.object({ name: z.string(), env_var_names: z.array(z.string()), version: z.string() }),
  auth: AUTH,
  appScoped: true,
  http: { method: 'PATCH', path: `${BASE}/{name}/env`, subdomainPath: `${SHORT}/{name}/env`, bodyField: 'env' },
  annotations: { idempotentHint: true },
  handler: async (input, ctx) => {
    await beforeCodeChange(ctx, 'function.env_update');
    return ctx.services.functions.updateEnv(ctx.app!.id, input.name, input.env);
  },
});

export const functionsTools: readonly AnyTool[] = [
  functionsDeploy,
  functionsList,
  functionsGet,
  functionsDelete,
  functionsInvoke,
  functionsLogs,
  functionsMetrics,
  functionsEnvUpdate,
];
