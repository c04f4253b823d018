import { z } from 'zod';
import { type AnyTool, type HttpBinding, type HttpMethod } from '../../src/core/define.ts';
import { toolsUsing } from '../define.ts';
import { AppIdSchema } from '../../src/apps/types.ts';
import { actAs, UserTokenSchema } from '../shared.ts';
import { AUTH, DataOutput, respond, WIRE } from './data.ts';

type Uses = 'data' | 'endUserTokens';
const defineTool = toolsUsing<Uses>();

type DataWire = z.output<typeof DataOutput>;

const FunctionSchema = z
  .string()
  .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'a function name is lowercase letters, digits and underscores')
  .describe('Declared function name, as in schema_get');
const input = {
  app_id: AppIdSchema,
  function: FunctionSchema,
  query: z.string().max(8000).default('').describe('select=, filters, order, limit/offset on the rows a set-returning function yields'),
  prefer: z.string().max(200).optional().describe('count=exact, tx=rollback, handling=strict with max-affected=<n>'),
  accept: z.string().max(200).optional().describe('As data_select'),
  user_token: UserTokenSchema,
};

const binding = (method: HttpMethod): HttpBinding<DataWire> => ({
  method,
  path: '/v1/{app_id}/rpc/{function}',
  subdomainPath: '/data/rpc/{function}',
  ...WIRE,
  respond: (out) => respond(out, false),
});

/** Arguments in the JSON body (the POST route), or over MCP (read_only: as GET, in a read-only transaction). */
export const dataRpc = defineTool({
  name: 'data_rpc',
  title: 'Call a declared SQL function',
  description:
    'Call a function of the schema (PostgREST /rpc/{function}) as the caller, args by name (a function of one unnamed json argument takes them whole). ' +
    'Scalar bare, one row an object, sets as rows (query filters them), void 204.',
  input: z.object({ ...input, args: z.unknown().optional().describe('Object of the arguments by name'), read_only: z.boolean().optional().describe('Run read-only, as GET') }),
  output: DataOutput,
  auth: AUTH,
  appScoped: true,
  http: { ...binding('POST'), bodyField: 'args' },
  handler: async (input, ctx) => {
    const caller = input.user_token ? await actAs(input.user_token, input.app_id, ctx) : ctx.caller;
    const get = input.read_only === true;
    return ctx.services.data.rpc({
      appId: input.app_id,
      caller,
      fn: input.function,
      get,
      // read_only over MCP takes the arguments from args all the same, as query parameters of a GET would carry them.
      query: get ? withArgs(input.query, input.args) : input.query,
      body: input.args,
      prefer: input.prefer,
      accept: input.accept,
    });
  },
});

/** A GET's arguments: each a query parameter, arrays as Postgres's {a,b}, as postgrest-js sends them. */
function withArgs(query: string, args: unknown): string {
  const params = new URLSearchParams(query);
  if (typeof args === 'object' && args !== null && !Array.isArray(args)) {
    for (const [key, value] of Object.entries(args)) if (value !== undefined) params.append(key, Array.isArray(value) ? `{${value.join(',')}}` : typeof value === 'object' ? JSON.stringify(value) : String(value));
  }
  return params.toString();
}

/** GET and HEAD: the arguments in the query string; the call runs read-only. REST only (data_rpc's read_only over MCP). */
export const dataRpcGet = defineTool({
  name: 'data_rpc_get',
  title: 'Call a declared SQL function read-only',
  description: 'data_rpc as GET and HEAD: read-only, the arguments as query parameters.',
  input: z.object(input),
  output: DataOutput,
  auth: AUTH,
  appScoped: true,
  mcp: false,
  http: binding('GET'),
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => {
    const caller = input.user_token ? await actAs(input.user_token, input.app_id, ctx) : ctx.caller;
    return ctx.services.data.rpc({ appId: input.app_id, caller, fn: input.function, get: true, query: input.query, prefer: input.prefer, accept: input.accept });
  },
});

export const rpcTools: readonly AnyTool[] = [dataRpc, dataRpcGet];
