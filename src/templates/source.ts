// What a clone of a template app copies, read from the template as it is now (TemplateSource) but for its seed rows,
// pinned when it was published (seed.ts), its version (a hash of that), its manifest (what a clone creates and what the new owner must supply) and the to-do list of a clone.
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AppSql } from '../apps/app-databases.ts';
import type { ControlDatabase } from '../db/types.ts';
import { jsonObject } from '../db/json.ts';
import type { SeedSnapshot } from './seed.ts';
import type { EnvTreatment, Manifest, TemplateOptions, TemplateSource, TodoItem } from './types.ts';

export interface SourceDeps {
  db: Kysely<ControlDatabase>;
  appSql: (appId: string) => AppSql;
}

/**
 * Reads everything a clone would copy from the template app, pinned where it can change (migration id, deployment);
 * the seed rows are the snapshot its publication took (seed.ts), never its live tables.
 */
export async function readSource(deps: SourceDeps, appId: string, options: TemplateOptions, seed: SeedSnapshot | undefined): Promise<TemplateSource> {
  const { db } = deps;
  const app = deps.appSql(appId);
  const [migrations, tables, functions, site, envKeys, ai, rag, integrations, plans, products] = await Promise.all([
    app.query<{ through: string | null; n: string }>('select max(id)::text as through, count(*)::text as n from svc_meta.migrations'),
    tablesOf(app),
    db
      .selectFrom('functions')
      .select(['name', 'description', 'code', 'timeout_ms', 'memory_limit_mb', 'trigger_type', 'trigger_config', 'env_sealed', 'env_names'])
      .where('app_id', '=', appId)
      .orderBy('name')
      .execute(),
    db
      .selectFrom('frontend_deployments')
      .select(['id', 'framework', 'file_count'])
      .where('app_id', '=', appId)
      .where('has_site', '=', true)
      .orderBy('live', 'desc')
      .orderBy('ready_at', 'desc')
      .limit(1)
      .executeTakeFirst(),
    db.selectFrom('frontend_env').select('name').where('app_id', '=', appId).orderBy('name').execute(),
    db.selectFrom('ai_configs').selectAll().where('app_id', '=', appId).executeTakeFirst(),
    app.query<{ name: string; description: string | null; access_mode: string; chunk_size: number; chunk_overlap: number; embedding_model: string; documents: string }>(
      `select c.name, c.description, c.access_mode, c.chunk_size, c.chunk_overlap, c.embedding_model,
         (select count(*) from svc_rag.documents d where d.collection_id = c.id and d.source_text is not null and d.owner_user_id is null)::text as documents
       from svc_rag.collections c order by c.name`,
    ),
    db.selectFrom('integration_toolkits').select(['toolkit', 'display_name', 'scopes']).where('app_id', '=', appId).orderBy('toolkit').execute(),
    db.selectFrom('app_plans').selectAll().where('app_id', '=', appId).where('active', '=', true).orderBy('created_at').execute(),
    db.selectFrom('app_products').selectAll().where('app_id', '=', appId).where('active', '=', true).orderBy('created_at').execute(),
  ]);
  const copyDocs = new Set(options.rag_documents ?? []);
  const source: Omit<TemplateSource, 'version'> = {
    template_app_id: appId,
    migrations_through: Number(migrations.rows[0]!.through ?? 0),
    migrations: Number(migrations.rows[0]!.n),
    tables,
    functions: functions.map((f) => ({
      name: f.name,
      description: f.description,
      code: f.code,
      timeout_ms: f.timeout_ms,
      memory_limit_mb: f.memory_limit_mb,
      trigger: { type: f.trigger_type, config: jsonObject(f.trigger_config) },
      env_sealed: f.env_sealed,
      env: Object.fromEntries(f.env_names.map((name): [string, EnvTreatment] => [name, options.env?.[name] ?? 'secret'])),
    })),
    site: site ? { deployment_id: site.id, framework: site.framework, files: site.file_count ?? 0 } : null,
    frontend_env_keys: envKeys.map((e) => e.name),
    ai: ai
      ? { default_model: ai.default_model, max_tokens_per_request: ai.max_tokens_per_request, allowed_models: ai.allowed_models, end_user_daily_token_limit: ai.end_user_daily_token_limit }
      : null,
    rag: rag.rows.map((c) => ({ ...c, copy_documents: copyDocs.has(c.name), documents: copyDocs.has(c.name) ? Number(c.documents) : 0 })),
    integrations: integrations.map((i) => ({ toolkit: i.toolkit, display_name: i.display_name, scopes: i.scopes })),
    plans: plans.map((p) => ({ name: p.name, price_cents: p.price_cents, currency: p.currency, interval: p.interval, features: p.features as string[] })),
    products: products.map((p) => ({ name: p.name, description: p.description, price_cents: p.price_cents, currency: p.currency, metadata: p.metadata as Record<string, string> })),
    seed_tables: (seed?.tables ?? []).map((t) => ({ name: t.name, rows: t.rows })),
    substrate_link: options.substrate_link ?? false,
    uses: options.uses ?? [],
    setup: options.setup ?? [],
  };
  // The snapshot's digest, not its id: the same rows published again keep the version.
  return { ...source, version: versionOf({ ...source, seed_digest: seed?.digest ?? null }), seed_snapshot_id: seed?.id ?? null };
}

