// The build job (frontend_build): the uploaded zip extracted safely into a private temp folder, its site root
// moved into place and published live, and the other deployments' files pruned as the account's plan says.
import { mkdir, rename, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { extractZip, findSiteRoot, ZipRejected } from './extract.ts';
import type { FrontendFiles } from './files.ts';
import type { DeploymentRecords, FrontendDb, FrontendTx } from './records.ts';
import type { SiteCache } from './sites.ts';
import type { DeploymentStatus } from './types.ts';

export interface BuilderDeps {
  db: FrontendDb;
  config: Config;
  log: Logger;
  records: DeploymentRecords;
  files: FrontendFiles;
  siteCache: SiteCache;
}

/** What extraction found: the files and bytes of the site. */
interface Extracted {
  files: number;
  bytes: number;
}

/** A publish either made the deployment live (pruning those ids' files) or found it no longer BUILDING. */
type Outcome = { published: true; pruned: string[] } | { published: false; status: DeploymentStatus | undefined };

export class Builder {
  readonly #deps: BuilderDeps;

  constructor(deps: BuilderDeps) {
    this.#deps = deps;
  }

  /**
   * The frontend_build task: extract the uploaded zip safely into a private temp folder, find the site root,
   * move it into place and publish it. A refused zip ends in ERROR (no retry: it would fail the same way);
   * an unexpected failure throws for graphile-worker to retry, and the last attempt records ERROR. Safe to
   * run twice, also at once (a worker wrongly declared gone): only one run publishes, under the row lock; a rerun
   * of a READY deployment only finishes the clean-up of a run that died after publishing; anything else is left alone.
   */
  async build(id: string, opts: { finalAttempt: boolean }): Promise<void> {
    const { records, files, config } = this.#deps;
    const row = await records.select().where('d.id', '=', id).executeTakeFirst();
    if (row?.status === 'READY' && row.has_site) return files.removeLeftovers(row.app_id, id);
    if (!row || row.status !== 'BUILDING') return;
    const appId = row.app_id;
    const tmp = path.join(files.dir(appId, id), `build-${randomBytes(8).toString('hex')}`);
    try {
      let extracted: Extracted;
      let siteRoot: string;
      try {
        await mkdir(tmp, { recursive: true });
        extracted = await extractZip(files.zipPath(appId, id), tmp, config.frontend);
        siteRoot = await findSiteRoot(tmp);
      } catch (err) {
        return await this.#failed(appId, id, err, opts.finalAttempt);
      }
      await this.#publish(appId, id, siteRoot, extracted);
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  }

  /** A failed extraction: ERROR when retrying cannot help (or no attempt is left), else thrown for a retry. */
  async #failed(appId: string, id: string, err: unknown, finalAttempt: boolean): Promise<void> {
    if (err instanceof ZipRejected) return this.#fail(appId, id, err.message);
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && !(await this.#stillBuilding(id))) return;
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      return this.#fail(appId, id, 'The uploaded zip is missing from the platform\'s data folder. Create a new deployment and upload again.');
    }
    if (finalAttempt) return this.#fail(appId, id, `The build failed: ${(err as Error).message}`);
    throw err;
  }

  async #stillBuilding(id: string): Promise<boolean> {
    const row = await this.#deps.db.selectFrom('frontend_deployments').select('status').where('id', '=', id).executeTakeFirst();
    return row?.status === 'BUILDING';
  }

  /** Files go first, so that whoever sees ERROR also sees nothing left of the deployment on disk. */
  async #fail(appId: string, id: string, error: string): Promise<void> {
    if (!(await this.#stillBuilding(id))) return;
    const { db, files, log } = this.#deps;
    await files.removeDeployment(appId, id);
    const failed = await db
      .updateTable('frontend_deployments')
      .set({ status: 'ERROR', error, updated_at: sql<Date>`clock_timestamp()` as never })
      .where('id', '=', id)
      .where('status', '=', 'BUILDING')
      .returning('id')
      .executeTakeFirst();
    if (failed) {
      log.info({ app_id: appId, deployment_id: id, error }, 'frontend deployment failed');
    }
  }

  /**
   * Moves the extracted site into place and, in one transaction under the deployment's row lock, marks it
   * READY and live. Free plan: every other deployment loses its files (history stays). Pro and enterprise:
   * they stay reachable at /sites/{app_id}/d/{id}/.
   */
  async #publish(appId: string, id: string, siteRoot: string, extracted: Extracted): Promise<void> {
    const { db, files, siteCache, log } = this.#deps;
    const outcome = await db.transaction().execute((tx) => this.#goLive(tx, appId, id, siteRoot, extracted));
    siteCache.evict(appId);
    if (!outcome.published) {
      // Canceled, failed or deleted while building: the work is discarded. READY: another run published it.
      if (outcome.status !== 'READY') await files.removeDeployment(appId, id);
      return;
    }
    await files.removeLeftovers(appId, id);
    for (const old of outcome.pruned) await files.removeDeployment(appId, old);
    log.info({ app_id: appId, deployment_id: id, files: extracted.files, pruned: outcome.pruned.length }, 'frontend deployment live');
  }

  /** The publish's transaction: the site moved into place and the rows updated, or nothing if no longer BUILDING. */
  async #goLive(tx: FrontendTx, appId: string, id: string, siteRoot: string, extracted: Extracted): Promise<Outcome> {
    // One publish per app at a time; NO KEY UPDATE does not block inserts that reference the app.
    await sql`select 1 from apps where id = ${appId} for no key update`.execute(tx);
    const cur = await this.#deps.records.lock(tx, appId, id);
    if (!cur || cur.status !== 'BUILDING') return { published: false, status: cur?.status };
    // Under the row lock: a second run of this build can never replace or remove the site the first published.
    const site = this.#deps.files.siteDir(appId, id);
    await rm(site, { recursive: true, force: true });
    await rename(siteRoot, site);
    const plan = (await sql<{ plan: string }>`select ac.plan from accounts ac join apps a on a.account_id = ac.id where a.id = ${appId}`.execute(tx)).rows[0]?.plan ?? 'free';
    await tx.updateTable('frontend_deployments').set({ live: false }).where('app_id', '=', appId).where('live', '=', true).execute();
    const pruned = plan === 'free' ? await unpublishOthers(tx, appId, id) : [];
    await tx
      .updateTable('frontend_deployments')
      .set({
        status: 'READY',
        live: true,
        has_site: true,
        error: null,
        file_count: extracted.files,
        unzipped_bytes: extracted.bytes,
        ready_at: sql<Date>`now()` as never,
        updated_at: sql<Date>`clock_timestamp()` as never,
      })
      .where('id', '=', id)
      .execute();
    return { published: true, pruned };
  }
}

/** Free plan: the app's other deployments lose their sites (their files go after the commit); the ids returned. */
async function unpublishOthers(tx: FrontendTx, appId: string, id: string): Promise<string[]> {
  const rows = await tx
    .updateTable('frontend_deployments')
    .set({ has_site: false })
    .where('app_id', '=', appId)
    .where('has_site', '=', true)
    .where('id', '!=', id)
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}
