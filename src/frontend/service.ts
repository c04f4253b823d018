// The frontend area's facade: what the rest of the platform calls (tools, the raw upload and site routes, the
// build job, the app purge). The work is in its parts, which share the database, config, logger and site cache
// only through their constructors: deployments.ts, uploads.ts, build.ts, sites.ts, env.ts (with records.ts for
// the deployment row and files.ts for the layout on disk).
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { SecretBox } from '../core/crypto.ts';
import type { ControlDatabase } from '../db/types.ts';
import type { AppPurger } from '../apps/types.ts';
import { Builder } from './build.ts';
import { Deployments, type CreatedDeployment, type SyncAction } from './deployments.ts';
import { FrontendEnv } from './env.ts';
import { FrontendFiles } from './files.ts';
import { DeploymentRecords } from './records.ts';
import { SiteCache, Sites, siteUrl, type Site } from './sites.ts';
import type { DeploymentView, Framework, PlatformEnv } from './types.ts';
import { Uploads, type IncomingZip } from './uploads.ts';

export type { CreatedDeployment, IncomingZip, Site, SyncAction };

export interface FrontendServiceDeps {
  db: Kysely<ControlDatabase>;
  box: SecretBox;
  /** The platform master key; the upload-URL signing key is derived from it (HKDF), never the key itself. */
  masterKey: Buffer;
  config: Config;
  log: Logger;
}

/**
 * Frontend deployments: signed zip uploads, the build job (safe extraction and publishing), the live-site
 * pointer per app and plan, and the frontend environment (sealed at rest). Files live under
 * <SVC_DATA_DIR>/frontend/<app_id>/<deployment_id>/: upload.zip until the build ends, then site/.
 */
export class FrontendService implements AppPurger {
  readonly #config: Config;
  readonly #files: FrontendFiles;
  readonly #siteCache = new SiteCache();
  readonly #deployments: Deployments;
  readonly #uploads: Uploads;
  readonly #builder: Builder;
  readonly #sites: Sites;
  readonly #env: FrontendEnv;

  constructor({ db: control, box, masterKey, config, log }: FrontendServiceDeps) {
    const db = control;
    const files = new FrontendFiles(config.dataDir);
    const records = new DeploymentRecords({ db });
    const siteCache = this.#siteCache;
    this.#config = config;
    this.#files = files;
    this.#uploads = new Uploads({ db, masterKey, config, log, records, files });
    this.#deployments = new Deployments({ db, config, log, records, files, uploads: this.#uploads, siteCache });
    this.#builder = new Builder({ db, config, log, records, files, siteCache });
    this.#sites = new Sites({ db, files, cache: siteCache });
    this.#env = new FrontendEnv({ db, box, config });
  }

  // ---- paths and URLs ----------------------------------------------------------------------------------

  zipPath(appId: string, id: string): string {
    return this.#files.zipPath(appId, id);
  }

  siteDir(appId: string, id: string): string {
    return this.#files.siteDir(appId, id);
  }

  /** The live site's address: the app's own host with subdomain routing, else {base_url}/sites/{app_id}/. */
  siteUrl(appId: string, subdomain: string): string {
    return siteUrl(this.#config, appId, subdomain);
  }

  // ---- deployments -------------------------------------------------------------------------------------

  create(appId: string, framework: Framework): Promise<CreatedDeployment> {
    return this.#deployments.create(appId, framework);
  }

  list(appId: string, limit?: number): Promise<DeploymentView[]> {
    return this.#deployments.list(appId, limit);
  }

  get(appId: string, id: string): Promise<DeploymentView> {
    return this.#deployments.get(appId, id);
  }

  deployFiles(appId: string, framework: Framework, files: readonly { path: string; bytes: Buffer }[]): Promise<DeploymentView> {
    return this.#deployments.deployFiles(appId, framework, files);
  }

  start(appId: string, id: string): Promise<DeploymentView> {
    return this.#deployments.start(appId, id);
  }

  sync(appId: string, id: string): Promise<{ deployment: DeploymentView; action: SyncAction }> {
    return this.#deployments.sync(appId, id);
  }

  cancel(appId: string, id: string): Promise<DeploymentView> {
    return this.#deployments.cancel(appId, id);
  }

  delete(appId: string, id: string): Promise<{ deleted: true; id: string; was_live: boolean }> {
    return this.#deployments.delete(appId, id);
  }

  promote(appId: string, id: string): Promise<DeploymentView> {
    return this.#deployments.promote(appId, id);
  }

  /** AppPurger: an app's deleted, so are its sites and uploads (the rows went with the app by cascade). */
  async purgeApp(appId: string): Promise<void> {
    this.#siteCache.evict(appId);
    await this.#files.removeApp(appId);
  }

  // ---- upload, build, serving, environment --------------------------------------------------------------

  receiveUpload(u: IncomingZip): Promise<DeploymentView> {
    return this.#uploads.receive(u);
  }

  build(id: string, opts: { finalAttempt: boolean }): Promise<void> {
    return this.#builder.build(id, opts);
  }

  site(appId: string, deploymentId?: string): Promise<Site | undefined> {
    return this.#sites.site(appId, deploymentId);
  }

  setEnv(appId: string, env: Record<string, string>): Promise<{ keys: string[]; updated_at: string }> {
    return this.#env.set(appId, env);
  }

  envKeys(appId: string): Promise<string[]> {
    return this.#env.keys(appId);
  }

  publicEnv(appId: string): Promise<Record<string, string>> {
    return this.#env.public(appId);
  }

  /** The SVC_ values every site of the app gets in window.__ENV__, for deploy results to name. */
  platformEnv(appId: string): Promise<PlatformEnv> {
    return this.#env.platform(appId);
  }
}