/** The app's tables (schema public) with their access option, by name. */
export async function tablesOf(app: AppSql): Promise<Array<{ name: string; access: string }>> {
  const { rows } = await app.query<{ name: string; access: string }>(
    `select c.relname as name, coalesce(a.access, 'service') as access from pg_class c
     join pg_namespace n on n.oid = c.relnamespace left join svc_meta.table_access a on a.table_name = c.relname
     where n.nspname = 'public' and c.relkind in ('r', 'p') order by c.relname`,
  );
  return rows;
}

/**
 * A short hash of what a clone copies: any change to it (a deploy, a schema change, a new site, other seed rows, an
 * option) gives another version. Sealed values are hashed as stored, so a changed variable changes it too.
 */
function versionOf(source: Omit<TemplateSource, 'version'> & { seed_digest: string | null }): string {
  return createHash('sha256').update(JSON.stringify(source)).digest('hex').slice(0, 12);
}

/** What the new owner must do once the clone is made: secrets, frontend variables, Connect onboarding, integrations. */
export function todoOf(source: TemplateSource, billingDeferred: boolean): TodoItem[] {
  const todo: TodoItem[] = [];
  for (const f of source.functions) {
    for (const [name, treatment] of Object.entries(f.env)) {
      if (treatment === 'secret') {
        todo.push({ kind: 'secret', function: f.name, name, tool: 'functions_env_update', message: `Set the variable ${name} of function ${f.name}: it is a secret the template does not share.` });
      }
    }
  }
  for (const name of source.frontend_env_keys) {
    todo.push({ kind: 'frontend_env', name, tool: 'frontend_env_set', message: `Set the frontend variable ${name} (the template's key, without its value).` });
  }
  if (billingDeferred) {
    const n = source.plans.length + source.products.length;
    todo.push({
      kind: 'connect_onboarding',
      tool: 'billing_connect_onboard',
      message: `Start Stripe Connect onboarding, then call templates_clone_retry to create the template's ${n} plan${n === 1 ? '' : 's'} and product${n === 1 ? '' : 's'} at Stripe.`,
    });
  }
  for (const i of source.integrations) {
    todo.push({ kind: 'integration', name: i.toolkit, tool: 'integrations_connect', message: `Toolkit ${i.toolkit} is enabled; each end user connects their own account before its tools run.` });
  }
  // Pinned sources of clones asked for before setup existed have none.
  for (const step of source.setup ?? []) todo.push({ kind: 'setup', tool: step.tool, message: step.message });
  return todo;
}

export function manifestOf(
  source: TemplateSource,
  template: { title: string; description: string; visibility: 'account' | 'public'; slug: string | null; published_at: Date },
): Manifest {
  const seeded = new Map(source.seed_tables.map((t) => [t.name, t.rows]));
  return {
    app_id: source.template_app_id,
    title: template.title,
    description: template.description,
    visibility: template.visibility,
    version: source.version,
    shipped: template.slug !== null,
    published_at: template.published_at.toISOString(),
    creates: {
      tables: source.tables.map((t) => ({ name: t.name, access: t.access, seed_rows: seeded.get(t.name) ?? null })),
      migrations: source.migrations,
      functions: source.functions.map((f) => ({
        name: f.name,
        trigger: f.trigger.type,
        ...(typeof f.trigger.config.schedule === 'string' ? { schedule: f.trigger.config.schedule } : {}),
        ...(typeof f.trigger.config.event === 'string' ? { event: f.trigger.config.event } : {}),
      })),
      site: source.site && { framework: source.site.framework, files: source.site.files },
      frontend_env_keys: source.frontend_env_keys,
      ai: source.ai && { default_model: source.ai.default_model },
      rag_collections: source.rag.map((c) => ({ name: c.name, documents: c.documents })),
      integrations: source.integrations.map((i) => i.toolkit),
      billing: { plans: source.plans.map((p) => p.name), products: source.products.map((p) => p.name) },
      substrate_link: source.substrate_link,
      uses: source.uses ?? [],
    },
    owner_must_supply: todoOf(source, source.plans.length + source.products.length > 0),
  };
}
