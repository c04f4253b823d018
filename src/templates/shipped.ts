// Templates shipped in the repository (templates/<slug>/template.json with the files it names): installed at start as
// public template apps of the platform's own account, and installed again when their version changes. One process
// installs at a time (an advisory lock on the control database); the others find the version already there.
import { randomBytes } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { ControlDatabase } from '../db/types.ts';
import type { AppsService } from '../apps/service.ts';
import { APP_COLUMNS, type AppRecord } from '../apps/types.ts';
import { applySchema } from '../schema/service.ts';
import { SchemaDefinitionSchema } from '../schema/definition.ts';
import { FRAMEWORKS } from '../frontend/types.ts';
import type { CloneDeps } from './steps.ts';
import { AppError } from '../core/errors.ts';
import { bundleFunctions, buildSite, type SiteBuild, type SiteFile } from './build.ts';
import { inside, listFiles } from './files.ts';
import { pruneSeedSnapshots, takeSeedSnapshot } from './seed.ts';
import { TemplateOptionsSchema, type EnvTreatment, type TemplateOptions } from './types.ts';

const SLUG = /^[a-z][a-z0-9-]{0,62}$/;
/** Any fixed key: installs of shipped templates serialize on it. */
const INSTALL_LOCK = 7_310_432_004;
const ACCOUNT_NAME = 'platform templates';

const EnvValue = z.union([z.literal('secret'), z.literal('generate'), z.object({ copy: z.string() }).strict()]);

/** templates/<slug>/template.json. File names are relative to the template's folder. */
export const ShippedTemplateSchema = z
  .object({
    title: z.string().min(1).max(200),
    description: z.string().max(4000).default(''),
    version: z.string().min(1).max(50),
    schema: z.string().optional().describe('A JSON schema definition file (schema_apply format)'),
    functions: z
      .array(
        z
          .object({
            name: z.string().regex(/^[a-z][a-z0-9-]{0,62}$/),
            file: z.string(),
            description: z.string().max(500).optional(),
            trigger: z.object({ type: z.enum(['http', 'cron', 'websocket']), config: z.record(z.string(), z.unknown()).default({}) }).default({ type: 'http', config: {} }),
            timeout_ms: z.number().int().positive().optional(),
            memory_limit_mb: z.number().int().positive().optional(),
            env: z.record(z.string(), EnvValue).default({}),
          })
          .strict(),
      )
      .default([]),
    site: z
      .object({
        dir: z.string(),
        framework: z.enum(FRAMEWORKS).default('static'),
        build: z
          .object({
            entry: z.union([z.string(), z.array(z.string()).min(1)]).describe('TypeScript/TSX entries relative to dir, bundled with their npm imports'),
            out: z.string().default('assets').describe('Where in the site each entry lands as <name>.js (and <name>.css)'),
          })
          .strict()
          .optional()
          .describe('Built at install: the entries bundled beside the files of dir outside src/'),
      })
      .strict()
      .optional(),
    seed: z.array(z.object({ table: z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/), file: z.string() }).strict()).default([]),
    rag: z
      .array(
        z
          .object({
            name: z.string().min(1).max(100),
            description: z.string().optional(),
            access_mode: z.enum(['private', 'shared', 'custom']).default('private'),
            chunk_size: z.number().int().default(1000),
            chunk_overlap: z.number().int().default(200),
            documents: z.array(z.object({ file: z.string(), filename: z.string().optional() }).strict()).default([]),
          })
          .strict(),
      )
      .default([]),
    substrate_link: z.boolean().default(false),
    integrations: z
      .array(z.object({ toolkit: z.string().regex(/^[a-z0-9_-]{1,64}$/), display_name: z.string().min(1).max(100).optional(), scopes: z.array(z.string()).optional() }).strict())
      .default([])
      .describe('Toolkits enabled on the template app, so that clones enable them too'),
    ai: z
      .object({
        default_model: z.string().min(1).optional(),
        max_tokens_per_request: z.number().int().positive().optional(),
        allowed_models: z.array(z.string().min(1)).optional(),
        end_user_daily_token_limit: z.number().int().positive().optional(),
      })
      .strict()
      .optional()
      .describe("The template app's AI settings, copied by clones"),
    uses: TemplateOptionsSchema.shape.uses,
    setup: TemplateOptionsSchema.shape.setup,
  })
  .strict();
export type ShippedTemplate = z.infer<typeof ShippedTemplateSchema>;

export interface ShippedDeps extends CloneDeps {
  apps: AppsService;
  log: Logger;
}

