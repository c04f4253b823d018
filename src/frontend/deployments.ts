// Deployments: their lifecycle and history (create, list, get, start, sync, cancel, delete), and a deployment made
// in one call from a map of files. The build job the start enqueues is in build.ts, the zip's arrival in uploads.ts.
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { enqueue } from '../core/jobs.ts';
import { releaseGoneWorkers } from '../jobs/liveness.ts';
import type { FrontendFiles } from './files.ts';
import { frontendBuild } from './jobs.ts';
import { deploymentView, stateError, type DeploymentRecords, type FrontendDb, type FrontendTx } from './records.ts';
import type { SiteCache } from './sites.ts';
import { UPLOAD_URL_TTL_SECONDS, type DeploymentStatus, type DeploymentView, type Framework } from './types.ts';
import { zipOfFiles, type Uploads } from './uploads.ts';

export interface CreatedDeployment {
  id: string;
  uploadUrl: string;
  expiresIn: number;
  maxSizeBytes: number;
  status: DeploymentStatus;
}

/** What sync did: nothing to do, expired a WAITING upload, re-enqueued a lost build job (or released one a stopped worker held), or failed a dead build. */
export type SyncAction = 'none' | 'expired' | 'requeued' | 'failed';

export interface DeploymentsDeps {
  db: FrontendDb;
  config: Config;
  log: Logger;
  records: DeploymentRecords;
  files: FrontendFiles;
  uploads: Uploads;
  siteCache: SiteCache;
}

const ACTIVE: readonly DeploymentStatus[] = ['WAITING', 'UPLOADING', 'BUILDING'];

const jobKey = (id: string) => `${frontendBuild.name}:${id}`;

export class Deployments {
  readonly #deps: DeploymentsDeps;

  constructor(deps: DeploymentsDeps) {
    this.#deps = deps;
  }

  async create(appId: string, framework: Framework): Promise<CreatedDeployment> {
    const { db, config, log, uploads } = this.#deps;
    const expires = Math.floor(Date.now() / 1000) + UPLOAD_URL_TTL_SECONDS;
    const row = await db
      .insertInto('frontend_deployments')
      .values({ app_id: appId, framework, upload_expires_at: new Date(expires * 1000) })
      .returning(['id', 'status'])
      .executeTakeFirstOrThrow();
    const uploadUrl = uploads.url(appId, row.id, expires);
    log.info({ app_id: appId, deployment_id: row.id, framework }, 'frontend deployment created');
    return { id: row.id, uploadUrl, expiresIn: UPLOAD_URL_TTL_SECONDS, maxSizeBytes: config.frontend.maxZipBytes, status: row.status };
  }

  async list(appId: string, limit = 50): Promise<DeploymentView[]> {
    const { records, config } = this.#deps;
    const rows = await records.select().where('d.app_id', '=', appId).orderBy('d.created_at', 'desc').orderBy('d.id', 'desc').limit(limit).execute();
    return rows.map((r) => deploymentView(r, config));
  }

  async get(appId: string, id: string): Promise<DeploymentView> {
    const { records, config } = this.#deps;
    return deploymentView(await records.row(appId, id), config);
  }

  /**
   * A deployment from a map of files, for callers that cannot PUT a zip: the files become a zip, which then
   * takes the path of an uploaded one (create, accept, start; the build job extracts it with every check of
   * extractZip and publishes it). Paths, count and sizes are checked first with the same rules, so a refused
   * map is a 400 and creates nothing.
   */
  async deployFiles(appId: string, framework: Framework, files: readonly { path: string; bytes: Buffer }[]): Promise<DeploymentView> {
    const zip = zipOfFiles(files, this.#deps.config.frontend);
    const created = await this.create(appId, framework);
    try {
      await this.#deps.uploads.acceptZip(appId, created.id, zip);
      return await this.start(appId, created.id);
    } catch (err) {
      await this.delete(appId, created.id).catch(() => {});
      throw err;
    }
  }

  /** UPLOADING -> BUILDING, with the build job enqueued in the same transaction (it survives a restart). */
  async start(appId: string, id: string): Promise<DeploymentView> {
    const { db, config, records } = this.#deps;
    return db.transaction().execute(async (tx) => {
      const row = await records.locked(tx, appId, id);
      if (row.status === 'WAITING') {
        throw stateError(row.status, `Deployment ${id} has no zip yet (status WAITING); start needs the upload first.`,
          'PUT the zip to the uploadUrl with Content-Type: application/zip, then call start again.');
      }
      if (row.status !== 'UPLOADING') {
        throw stateError(row.status, `Deployment ${id} is ${row.status}; only an UPLOADING deployment (zip received) can be started, once.`,
          row.status === 'BUILDING' ? 'Poll frontend_deploy_get until READY or ERROR.' : 'Create a new deployment with frontend_deploy_create.');
      }
      await tx.updateTable('frontend_deployments').set({ status: 'BUILDING', updated_at: sql<Date>`clock_timestamp()` as never }).where('id', '=', id).execute();
      await this.#enqueue(tx, id);
      return deploymentView({ ...row, status: 'BUILDING', updated_at: new Date() }, config);
    });
  }

  async #enqueue(tx: FrontendTx, id: string): Promise<void> {
    await enqueue(tx, frontendBuild, { deployment_id: id }, { jobKey: jobKey(id) });
  }

