import type { IncomingHttpHeaders } from 'node:http';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { ControlDatabase } from '../db/types.ts';
import type { AppPurger } from '../apps/types.ts';
import { LocalBlobs, type BlobResponse, type Received } from './blobs.ts';
import type { StorageContext } from './context.ts';
import { INLINE_MAX_BYTES, InlineTransfers, type InlineStored } from './inline.ts';
import { Limits, type LimitsPatch, type StorageLimits } from './limits.ts';
import { LocalBackend } from './local.ts';
import { ObjectRows, type ListedObject, type Owner, type Page } from './objects.ts';
import { Purge } from './purge.ts';
import { BucketStore } from './buckets.ts';
import { DIRECT_UPLOAD_SECONDS, PathObjects } from './paths.ts';
import { Spool } from './spool.ts';
import { Settlement } from './settlement.ts';
import { PathTokens, UrlSigner } from './signing.ts';
import { Tickets, type DownloadTicket, type UploadRequest, type UploadTicket } from './tickets.ts';
import type { ObjectRef, StorageBackend } from './types.ts';

// The storage area's names, where its callers have always found them.
export { STORAGE_METER, LIST_MAX, type Owner, type ListedObject } from './objects.ts';
export { UPLOAD_URL_TTL_SECONDS, DOWNLOAD_URL_TTL_SECONDS, PENDING_GRACE_SECONDS, SERVICE_SEGMENT } from './tickets.ts';
export type { UploadRequest, UploadTicket, DownloadTicket } from './tickets.ts';
export { INLINE_MAX_BYTES, type InlineStored } from './inline.ts';
export type { LimitsOverrides, StorageLimits, LimitsPatch } from './limits.ts';
export type { BlobResponse } from './blobs.ts';

export interface StorageServiceDeps {
  db: Kysely<ControlDatabase>;
  config: Config;
  masterKey: Buffer;
  log: Logger;
  /**
   * The external byte store the composition root built from the configuration (S3 when SVC_STORAGE_BACKEND=s3);
   * undefined: this area's own local-disk backend, which signs with the service's URL signer.
   */
  backend: StorageBackend | undefined;
}

/**
 * File storage of every app: object rows in the control database (listing and quota are one query), bytes in
 * the configured backend, reached only through signed, expiring URLs. A facade: each concern lives in its own
 * part (tickets, inline transfers, limits, local blobs, settlement, purge), built here over one shared context.
 */
export class StorageService implements AppPurger {
  readonly backend: StorageBackend;
  readonly #rows: ObjectRows;
  readonly #limits: Limits;
  readonly #settlement: Settlement;
  readonly #tickets: Tickets;
  readonly #blobs: LocalBlobs;
  readonly #inline: InlineTransfers;
  readonly #purge: Purge;
  readonly #spool: Spool;
  /** storage-js's face: buckets, and objects by bucket and path (src/transports/raw/storage-v1.ts). */
  readonly buckets: BucketStore;
  readonly paths: PathObjects;

  constructor(deps: StorageServiceDeps) {
    const signer = new UrlSigner(deps.masterKey);
    // Beside the local backend's objects (a rename moves a spooled file into place), whichever backend is in use.
    this.#spool = new Spool(path.join(deps.config.dataDir, 'storage', '.spool'));
    this.backend = deps.backend ?? new LocalBackend(deps.config.dataDir, deps.config.baseUrl, signer, this.#spool);
    const ctx: StorageContext = { db: deps.db, config: deps.config, log: deps.log.child({ area: 'storage' }), signer, backend: this.backend };
    const rows = new ObjectRows(ctx.db);
    this.#rows = rows;
    this.#limits = new Limits(ctx);
    this.#settlement = new Settlement({ ...ctx, rows });
    this.#tickets = new Tickets({ ...ctx, limits: this.#limits, settlement: this.#settlement });
    this.#blobs = new LocalBlobs({ ...ctx, rows });
    this.#inline = new InlineTransfers({ ...ctx, rows, tickets: this.#tickets, blobs: this.#blobs, settlement: this.#settlement });
    this.#purge = new Purge(ctx);
    this.buckets = new BucketStore({ db: ctx.db, limits: this.#limits });
    this.paths = new PathObjects({ ...ctx, limits: this.#limits, buckets: this.buckets, tokens: new PathTokens(deps.masterKey), spool: this.#spool });
  }

  /** The local backend when it is the configured one (its blob routes exist only then). */
  get local(): LocalBackend | undefined {
    return this.#blobs.local;
  }

  // ---- tools ----------------------------------------------------------------------------------------------

  /** A pending upload within the limits and quota, and its signed PUT URL (see Tickets.createUpload). */
  createUpload(appId: string, owner: Owner, req: UploadRequest): Promise<UploadTicket> {
    return this.#tickets.createUpload(appId, owner, req);
  }

  /** Objects whose bytes have arrived, newest first. On S3, pending uploads in view are checked first. */
  async list(appId: string, owner: Owner, page: Page = {}): Promise<ListedObject[]> {
    await this.#settlement.settleOwnerPending(appId, owner, false);
    return this.#rows.listReady(appId, owner, page);
  }

  download(appId: string, owner: Owner, objectId: string): Promise<DownloadTicket> {
    return this.#tickets.download(appId, owner, objectId);
  }

  /** A small file whose bytes come with the request, stored through the presigned path's own steps. */
  uploadInline(appId: string, owner: Owner, req: Omit<UploadRequest, 'sizeBytes'>, bytes: Buffer): Promise<InlineStored> {
    return this.#inline.upload(appId, owner, req, bytes);
  }

  /**
   * The bytes of a small file, for callers that cannot fetch a download URL; files above `maxBytes` (by default
   * INLINE_MAX_BYTES) are refused (413) with the download URL as the way. Same visibility as download.
   */
  read(appId: string, owner: Owner, objectId: string, maxBytes = INLINE_MAX_BYTES): Promise<{ object: ListedObject; bytes: Buffer }> {
    return this.#inline.read(appId, owner, objectId, maxBytes);
  }

  delete(appId: string, owner: Owner, objectId: string): Promise<{ deleted: true; id: string }> {
    return this.#purge.delete(appId, owner, objectId);
  }

  limits(appId: string): Promise<StorageLimits> {
    return this.#limits.limits(appId);
  }

  setLimits(appId: string, patch: LimitsPatch): Promise<StorageLimits> {
    return this.#limits.setLimits(appId, patch);
  }

  // ---- local blob routes ----------------------------------------------------------------------------------

  putBlob(objectId: string, query: Record<string, unknown>, headers: IncomingHttpHeaders, body: Readable): Promise<Received> {
    return this.#blobs.putBlob(objectId, query, headers, body);
  }

  getBlob(objectId: string, query: Record<string, unknown>, rangeHeader: string | undefined, head: boolean): Promise<BlobResponse> {
    return this.#blobs.getBlob(objectId, query, rangeHeader, head);
  }

  // ---- background work ------------------------------------------------------------------------------------

  /** Pending uploads past their expiry, and the temporary files of uploads a stopped process left behind. */
  async settleExpired(batch = 500): Promise<number> {
    await this.#spool.sweep(DIRECT_UPLOAD_SECONDS * 1000);
    return this.#settlement.settleExpired(batch);
  }

  removeBytes(obj: Pick<ObjectRef, 'appId' | 'id' | 'key'>): Promise<void> {
    return this.#purge.removeBytes(obj);
  }

  purgeApp(appId: string): Promise<void> {
    return this.#purge.purgeApp(appId);
  }

  close(): void {
    this.backend.close();
  }
}
