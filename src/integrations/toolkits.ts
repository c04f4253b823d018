// The toolkits an app offers its end users (integration_toolkits), the redirect origins its owner allows
// (integration_settings), and the catalog an admin picks from (the curated list, or the vendor's search).
import { createHash } from 'node:crypto';
import { sql, type Selectable } from 'kysely';
import type { AppRecord } from '../apps/types.ts';
import type { ControlDatabase } from '../db/types.ts';
import { CURATED_TOOLKITS, isCurated } from './curated.ts';
import { normalizeOrigin } from './redirects.ts';
import { integrationErrors, iso, type AvailableToolkit, type ConfigView, type IntegrationsDeps } from './types.ts';
import { askVendor } from './vendor.ts';

export type EnabledToolkit = Selectable<ControlDatabase['integration_toolkits']>;

export interface ConfigureInput {
  toolkit: string;
  displayName: string;
  /** Omitted or null: the scopes the vendor manages for the toolkit. */
  scopes?: string[] | null | undefined;
  /** Given: replaces the app's redirect origins. */
  redirectOrigins?: string[] | undefined;
}

/** How many catalog entries a search returns. */
const SEARCH_LIMIT = 50;

export class Toolkits {
  readonly #d: IntegrationsDeps;

  constructor(deps: IntegrationsDeps) {
    this.#d = deps;
  }

  /** The curated toolkits, or (search) the vendor's catalog; each says whether this app enabled it. */
  async available(app: AppRecord, search: string | undefined): Promise<AvailableToolkit[]> {
    const enabled = new Set((await this.list(app.id)).map((t) => t.toolkit));
    if (search === undefined) return CURATED_TOOLKITS.map((t) => ({ ...t, curated: true, enabled: enabled.has(t.toolkit) }));
    const found = await askVendor(() => this.#d.vendor.listToolkits(search, SEARCH_LIMIT));
    return found.map((t) => ({ toolkit: t.slug, displayName: t.name, curated: isCurated(t.slug), description: t.description, enabled: enabled.has(t.slug) }));
  }

  async view(app: AppRecord): Promise<ConfigView> {
    const [rows, origins] = await Promise.all([this.list(app.id), this.redirectOrigins(app.id)]);
    return {
      integrations: rows.map((r) => ({ toolkit: r.toolkit, displayName: r.display_name, scopes: r.scopes, createdAt: iso(r.created_at), updatedAt: iso(r.updated_at) })),
      redirectOrigins: origins,
      appOrigin: this.appOrigin(app),
    };
  }

  /**
   * Enables (or re-configures) a toolkit. The vendor auth config is shared by every app of the platform that asks
   * for the same toolkit and scopes (found by its name, created when missing): end users stay apart by their
   * namespaced vendor user ids, so one OAuth set-up per scope set is enough.
   */
  async configure(app: AppRecord, input: ConfigureInput): Promise<ConfigView> {
    const scopes = input.scopes && input.scopes.length > 0 ? [...new Set(input.scopes)].sort() : null;
    const origins = input.redirectOrigins?.map(normalizeOrigin);
    const current = await this.enabled(app.id, input.toolkit);
    const authConfigId = current && sameScopes(current.scopes, scopes) ? current.auth_config_id : await this.#authConfig(input.toolkit, scopes);
    await this.#d.db.transaction().execute(async (tx) => {
      await tx
        .insertInto('integration_toolkits')
        .values({ app_id: app.id, toolkit: input.toolkit, display_name: input.displayName, scopes, auth_config_id: authConfigId })
        .onConflict((oc) =>
          oc.columns(['app_id', 'toolkit']).doUpdateSet({ display_name: input.displayName, scopes, auth_config_id: authConfigId, updated_at: sql`now()` }),
        )
        .execute();
      if (origins) {
        await tx
          .insertInto('integration_settings')
          .values({ app_id: app.id, redirect_origins: [...new Set(origins)] })
          .onConflict((oc) => oc.column('app_id').doUpdateSet({ redirect_origins: [...new Set(origins)], updated_at: sql`now()` }))
          .execute();
      }
    });
    return this.view(app);
  }

  /** Stops offering the toolkit: its connections stay (the user may still delete them) but can no longer execute. */
  async disable(appId: string, toolkit: string): Promise<void> {
    const removed = await this.#d.db.deleteFrom('integration_toolkits').where('app_id', '=', appId).where('toolkit', '=', toolkit).executeTakeFirst();
    if (removed.numDeletedRows === 0n) throw integrationErrors.toolkitNotEnabled(toolkit);
  }

  list(appId: string): Promise<EnabledToolkit[]> {
    return this.#d.db.selectFrom('integration_toolkits').selectAll().where('app_id', '=', appId).orderBy('created_at').orderBy('toolkit').execute();
  }

  enabled(appId: string, toolkit: string): Promise<EnabledToolkit | undefined> {
    return this.#d.db.selectFrom('integration_toolkits').selectAll().where('app_id', '=', appId).where('toolkit', '=', toolkit).executeTakeFirst();
  }

  async requireEnabled(appId: string, toolkit: string): Promise<EnabledToolkit> {
    const row = await this.enabled(appId, toolkit);
    if (!row) throw integrationErrors.toolkitNotEnabled(toolkit);
    return row;
  }

  async redirectOrigins(appId: string): Promise<string[]> {
    const row = await this.#d.db.selectFrom('integration_settings').select('redirect_origins').where('app_id', '=', appId).executeTakeFirst();
    return row?.redirect_origins ?? [];
  }

  /** The origin of the app's URL: its subdomain with subdomain routing, else the platform's (which serves /sites/{app_id}/). */
  appOrigin(app: AppRecord): string {
    return new URL(this.#d.apps.view(app).url).origin;
  }

  /** The platform's auth config for this toolkit and scope set: reused by name, created once. */
  async #authConfig(toolkit: string, scopes: string[] | null): Promise<string> {
    const vendor = this.#d.vendor;
    return askVendor(async () => {
      if (!(await vendor.getToolkit(toolkit))) throw integrationErrors.toolkitNotFound(toolkit);
      const name = authConfigName(toolkit, scopes);
      return (await vendor.findAuthConfig(toolkit, name)) ?? (await vendor.createAuthConfig(toolkit, name, scopes));
    });
  }
}

/** A stable name per toolkit and scope set, so that the same request finds the same auth config again. */
export function authConfigName(toolkit: string, scopes: readonly string[] | null): string {
  if (!scopes) return `svc ${toolkit} managed`;
  return `svc ${toolkit} ${createHash('sha256').update(scopes.join(' ')).digest('hex').slice(0, 12)}`;
}

function sameScopes(a: readonly string[] | null, b: readonly string[] | null): boolean {
  return (a ?? []).join(' ') === (b ?? []).join(' ');
}
