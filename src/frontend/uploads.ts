// Uploads: the signed zip PUT and its checks, streamed to a private part file and moved into place as the
// deployment's upload.zip under the row lock; and the zip made from a map of files, checked by the same rules.
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { AppError, errors } from '../core/errors.ts';
import { entrySegments, ZipRejected } from './extract.ts';
import { isAppId, isDeploymentId, type FrontendFiles } from './files.ts';
import { deploymentView, stateError, type DeploymentRecords, type FrontendDb } from './records.ts';
import { deriveKey, UploadSigner } from './signing.ts';
import { UPLOAD_URL_TTL_SECONDS, type DeploymentView } from './types.ts';
import { storedZip } from './zip.ts';

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

export interface UploadsDeps {
  db: FrontendDb;
  /** The platform master key; the upload-URL signing key is derived from it (HKDF), never the key itself. */
  masterKey: Buffer;
  config: Config;
  log: Logger;
  records: DeploymentRecords;
  files: FrontendFiles;
}

export class Uploads {
  readonly #deps: UploadsDeps;
  readonly #signer: UploadSigner;

  constructor(deps: UploadsDeps) {
    this.#deps = deps;
    this.#signer = new UploadSigner(deriveKey(deps.masterKey, 'frontend-upload-url'));
  }

  /** The URL the zip is PUT to, good for that deployment until `expires` (unix seconds). */
  url(appId: string, id: string, expires: number): string {
    const signature = this.#signer.sign(appId, id, expires);
    return `${this.#deps.config.baseUrl}/v1/${appId}/frontend/deployments/${id}/upload?expires=${expires}&signature=${signature}`;
  }

  /**
   * The signed PUT of the zip. Checks, in order: signature (403), expiry (403), deployment (404), status
   * WAITING (409), Content-Type application/zip (415), declared length (413); then streams to a private
   * part file, stopping at maxZipBytes (413), checks the zip signature bytes (400) and moves it into place
   * under the row lock. Nothing partial stays on disk.
   */
  async receive(u: IncomingZip): Promise<DeploymentView> {
    await this.#checkRequest(u);
    const max = this.#deps.config.frontend.maxZipBytes;
    return this.#viaPartFile(u.appId, u.deploymentId, async (part) => {
      const size = await receiveLimited(u.body, part, max);
      return this.#accept(u.appId, u.deploymentId, part, size);
    });
  }

  /** A zip already in memory becomes the deployment's upload, like a received one. */
  async acceptZip(appId: string, id: string, zip: Buffer): Promise<void> {
    await this.#viaPartFile(appId, id, async (part) => {
      await writeFile(part, zip, { flag: 'wx', mode: 0o600 });
      await this.#accept(appId, id, part, zip.length);
    });
  }

  /** Everything checked before a byte of the body is read, in the order the PUT's documentation gives. */
  async #checkRequest(u: IncomingZip): Promise<void> {
    if (!isAppId(u.appId) || !isDeploymentId(u.deploymentId)) throw uploadUrlInvalid();
    const check = this.#signer.verify(u.appId, u.deploymentId, u.expires, u.signature);
    if (check === 'invalid') throw uploadUrlInvalid();
    if (check === 'expired') {
      throw new AppError(403, 'UPLOAD_URL_EXPIRED', `The upload URL expired (it is valid for ${UPLOAD_URL_TTL_SECONDS} seconds).`,
        'Create a new deployment with frontend_deploy_create for a fresh uploadUrl.');
    }
    const row = await this.#deps.records.row(u.appId, u.deploymentId);
    if (row.status !== 'WAITING') {
      throw stateError(row.status, `Deployment ${row.id} is ${row.status}; a zip can be uploaded only while it is WAITING (once per deployment).`,
        'Create a new deployment with frontend_deploy_create to upload another zip.');
    }
    const type = (u.contentType ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/zip') {
      throw new AppError(415, 'UNSUPPORTED_MEDIA_TYPE', `The upload must be sent with Content-Type: application/zip (got '${type || 'none'}').`,
        'PUT the zip file with the header Content-Type: application/zip.');
    }
    const max = this.#deps.config.frontend.maxZipBytes;
    if (u.contentLength !== undefined && Number(u.contentLength) > max) throw zipTooLarge(max);
  }

  /** Runs `use` with a fresh private part file in the deployment's folder, which is gone afterwards whatever happened. */
  async #viaPartFile<T>(appId: string, id: string, use: (part: string) => Promise<T>): Promise<T> {
    const dir = this.#deps.files.dir(appId, id);
    await mkdir(dir, { recursive: true });
    const part = path.join(dir, `upload-${randomBytes(8).toString('hex')}.part`);
    try {
      return await use(part);
    } finally {
      await rm(part, { force: true });
    }
  }

  /** A complete zip in its part file becomes the deployment's upload (WAITING -> UPLOADING), under the row lock. */
  async #accept(appId: string, id: string, part: string, size: number): Promise<DeploymentView> {
    const { db, config, records, files, log } = this.#deps;
    return db.transaction().execute(async (tx) => {
      const cur = await records.locked(tx, appId, id);
      if (cur.status !== 'WAITING') {
        throw stateError(cur.status, `Deployment ${cur.id} is ${cur.status}; a zip can be uploaded only while it is WAITING.`,
          'Create a new deployment with frontend_deploy_create to upload another zip.');
      }
      await rename(part, files.zipPath(appId, id));
      await tx
        .updateTable('frontend_deployments')
        .set({ status: 'UPLOADING', size_bytes: size, uploaded_at: sql<Date>`now()` as never, updated_at: sql<Date>`clock_timestamp()` as never })
        .where('id', '=', id)
        .execute();
      log.info({ app_id: appId, deployment_id: id, size_bytes: size }, 'frontend zip received');
      return deploymentView({ ...cur, status: 'UPLOADING', size_bytes: String(size), uploaded_at: new Date(), updated_at: new Date() }, config);
    });
  }
}

/**
 * The files as a stored zip, for callers that cannot PUT one. Paths, count and sizes are checked with the rules
 * extractZip applies, so a refused map is a 400 before anything is created.
 */
export function zipOfFiles(files: readonly { path: string; bytes: Buffer }[], limits: Config['frontend']): Buffer {
  const { maxFiles, maxUnzippedBytes, maxZipBytes } = limits;
  if (files.length === 0) throw refuse('files is empty; a site needs at least index.html.');
  if (files.length > maxFiles) throw refuse(`files has ${files.length} entries; at most ${maxFiles} are allowed (SVC_FRONTEND_MAX_FILES).`);
  const entries = zipEntries(files);
  const total = entries.reduce((n, e) => n + e.bytes.length, 0);
  if (total > maxUnzippedBytes) throw refuse(`The files add up to ${total} bytes; a site may hold at most ${maxUnzippedBytes} (SVC_FRONTEND_MAX_UNZIPPED_BYTES).`);
  const zip = storedZip(entries);
  if (zip.length > maxZipBytes) throw zipTooLarge(maxZipBytes);
  return zip;
}

/** Each file under its normalized entry name; an unsafe or repeated name is refused. */
function zipEntries(files: readonly { path: string; bytes: Buffer }[]): { name: string; bytes: Buffer }[] {
  const seen = new Set<string>();
  return files.map((f) => {
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
}

function refuse(message: string, field = 'files'): AppError {
  return errors.validation(message, [{ path: field, message }]);
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
