// Site lookup: which folder serves an app (its live deployment, or a kept READY one by id), behind a short
// per-process cache that publishing and deleting evict; and the address a live site is reached at.
import type { Kysely } from 'kysely';
import type { Config } from '../config.ts';
import { appHostUrl } from '../apps/hosts.ts';
import type { ControlDatabase } from '../db/types.ts';
import { isAppId, isDeploymentId, type FrontendFiles } from './files.ts';
import type { Framework } from './types.ts';

/** A servable site: the folder of a READY deployment whose files are on disk. */
export interface Site {
  deploymentId: string;
  framework: Framework;
  root: string;
}

/** Live-site lookups are cached this long; a publish or delete in this process evicts at once. */
const SITE_CACHE_TTL_MS = 1000;
const SITE_CACHE_MAX = 5000;

/** The live site's address: the app's own host with subdomain routing, else {base_url}/sites/{app_id}/. */
export function siteUrl(config: Pick<Config, 'baseUrl' | 'baseDomain'>, appId: string, subdomain: string): string {
  const host = appHostUrl(config, subdomain);
  return host ? `${host}/` : `${config.baseUrl}/sites/${appId}/`;
}

/** The live site per app, a second at most: serving asks for it on every request. */
export class SiteCache {
  readonly #entries = new Map<string, { site: Site | undefined; expiresMs: number }>();

  /** A fresh entry, wrapped so that a cached "no site" differs from a miss. */
  get(appId: string): { site: Site | undefined } | undefined {
    const hit = this.#entries.get(appId);
    return hit && hit.expiresMs > Date.now() ? hit : undefined;
  }

  set(appId: string, site: Site | undefined): void {
    if (this.#entries.size >= SITE_CACHE_MAX) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(appId, { site, expiresMs: Date.now() + SITE_CACHE_TTL_MS });
  }

  evict(appId: string): void {
    this.#entries.delete(appId);
  }
}

export interface SitesDeps {
  db: Kysely<ControlDatabase>;
  files: FrontendFiles;
  cache: SiteCache;
}

export class Sites {
  readonly #deps: SitesDeps;

  constructor(deps: SitesDeps) {
    this.#deps = deps;
  }

  /** The live site of an app, or with deploymentId that READY deployment if its files are kept (pro). */
  async site(appId: string, deploymentId?: string): Promise<Site | undefined> {
    if (!isAppId(appId)) return undefined;
    if (deploymentId !== undefined) return isDeploymentId(deploymentId) ? this.#kept(appId, deploymentId) : undefined;
    const { cache } = this.#deps;
    const hit = cache.get(appId);
    if (hit) return hit.site;
    const site = await this.#live(appId);
    cache.set(appId, site);
    return site;
  }

  async #kept(appId: string, deploymentId: string): Promise<Site | undefined> {
    const row = await this.#deps.db
      .selectFrom('frontend_deployments')
      .select(['id', 'framework'])
      .where('id', '=', deploymentId)
      .where('app_id', '=', appId)
      .where('has_site', '=', true)
      .executeTakeFirst();
    return row && this.#site(appId, row);
  }

  async #live(appId: string): Promise<Site | undefined> {
    const row = await this.#deps.db
      .selectFrom('frontend_deployments')
      .select(['id', 'framework'])
      .where('app_id', '=', appId)
      .where('live', '=', true)
      .executeTakeFirst();
    return row && this.#site(appId, row);
  }

  #site(appId: string, row: { id: string; framework: Framework }): Site {
    return { deploymentId: row.id, framework: row.framework, root: this.#deps.files.siteDir(appId, row.id) };
  }
}
