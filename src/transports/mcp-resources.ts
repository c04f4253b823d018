// MCP resources and prompts of /mcp, on both revisions: the guides, the per-app resource templates (read through the
// tools, so they authorize as the tools do), and, in 2025-11-25 sessions, subscriptions to them. A subscription is kept
// in the session's row (the subscribe request and the session's notification stream may reach different api
// processes); when an app's definition changes (AppChanges) the process holding the session's stream tells it
// (notifications/resources/updated) for each of its subscribed URIs of that app.
import type { Server, ServerContext } from '@modelcontextprotocol/server';
import { fromZod, type AppError } from '../core/errors.ts';
import type { Services } from '../services.ts';
import { resources } from '../../resources/index.ts';
import { prompts } from '../../prompts/index.ts';
import { listAppResources, matchTemplate, resourceTemplates, type TemplateContext } from '../../resources/templates.ts';
import { matchWork, readWork, workTemplates } from '../../resources/work.ts';

/** JSON-RPC's invalid params, which is also "resource not found" since 2026-07-28 (the SDK answers it on every revision). */
export const INVALID_PARAMS = -32602;

/** The longest resource URI a session may subscribe to. */
const MAX_URI_CHARS = 1_000;

export interface ResourceDeps {
  services: Services;
  templateContext(ctx: ServerContext): TemplateContext;
}

/** resources/list, resources/templates/list and resources/read; subscribe and unsubscribe for a session (`sessionId`). */
export function registerResources(server: Server, deps: ResourceDeps, sessionId: string | undefined): void {
  server.setRequestHandler('resources/list', async (_request, ctx) => ({
    resources: [
      ...resources.map(({ uri, name, description, mimeType }) => ({ uri, name, description, mimeType })),
      ...(await listAppResources(deps.templateContext(ctx)).catch(rpcFromAppError)),
    ],
  }));
  server.setRequestHandler('resources/templates/list', async () => ({
    resourceTemplates: [...resourceTemplates, ...workTemplates].map(({ uriTemplate, name, description, mimeType }) => ({ uriTemplate, name, description, mimeType })),
  }));
  server.setRequestHandler('resources/read', async (request, ctx) => {
    const { uri } = request.params;
    const resource = resources.find((r) => r.uri === uri);
    if (resource) return { contents: [{ uri, mimeType: resource.mimeType, text: resource.read(deps.services) }] };
    const read = readTemplated(uri, deps.templateContext(ctx));
    if (!read) throw rpcError(INVALID_PARAMS, `Unknown resource ${uri}; call resources/list.`, { uri });
    return { contents: [{ uri, mimeType: read.mimeType, text: await read.text }] };
  });
  if (sessionId === undefined) return;
  server.setRequestHandler('resources/subscribe', async (request, ctx) => {
    const { uri } = request.params;
    if (uri.length > MAX_URI_CHARS) throw rpcError(INVALID_PARAMS, `A resource URI has at most ${MAX_URI_CHARS} characters.`, { uri: uri.slice(0, 100) });
    // An app's resource or work only for a caller who may read it (the same check as reading it); any other URI is
    // accepted and simply never updates (the guides do not change while the platform runs).
    await readTemplated(uri, deps.templateContext(ctx))?.text;
    if (!(await deps.services.mcpSessions.subscribe(sessionId, uri, true))) {
      throw rpcError(INVALID_PARAMS, 'This session has subscribed to the most resources it may; unsubscribe from some first.', { uri });
    }
    return {};
  });
  server.setRequestHandler('resources/unsubscribe', async (request) => {
    await deps.services.mcpSessions.subscribe(sessionId, request.params.uri, false);
    return {};
  });
}

/**
 * A per-app or work resource as its tool reads it: the text (rejected as the JSON-RPC error of the tool's refusal)
 * and its type; undefined when the URI names none.
 */
function readTemplated(uri: string, ctx: TemplateContext): { text: Promise<string>; mimeType: string } | undefined {
  const app = matchTemplate(uri);
  if (app) return { text: app.template.read(app.appId, ctx).catch(rpcFromAppError), mimeType: app.template.mimeType };
  const work = matchWork(uri);
  if (work) return { text: readWork(work, ctx).catch(rpcFromAppError), mimeType: work.template.mimeType };
  return undefined;
}

/** The subscribed URIs that an app's change may have updated: its per-app resources. */
export function updatedBy(appId: string, subscriptions: readonly string[]): string[] {
  return subscriptions.filter((uri) => matchTemplate(uri)?.appId === appId);
}

/** prompts/list and prompts/get. */
export function registerPrompts(server: Server): void {
  server.setRequestHandler('prompts/list', async () => ({
    prompts: prompts.map((p) => ({
      name: p.name,
      description: p.description,
      arguments: Object.entries(p.args.shape).map(([name, schema]) => ({
        name,
        description: schema.description,
        required: !schema.safeParse(undefined).success,
      })),
    })),
  }));
  server.setRequestHandler('prompts/get', async (request) => {
    const prompt = prompts.find((p) => p.name === request.params.name);
    if (!prompt) throw rpcError(INVALID_PARAMS, `Unknown prompt ${request.params.name}; call prompts/list.`);
    const parsed = prompt.args.safeParse(request.params.arguments ?? {});
    if (!parsed.success) throw rpcError(INVALID_PARAMS, fromZod(parsed.error, 'arguments').message);
    return {
      description: prompt.description,
      messages: [{ role: 'user' as const, content: { type: 'text' as const, text: prompt.render(parsed.data) } }],
    };
  });
}

/** A tool's AppError as a JSON-RPC error: invalid params (which "resource not found" is too), with code and remediation. */
export function rpcFromAppError(err: unknown): never {
  const e = err as AppError;
  if (typeof e?.status !== 'number') throw err;
  throw rpcError(INVALID_PARAMS, `${e.status} ${e.code}: ${e.message} ${e.remediation}`);
}

/**
 * A JSON-RPC error the SDK sends with this code, message and data as they are. (McpError would prefix its message with
 * "MCP error <code>: ", and the client's McpError prefixes again: "MCP error -32602: MCP error -32602: ...".)
 */
export function rpcError(code: number, message: string, data?: unknown): Error & { code: number; data?: unknown } {
  return Object.assign(new Error(message), { code }, data === undefined ? {} : { data });
}
