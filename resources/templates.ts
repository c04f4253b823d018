import type { AnyTool } from '../src/core/define.ts';

/**
 * Runs a registered tool as the MCP session's caller: same input checks and authorization as tools/call; throws
 * AppError. REST-only tools (mcp: false) are reachable here too, for the resources that serve them (data_openapi).
 */
export type CallTool = (name: string, args: Record<string, unknown>) => Promise<unknown>;

export interface TemplateContext {
  call: CallTool;
  tools: readonly AnyTool[];
}

export interface McpResourceTemplate {
  /** RFC 6570 level-1 template; {app_id} is the only variable. */
  uriTemplate: string;
  name: string;
  description: string;
  mimeType: string;
  read: (appId: string, ctx: TemplateContext) => Promise<string>;
}

const json = (value: unknown) => JSON.stringify(value, null, 2);

/** One line per REST route of an app-scoped tool, with the app's id filled in. Authorized as apps_get. */
async function routeSummary(appId: string, ctx: TemplateContext): Promise<string> {
  const app = (await ctx.call('apps_get', { app_id: appId })) as { name: string; url: string };
  const lines = [`# Routes of app ${appId} (${app.name}), base ${app.url}`, 'METHOD path -> MCP tool: title'];
  for (const t of ctx.tools) {
    if (!t.appScoped || !t.http || !t.http.path.includes('{app_id}')) continue;
    lines.push(`${t.http.method} ${t.http.path.replace('{app_id}', appId)} -> ${t.name}: ${t.title}`);
  }
  lines.push('Full request/response schemas: GET /openapi.json.');
  return lines.join('\n');
}

/** Per-app resources; resources/list lists each of them for every app the session's platform key owns (apps_list). */
export const resourceTemplates: readonly McpResourceTemplate[] = [
  {
    uriTemplate: 'svc://apps/{app_id}/schema',
    name: 'App schema',
    description: "The app's live schema, as schema_get returns it.",
    mimeType: 'application/json',
    read: async (appId, ctx) => json(await ctx.call('schema_get', { app_id: appId })),
  },
  {
    uriTemplate: 'svc://apps/{app_id}/routes',
    name: 'App routes',
    description: "The app's REST routes, each with its MCP tool.",
    mimeType: 'text/plain',
    read: routeSummary,
  },
  {
    uriTemplate: 'svc://apps/{app_id}/functions',
    name: 'App functions',
    description: "The app's functions with their trigger and URL, as functions_list's first page returns them (without code).",
    mimeType: 'application/json',
    read: async (appId, ctx) => {
      const { functions, next_before } = (await ctx.call('functions_list', { app_id: appId })) as {
        functions: Array<{ name: string; description: string; trigger: unknown; url: string | null }>;
        next_before: string | null;
      };
      return json({ functions: functions.map(({ name, description, trigger, url }) => ({ name, description, trigger, url })), next_before });
    },
  },
  {
    uriTemplate: 'svc://apps/{app_id}/openapi',
    name: 'App data API (OpenAPI)',
    description: "The app's tables as PostgREST's OpenAPI 2.0 document, from the live schema: the body of GET /v1/{app_id}/ (data_openapi).",
    mimeType: 'application/openapi+json',
    // Compact, byte for byte the REST body: the document grows with the schema, and indentation would only cost context.
    read: async (appId, ctx) => JSON.stringify(await ctx.call('data_openapi', { app_id: appId })),
  },
];

/** The template and app id a URI names, or undefined. */
export function matchTemplate(uri: string): { template: McpResourceTemplate; appId: string } | undefined {
  for (const template of resourceTemplates) {
    const [prefix, suffix] = template.uriTemplate.split('{app_id}') as [string, string];
    if (!uri.startsWith(prefix) || !uri.endsWith(suffix)) continue;
    const appId = decodeURIComponent(uri.slice(prefix.length, uri.length - suffix.length));
    if (appId && !appId.includes('/')) return { template, appId };
  }
  return undefined;
}

/** The concrete resources of every template for the caller's apps (the templates' list callback). */
export async function listAppResources(ctx: TemplateContext): Promise<Array<{ uri: string; name: string; description: string; mimeType: string }>> {
  const { apps } = (await ctx.call('apps_list', {})) as { apps: Array<{ app_id: string; name: string }> };
  return apps.flatMap((app) =>
    resourceTemplates.map((t) => ({
      uri: t.uriTemplate.replace('{app_id}', app.app_id),
      name: `${t.name}: ${app.name}`,
      description: t.description,
      mimeType: t.mimeType,
    })),
  );
}
