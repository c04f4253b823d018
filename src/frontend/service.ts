import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { SecretBox } from '../core/crypto.ts';
import { AppError, errors } from '../core/errors.ts';
import type { ControlDatabase } from '../db/types.ts';
import type { AppPurger } from '../apps/types.ts';
import { releaseGoneWorkers } from '../jobs/liveness.ts';
import { entrySegments, extractZip, findSiteRoot, ZipRejected } from './extract.ts';
import { storedZip } from './zip.ts';
import { deriveKey, UploadSigner } from './signing.ts';
import {
  ENV_RESERVED_PREFIX,
  UPLOAD_URL_TTL_SECONDS,
  type DeploymentStatus,
  type DeploymentView,
  type Framework,
  type FrontendTables,
} from './types.ts';
import { enqueue } from '../core/jobs.ts';
import { frontendBuild } from './jobs.ts';

type Db = Kysely<ControlDatabase & FrontendTables>;
type Tx = Transaction<ControlDatabase & FrontendTables>;

export interface FrontendServiceDeps {
  db: Kysely<ControlDatabase>;
  box: SecretBox;
  /** The platform master key; the upload-URL signing key is derived from it (HKDF), never the key itself. */
  masterKey: Buffer;
  config: Config;
  log: Logger;
}

export interface CreatedDeployment {
  id: string;
  uploadUrl: string;
  expiresIn: number;
  maxSizeBytes: number;
  status: DeploymentStatus;
}

export interface IncomingZip {
  appId: string;
  deploymentId: string;
  /** Query parameters of the upload URL, unparsed. */
  expires: unknown;
  signature: unknown;
  contentType: string | undefined;
  contentLength: string | undefined;
  body: Readable;
}

/** What sync did: nothing to do, expired a WAITING upload, re-enqueued a lost build job (or released one a stopped worker held), or failed a dead build. */
export type SyncAction = 'none' | 'expired' | 'requeued' | 'failed';

/** A servable site: the folder of a READY deployment whose files are on disk. */
export interface Site {
  deploymentId: string;
  framework: Framework;
  root: string;
}

const APP_ID = /^[a-z0-9]{16}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Live-site lookups are cached this long; a publish or delete in this process evicts at once. */
const SITE_CACHE_TTL_MS = 1000;
const SITE_CACHE_MAX = 5000;

const ACTIVE: readonly DeploymentStatus[] = ['WAITING', 'UPLOADING', 'BUILDING'];

const jobKey = (id: string) => `${frontendBuild.name}:${id}`;

function stateError(status: DeploymentStatus, message: string, remediation: string): AppError {
  return new AppError(409, 'INVALID_DEPLOYMENT_STATE', message, remediation, { status });
}

function notFound(id: string): AppError {
  return errors.notFound(`Frontend deployment '${id}'`, 'List the deployments with frontend_deploy_list (GET /v1/{app_id}/frontend/deployments).');
}

/**
 * Frontend deployments: signed zip uploads, the build job (safe extraction and publishing), the live-site
 * pointer per app and plan, and the frontend environment (sealed at rest). Files live under
 * <SVC_DATA_DIR>/frontend/<app_id>/<deployment_id>/: upload.zip until the build ends, then site/.
 */
export class FrontendService implements AppPurger {
  readonly #db: Db;
  readonly #box: SecretBox;
  readonly #signer: UploadSigner;
  readonly #config: Config;
  readonly #log: Logger;
  readonly #root: string;
  readonly #siteCache = new Map<string, { site: Site | undefined; expiresMs: number }>();

  constructor(deps: FrontendServiceDeps) {
    this.#db = deps.db.withTables<FrontendTables>();
    this.#box = deps.box;
    this.#signer = new UploadSigner(deriveKey(deps.masterKey, 'frontend-upload-url'));
    this.#config = deps.config;
    this.#log = deps.log;
    this.#root = path.join(deps.config.dataDir, 'frontend');
  }