/** Installs every template folder of `dir` whose version is not installed yet; a broken one is logged and skipped. */
export async function installShippedTemplates(deps: ShippedDeps, dir: string): Promise<void> {
  const slugs = await templateFolders(dir);
  if (!slugs.length) return;
  await deps.db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${INSTALL_LOCK})`.execute(conn);
    try {
      for (const slug of slugs.sort()) {
        try {
          await installOne(deps, conn, slug, path.join(dir, slug));
        } catch (err) {
          deps.log.error({ err, template: slug }, 'shipped template not installed');
        }
      }
    } finally {
      await sql`select pg_advisory_unlock(${INSTALL_LOCK})`.execute(conn);
    }
  });
}

/** The template folders of `dir` by slug; a link to a folder counts (a test's or an operator's selection of templates). */
async function templateFolders(dir: string): Promise<string[]> {
  const entries = (await readdir(dir, { withFileTypes: true }).catch(() => [])).filter((e) => SLUG.test(e.name));
  const folders = await Promise.all(entries.map(async (e) => e.isDirectory() || (e.isSymbolicLink() && (await stat(path.join(dir, e.name)).catch(() => null))?.isDirectory())));
  return entries.filter((_, i) => folders[i]).map((e) => e.name);
}

async function installOne(deps: ShippedDeps, db: Kysely<ControlDatabase>, slug: string, dir: string): Promise<void> {
  const spec = ShippedTemplateSchema.parse(JSON.parse(await readFile(path.join(dir, 'template.json'), 'utf8')));
  const installed = await db.selectFrom('templates').select(['app_id', 'shipped_version', 'seed_snapshot_id']).where('slug', '=', slug).executeTakeFirst();
  // One installed before seed rows were pinned at publishing is installed again, which pins them.
  if (installed?.shipped_version === spec.version && (installed.seed_snapshot_id !== null || !spec.seed.length)) return;
  // Built before anything is made: a template that does not build leaves no app behind.
  const code = await bundleFunctions(dir, Object.fromEntries(spec.functions.map((f) => [f.name, inside(dir, f.file)])));
  const site = spec.site && (await siteFiles(inside(dir, spec.site.dir), spec.site.build));
  const app = installed ? await appRecord(db, installed.app_id) : await createApp(deps, db, spec.title);
  const file = (name: string) => readFile(inside(dir, name), 'utf8');

  if (spec.schema) {
    await applySchema(app.id, deps.databases.sql(app.id), { schema: SchemaDefinitionSchema.parse(JSON.parse(await file(spec.schema))), dry_run: false, name: `${slug} ${spec.version}` });
    deps.catalogs.invalidate(app.id);
  }
  const env: Record<string, EnvTreatment> = {};
  for (const f of spec.functions) {
    const values: Record<string, string> = {};
    for (const [name, value] of Object.entries(f.env)) {
      env[name] = typeof value === 'string' ? value : 'copy';
      if (typeof value !== 'string') values[name] = value.copy;
      else if (value === 'generate') values[name] = randomBytes(32).toString('hex');
      // A secret has no value in the repository; declared empty, so that clones list it in their to-do.
      else values[name] = '';
    }
    await deps.functions.deploy(app, {
      name: f.name,
      code: code[f.name]!,
      description: f.description,
      envVars: values,
      timeoutMs: f.timeout_ms,
      memoryLimitMb: f.memory_limit_mb,
      trigger: f.trigger as never,
    });
  }
  await removeUnlisted(deps, db, app, spec.functions.map((f) => f.name));
  if (spec.site && site) {
    const deployment = await deps.frontend.deployFiles(app.id, spec.site.framework, site);
    await deps.frontend.build(deployment.id, { finalAttempt: true });
  }
  await installIntegrations(deps, app, spec, slug);
  if (spec.ai) {
    const ai = spec.ai;
    await deps.aiSettings.update(app.id, {
      defaultModel: ai.default_model,
      maxTokensPerRequest: ai.max_tokens_per_request,
      allowedModels: ai.allowed_models,
      endUserDailyTokenLimit: ai.end_user_daily_token_limit,
    });
  }
  await seed(deps, app, spec, file);
  await installRag(deps, app, spec, file);
  const options: TemplateOptions = {
    env,
    seed_tables: spec.seed.map((s) => s.table),
    rag_documents: spec.rag.filter((c) => c.documents.length).map((c) => c.name),
    substrate_link: spec.substrate_link,
    ...(spec.uses ? { uses: spec.uses } : {}),
    ...(spec.setup ? { setup: spec.setup } : {}),
  };
  await db.transaction().execute(async (tx) => {
    // Published as any template is: its seed rows pinned as they are now.
    const seed = await takeSeedSnapshot(tx, deps.databases.sql(app.id), app.id, options);
    const values = {
      title: spec.title,
      description: spec.description,
      visibility: 'public' as const,
      options: JSON.stringify(options),
      shipped_version: spec.version,
      seed_snapshot_id: seed?.id ?? null,
    };
    await tx
      .insertInto('templates')
      .values({ app_id: app.id, account_id: app.account_id, slug, ...values })
      .onConflict((oc) => oc.column('app_id').doUpdateSet({ ...values, updated_at: sql`now()` }))
      .execute();
    await pruneSeedSnapshots(tx, app.id);
  });
  deps.log.info({ template: slug, version: spec.version, app_id: app.id }, 'shipped template installed');
}

/** The platform's own account that holds shipped templates (made on the first install, on the plan without limits). */
async function createApp(deps: ShippedDeps, db: Kysely<ControlDatabase>, title: string): Promise<AppRecord> {
  const owner = await db.selectFrom('templates').select('account_id').where('slug', 'is not', null).limit(1).executeTakeFirst();
  const accountId = owner?.account_id ?? (await db.insertInto('accounts').values({ name: ACCOUNT_NAME, plan: 'enterprise' }).returning('id').executeTakeFirstOrThrow()).id;
  const created = await deps.apps.create(accountId, title);
  return appRecord(db, created.app_id);
}

async function appRecord(db: Kysely<ControlDatabase>, appId: string): Promise<AppRecord> {
  return (await db.selectFrom('apps').select(APP_COLUMNS).where('id', '=', appId).executeTakeFirstOrThrow()) as AppRecord;
}

async function removeUnlisted(deps: ShippedDeps, db: Kysely<ControlDatabase>, app: AppRecord, names: readonly string[]): Promise<void> {
  const gone = await db.selectFrom('functions').select('name').where('app_id', '=', app.id).execute();
  for (const { name } of gone) if (!names.includes(name)) await deps.functions.delete(app.id, name);
}

/** Each seed table's rows replaced by the file's (a JSON array of objects), in the order listed. */
async function seed(deps: ShippedDeps, app: AppRecord, spec: ShippedTemplate, file: (name: string) => Promise<string>): Promise<void> {
  if (!spec.seed.length) return;
  const rows = await Promise.all(spec.seed.map(async (s) => z.array(z.record(z.string(), z.unknown())).parse(JSON.parse(await file(s.file)))));
  await deps.databases.sql(app.id).transaction(async (client) => {
    for (const s of [...spec.seed].reverse()) await client.query(`delete from ${pg.escapeIdentifier(s.table)}`);
    for (const [i, s] of spec.seed.entries()) {
      const table = pg.escapeIdentifier(s.table);
      await client.query(`insert into ${table} select * from jsonb_populate_recordset(null::${table}, $1)`, [JSON.stringify(rows[i])]);
    }
  });
}

/** Collections made when missing; each one's documents replaced by the files'. */
async function installRag(deps: ShippedDeps, app: AppRecord, spec: ShippedTemplate, file: (name: string) => Promise<string>): Promise<void> {
  const target = deps.databases.sql(app.id);
  for (const c of spec.rag) {
    const exists = await target.query('select 1 from svc_rag.collections where name = $1', [c.name]);
    if (!exists.rowCount) {
      await deps.rag.createCollection(app, { name: c.name, description: c.description, accessMode: c.access_mode, chunkSize: c.chunk_size, chunkOverlap: c.chunk_overlap });
    }
    await target.query('delete from svc_rag.documents where collection_id = (select id from svc_rag.collections where name = $1)', [c.name]);
    for (const d of c.documents) {
      await deps.rag.ingest({ app, endUserId: null }, c.name, { text: await file(d.file), filename: d.filename ?? path.basename(d.file) });
    }
  }
}

/** The site's files as deployed: built from its sources when it says how, else the folder as it is. */
function siteFiles(dir: string, build: SiteBuild | undefined): Promise<SiteFile[]> {
  return build ? buildSite(dir, build) : listFiles(dir);
}

/**
 * The listed toolkits enabled on the template app and the others disabled, so clones copy exactly these. A platform
 * without an integrations vendor installs the template without them (its clones' owners enable them later).
 */
async function installIntegrations(deps: ShippedDeps, app: AppRecord, spec: ShippedTemplate, slug: string): Promise<void> {
  let toolkits;
  try {
    toolkits = deps.integrations.toolkits;
  } catch (err) {
    if (!(err instanceof AppError && err.code === 'INTEGRATIONS_NOT_CONFIGURED')) throw err;
    if (spec.integrations.length) deps.log.warn({ template: slug }, 'shipped template installed without its integrations: none are configured on this platform');
    return;
  }
  for (const i of spec.integrations) await toolkits.configure(app, { toolkit: i.toolkit, displayName: i.display_name ?? i.toolkit, scopes: i.scopes });
  const listed = new Set(spec.integrations.map((i) => i.toolkit));
  for (const t of await toolkits.list(app.id)) if (!listed.has(t.toolkit)) await toolkits.disable(app.id, t.toolkit);
}
