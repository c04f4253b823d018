// Third-party integrations: an app enables vendor toolkits (Gmail, Slack, ...), its end users connect their accounts
// through a hosted OAuth page, and tools run as those users. Beyond the spec, an agent (platform key with user_token,
// or a key with userId) lists and runs an end user's connected tools through these same tools; functions reach
// integrations_execute through ctx.integrations (src/functions/platform-channel.ts).
import { z } from 'zod';
import { toolsUsing, type Ctx } from '../define.ts';
import { AppIdSchema } from '../../src/apps/types.ts';
import { integrationErrors } from '../../src/integrations/types.ts';
import { actAs, appRoute, UserTokenSchema } from '../shared.ts';

type Uses = 'endUserTokens' | 'integrations';
const defineTool = toolsUsing<Uses>();

const ADMIN = ['platform', 'service'] as const;
const END_USER = ['platform', 'service', 'user'] as const;

const route = appRoute('integrations');

const Toolkit = z.string().regex(/^[a-z0-9_-]{1,64}$/, 'a toolkit slug: lowercase letters, digits, _ and -').describe("Toolkit slug, e.g. 'gmail'");
const UserId = z
  .string()
  .regex(/^[A-Za-z0-9._@:+-]{1,128}$/, '1-128 letters, digits and . _ @ : + -')
  .optional()
  .describe("With a key: the end user to act for (the app's id for them); never with their token");
const ForUser = { userId: UserId, user_token: UserTokenSchema };
const WHO = " Acts for an end user: their JWT, a key with userId, or user_token.";

const EnabledToolkit = z.object({ toolkit: z.string(), displayName: z.string(), scopes: z.array(z.string()).nullable(), createdAt: z.string(), updatedAt: z.string() });
const Config = z.object({ integrations: z.array(EnabledToolkit), redirectOrigins: z.array(z.string()), appOrigin: z.string() });
const Connection = z.object({ id: z.string(), toolkit: z.string(), userId: z.string(), status: z.enum(['active', 'toolkit_disabled']), createdAt: z.string() });

/** The end user a call names: the caller's token, user_token, or (keys) userId; null when a key names none. */
async function namedUser(input: { app_id: string; userId?: string | undefined; user_token?: string | undefined }, ctx: Ctx<Uses>): Promise<string | null> {
  if (input.user_token !== undefined) {
    if (input.userId !== undefined) throw integrationErrors.userTwice();
    return (await actAs(input.user_token, input.app_id, ctx)).userId;
  }
  if (ctx.caller.kind === 'user') {
    if (input.userId !== undefined) throw integrationErrors.userIdWithToken();
    return ctx.caller.userId;
  }
  return input.userId ?? null;
}

async function requiredUser(input: { app_id: string; userId?: string | undefined; user_token?: string | undefined }, ctx: Ctx<Uses>): Promise<string> {
  const user = await namedUser(input, ctx);
  if (user === null) throw integrationErrors.userRequired();
  return user;
}

export const integrationsAvailable = defineTool({
  name: 'integrations_available',
  title: 'Available toolkits',
  description:
    'The 10 curated toolkits { toolkit, displayName, curated, description, enabled }; search= searches the vendor\'s whole catalog. Next: integrations_configure.',
  input: z.object({ app_id: AppIdSchema, search: z.string().trim().min(1).max(100).optional().describe('Search the catalog by name, slug or description') }),
  output: z.object({
    toolkits: z.array(z.object({ toolkit: z.string(), displayName: z.string(), curated: z.boolean(), description: z.string().nullable(), enabled: z.boolean() })),
  }),
  auth: ADMIN,
  appScoped: true,
  http: route('GET', '/available'),
  annotations: { readOnlyHint: true, openWorldHint: true },
  handler: async (input, ctx) => ({ toolkits: await ctx.services.integrations.toolkits.available(ctx.app!, input.search) }),
});

export const integrationsConfig = defineTool({
  name: 'integrations_config',
  title: 'Enabled toolkits',
  description:
    "The app's enabled toolkits { toolkit, displayName, scopes (null: vendor-managed) }, redirectOrigins and appOrigin (where connect may send users back).",
  input: z.object({ app_id: AppIdSchema }),
  output: Config,
  auth: ADMIN,
  appScoped: true,
  http: route('GET', '/config'),
  annotations: { readOnlyHint: true },
  handler: async (_input, ctx) => ctx.services.integrations.toolkits.view(ctx.app!),
});

