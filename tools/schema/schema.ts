import { z } from 'zod';
import { type AnyTool } from '../../src/core/define.ts';
import { toolsUsing } from '../define.ts';
import { AppIdSchema } from '../../src/apps/types.ts';
import { SchemaDefinitionSchema, definitionUsesPlans } from '../../src/schema/definition.ts';
import { preparePlanGates } from '../../src/monetization/entitlement.ts';
import { SchemaViewSchema } from '../../src/schema/describe.ts';
import { applySchema, getSchema, listMigrations } from '../../src/schema/service.ts';
import { guideRef } from '../shared.ts';

type Uses = 'catalogs' | 'databases' | 'monetization' | 'appChanges';
const defineTool = toolsUsing<Uses>();

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
    "Create or change an app's tables from a declarative definition (schema_get returns the live schema in this format). " +
    'Only what differs runs, in one transaction recorded as a migration. Omitted tables and columns are kept ' +
    '(_dropColumns and _drop: true destroy data); column types and primary keys cannot change. dry_run: true shows the SQL. ' +
    'A table with a user_id uuid column is private per end user (filled in on their inserts). ' +
    `Types, defaults, indexes, access, plans: ${guideRef('schema')}. Next: data_insert.`,
  input: z.object({
    app_id: AppIdSchema,
    schema: SchemaDefinitionSchema.describe(
      'e.g. { tables: { notes: { columns: { id: { type: "uuid", primary: true, default: "gen_random_uuid()" }, user_id: { type: "uuid" }, title: { type: "text" } } } } }',
    ),
    dry_run: z.boolean().default(false).describe('true: return the planned SQL statements and execute nothing'),
    name: z.string().min(1).max(200).default('unnamed').describe('Migration name, e.g. "add posts"'),
  }),
  output: z.object({
    dry_run: z.boolean(),
    applied: z.boolean().describe('true only when statements ran'),
    statements: z.array(z.string()).describe('The SQL statements planned (and, unless dry_run, executed), in order'),
    migration: MigrationSummarySchema.nullable().describe('The recorded migration; null for a dry run or when nothing changed'),
  }),
  auth: ['platform', 'service'],
  appScoped: true,
  billingGate: 'write',
  // A dry run changes nothing, so a protected app answers it to agents too.
  governed: (input) => !input.dry_run,
  http: { method: 'POST', path: '/v1/{app_id}/schema/apply', subdomainPath: '/schema/apply' },
  annotations: { destructiveHint: true, idempotentHint: true },
  // A dry run, or a definition the database already has, changes nothing.
  audit: {
    action: 'schema.apply',
    resource: 'schema',
    id: (input) => input.app_id,
    details: (input, out) => ({ name: input.name, migration_id: out.migration?.id ?? null, statements: out.statements.length }),
    when: (_input, out) => out.applied,
  },
  handler: async (input, ctx) => {
    const appId = ctx.app!.id;
    const db = ctx.services.databases.sql(appId);
    if (definitionUsesPlans(input.schema)) await preparePlanGates(ctx.services.monetization.catalog, appId, input.schema);
    const result = await applySchema(appId, db, input);
    if (result.applied) {
      ctx.services.catalogs.invalidate(appId);
      await ctx.services.appChanges.announce(appId);
    }
    return result;
  },
});

export const schemaGet = defineTool({
  name: 'schema_get',
  title: 'Read the schema',
  description:
    "Read an app's tables in schema_apply's format: columns (type, primary, nullable, unique, default, identity, enum, references), " +
    'foreignKeys, indexes, access (user, public, authenticated, service, a group or rules), plans; and the row-level-security policies in force (read-only). ' +
    'Edit it and pass it to schema_apply; unchanged it plans nothing.',
  input: z.object({ app_id: AppIdSchema }),
  output: SchemaViewSchema,
  auth: ['platform', 'service'],
  appScoped: true,
  http: { method: 'GET', path: '/v1/{app_id}/schema', subdomainPath: '/schema' },
  annotations: { readOnlyHint: true },
  handler: async (_input, ctx) => getSchema(ctx.services.databases.sql(ctx.app!.id)),
});

export const schemaMigrations = defineTool({
  name: 'schema_migrations',
  title: 'List migrations',
  description:
    "An app's applied schema changes, oldest first: name, the SQL statements that ran, sha256 checksum, applied_at. " +
    'Dry runs and applies that changed nothing are not recorded.',
  input: z.object({ app_id: AppIdSchema }),
  output: z.object({
    migrations: z.array(
      MigrationSummarySchema.extend({
        statements: z.array(z.string()),
        source: z
          .object({ template_app_id: z.string(), template_version: z.string(), migration_id: z.number().int() })
          .nullable()
          .describe('Set when a clone copied this migration from its template'),
      }),
    ),
  }),
  auth: ['platform', 'service'],
  appScoped: true,
  http: { method: 'GET', path: '/v1/{app_id}/migrations', subdomainPath: '/migrations' },
  annotations: { readOnlyHint: true },
  handler: async (_input, ctx) => ({ migrations: await listMigrations(ctx.services.databases.sql(ctx.app!.id)) }),
});

/** Schema tools: schema_apply, schema_get, schema_migrations. */
export const schemaTools: readonly AnyTool[] = [schemaApply, schemaGet, schemaMigrations];
