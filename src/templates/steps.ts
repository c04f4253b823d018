// The steps of a clone, each copying one part of the template into the new app. Every step is safe to run twice (a
// job retried, or resumed after a kill -9): what it makes is found by name before it is made again, or made in the
// same transaction as the record that it was made.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { SecretBox } from '../core/crypto.ts';
import { AppError } from '../core/errors.ts';
import type { ControlDatabase } from '../db/types.ts';
import type { AppDatabases } from '../apps/app-databases.ts';
import type { AppRecord } from '../apps/types.ts';
import type { EndUserTokens } from '../auth/end-user-tokens.ts';
import type { CatalogCache } from '../schema/catalog-cache.ts';
import { listMigrations, replayMigration } from '../schema/service.ts';
import type { FunctionsService } from '../functions/service.ts';
import type { FrontendService } from '../frontend/service.ts';
import type { Framework } from '../frontend/types.ts';
import type { AiSettingsStore } from '../ai/settings.ts';
import type { RagService } from '../rag/service.ts';
import type { IntegrationsService } from '../integrations/service.ts';
import type { MonetizationService } from '../monetization/service.ts';
import type { Interval } from '../monetization/types.ts';
import type { SubstrateService } from '../substrate/service.ts';
import type { AccessMode } from '../rag/types.ts';
import type { Trigger } from '../functions/types.ts';
import { listFiles } from './files.ts';
import { copySeedSnapshot, readSeedSnapshot } from './seed.ts';
import { templateErrors } from './errors.ts';
import type { CloneStep, TemplateSource } from './types.ts';

export interface CloneDeps {
  db: Kysely<ControlDatabase>;
  box: SecretBox;
  databases: AppDatabases;
  catalogs: CatalogCache;
  tokens: EndUserTokens;
  functions: FunctionsService;
  frontend: FrontendService;
  aiSettings: AiSettingsStore;
  rag: RagService;
  integrations: IntegrationsService;
  monetization: MonetizationService;
  substrate: SubstrateService;
}

/** What steps leave for later steps and for the clone's to-do list (template_clones.progress). */
export interface CloneProgress {
  /** The billing step found no Stripe Connect account: plans and products wait for templates_clone_retry. */
  billing_deferred?: boolean;
}

export interface StepRun {
  deps: CloneDeps;
  cloneId: string;
  app: AppRecord;
  region: string;
  source: TemplateSource;
}

/** The refusals of the catalog that mean "not yet" for the new owner (monetization's and billing's error codes). */
const BILLING_WAITS_ON = new Set(['CONNECT_ACCOUNT_MISSING', 'STRIPE_NOT_CONFIGURED']);

export const STEPS: Record<CloneStep, (run: StepRun) => Promise<CloneProgress>> = {
  database: copyDatabase,
  schema: copySchema,
  functions: copyFunctions,
  site: copySite,
  ai_rag: copyAiAndRag,
  integrations: copyIntegrations,
  billing: copyBilling,
  seed: copySeed,
};

/** A fresh database in the clone's region (a half-made one from a crashed run is dropped first) and its signing key. */
async function copyDatabase({ deps, app, region }: StepRun): Promise<CloneProgress> {
  await deps.databases.drop(app.id, region);
  await deps.databases.create(app.id, region);
  const key = await deps.db.selectFrom('app_signing_keys').select('kid').where('app_id', '=', app.id).executeTakeFirst();
  if (!key) await deps.tokens.createSigningKey(app.id, deps.db);
  return {};
}

/** The template's schema history, migration by migration, each recorded with where it came from. */
async function copySchema({ deps, app, source }: StepRun): Promise<CloneProgress> {
  const migrations = await listMigrations(deps.databases.sql(source.template_app_id), source.migrations_through);
  const target = deps.databases.sql(app.id);
  for (const m of migrations) {
    await replayMigration(target, m, { template_app_id: source.template_app_id, template_version: source.version, migration_id: m.id });
  }
  deps.catalogs.invalidate(app.id);
  return {};
}

