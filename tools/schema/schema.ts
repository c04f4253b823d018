import { z } from 'zod';
import { defineTool, type AnyTool } from '../../src/core/define.ts';
import { AppIdSchema } from '../../src/apps/types.ts';
import { SchemaDefinitionSchema } from '../../src/schema/definition.ts';
import { SchemaViewSchema } from '../../src/schema/describe.ts';
import { applySchema, getSchema, listMigrations } from '../../src/schema/service.ts';

const MigrationSummarySchema = z.object({
  id: z.number().int(),
  name: z.string(),
  checksum: z.string().describe('sha256 hex of the statements joined by newlines'),
  applied_at: z.string(),
});

export const schemaApply = defineTool({
  name: 'schema_apply',
  title: 'Apply a schema',
  description:
    'Create or change the tables of an app from a declarative definition: { tables: { <table>: { columns: { <column>: { type, primary?, nullable? (default true), ' +
    'unique?, default?, references?: { table, column, onDelete? } } }, indexes?: { <index>: { columns, unique? } }, access?, _dropColumns?, _drop? } } }. ' +
    'The platform diffs it against the live database and runs only what differs, in one transaction recorded as a migration; applying the same ' +
    'definition twice changes nothing. Omitted tables and columns are left alone: only _dropColumns and _drop: true destroy data. Column types and ' +
    'primary keys cannot be changed (add a new column, copy, then _dropColumns the old one). Every table gets row-level security; access: ' +
    "'user' (default when the table has a user_id uuid column: each end user reads and writes only their own rows, user_id is filled from the JWT on insert), " +
    "'public' (anyone may read; end users write only their own rows if there is a user_id column), 'service' (default otherwise: only the service key). " +
    "References are checked without row-level security, so an end user can point at another user's row: give references between per-user " +
    "tables onDelete: 'cascade' (or 'set null') so that owners can still delete their rows. " +
    'At most 50 tables per call. Pass dry_run: true first to see the SQL statements without running them. Then use the data API ' +
    '(/v1/{app_id}/{table}) or schema_get to check the result.',
  input: z.object({
    app_id: AppIdSchema,
    schema: SchemaDefinitionSchema.describe(
      'The definition: { tables: { <table>: { columns, indexes?, access?, _dropColumns?, _drop? } } }; schema_get returns this format',
    ),
    dry_run: z.boolean().default(false).describe('true: return the planned SQL statements and execute nothing'),
    name: z.string().min(1).max(200).default('unnamed').describe('Descriptive migration name, e.g. "add posts"'),
  }),
  output: z.object({
    dry_run: z.boolean(),
    applied: z.boolean().describe('true only when statements ran'),
    statements: z.array(z.string()).describe('The SQL statements planned (and, unless dry_run, executed), in order'),
    migration: MigrationSummarySchema.nullable().describe('The recorded migration; null for a dry run or when nothing changed'),
  }),
  auth: ['platform', 'service'],
  appScoped: true,
  http: { method: 'POST', path: '/v1/{app_id}/schema/apply', subdomainPath: '/schema/apply' },
  annotations: { destructiveHint: true, idempotentHint: true },
  handler: async (input, ctx) => {
    const appId = ctx.app!.id;
    const result = await applySchema(ctx.services.databases.pool(appId), input);
    if (result.applied) ctx.services.catalogs.invalidate(appId);
    return result;
  },
});

export const schemaGet = defineTool({
  name: 'schema_get',
  title: 'Read the schema',
  description:
    "Read an app's current tables in the same format schema_apply takes: columns (type, primary, nullable, unique, default, references), " +
    'standalone indexes and each table\'s access (user, public or service). Edit the result and pass it to schema_apply to change the schema; ' +
    'passed back unchanged it plans nothing.',
  input: z.object({ app_id: AppIdSchema }),
  output: SchemaViewSchema,
  auth: ['platform', 'service'],
  appScoped: true,
  http: { method: 'GET', path: '/v1/{app_id}/schema', subdomainPath: '/schema' },
  annotations: { readOnlyHint: true },
  handler: async (_input, ctx) => getSchema(ctx.services.databases.pool(ctx.app!.id)),
});

export const schemaMigrations = defineTool({
  name: 'schema_migrations',
  title: 'List migrations',
  description:
    "List the schema changes applied to an app, oldest first, each with its name, the exact SQL statements that ran, a sha256 checksum and " +
    'applied_at. Dry runs and applies that changed nothing are not recorded.',
  input: z.object({ app_id: AppIdSchema }),
  output: z.object({ migrations: z.array(MigrationSummarySchema.extend({ statements: z.array(z.string()) })) }),
  auth: ['platform', 'service'],
  appScoped: true,
  http: { method: 'GET', path: '/v1/{app_id}/migrations', subdomainPath: '/migrations' },
  annotations: { readOnlyHint: true },
  handler: async (_input, ctx) => ({ migrations: await listMigrations(ctx.services.databases.pool(ctx.app!.id)) }),
});

/** Schema tools: schema_apply, schema_get, schema_migrations. */
export const schemaTools: readonly AnyTool[] = [schemaApply, schemaGet, schemaMigrations];
