// The template catalog: apps their owner publishes (to the account, or to every account when the operator allows it) and the
// ones shipped with the platform (shipped.ts); a template's manifest says what a clone creates and what the new owner
// must supply. Cloning is clones.ts.
import { sql, type Kysely } from 'kysely';
import type { ControlDatabase } from '../db/types.ts';
import type { AppDatabases } from '../apps/app-databases.ts';
import { templateErrors } from './errors.ts';
import { manifestOf, readSource, tablesOf } from './source.ts';
import { pruneSeedSnapshots, readSeedSnapshot, takeSeedSnapshot } from './seed.ts';
import { TemplateOptionsSchema, type Manifest, type TemplateOptions, type TemplateSource, type TemplateSummary } from './types.ts';

export interface PublishInput {
  title: string;
  description?: string | undefined;
  visibility: 'account' | 'public';
  options: TemplateOptions;
}

export interface CatalogDeps {
  db: Kysely<ControlDatabase>;
  databases: AppDatabases;
  /** Whether accounts may publish templates every account sees (SVC_TEMPLATES_PUBLIC). */
  publicAllowed: boolean;
}

interface TemplateRow {
  app_id: string;
  account_id: string;
  slug: string | null;
  title: string;
  description: string;
  visibility: 'account' | 'public';
  options: unknown;
  published_at: Date;
  seed_snapshot_id: string | null;
}

export class TemplateCatalog {
  readonly #d: CatalogDeps;

  constructor(deps: CatalogDeps) {
    this.#d = deps;
  }

  /**
   * Publishes the app (or changes its template's title, text, visibility and options) with its seed rows as they are
   * now (a new snapshot; the one before is dropped once no unfinished clone needs it); answers its manifest. Nothing
   * changes when the snapshot is refused.
   */
  async publish(app: { id: string; account_id: string }, input: PublishInput): Promise<Manifest> {
    const current = await this.#row(app.id);
    if (current?.slug) throw templateErrors.shipped();
    if (input.visibility === 'public' && !this.#d.publicAllowed) throw templateErrors.publicNotAllowed();
    await this.#checkOptions(app.id, input.options);
    await this.#d.db.transaction().execute(async (tx) => {
      const seed = await takeSeedSnapshot(tx, this.#d.databases.sql(app.id), app.id, input.options);
      const values = {
        title: input.title,
        description: input.description ?? current?.description ?? '',
        visibility: input.visibility,
        options: JSON.stringify(input.options),
        seed_snapshot_id: seed?.id ?? null,
      };
      await tx
        .insertInto('templates')
        .values({ app_id: app.id, account_id: app.account_id, ...values })
        .onConflict((oc) => oc.column('app_id').doUpdateSet({ ...values, updated_at: sql`now()` }))
        .execute();
      await pruneSeedSnapshots(tx, app.id);
    });
    return (await this.manifest(app.account_id, app.id)).manifest;
  }

  async unpublish(appId: string): Promise<void> {
    const current = await this.#row(appId);
    if (!current) throw templateErrors.notFound(appId);
    if (current.slug) throw templateErrors.shipped();
    await this.#d.db.transaction().execute(async (tx) => {
      await tx.deleteFrom('templates').where('app_id', '=', appId).execute();
      await pruneSeedSnapshots(tx, appId);
    });
  }

  /** The templates an account can see: its own and the public ones, shipped ones first. */
  async list(accountId: string): Promise<TemplateSummary[]> {
    const rows = (await this.#visible(accountId).orderBy(sql`slug is null`).orderBy('title').orderBy('app_id').execute()) as TemplateRow[];
    const manifests = await Promise.all(rows.map((row) => this.#manifestOf(row)));
    return manifests.map(({ manifest: m }) => ({
      app_id: m.app_id,
      title: m.title,
      description: m.description,
      visibility: m.visibility,
      version: m.version,
      shipped: m.shipped,
      published_at: m.published_at,
    }));
  }

  /** A template the account can see, its manifest and the source a clone of it would copy now. */
  async manifest(accountId: string, appId: string): Promise<{ manifest: Manifest; source: TemplateSource }> {
    const row = (await this.#visible(accountId).where('app_id', '=', appId).executeTakeFirst()) as TemplateRow | undefined;
    if (!row) throw templateErrors.notFound(appId);
    return this.#manifestOf(row);
  }

  async #manifestOf(row: TemplateRow): Promise<{ manifest: Manifest; source: TemplateSource }> {
    const seed = row.seed_snapshot_id === null ? undefined : await readSeedSnapshot(this.#d.db, row.seed_snapshot_id);
    const source = await readSource({ db: this.#d.db, appSql: (id) => this.#d.databases.sql(id) }, row.app_id, TemplateOptionsSchema.parse(row.options), seed);
    return { manifest: manifestOf(source, row), source };
  }

  #visible(accountId: string) {
    return this.#d.db
      .selectFrom('templates')
      .innerJoin('apps', 'apps.id', 'templates.app_id')
      .select(['templates.app_id', 'templates.account_id', 'slug', 'title', 'description', 'visibility', 'options', 'published_at', 'seed_snapshot_id'])
      .where('apps.status', '=', 'ready')
      .where((eb) => eb.or([eb('visibility', '=', 'public'), eb('templates.account_id', '=', accountId)]));
  }

  #row(appId: string) {
    return this.#d.db.selectFrom('templates').select(['slug', 'description']).where('app_id', '=', appId).executeTakeFirst();
  }

  /** Options naming what the app does not have are refused, naming them: a typo must not silently copy nothing. */
  async #checkOptions(appId: string, options: TemplateOptions): Promise<void> {
    const { db, databases } = this.#d;
    const app = databases.sql(appId);
    const [fns, tables, collections] = await Promise.all([
      db.selectFrom('functions').select('env_names').where('app_id', '=', appId).execute(),
      tablesOf(app),
      app.query<{ name: string }>('select name from svc_rag.collections order by name'),
    ]);
    const check = (what: string, asked: readonly string[] | undefined, known: readonly string[], among?: string) => {
      const unknown = (asked ?? []).filter((n) => !known.includes(n));
      if (unknown.length) throw templateErrors.unknownOptions(what, unknown, known, among);
    };
    check('env', Object.keys(options.env ?? {}), [...new Set(fns.flatMap((f) => f.env_names))].sort());
    check('seed_tables', options.seed_tables, tables.map((t) => t.name));
    check('seed_end_user_rows', options.seed_end_user_rows, options.seed_tables ?? [], 'options.seed_tables');
    check('rag_documents', options.rag_documents, collections.rows.map((r) => r.name));
  }
}