export const integrationsConfigure = defineTool({
  name: 'integrations_configure',
  title: 'Enable a toolkit',
  description:
    "Enable a toolkit for the app's end users, or change its displayName or scopes. redirectOrigins replaces the origins besides the app's own URL " +
    'that connect may redirect to. Returns the config. Next: integrations_connect.',
  input: z.object({
    app_id: AppIdSchema,
    toolkit: Toolkit,
    displayName: z.string().trim().min(1).max(100),
    scopes: z.array(z.string().min(1).max(500)).max(100).optional().describe('OAuth scopes; default: the vendor-managed ones'),
    redirectOrigins: z.array(z.string().max(300)).max(20).optional().describe('e.g. ["https://myapp.com", "http://localhost:5173"]'),
  }),
  output: Config,
  auth: ADMIN,
  appScoped: true,
  http: route('POST', '/configure'),
  annotations: { idempotentHint: true, openWorldHint: true },
  handler: async ({ app_id: _a, ...input }, ctx) => ctx.services.integrations.toolkits.configure(ctx.app!, input),
});

export const integrationsDisable = defineTool({
  name: 'integrations_disable',
  title: 'Disable a toolkit',
  description: "Stop offering a toolkit (REST: 204). Users' connections stay but cannot execute until re-enabled.",
  input: z.object({ app_id: AppIdSchema, toolkit: Toolkit }),
  output: z.object({ toolkit: z.string(), disabled: z.literal(true) }),
  auth: ADMIN,
  appScoped: true,
  http: route('DELETE', '/configure/{toolkit}', { status: 204 }),
  annotations: { destructiveHint: true },
  handler: async (input, ctx) => {
    await ctx.services.integrations.toolkits.disable(input.app_id, input.toolkit);
    return { toolkit: input.toolkit, disabled: true as const };
  },
});

export const integrationsConnect = defineTool({
  name: 'integrations_connect',
  title: "Connect a user's account",
  description:
    "Start connecting an end user's account: open authUrl in their browser; after consent it returns to redirectUrl with status=success&connectionId= " +
    "(or status=failed&error=). redirectUrl must be on appOrigin or redirectOrigins (integrations_config)." +
    WHO,
  input: z.object({ app_id: AppIdSchema, toolkit: Toolkit, redirectUrl: z.string().max(2000), ...ForUser }),
  output: z.object({ authUrl: z.string(), connectionRequestId: z.string() }),
  auth: END_USER,
  appScoped: true,
  http: route('POST', '/connect'),
  annotations: { openWorldHint: true },
  handler: async (input, ctx) => {
    const { connections } = ctx.services.integrations;
    return connections.connect(ctx.app!, await requiredUser(input, ctx), input);
  },
});

/**
 * REST only: the vendor sends the end user's browser here once the OAuth dance is over, with a single-use state
 * token; an agent has no such token, and the answer is a redirect for a browser, not a result.
 */
export const integrationsCallback = defineTool({
  name: 'integrations_callback',
  title: 'OAuth callback',
  description:
    "Public: where the vendor sends the user's browser after connecting. Records the connection and answers 302 to the connect call's redirectUrl " +
    'with status, toolkit, connectionRequestId and connectionId (success) or error (failed).',
  input: z.object({ app_id: AppIdSchema, query: z.string().max(8192).describe('The raw query string; only state is read') }),
  output: z.object({ location: z.string() }),
  auth: ['none', 'platform', 'service', 'user'],
  appScoped: true,
  // Finishing a consent the user already gave is not new usage.
  billingGate: 'session',
  mcp: false,
  http: route<{ location: string }>('GET', '/callback', { queryField: 'query', respond: (out) => ({ status: 302, headers: { location: out.location, 'cache-control': 'no-store' }, body: undefined }) }),
  handler: async (input, ctx) => {
    const { connections } = ctx.services.integrations;
    return { location: await connections.complete(ctx.app!, input.query) };
  },
});

export const integrationsConnectionsList = defineTool({
  name: 'integrations_connections_list',
  title: 'List connections',
  description: "An end user's connected accounts { id, toolkit, userId, status, createdAt }; a key naming no user lists the whole app's.",
  input: z.object({ app_id: AppIdSchema, ...ForUser }),
  output: z.object({ connections: z.array(Connection) }),
  auth: END_USER,
  appScoped: true,
  http: route('GET', '/connections'),
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => {
    const { connections } = ctx.services.integrations;
    return { connections: await connections.list(input.app_id, await namedUser(input, ctx)) };
  },
});

