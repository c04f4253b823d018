// Upload tickets (a pending row reserving its bytes in the quota, and a presigned PUT URL) and download tickets
// (a presigned GET URL of a ready object).
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { StorageContext } from './context.ts';
import type { Limits } from './limits.ts';
import { sanitizeFilename } from './names.ts';
import { lockApp, ref, type ObjectRow, type Owner } from './objects.ts';
import type { Settlement } from './settlement.ts';
import type { ObjectRef } from './types.ts';

/** Upload URL lifetime (spec: 5 minutes). */
export const UPLOAD_URL_TTL_SECONDS = 300;
/** Download URL lifetime (spec: 1 hour). */
export const DOWNLOAD_URL_TTL_SECONDS = 3600;
/**
 * A pending row outlives its upload URL by this much: a PUT that started before the URL expired may still be
 * streaming, and its bytes keep their place in the quota until then.
 */
export const PENDING_GRACE_SECONDS = 120;
/** Object key segment standing for "no user" (uploads with a service or platform key). */
export const SERVICE_SEGMENT = 'service';

export interface UploadRequest {
  filename: string;
  contentType: string;
  sizeBytes: number;
}

export interface UploadTicket {
  uploadUrl: string;
  objectKey: string;
  objectId: string;
  expiresIn: typeof UPLOAD_URL_TTL_SECONDS;
}

export interface DownloadTicket {
  downloadUrl: string;
  filename: string;
  expiresIn: typeof DOWNLOAD_URL_TTL_SECONDS;
}

export type TicketsDeps = Pick<StorageContext, 'db' | 'signer' | 'backend'> & { limits: Limits; settlement: Settlement };

export class Tickets {
  readonly #deps: TicketsDeps;

  constructor(deps: TicketsDeps) {
    this.#deps = deps;
  }

  /**
   * Checks the limits, reserves the size in the app's quota under a per-app advisory lock (so parallel requests
   * cannot overshoot: ready bytes plus unexpired pending uploads count) and returns a signed PUT URL. An end user
   * also stays within their own pending-upload cap, checked under the same lock, so that no user can reserve the
   * quota away from the others and the app's keys.
   */
  async createUpload(appId: string, owner: Owner, req: UploadRequest): Promise<UploadTicket> {
    const limits = await this.#deps.limits.admitFile(appId, owner, req.sizeBytes, req.contentType);
    // On S3 an expired reservation may hide bytes that did arrive: settle those first so they count.
    await this.#deps.settlement.settleOwnerPending(appId, { kind: 'service' }, true);

    const id = randomUUID();
    const filename = sanitizeFilename(req.filename);
    const key = `${appId}/${owner.kind === 'user' ? owner.userId : SERVICE_SEGMENT}/${id}_${filename}`;
    const exp = this.#deps.signer.nowSeconds() + UPLOAD_URL_TTL_SECONDS;
    await this.#deps.db.transaction().execute(async (tx) => {
      await lockApp(tx, appId);
      await this.#deps.limits.admitReservation(tx, appId, owner, req.sizeBytes, limits);
      await sql`
        insert into storage_objects (id, app_id, user_id, filename, content_type, size_bytes, object_key, status, expires_at)
        values (${id}, ${appId}, ${owner.kind === 'user' ? owner.userId : null}, ${filename}, ${req.contentType.trim()},
                ${req.sizeBytes}, ${key}, 'pending', to_timestamp(${exp + PENDING_GRACE_SECONDS}))
      `.execute(tx);
    });
    const obj: ObjectRef = { appId, id, key, filename, contentType: req.contentType.trim(), sizeBytes: req.sizeBytes };
    const uploadUrl = await this.#deps.backend.uploadUrl(obj, exp, UPLOAD_URL_TTL_SECONDS);
    return { uploadUrl, objectKey: key, objectId: id, expiresIn: UPLOAD_URL_TTL_SECONDS };
  }

  async download(appId: string, owner: Owner, objectId: string): Promise<DownloadTicket> {
    const row = await this.#deps.settlement.findReady(appId, owner, objectId);
    return { downloadUrl: await this.downloadUrl(row), filename: row.filename, expiresIn: DOWNLOAD_URL_TTL_SECONDS };
  }

  /** A signed GET URL of a ready object, valid for DOWNLOAD_URL_TTL_SECONDS. */
  async downloadUrl(row: ObjectRow): Promise<string> {
    const exp = this.#deps.signer.nowSeconds() + DOWNLOAD_URL_TTL_SECONDS;
    return this.#deps.backend.downloadUrl(ref(row), exp, DOWNLOAD_URL_TTL_SECONDS);
  }
}
