import { z } from 'zod';
import { type AnyTool, type HttpBinding } from '../../src/core/define.ts';
import { toolsUsing, type Ctx } from '../define.ts';
import type { AppError } from '../../src/core/errors.ts';
import { AppIdSchema } from '../../src/apps/types.ts';
import { MediaText } from '../../src/data/output.ts';
import { RangeNotSatisfiable, RestHeaders, type DataRequest } from '../../src/data/service.ts';
import { actAs, guideRef, UserTokenSchema } from '../shared.ts';

type Uses = 'data' | 'endUserTokens';
const defineTool = toolsUsing<Uses>();

const TableSchema = z
  .string()
  .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'a table name is lowercase letters, digits and underscores')
  .describe('Table name, as in schema_get');
const QuerySchema = z
  .string()
  .max(8000)
  .default('')
  .describe('PostgREST query string without the leading "?"; syntax in data_select');
const prefer = (text: string) => z.string().max(200).optional().describe(`Prefer header, comma-separated: ${text}`);
const DRY_RUN = 'tx=rollback (dry run)';
const MAX_AFFECTED = 'handling=strict with max-affected=<n>';
const ReadPreferSchema = prefer('count=exact|planned|estimated, timezone=<zone>');
const InsertPreferSchema = prefer(`return=minimal|representation|headers-only, count=exact, resolution=merge-duplicates|ignore-duplicates, missing=default, ${DRY_RUN}`);
const UpdatePreferSchema = prefer(`return=minimal|representation, count=exact, missing=default, ${DRY_RUN}, ${MAX_AFFECTED}`);
const DeletePreferSchema = prefer(`return=minimal|representation, count=exact, ${DRY_RUN}, ${MAX_AFFECTED}`);
const AcceptSchema = z
  .string()
  .max(200)
  .optional()
  .describe('application/vnd.pgrst.object+json: one row, as an object; text/csv; ;nulls=stripped drops nulls');
/** The by-id routes answer one row as an object whatever Accept says. */
const RowAcceptSchema = z.string().max(200).optional().describe('Ignored: the row is an object');
const IdSchema = z.string().min(1).max(200).describe('Primary key value of the row');
const BodySchema = z.unknown().describe('Row object, or an array of row objects for a bulk insert');
const PatchSchema = z.unknown().describe('Object of the columns to change and their new values');

export const DataOutput = z.object({
  status: z.number().int(),
  data: z.unknown().optional().describe('The rows (an array), or one row (by-id routes and single-object requests)'),
  content_range: z.string().optional(),
  location: z.string().optional(),
  /** REST only (Preference-Applied): never part of an MCP result. */
  headers: z.instanceof(RestHeaders).optional(),
});

type DataWire = z.output<typeof DataOutput>;

const common = { app_id: AppIdSchema, table: TableSchema, query: QuerySchema, accept: AcceptSchema, user_token: UserTokenSchema };
const read = { ...common, prefer: ReadPreferSchema };
const insert = { ...common, prefer: InsertPreferSchema };
const update = { ...common, prefer: UpdatePreferSchema };
const remove = { ...common, prefer: DeletePreferSchema };
export const WIRE = {
  queryField: 'query',
  bodyField: 'body',
  headers: { prefer: 'prefer', range: 'range', accept: 'accept' },
  errorShape: 'postgrest',
  errorHeaders: (err: AppError): Record<string, string> => (err instanceof RangeNotSatisfiable ? { 'Content-Range': `*/${err.total}` } : {}),
} as const;
export const AUTH = ['none', 'user', 'service', 'platform'] as const;
const ACCESS_NOTE =
  ' Runs as the caller: keys see every row; with user_token, as that end user (row-level security); over REST also with ' +
  'their JWT, or none (public tables).';
/** The other data tools refer to data_select for the access rules and the query syntax, so an agent reads them once. */
const ACCESS_REF = ' Runs as the caller, as data_select explains.';

/**
 * PostgREST's wire: status, Content-Range (on POST and DELETE `*\/*` when nothing was counted), Location,
 * Preference-Applied, and the rows (or row) as the bare body in its media type.
 */
export function respond(out: DataWire, unranged: boolean) {
  const headers: Record<string, string> = {};
  if (out.content_range) headers['Content-Range'] = out.content_range;
  else if (unranged) headers['Content-Range'] = '*/*';
  if (out.location) headers.Location = out.location;
  if (out.headers) Object.assign(headers, out.headers.values);
  if (out.data instanceof MediaText) {
    headers['Content-Type'] = out.data.contentType;
    return { status: out.status, headers, body: out.data.text };
  }
  return { status: out.status, headers, body: out.data };
}

type DataInput = { app_id: string; table: string; query: string; prefer?: string | undefined; range?: string | undefined; accept?: string | undefined; user_token?: string | undefined };

async function request(input: DataInput, ctx: Ctx<Uses>): Promise<DataRequest> {
  const caller = input.user_token ? await actAs(input.user_token, input.app_id, ctx) : ctx.caller;
  return { appId: input.app_id, caller, table: input.table, query: input.query, prefer: input.prefer, range: input.range, accept: input.accept };
}