export const integrationsConnectionDelete = defineTool({
  name: 'integrations_connection_delete',
  title: 'Disconnect an account',
  description: 'Disconnect an account and revoke it at the vendor (REST: 204). End users delete only their own; another\'s is 404.',
  input: z.object({ app_id: AppIdSchema, id: z.uuid().describe('Connection id, from integrations_connections_list'), ...ForUser }),
  output: z.object({ id: z.string(), deleted: z.literal(true) }),
  auth: END_USER,
  appScoped: true,
  http: route('DELETE', '/connections/{id}', { status: 204 }),
  annotations: { destructiveHint: true, idempotentHint: true, openWorldHint: true },
  handler: async (input, ctx) => {
    const { connections } = ctx.services.integrations;
    await connections.remove(input.app_id, await namedUser(input, ctx), input.id);
    return { id: input.id, deleted: true as const };
  },
});

export const integrationsToolList = defineTool({
  name: 'integrations_tools',
  title: 'List integration tools',
  description:
    'Tools of the enabled toolkits { name, toolkit, title, description, inputSchema }; naming an end user (token, user_token or userId) adds ' +
    'connected. Run one: integrations_execute.',
  input: z.object({ app_id: AppIdSchema, toolkit: Toolkit.optional().describe('Only this toolkit'), ...ForUser }),
  output: z.object({
    tools: z.array(
      z.object({
        name: z.string(),
        toolkit: z.string(),
        title: z.string(),
        description: z.string(),
        inputSchema: z.record(z.string(), z.unknown()),
        connected: z.boolean().optional(),
      }),
    ),
  }),
  auth: END_USER,
  appScoped: true,
  http: route('GET', '/tools'),
  annotations: { readOnlyHint: true, openWorldHint: true },
  handler: async (input, ctx) => {
    const { executions } = ctx.services.integrations;
    return { tools: await executions.tools(ctx.app!, await namedUser(input, ctx), input.toolkit) };
  },
});

export const integrationsExecute = defineTool({
  name: 'integrations_execute',
  title: 'Run an integration tool',
  description:
    "Run a tool (from integrations_tools) with params matching its inputSchema through the user's connected account: { successful: true, data }. " +
    '400 INTEGRATIONS_NOT_CONNECTED: connect first; 422 the tool failed; 502 vendor unreachable.' +
    WHO,
  input: z.object({
    app_id: AppIdSchema,
    toolName: z.string().regex(/^[A-Za-z0-9_-]{1,200}$/, 'a tool name such as GMAIL_SEND_EMAIL').describe('e.g. GMAIL_SEND_EMAIL'),
    params: z.record(z.string(), z.unknown()).default({}).describe("The tool's arguments"),
    ...ForUser,
  }),
  output: z.object({ successful: z.literal(true), data: z.unknown() }),
  auth: END_USER,
  appScoped: true,
  http: route('POST', '/execute'),
  annotations: { openWorldHint: true },
  handler: async (input, ctx) => {
    const { executions } = ctx.services.integrations;
    return executions.execute(ctx.app!, await requiredUser(input, ctx), input.toolName, input.params, ctx.signal);
  },
});

export const integrationsExecutions = defineTool({
  name: 'integrations_executions',
  title: 'Execution log',
  description: 'Tool executions of the app, newest first: { id, userId, toolName, toolkit, successful, durationMs, error, createdAt }. Page with before=<id>.',
  input: z.object({
    app_id: AppIdSchema,
    userId: UserId.describe('Only this end user'),
    before: z.string().regex(/^\d{1,19}$/).optional().describe('Only executions older than this id'),
    limit: z.coerce.number().int().min(1).max(500).default(50),
  }),
  output: z.object({
    executions: z.array(
      z.object({
        id: z.string(),
        userId: z.string(),
        toolName: z.string(),
        toolkit: z.string().nullable(),
        successful: z.boolean(),
        durationMs: z.number().int(),
        error: z.string().nullable(),
        createdAt: z.string(),
      }),
    ),
  }),
  auth: ADMIN,
  appScoped: true,
  http: route('GET', '/executions'),
  annotations: { readOnlyHint: true },
  handler: async ({ app_id, ...filter }, ctx) => ({ executions: await ctx.services.integrations.executions.list(app_id, filter) }),
});

export const integrationsTools = [
  integrationsAvailable,
  integrationsConfig,
  integrationsConfigure,
  integrationsDisable,
  integrationsConnect,
  integrationsCallback,
  integrationsConnectionsList,
  integrationsConnectionDelete,
  integrationsToolList,
  integrationsExecute,
  integrationsExecutions,
];