  /**
   * Reconciles a deployment with what really happened: a WAITING one whose upload URL expired becomes ERROR;
   * a BUILDING one whose job is gone (lost queue, wiped database) is re-enqueued; one whose job is held by a
   * worker that stopped (no heartbeat for SVC_WORKER_STALE_AFTER_SECONDS) has it released to run again; one
   * whose job used up its attempts becomes ERROR with the job's last error. Anything else is returned unchanged.
   */
  async sync(appId: string, id: string): Promise<{ deployment: DeploymentView; action: SyncAction }> {
    const { db, records, files } = this.#deps;
    const action = await db.transaction().execute(async (tx): Promise<SyncAction> => {
      const row = await records.locked(tx, appId, id);
      if (row.status === 'WAITING' && new Date(row.upload_expires_at).getTime() <= Date.now()) {
        await this.#setError(tx, id, 'The upload URL expired before a zip arrived. Create a new deployment.');
        return 'expired';
      }
      return row.status === 'BUILDING' ? this.#syncBuild(tx, id) : 'none';
    });
    if (action === 'expired' || action === 'failed') await files.removeDeployment(appId, id);
    return { deployment: await this.get(appId, id), action };
  }

  /** A BUILDING deployment against its job: failed for good, lost or held by a stopped worker (requeued), or fine. */
  async #syncBuild(tx: FrontendTx, id: string): Promise<SyncAction> {
    const job = (await sql<{ attempts: number; max_attempts: number; last_error: string | null; locked_at: Date | null }>`
      select attempts, max_attempts, last_error, locked_at from graphile_worker.jobs where key = ${jobKey(id)}`.execute(tx)).rows[0];
    const released = job?.locked_at != null && (await releaseGoneWorkers(tx, this.#deps.config.workerStaleAfterSeconds, jobKey(id))).length > 0;
    if (job && job.attempts >= job.max_attempts && (!job.locked_at || released)) {
      const cause = released ? 'the worker running its last attempt stopped' : (job.last_error?.split('\n')[0] ?? 'unknown error');
      await this.#setError(tx, id, `The build failed: ${cause}`.slice(0, 1000));
      await removeJob(tx, id);
      return 'failed';
    }
    if (!job || released) {
      if (!job) await this.#enqueue(tx, id);
      await tx.updateTable('frontend_deployments').set({ updated_at: sql<Date>`clock_timestamp()` as never }).where('id', '=', id).execute();
      return 'requeued';
    }
    return 'none';
  }

  async #setError(tx: FrontendTx, id: string, error: string): Promise<void> {
    await tx
      .updateTable('frontend_deployments')
      .set({ status: 'ERROR', error, live: false, has_site: false, updated_at: sql<Date>`clock_timestamp()` as never })
      .where('id', '=', id)
      .execute();
  }

  /** WAITING, UPLOADING or BUILDING -> CANCELED; its files go, a queued build is dropped (a running one discards its work). */
  async cancel(appId: string, id: string): Promise<DeploymentView> {
    const { db, records, files } = this.#deps;
    await db.transaction().execute(async (tx) => {
      const row = await records.locked(tx, appId, id);
      if (!ACTIVE.includes(row.status)) {
        throw stateError(row.status, `Deployment ${id} is ${row.status}; only WAITING, UPLOADING or BUILDING deployments can be canceled.`,
          row.status === 'READY' ? 'To take a READY site down, delete the deployment with frontend_deploy_delete.' : 'Nothing to cancel.');
      }
      await tx.updateTable('frontend_deployments').set({ status: 'CANCELED', updated_at: sql<Date>`clock_timestamp()` as never }).where('id', '=', id).execute();
      await removeJob(tx, id);
    });
    await files.removeDeployment(appId, id);
    return this.get(appId, id);
  }

  /**
   * Makes a READY deployment whose files are kept the live site (a rollback, or forward again); the live one stays
   * READY and reachable by id where the plan keeps files. Under the same app lock as a publish, so the two never race.
   */
  async promote(appId: string, id: string): Promise<DeploymentView> {
    const { db, records, siteCache, log } = this.#deps;
    await db.transaction().execute(async (tx) => {
      await sql`select 1 from apps where id = ${appId} for no key update`.execute(tx);
      const row = await records.locked(tx, appId, id);
      if (row.status !== 'READY') throw stateError(row.status, `Deployment ${id} is ${row.status}; only a READY deployment can be made live.`, 'List the deployments with frontend_deploy_list and pick a READY one.');
      if (!row.has_site) {
        throw stateError(row.status, `Deployment ${id} no longer has its files (the free plan keeps only the live deployment's).`, 'Deploy the site again, or upgrade to keep earlier deployments.');
      }
      if (row.live) return;
      await tx.updateTable('frontend_deployments').set({ live: false }).where('app_id', '=', appId).where('live', '=', true).execute();
      await tx.updateTable('frontend_deployments').set({ live: true, updated_at: sql<Date>`clock_timestamp()` as never }).where('id', '=', id).execute();
    });
    siteCache.evict(appId);
    log.info({ app_id: appId, deployment_id: id }, 'frontend deployment promoted');
    return this.get(appId, id);
  }

  /** Removes the record and its files in any state; deleting the live deployment takes the site down. */
  async delete(appId: string, id: string): Promise<{ deleted: true; id: string; was_live: boolean }> {
    const { db, records, files, siteCache, log } = this.#deps;
    const wasLive = await db.transaction().execute(async (tx) => {
      const row = await records.locked(tx, appId, id);
      await tx.deleteFrom('frontend_deployments').where('id', '=', id).execute();
      await removeJob(tx, id);
      return row.live;
    });
    siteCache.evict(appId);
    await files.removeDeployment(appId, id);
    log.info({ app_id: appId, deployment_id: id, was_live: wasLive }, 'frontend deployment deleted');
    return { deleted: true, id, was_live: wasLive };
  }
}

/** Drops the deployment's build job if it is queued; a running one finds the deployment no longer BUILDING. */
async function removeJob(tx: FrontendTx, id: string): Promise<void> {
  await sql`select graphile_worker.remove_job(${jobKey(id)}::text)`.execute(tx);
}