const binding = (method: HttpBinding<DataWire>['method'], byId: boolean): HttpBinding<DataWire> => ({
  method,
  path: byId ? '/v1/{app_id}/{table}/{id}' : '/v1/{app_id}/{table}',
  subdomainPath: byId ? '/data/{table}/{id}' : '/data/{table}',
  ...WIRE,
  respond: (out) => respond(out, !byId && (method === 'POST' || method === 'DELETE')),
});

export const dataSelect = defineTool({
  name: 'data_select',
  title: 'Read rows',
  description:
    'List rows with PostgREST syntax in `query`: filters col=op.value (eq, neq, gt, lte, like, ilike, match, is.null, in.(a,b), cs, ov, fts, ...), not.op, ' +
    'or=(a.eq.1,b.gt.2); select=col,alias:col,data->>key,count(),rel(cols) embeds through foreign keys at any depth (rel!inner, ...rel spreads; ' +
    'rel.col=eq.x, rel.limit=3 act on embedded rows); order=col.desc.nullslast, limit, offset; ' +
    `e.g. "select=id,title,author:authors(name)&done=eq.false&order=id.desc&limit=10". All of it: ${guideRef('data')}. ` +
    `At most 1000 rows per call. Prefer: count=exact adds the total to content_range (status 206 when it is more).${ACCESS_NOTE}`,
  input: z.object({ ...read, range: z.string().max(100).optional().describe('Range: items=0-9 (inclusive), an alternative to limit/offset') }),
  output: DataOutput,
  auth: AUTH,
  appScoped: true,
  http: binding('GET', false),
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ctx.services.data.select(await request(input, ctx)),
});

export const dataGet = defineTool({
  name: 'data_get',
  title: 'Read one row',
  description: `Read one row by primary key; 404 RESOURCE_NOT_FOUND when it does not exist or row-level security hides it. \`query\` may carry select=.${ACCESS_REF}`,
  input: z.object({ ...read, accept: RowAcceptSchema, id: IdSchema }),
  output: DataOutput,
  auth: AUTH,
  appScoped: true,
  http: binding('GET', true),
  annotations: { readOnlyHint: true },
  handler: async (input, ctx) => ctx.services.data.get(await request(input, ctx), input.id),
});

export const dataInsert = defineTool({
  name: 'data_insert',
  title: 'Insert rows',
  description:
    'Insert one row (object) or many (array). 201; rows come back with prefer "return=representation". Upsert: prefer ' +
    '"resolution=merge-duplicates" (or ignore-duplicates), on_conflict=<columns> in `query` (default: the primary key). A key a ' +
    'row lacks is null unless prefer has "missing=default". user_id is filled from user_token. vector columns take number arrays.' +
    ACCESS_REF,
  input: z.object({ ...insert, body: BodySchema }),
  output: DataOutput,
  auth: AUTH,
  appScoped: true,
  http: binding('POST', false),
  handler: async (input, ctx) => ctx.services.data.insert(await request(input, ctx), input.body),
});

export const dataUpdate = defineTool({
  name: 'data_update',
  title: 'Update matching rows',
  description: `Update every row matching the filters in \`query\` (at least one filter is required) with the columns in body. 204, or 200 with the rows when prefer is return=representation.${ACCESS_REF}`,
  input: z.object({ ...update, body: PatchSchema }),
  output: DataOutput,
  auth: AUTH,
  appScoped: true,
  http: binding('PATCH', false),
  handler: async (input, ctx) => ctx.services.data.update(await request(input, ctx), input.body),
});

export const dataUpdateRow = defineTool({
  name: 'data_update_row',
  title: 'Update one row',
  description: `Update one row by primary key with only the changed columns; returns the updated row (200), 404 if it does not exist or is hidden.${ACCESS_REF}`,
  input: z.object({ ...update, accept: RowAcceptSchema, id: IdSchema, body: PatchSchema }),
  output: DataOutput,
  auth: AUTH,
  appScoped: true,
  http: binding('PATCH', true),
  handler: async (input, ctx) => ctx.services.data.update(await request(input, ctx), input.body, input.id),
});

export const dataDelete = defineTool({
  name: 'data_delete',
  title: 'Delete matching rows',
  description: `Delete every row matching the filters in \`query\` (at least one filter is required). 204, or 200 with the deleted rows when prefer is return=representation.${ACCESS_REF}`,
  input: z.object(remove),
  output: DataOutput,
  auth: AUTH,
  appScoped: true,
  http: binding('DELETE', false),
  annotations: { destructiveHint: true },
  handler: async (input, ctx) => ctx.services.data.delete(await request(input, ctx)),
});

export const dataDeleteRow = defineTool({
  name: 'data_delete_row',
  title: 'Delete one row',
  description: `Delete one row by primary key: 204 (200 with the row when prefer is return=representation), 404 if it does not exist or is hidden.${ACCESS_REF}`,
  input: z.object({ ...remove, accept: RowAcceptSchema, id: IdSchema }),
  output: DataOutput,
  auth: AUTH,
  appScoped: true,
  http: binding('DELETE', true),
  annotations: { destructiveHint: true },
  handler: async (input, ctx) => ctx.services.data.delete(await request(input, ctx), input.id),
});

/** Registered last: /v1/{app_id}/{table} would otherwise shadow every other app-scoped route. */
export const dataTools: readonly AnyTool[] = [dataSelect, dataGet, dataInsert, dataUpdate, dataUpdateRow, dataDelete, dataDeleteRow];