/**
 * Each function with its code, trigger and limits, through the same deploy as any (validated in the sandbox). Its
 * variables: 'copy' ones with the template's values, 'generate' ones with fresh random values, 'secret' ones left out
 * for the owner to set (the to-do list names them).
 */
async function copyFunctions({ deps, app, source }: StepRun): Promise<CloneProgress> {
  const existing = new Set((await deps.db.selectFrom('functions').select('name').where('app_id', '=', app.id).execute()).map((r) => r.name));
  for (const f of source.functions) {
    if (existing.has(f.name)) continue;
    const values = f.env_sealed ? (JSON.parse(deps.box.open(f.env_sealed)) as Record<string, string>) : {};
    const env: Record<string, string> = {};
    for (const [name, treatment] of Object.entries(f.env)) {
      if (treatment === 'copy' && values[name] !== undefined) env[name] = values[name];
      else if (treatment === 'generate') env[name] = randomBytes(32).toString('hex');
    }
    await deps.functions.deploy(app, {
      name: f.name,
      code: f.code,
      description: f.description,
      envVars: env,
      timeoutMs: f.timeout_ms,
      memoryLimitMb: f.memory_limit_mb,
      trigger: f.trigger as Trigger,
    });
  }
  return {};
}

/** The template's site (its latest ready deployment) as a new deployment, published before the step ends. */
async function copySite({ deps, app, source }: StepRun): Promise<CloneProgress> {
  if (source.site) {
    const made = await deps.frontend.list(app.id, 1);
    const deployment = made[0] ?? (await deps.frontend.deployFiles(app.id, source.site.framework as Framework, await siteFiles(deps.frontend.siteDir(source.template_app_id, source.site.deployment_id))));
    // The build job is enqueued too; building here makes the site live when the clone says ready (a later run of the
    // job finds it READY and only tidies up).
    if (deployment.status !== 'READY') await deps.frontend.build(deployment.id, { finalAttempt: true });
    const built = await deps.frontend.get(app.id, deployment.id);
    if (built.status !== 'READY') throw new CloneStepError(`the copy of the template's site did not build: ${built.error ?? built.status}`);
  }
  if (source.frontend_env_keys.length && !(await deps.frontend.envKeys(app.id)).length) {
    await deps.frontend.setEnv(app.id, Object.fromEntries(source.frontend_env_keys.map((k) => [k, ''])));
  }
  return {};
}

/** The template's site files; a deployment deleted since the clone was asked for fails the clone. */
async function siteFiles(dir: string): Promise<Array<{ path: string; bytes: Buffer }>> {
  return listFiles(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') throw new CloneStepError("the template's site files are gone (its deployment was deleted); publish the template again");
    throw err;
  });
}

/**
 * The AI settings (never the provider key), the RAG collections' definitions, and the text documents of the
 * collections the template marks, ingested anew: embedded through the new app's settings and credits.
 */
async function copyAiAndRag({ deps, app, source }: StepRun): Promise<CloneProgress> {
  if (source.ai) {
    await deps.aiSettings.update(app.id, {
      defaultModel: source.ai.default_model,
      maxTokensPerRequest: source.ai.max_tokens_per_request,
      allowedModels: source.ai.allowed_models,
      endUserDailyTokenLimit: source.ai.end_user_daily_token_limit,
    });
  }
  const target = deps.databases.sql(app.id);
  const have = new Set((await target.query<{ name: string }>('select name from svc_rag.collections')).rows.map((r) => r.name));
  for (const c of source.rag) {
    if (!have.has(c.name)) {
      await deps.rag.createCollection(app, {
        name: c.name,
        ...(c.description === null ? {} : { description: c.description }),
        accessMode: c.access_mode as AccessMode,
        chunkSize: c.chunk_size,
        chunkOverlap: c.chunk_overlap,
        embeddingModel: c.embedding_model,
      });
    }
    if (c.copy_documents) await copyDocuments(deps, app, source.template_app_id, c.name);
  }
  return {};
}

