import { z } from 'zod';
import { toolsUsing } from '../define.ts';
import { AppIdSchema } from '../../src/apps/types.ts';
import { roleFor } from '../../src/data/executor.ts';
import { dataOpenApi, OPENAPI_MEDIA_TYPE } from '../../src/data/openapi.ts';
import { functionsOf } from '../../src/data/rpc.ts';

type Uses = 'catalogs' | 'config' | 'databases';
const defineTool = toolsUsing<Uses>();

const SwaggerOutput = z.looseObject({
  swagger: z.literal('2.0'),
  info: z.looseObject({ title: z.string(), description: z.string(), version: z.string() }),
  host: z.string(),
  basePath: z.string().describe('/v1/{app_id}: the paths are relative to it'),
  schemes: z.array(z.string()),
  paths: z.record(z.string(), z.unknown()).describe('"/" (this document), "/<table>" with get, and post, patch, delete where the caller may write, and "/rpc/<fn>" per function the caller may call'),
  definitions: z.record(z.string(), z.unknown()).describe('Per table: columns with type, format, default, required; primary and foreign keys noted as PostgREST does'),
  parameters: z.record(z.string(), z.unknown()).describe('rowFilter.<table>.<column>, body.<table>, select, order, Range, limit, offset, Prefer'),
});

/**
 * PostgREST's root: the OpenAPI (Swagger 2.0) document of the app's tables, from the live catalog. REST only: over MCP
 * it is the resource svc://apps/{app_id}/openapi (resources/templates.ts), which reads it through this tool.
 */
export const dataOpenapi = defineTool({
  name: 'data_openapi',
  title: 'OpenAPI document of the tables',
  description:
    "The app's data API as PostgREST describes it at its root: an OpenAPI 2.0 (Swagger) document generated from the live schema, " +
    'with a definition per table (column types and formats, defaults, required columns, primary and foreign keys) and a path per ' +
    'table with its filters, and /rpc/{fn} per declared function. It shows what the caller may use: keys every table; an end-user JWT the user and public tables; no ' +
    'credential the public tables, read only. Content-Type application/openapi+json; /v1/{app_id}/ serves the same. Over MCP: the ' +
    'resource svc://apps/{app_id}/openapi.',
  input: z.object({ app_id: AppIdSchema }),
  output: SwaggerOutput,
  auth: ['none', 'user', 'service', 'platform'],
  appScoped: true,
  mcp: false,
  http: {
    method: 'GET',
    // The route table allows one trailing slash, so PostgREST's root /v1/{app_id}/ is this route too.
    path: '/v1/{app_id}',
    errorShape: 'postgrest',
    respond: () => ({ headers: { 'Content-Type': `${OPENAPI_MEDIA_TYPE}; charset=utf-8` } }),
  },
  annotations: { readOnlyHint: true },
  handler: async ({ app_id }, ctx) => {
    const { baseUrl } = ctx.services.config;
    // refresh, not get: at most one catalog read a second per app, so another instance's schema apply shows at once.
    const catalog = await ctx.services.catalogs.refresh(app_id);
    const functions = await functionsOf(catalog, ctx.services.databases.sql(app_id));
    return dataOpenApi(catalog, {
      baseUrl: `${baseUrl}/v1/${app_id}`,
      title: `${ctx.app!.name} data API`,
      role: roleFor(ctx.caller).role,
      docsUrl: `${baseUrl}/llms.txt?area=data`,
      functions: functions.values(),
    });
  },
});