  // ---- paths -------------------------------------------------------------------------------------------

  /** Built from validated ids only, never from user-supplied names. */
  #appDir(appId: string): string {
    if (!APP_ID.test(appId)) throw new Error(`not an app id: ${appId}`);
    return path.join(this.#root, appId);
  }

  #dir(appId: string, id: string): string {
    if (!UUID.test(id)) throw new Error(`not a deployment id: ${id}`);
    return path.join(this.#appDir(appId), id);
  }

  zipPath(appId: string, id: string): string {
    return path.join(this.#dir(appId, id), 'upload.zip');
  }

  siteDir(appId: string, id: string): string {
    return path.join(this.#dir(appId, id), 'site');
  }

  // ---- URLs --------------------------------------------------------------------------------------------

  /** The live site's address: the app's own host with subdomain routing, else {base_url}/sites/{app_id}/. */
  siteUrl(appId: string, subdomain: string): string {
    const { baseUrl, baseDomain } = this.#config;
    if (baseDomain) return `${new URL(baseUrl).protocol}//${subdomain}.${baseDomain}/`;
    return `${baseUrl}/sites/${appId}/`;
  }

  #view(row: DeploymentRow): DeploymentView {
    const { baseUrl } = this.#config;
    const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());
    const num = (v: string | number | null) => (v === null ? null : Number(v));
    return {
      id: row.id,
      app_id: row.app_id,
      framework: row.framework,
      status: row.status,
      error: row.error,
      size_bytes: num(row.size_bytes),
      unzipped_bytes: num(row.unzipped_bytes),
      file_count: row.file_count,
      live: row.live,
      url: row.live ? this.siteUrl(row.app_id, row.subdomain) : row.has_site ? `${baseUrl}/sites/${row.app_id}/d/${row.id}/` : null,
      created_at: iso(row.created_at)!,
      updated_at: iso(row.updated_at)!,
      uploaded_at: iso(row.uploaded_at),
      ready_at: iso(row.ready_at),
    };
  }