/** The app's own text documents of a collection (never an end user's), each ingested unless a run already did. */
async function copyDocuments(deps: CloneDeps, app: AppRecord, templateAppId: string, collection: string): Promise<void> {
  const { rows } = await deps.databases.sql(templateAppId).query<{ filename: string | null; metadata: Record<string, unknown>; source_text: string }>(
    `select d.filename, d.metadata, d.source_text from svc_rag.documents d join svc_rag.collections c on c.id = d.collection_id
     where c.name = $1 and d.source_text is not null and d.owner_user_id is null order by d.created_at, d.id`,
    [collection],
  );
  const target = deps.databases.sql(app.id);
  for (const doc of rows) {
    const copied = await target.query(
      `select 1 from svc_rag.documents d join svc_rag.collections c on c.id = d.collection_id
       where c.name = $1 and d.filename is not distinct from $2 and d.source_text = $3 limit 1`,
      [collection, doc.filename, doc.source_text],
    );
    if (copied.rowCount) continue;
    await deps.rag.ingest({ app, endUserId: null }, collection, { text: doc.source_text, ...(doc.filename === null ? {} : { filename: doc.filename }), metadata: doc.metadata });
  }
}

/** The toolkits the template enabled, with the same scopes (no end user's connection is copied). */
async function copyIntegrations({ deps, app, source }: StepRun): Promise<CloneProgress> {
  for (const i of source.integrations) {
    await deps.integrations.toolkits.configure(app, { toolkit: i.toolkit, displayName: i.display_name, ...(i.scopes ? { scopes: i.scopes } : {}) });
  }
  return {};
}

/**
 * Plans and products, created at Stripe on the new owner's Connect account. Without one (or without Stripe on this
 * platform) they wait: the clone becomes ready with a to-do item, and templates_clone_retry creates them later.
 */
async function copyBilling({ deps, app, source }: StepRun): Promise<CloneProgress> {
  if (!source.plans.length && !source.products.length) return {};
  const { catalog } = deps.monetization;
  try {
    const plans = new Set((await catalog.listPlans(app.id)).map((p) => p.name));
    for (const p of source.plans) {
      if (plans.has(p.name)) continue;
      await catalog.createPlan(app, { name: p.name, priceCents: p.price_cents, currency: p.currency, interval: p.interval as Interval, features: p.features });
    }
    const products = new Set((await catalog.listProducts(app.id)).map((p) => p.name));
    for (const p of source.products) {
      if (products.has(p.name)) continue;
      await catalog.createProduct(app, {
        name: p.name,
        priceCents: p.price_cents,
        currency: p.currency,
        ...(p.description === null ? {} : { description: p.description }),
        metadata: p.metadata,
      });
    }
  } catch (err) {
    // No Connect account yet, or no Stripe on this platform: the owner's to-do, not the clone's failure.
    if (err instanceof AppError && BILLING_WAITS_ON.has(err.code)) return { billing_deferred: true };
    throw err;
  }
  return { billing_deferred: false };
}

/**
 * The seed rows the template's publication pinned (seed.ts: never its live tables), with their ids so that references
 * between seed tables hold; then the substrate link when the template asks for one.
 */
async function copySeed({ deps, app, source }: StepRun): Promise<CloneProgress> {
  // A source pinned before seed snapshots existed names none: its clone copies no rows.
  if (source.seed_snapshot_id) {
    const snapshot = await readSeedSnapshot(deps.db, source.seed_snapshot_id);
    if (!snapshot) throw templateErrors.seedSnapshotGone();
    await copySeedSnapshot(deps.db, deps.databases.sql(app.id), snapshot);
  }
  if (source.substrate_link) await deps.substrate.link(app.account_id, app.id, undefined);
  return {};
}

/** A step's failure that retrying cannot fix: the clone fails at once with this message. */
export class CloneStepError extends Error {}