  #select(db: Db | Tx = this.#db) {
    return db
      .selectFrom('frontend_deployments as d')
      .innerJoin('apps as a', 'a.id', 'd.app_id')
      .selectAll('d')
      .select('a.subdomain');
  }

  async #row(appId: string, id: string, db: Db | Tx = this.#db): Promise<DeploymentRow> {
    const row = await this.#select(db).where('d.id', '=', id).where('d.app_id', '=', appId).executeTakeFirst();
    if (!row) throw notFound(id);
    return row as DeploymentRow;
  }

  /** Locks the deployment row for the rest of the transaction. */
  async #lock(tx: Tx, appId: string, id: string): Promise<DeploymentRow | undefined> {
    const row = await this.#select(tx).where('d.id', '=', id).where('d.app_id', '=', appId).forUpdate('d').executeTakeFirst();
    return row as DeploymentRow | undefined;
  }

  // ---- the tools ---------------------------------------------------------------------------------------

  async create(appId: string, framework: Framework): Promise<CreatedDeployment> {
    const expires = Math.floor(Date.now() / 1000) + UPLOAD_URL_TTL_SECONDS;
    const row = await this.#db
      .insertInto('frontend_deployments')
      .values({ app_id: appId, framework, upload_expires_at: new Date(expires * 1000) })
      .returning(['id', 'status'])
      .executeTakeFirstOrThrow();
    const signature = this.#signer.sign(appId, row.id, expires);
    const uploadUrl = `${this.#config.baseUrl}/v1/${appId}/frontend/deployments/${row.id}/upload?expires=${expires}&signature=${signature}`;
    this.#log.info({ app_id: appId, deployment_id: row.id, framework }, 'frontend deployment created');
    return { id: row.id, uploadUrl, expiresIn: UPLOAD_URL_TTL_SECONDS, maxSizeBytes: this.#config.frontend.maxZipBytes, status: row.status };
  }

  async list(appId: string, limit = 50): Promise<DeploymentView[]> {
    const rows = await this.#select().where('d.app_id', '=', appId).orderBy('d.created_at', 'desc').orderBy('d.id', 'desc').limit(limit).execute();
    return rows.map((r) => this.#view(r as DeploymentRow));
  }

  async get(appId: string, id: string): Promise<DeploymentView> {
    return this.#view(await this.#row(appId, id));
  }

  /**
   * The signed PUT of the zip. Checks, in order: signature (403), expiry (403), deployment (404), status
   * WAITING (409), Content-Type application/zip (415), declared length (413); then streams to a private
   * part file, stopping at maxZipBytes (413), checks the zip signature bytes (400) and moves it into place
   * under the row lock. Nothing partial stays on disk.
   */
  async receiveUpload(u: IncomingZip): Promise<DeploymentView> {
    if (!APP_ID.test(u.appId) || !UUID.test(u.deploymentId)) throw uploadUrlInvalid();
    const check = this.#signer.verify(u.appId, u.deploymentId, u.expires, u.signature);
    if (check === 'invalid') throw uploadUrlInvalid();
    if (check === 'expired') {
      throw new AppError(403, 'UPLOAD_URL_EXPIRED', `The upload URL expired (it is valid for ${UPLOAD_URL_TTL_SECONDS} seconds).`,
        'Create a new deployment with frontend_deploy_create for a fresh uploadUrl.');
    }
    const row = await this.#row(u.appId, u.deploymentId);
    if (row.status !== 'WAITING') {
      throw stateError(row.status, `Deployment ${row.id} is ${row.status}; a zip can be uploaded only while it is WAITING (once per deployment).`,
        'Create a new deployment with frontend_deploy_create to upload another zip.');
    }
    const type = (u.contentType ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/zip') {
      throw new AppError(415, 'UNSUPPORTED_MEDIA_TYPE', `The upload must be sent with Content-Type: application/zip (got '${type || 'none'}').`,
        'PUT the zip file with the header Content-Type: application/zip.');
    }
    const max = this.#config.frontend.maxZipBytes;
    if (u.contentLength !== undefined && Number(u.contentLength) > max) throw zipTooLarge(max);

    const part = await this.#partFile(u.appId, u.deploymentId);
    try {
      const size = await receiveLimited(u.body, part, max);
      return await this.#accept(u.appId, u.deploymentId, part, size);
    } finally {
      await rm(part, { force: true });
    }
  }

  async #partFile(appId: string, id: string): Promise<string> {
    const dir = this.#dir(appId, id);
    await mkdir(dir, { recursive: true });
    return path.join(dir, `upload-${randomBytes(8).toString('hex')}.part`);
  }

  /** A complete zip in its part file becomes the deployment's upload (WAITING -> UPLOADING), under the row lock. */
  async #accept(appId: string, id: string, part: string, size: number): Promise<DeploymentView> {
    return this.#db.transaction().execute(async (tx) => {
      const cur = await this.#lock(tx, appId, id);
      if (!cur) throw notFound(id);
      if (cur.status !== 'WAITING') {
        throw stateError(cur.status, `Deployment ${cur.id} is ${cur.status}; a zip can be uploaded only while it is WAITING.`,
          'Create a new deployment with frontend_deploy_create to upload another zip.');
      }
      await rename(part, this.zipPath(appId, id));
      await tx
        .updateTable('frontend_deployments')
        .set({ status: 'UPLOADING', size_bytes: size, uploaded_at: sql<Date>`now()` as never, updated_at: sql<Date>`clock_timestamp()` as never })
        .where('id', '=', id)
        .execute();
      this.#log.info({ app_id: appId, deployment_id: id, size_bytes: size }, 'frontend zip received');
      return this.#view({ ...cur, status: 'UPLOADING', size_bytes: String(size), uploaded_at: new Date(), updated_at: new Date() });
    });
  }

  /**
   * A deployment from a map of files, for callers that cannot PUT a zip: the files become a zip, which then
   * takes the path of an uploaded one (create, accept, start; the build job extracts it with every check of
   * extractZip and publishes it). Paths, count and sizes are checked first with the same rules, so a refused
   * map is a 400 and creates nothing.
   */
  async deployFiles(appId: string, framework: Framework, files: readonly { path: string; bytes: Buffer }[]): Promise<DeploymentView> {
    const { maxFiles, maxUnzippedBytes, maxZipBytes } = this.#config.frontend;
    const refuse = (message: string, field = 'files') => errors.validation(message, [{ path: field, message }]);
    if (files.length === 0) throw refuse('files is empty; a site needs at least index.html.');
    if (files.length > maxFiles) throw refuse(`files has ${files.length} entries; at most ${maxFiles} are allowed (SVC_FRONTEND_MAX_FILES).`);
    const seen = new Set<string>();
    const entries = files.map((f) => {
      let name: string;
      try {
        name = entrySegments(f.path).join('/');
      } catch (err) {
        if (err instanceof ZipRejected) throw refuse(err.message.replace('The zip contains', 'files contains'), `files.${f.path}`);
        throw err;
      }
      if (seen.has(name)) throw refuse(`files names '${name}' twice (paths are compared after removing '.' and empty segments).`, `files.${f.path}`);
      seen.add(name);
      return { name, bytes: f.bytes };
    });
    const total = entries.reduce((n, e) => n + e.bytes.length, 0);
    if (total > maxUnzippedBytes) throw refuse(`The files add up to ${total} bytes; a site may hold at most ${maxUnzippedBytes} (SVC_FRONTEND_MAX_UNZIPPED_BYTES).`);
    const zip = storedZip(entries);
    if (zip.length > maxZipBytes) throw zipTooLarge(maxZipBytes);

    const created = await this.create(appId, framework);
    try {
      const part = await this.#partFile(appId, created.id);
      try {
        await writeFile(part, zip, { flag: 'wx', mode: 0o600 });
        await this.#accept(appId, created.id, part, zip.length);
      } finally {
        await rm(part, { force: true });
      }
      return await this.start(appId, created.id);
    } catch (err) {
      await this.delete(appId, created.id).catch(() => {});
      throw err;
    }
  }

  /** UPLOADING -> BUILDING, with the build job enqueued in the same transaction (it survives a restart). */
  async start(appId: string, id: string): Promise<DeploymentView> {
    return this.#db.transaction().execute(async (tx) => {
      const row = await this.#lock(tx, appId, id);
      if (!row) throw notFound(id);
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
      return this.#view({ ...row, status: 'BUILDING', updated_at: new Date() });
    });
  }

  async #enqueue(tx: Tx, id: string): Promise<void> {
    await enqueue(tx, frontendBuild, { deployment_id: id }, { jobKey: jobKey(id) });
  }

  /**
   * Reconciles a deployment with what really happened: a WAITING one whose upload URL expired becomes ERROR;
   * a BUILDING one whose job is gone (lost queue, wiped database) is re-enqueued; one whose job is held by a
   * worker that stopped (no heartbeat for SVC_WORKER_STALE_AFTER_SECONDS) has it released to run again; one
   * whose job used up its attempts becomes ERROR with the job's last error. Anything else is returned unchanged.
   */
  async sync(appId: string, id: string): Promise<{ deployment: DeploymentView; action: SyncAction }> {
    const result = await this.#db.transaction().execute(async (tx) => {
      const row = await this.#lock(tx, appId, id);
      if (!row) throw notFound(id);
      if (row.status === 'WAITING' && new Date(row.upload_expires_at).getTime() <= Date.now()) {
        await this.#setError(tx, id, 'The upload URL expired before a zip arrived. Create a new deployment.');
        return { action: 'expired' as const };
      }
      if (row.status === 'BUILDING') {
        const job = (await sql<{ attempts: number; max_attempts: number; last_error: string | null; locked_at: Date | null }>`
          select attempts, max_attempts, last_error, locked_at from graphile_worker.jobs where key = ${jobKey(id)}`.execute(tx)).rows[0];
        const released = job?.locked_at != null && (await releaseGoneWorkers(tx, this.#config.workerStaleAfterSeconds, jobKey(id))).length > 0;
        if (job && job.attempts >= job.max_attempts && (!job.locked_at || released)) {
          const cause = released ? 'the worker running its last attempt stopped' : (job.last_error?.split('\n')[0] ?? 'unknown error');
          await this.#setError(tx, id, `The build failed: ${cause}`.slice(0, 1000));
          await sql`select graphile_worker.remove_job(${jobKey(id)}::text)`.execute(tx);
          return { action: 'failed' as const };
        }
        if (!job || released) {
          if (!job) await this.#enqueue(tx, id);
          await tx.updateTable('frontend_deployments').set({ updated_at: sql<Date>`clock_timestamp()` as never }).where('id', '=', id).execute();
          return { action: 'requeued' as const };
        }
      }
      return { action: 'none' as const };
    });
    if (result.action === 'expired' || result.action === 'failed') await this.#removeFiles(appId, id);
    return { deployment: await this.get(appId, id), action: result.action };
  }

  async #setError(tx: Tx, id: string, error: string): Promise<void> {
    await tx
      .updateTable('frontend_deployments')
      .set({ status: 'ERROR', error, live: false, has_site: false, updated_at: sql<Date>`clock_timestamp()` as never })
      .where('id', '=', id)
      .execute();
  }

  /** WAITING, UPLOADING or BUILDING -> CANCELED; its files go, a queued build is dropped (a running one discards its work). */
  async cancel(appId: string, id: string): Promise<DeploymentView> {
    await this.#db.transaction().execute(async (tx) => {
      const row = await this.#lock(tx, appId, id);
      if (!row) throw notFound(id);
      if (!ACTIVE.includes(row.status)) {
        throw stateError(row.status, `Deployment ${id} is ${row.status}; only WAITING, UPLOADING or BUILDING deployments can be canceled.`,
          row.status === 'READY' ? 'To take a READY site down, delete the deployment with frontend_deploy_delete.' : 'Nothing to cancel.');
      }
      await tx.updateTable('frontend_deployments').set({ status: 'CANCELED', updated_at: sql<Date>`clock_timestamp()` as never }).where('id', '=', id).execute();
      await sql`select graphile_worker.remove_job(${jobKey(id)}::text)`.execute(tx);
    });
    await this.#removeFiles(appId, id);
    return this.get(appId, id);
  }

  /** Removes the record and its files in any state; deleting the live deployment takes the site down. */
  async delete(appId: string, id: string): Promise<{ deleted: true; id: string; was_live: boolean }> {
    const wasLive = await this.#db.transaction().execute(async (tx) => {
      const row = await this.#lock(tx, appId, id);
      if (!row) throw notFound(id);
      await tx.deleteFrom('frontend_deployments').where('id', '=', id).execute();
      await sql`select graphile_worker.remove_job(${jobKey(id)}::text)`.execute(tx);
      return row.live;
    });
    this.#siteCache.delete(appId);
    await this.#removeFiles(appId, id);
    this.#log.info({ app_id: appId, deployment_id: id, was_live: wasLive }, 'frontend deployment deleted');
    return { deleted: true, id, was_live: wasLive };
  }

  async #removeFiles(appId: string, id: string): Promise<void> {
    await rm(this.#dir(appId, id), { recursive: true, force: true });
  }

  /** Everything of a published deployment but its site: the zip, and the temp folders of build runs that died. */
  async #removeLeftovers(appId: string, id: string): Promise<void> {
    const dir = this.#dir(appId, id);
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names) if (name !== 'site') await rm(path.join(dir, name), { recursive: true, force: true });
  }

  /** AppPurger: an app's deleted, so are its sites and uploads (the rows went with the app by cascade). */
  async purgeApp(appId: string): Promise<void> {
    this.#siteCache.delete(appId);
    await rm(this.#appDir(appId), { recursive: true, force: true });
  }

  // ---- the build job -----------------------------------------------------------------------------------

  /**
   * The frontend_build task: extract the uploaded zip safely into a private temp folder, find the site root,
   * move it into place and publish it. A refused zip ends in ERROR (no retry: it would fail the same way);
   * an unexpected failure throws for graphile-worker to retry, and the last attempt records ERROR. Safe to
   * run twice, also at once (a worker wrongly declared gone): only one run publishes, under the row lock; a rerun
   * of a READY deployment only finishes the clean-up of a run that died after publishing; anything else is left alone.
   */
  async build(id: string, opts: { finalAttempt: boolean }): Promise<void> {
    const row = await this.#select().where('d.id', '=', id).executeTakeFirst();
    if (row?.status === 'READY' && row.has_site) return this.#removeLeftovers(row.app_id, id);
    if (!row || row.status !== 'BUILDING') return;
    const appId = row.app_id;
    const dir = this.#dir(appId, id);
    const tmp = path.join(dir, `build-${randomBytes(8).toString('hex')}`);
    try {
      let extracted: { files: number; bytes: number };
      let siteRoot: string;
      try {
        await mkdir(tmp, { recursive: true });
        extracted = await extractZip(this.zipPath(appId, id), tmp, this.#config.frontend);
        siteRoot = await findSiteRoot(tmp);
      } catch (err) {
        if (err instanceof ZipRejected) return await this.#fail(appId, id, err.message);
        if ((err as NodeJS.ErrnoException).code === 'ENOENT' && !(await this.#stillBuilding(id))) return;
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
          return await this.#fail(appId, id, 'The uploaded zip is missing from the platform\'s data folder. Create a new deployment and upload again.');
        }
        if (opts.finalAttempt) return await this.#fail(appId, id, `The build failed: ${(err as Error).message}`);
        throw err;
      }
      await this.#publish(appId, id, siteRoot, extracted);
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  }

  async #stillBuilding(id: string): Promise<boolean> {
    const row = await this.#db.selectFrom('frontend_deployments').select('status').where('id', '=', id).executeTakeFirst();
    return row?.status === 'BUILDING';
  }

  /** Files go first, so that whoever sees ERROR also sees nothing left of the deployment on disk. */
  async #fail(appId: string, id: string, error: string): Promise<void> {
    if (!(await this.#stillBuilding(id))) return;
    await this.#removeFiles(appId, id);
    const failed = await this.#db
      .updateTable('frontend_deployments')
      .set({ status: 'ERROR', error, updated_at: sql<Date>`clock_timestamp()` as never })
      .where('id', '=', id)
      .where('status', '=', 'BUILDING')
      .returning('id')
      .executeTakeFirst();
    if (failed) {
      this.#log.info({ app_id: appId, deployment_id: id, error }, 'frontend deployment failed');
    }
  }

  /**
   * Moves the extracted site into place and, in one transaction under the deployment's row lock, marks it
   * READY and live. Free plan: every other deployment loses its files (history stays). Pro and enterprise:
   * they stay reachable at /sites/{app_id}/d/{id}/.
   */
  async #publish(appId: string, id: string, siteRoot: string, extracted: { files: number; bytes: number }): Promise<void> {
    const outcome = await this.#db.transaction().execute(async (tx) => {
      // One publish per app at a time; NO KEY UPDATE does not block inserts that reference the app.
      await sql`select 1 from apps where id = ${appId} for no key update`.execute(tx);
      const cur = await this.#lock(tx, appId, id);
      if (!cur || cur.status !== 'BUILDING') return { published: false as const, status: cur?.status };
      // Under the row lock: a second run of this build can never replace or remove the site the first published.
      const site = this.siteDir(appId, id);
      await rm(site, { recursive: true, force: true });
      await rename(siteRoot, site);
      const plan = (await sql<{ plan: string }>`select ac.plan from accounts ac join apps a on a.account_id = ac.id where a.id = ${appId}`.execute(tx)).rows[0]?.plan ?? 'free';
      await tx.updateTable('frontend_deployments').set({ live: false }).where('app_id', '=', appId).where('live', '=', true).execute();
      let pruned: string[] = [];
      if (plan === 'free') {
        pruned = (
          await tx
            .updateTable('frontend_deployments')
            .set({ has_site: false })
            .where('app_id', '=', appId)
            .where('has_site', '=', true)
            .where('id', '!=', id)
            .returning('id')
            .execute()
        ).map((r) => r.id);
      }
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
      return { published: true as const, pruned };
    });
    this.#siteCache.delete(appId);
    if (!outcome.published) {
      // Canceled, failed or deleted while building: the work is discarded. READY: another run published it.
      if (outcome.status !== 'READY') await this.#removeFiles(appId, id);
      return;
    }
    await this.#removeLeftovers(appId, id);
    for (const old of outcome.pruned) await this.#removeFiles(appId, old);
    this.#log.info({ app_id: appId, deployment_id: id, files: extracted.files, pruned: outcome.pruned.length }, 'frontend deployment live');
  }

  // ---- serving -----------------------------------------------------------------------------------------

  /** The live site of an app, or with deploymentId that READY deployment if its files are kept (pro). */
  async site(appId: string, deploymentId?: string): Promise<Site | undefined> {
    if (!APP_ID.test(appId)) return undefined;
    if (deploymentId !== undefined) {
      if (!UUID.test(deploymentId)) return undefined;
      const row = await this.#db
        .selectFrom('frontend_deployments')
        .select(['id', 'framework'])
        .where('id', '=', deploymentId)
        .where('app_id', '=', appId)
        .where('has_site', '=', true)
        .executeTakeFirst();
      return row && { deploymentId: row.id, framework: row.framework, root: this.siteDir(appId, row.id) };
    }
    const hit = this.#siteCache.get(appId);
    if (hit && hit.expiresMs > Date.now()) return hit.site;
    const row = await this.#db
      .selectFrom('frontend_deployments')
      .select(['id', 'framework'])
      .where('app_id', '=', appId)
      .where('live', '=', true)
      .executeTakeFirst();
    const site = row && { deploymentId: row.id, framework: row.framework, root: this.siteDir(appId, row.id) };
    if (this.#siteCache.size >= SITE_CACHE_MAX) this.#siteCache.delete(this.#siteCache.keys().next().value as string);
    this.#siteCache.set(appId, { site, expiresMs: Date.now() + SITE_CACHE_TTL_MS });
    return site;
  }

  // ---- environment -------------------------------------------------------------------------------------

  /** Replaces the whole frontend environment of an app (PUT semantics); values are sealed with the master key. */
  async setEnv(appId: string, env: Record<string, string>): Promise<{ keys: string[]; updated_at: string }> {
    const reserved = Object.keys(env).filter((k) => k.startsWith(ENV_RESERVED_PREFIX));
    if (reserved.length) {
      throw errors.validation(`Variable names starting with ${ENV_RESERVED_PREFIX} are reserved for the platform: ${reserved.join(', ')}.`, [
        { path: reserved[0]!, message: 'reserved prefix' },
      ]);
    }
    const updatedAt = new Date();
    await this.#db.transaction().execute(async (tx) => {
      await tx.deleteFrom('frontend_env').where('app_id', '=', appId).execute();
      const rows = Object.entries(env).map(([name, value]) => ({ app_id: appId, name, value_sealed: this.#box.seal(value), updated_at: updatedAt as never }));
      if (rows.length) await tx.insertInto('frontend_env').values(rows).execute();
    });
    return { keys: Object.keys(env).sort(), updated_at: updatedAt.toISOString() };
  }

  async envKeys(appId: string): Promise<string[]> {
    const rows = await this.#db.selectFrom('frontend_env').select('name').where('app_id', '=', appId).orderBy('name').execute();
    return rows.map((r) => r.name);
  }

  /** The decrypted environment plus SVC_APP_ID and SVC_API_URL: what /__env.js ships to browsers. */
  async publicEnv(appId: string): Promise<Record<string, string>> {
    const rows = await this.#db.selectFrom('frontend_env').select(['name', 'value_sealed']).where('app_id', '=', appId).orderBy('name').execute();
    const env: Record<string, string> = {};
    for (const r of rows) env[r.name] = this.#box.open(r.value_sealed);
    env.SVC_APP_ID = appId;
    env.SVC_API_URL = `${this.#config.baseUrl}/v1/${appId}`;
    return env;
  }
}

/** A deployment row joined with its app's subdomain (bigint columns arrive as strings from pg). */
interface DeploymentRow {
  id: string;
  app_id: string;
  framework: Framework;
  status: DeploymentStatus;
  error: string | null;
  size_bytes: string | null;
  unzipped_bytes: string | null;
  file_count: number | null;
  live: boolean;
  has_site: boolean;
  upload_expires_at: Date;
  created_at: Date;
  updated_at: Date;
  uploaded_at: Date | null;
  ready_at: Date | null;
  subdomain: string;
}

function uploadUrlInvalid(): AppError {
  return new AppError(403, 'UPLOAD_URL_INVALID', 'The upload URL is not valid: its signature does not match.',
    'Use the uploadUrl exactly as frontend_deploy_create returned it, or create a new deployment.');
}

function zipTooLarge(max: number): AppError {
  return new AppError(413, 'PAYLOAD_TOO_LARGE', `The zip exceeds the ${max}-byte limit (maxSizeBytes).`,
    'Upload a smaller build (remove source maps or large media), or ask the operator about SVC_FRONTEND_MAX_ZIP_BYTES.');
}

const ZIP_MAGIC = [Buffer.from('PK\x03\x04', 'latin1'), Buffer.from('PK\x05\x06', 'latin1')];

/**
 * Streams the body into `file`, counting bytes and stopping (without reading further into the file) at
 * `max`. The body is not destroyed, so the caller can still answer 413 on the same connection.
 */
function receiveLimited(body: Readable, file: string, max: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const out = createWriteStream(file, { flags: 'wx', mode: 0o600 });
    let size = 0;
    let head = Buffer.alloc(0);
    let settled = false;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      body.off('data', onData);
      body.pause();
      // Only once the file is closed: a still pending open would otherwise create it after the caller removed it.
      if (out.closed) reject(err);
      else out.once('close', () => reject(err)).destroy();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) return fail(zipTooLarge(max));
      if (head.length < 4) head = Buffer.concat([head, chunk]).subarray(0, 4);
      if (!out.write(chunk)) {
        body.pause();
        out.once('drain', () => {
          if (!settled) body.resume();
        });
      }
    };
    body.on('data', onData);
    body.once('end', () => {
      if (settled) return;
      if (size === 0) return fail(new AppError(400, 'INVALID_ZIP', 'The upload is empty.', 'PUT the zip file as the request body.'));
      if (!ZIP_MAGIC.some((m) => head.equals(m))) {
        return fail(new AppError(400, 'INVALID_ZIP', 'The upload is not a zip archive (it does not start with the zip signature).', 'Upload a .zip of your build output folder.'));
      }
      out.end();
    });
    body.once('error', (err) => fail(err));
    body.once('close', () => {
      if (!body.readableEnded) fail(new Error('the upload was aborted before it completed'));
    });
    out.once('error', (err) => fail(err));
    out.once('close', () => {
      if (settled) return;
      settled = true;
      resolve(size);
    });
  });
}
