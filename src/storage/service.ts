import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import { buffer as readAll } from 'node:stream/consumers';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { ControlDatabase } from '../db/types.ts';
import type { AppPurger } from '../apps/types.ts';
import { S3Backend } from '../adapters/s3.ts';
import { meterBalance, recordUsage } from '../usage/meters.ts';
import { storageErrors } from './errors.ts';
import { LocalBackend, ReceiveError } from './local.ts';
import { allowEntryWithin, contentDisposition, contentTypeAllowed, normalizeMime, parseRange, sanitizeFilename } from './names.ts';
import { UrlSigner } from './signing.ts';
import type { ObjectRef, PendingReservations, StorageBackend } from './types.ts';
import { enqueue } from '../core/jobs.ts';
import { storageDeleteObject } from './jobs.ts';

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
export const STORAGE_METER = 'storage_bytes';
/** Rows listed per call at most (the spec's list takes no parameters; `limit`/`offset` page beyond). */
export const LIST_MAX = 1000;
/**
 * Largest file stored or read inline (base64 in a tool call): 2 MiB decoded is 2.67 MiB of base64, which fits
 * the 4 MB /mcp body with room for the JSON-RPC envelope. The app's own per-file limit applies too.
 */
export const INLINE_MAX_BYTES = 2 * 1024 * 1024;
/** Pending rows checked against the bucket per list call (S3 backend). */
const PROBE_BATCH = 100;
const PROBE_CONCURRENCY = 8;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Whose files a call sees: a service or platform key sees every file of the app, an end user only their own. */
export type Owner = { kind: 'service' } | { kind: 'user'; userId: string };

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

export interface ListedObject {
  id: string;
  filename: string;
  content_type: string;
  size_bytes: number;
  created_at: string;
}

/** An inline upload, stored: what to persist (objectId) and the file as storage_list shows it. */
export interface InlineStored extends ListedObject {
  objectId: string;
  objectKey: string;
}

export interface DownloadTicket {
  downloadUrl: string;
  filename: string;
  expiresIn: typeof DOWNLOAD_URL_TTL_SECONDS;
}

export interface LimitsOverrides {
  max_file_bytes: number | null;
  max_app_bytes: number | null;
  allowed_content_types: string[] | null;
}

export interface StorageLimits {
  app_id: string;
  /** Effective values: the override, or the platform default. */
  max_file_bytes: number;
  max_app_bytes: number;
  /** Effective allow-list; empty allows every type. */
  allowed_content_types: string[];
  /** What one end user may hold reserved in pending uploads at once. */
  max_user_pending_uploads: number;
  max_user_pending_bytes: number;
  overrides: LimitsOverrides;
  usage: { used_bytes: number; pending_bytes: number };
}

/** Fields of storage_limits_set: omitted leaves a value as is, null resets it to the platform default. */
export type LimitsPatch = Partial<LimitsOverrides>;

/** The limits in force for one app. */
interface EffectiveLimits {
  overrides: LimitsOverrides;
  maxFile: number;
  maxApp: number;
  /** Every list must allow a type: the platform's (when set) and the app's (when set). */
  allowLists: (readonly string[])[];
  userPending: PendingReservations;
}

interface ObjectRow {
  id: string;
  app_id: string;
  user_id: string | null;
  filename: string;
  content_type: string;
  size_bytes: string;
  object_key: string;
  status: 'pending' | 'ready';
  created_at: Date;
  expires_at: Date | null;
}

/** The result of a blob GET: headers plus the body to stream (none for HEAD). */
export interface BlobResponse {
  /** The app the object belongs to (its bandwidth). */
  appId: string;
  status: 200 | 206;
  headers: Record<string, string>;
  body: Readable | undefined;
}

export interface StorageServiceDeps {
  db: Kysely<ControlDatabase>;
  config: Config;
  masterKey: Buffer;
  log: Logger;
  /** Tests and the S3 suite inject a backend; otherwise config.storage.backend chooses. */
  backend?: StorageBackend;
}

const ref = (row: ObjectRow): ObjectRef => ({
  appId: row.app_id,
  id: row.id,
  key: row.object_key,
  filename: row.filename,
  contentType: row.content_type,
  sizeBytes: Number(row.size_bytes),
});

const listed = (row: ObjectRow): ListedObject => ({
  id: row.id,
  filename: row.filename,
  content_type: row.content_type,
  size_bytes: Number(row.size_bytes),
  created_at: row.created_at.toISOString(),
});

const scope = (owner: Owner) => (owner.kind === 'user' ? sql`and user_id = ${owner.userId}::uuid` : sql``);

/**
 * File storage of every app: object rows in the control database (listing and quota are one query), bytes in
 * the configured backend, reached only through signed, expiring URLs.
 */
export class StorageService implements AppPurger {
  readonly #db: Kysely<ControlDatabase>;
  readonly #config: Config;
  readonly #log: Logger;
  readonly #signer: UrlSigner;
  readonly backend: StorageBackend;

  constructor(deps: StorageServiceDeps) {
    this.#db = deps.db;
    this.#config = deps.config;
    this.#log = deps.log.child({ area: 'storage' });
    this.#signer = new UrlSigner(deps.masterKey);
    this.backend =
      deps.backend ??
      (deps.config.storage.backend === 's3'
        ? new S3Backend(deps.config.storage.s3)
        : new LocalBackend(deps.config.dataDir, deps.config.baseUrl, this.#signer));
  }

  /** The local backend when it is the configured one (its blob routes exist only then). */
  get local(): LocalBackend | undefined {
    return this.backend instanceof LocalBackend ? this.backend : undefined;
  }

  // ---- tools ----------------------------------------------------------------------------------------------

  /**
   * Checks the limits, reserves the size in the app's quota under a per-app advisory lock (so parallel requests
   * cannot overshoot: ready bytes plus unexpired pending uploads count) and returns a signed PUT URL. An end user
   * also stays within their own pending-upload cap, checked under the same lock, so that no user can reserve the
   * quota away from the others and the app's keys.
   */
  async createUpload(appId: string, owner: Owner, req: UploadRequest): Promise<UploadTicket> {
    const limits = await this.#effective(appId);
    // A file above the user's pending cap could never be reserved: for end users the cap bounds the file size too.
    const maxFile = owner.kind === 'user' ? Math.min(limits.maxFile, limits.userPending.bytes) : limits.maxFile;
    if (req.sizeBytes > maxFile) throw storageErrors.fileTooLarge(req.sizeBytes, maxFile);
    for (const list of limits.allowLists) {
      if (!contentTypeAllowed(req.contentType, list)) throw storageErrors.contentTypeNotAllowed(req.contentType, list);
    }
    // On S3 an expired reservation may hide bytes that did arrive: settle those first so they count.
    if (this.backend.kind === 's3') await this.#settle(await this.#pending(appId, { kind: 'service' }, true));

    const id = randomUUID();
    const filename = sanitizeFilename(req.filename);
    const key = `${appId}/${owner.kind === 'user' ? owner.userId : SERVICE_SEGMENT}/${id}_${filename}`;
    const exp = this.#signer.nowSeconds() + UPLOAD_URL_TTL_SECONDS;
    await this.#db.transaction().execute(async (tx) => {
      await sql`select pg_advisory_xact_lock(hashtextextended(${'storage:' + appId}, 0))`.execute(tx);
      if (owner.kind === 'user') await this.#checkUserPending(tx, appId, owner.userId, req.sizeBytes, limits.userPending);
      const usage = await this.#usage(tx, appId);
      if (usage.used_bytes + usage.pending_bytes + req.sizeBytes > limits.maxApp) {
        throw storageErrors.quotaExceeded(req.sizeBytes, usage.used_bytes, usage.pending_bytes, limits.maxApp);
      }
      await sql`
        insert into storage_objects (id, app_id, user_id, filename, content_type, size_bytes, object_key, status, expires_at)
        values (${id}, ${appId}, ${owner.kind === 'user' ? owner.userId : null}, ${filename}, ${req.contentType.trim()},
                ${req.sizeBytes}, ${key}, 'pending', to_timestamp(${exp + PENDING_GRACE_SECONDS}))
      `.execute(tx);
    });
    const obj: ObjectRef = { appId, id, key, filename, contentType: req.contentType.trim(), sizeBytes: req.sizeBytes };
    const uploadUrl = await this.backend.uploadUrl(obj, exp, UPLOAD_URL_TTL_SECONDS);
    return { uploadUrl, objectKey: key, objectId: id, expiresIn: UPLOAD_URL_TTL_SECONDS };
  }

  /** Objects whose bytes have arrived, newest first. On S3, pending uploads in view are checked first. */
  async list(appId: string, owner: Owner, page: { limit?: number | undefined; offset?: number | undefined } = {}): Promise<ListedObject[]> {
    if (this.backend.kind === 's3') await this.#settle(await this.#pending(appId, owner, false));
    const { rows } = await sql<ObjectRow>`
      select * from storage_objects
      where app_id = ${appId} and status = 'ready' ${scope(owner)}
      order by created_at desc, id desc
      limit ${Math.min(page.limit ?? LIST_MAX, LIST_MAX)} offset ${page.offset ?? 0}
    `.execute(this.#db);
    return rows.map(listed);
  }

  async download(appId: string, owner: Owner, objectId: string): Promise<DownloadTicket> {
    let row = await this.#find(appId, owner, objectId);
    if (row.status === 'pending') {
      if (this.backend.kind === 's3') await this.#settle([row]);
      row = await this.#find(appId, owner, objectId);
      if (row.status !== 'ready') throw storageErrors.notUploaded(objectId);
    }
    const exp = this.#signer.nowSeconds() + DOWNLOAD_URL_TTL_SECONDS;
    const downloadUrl = await this.backend.downloadUrl(ref(row), exp, DOWNLOAD_URL_TTL_SECONDS);
    return { downloadUrl, filename: row.filename, expiresIn: DOWNLOAD_URL_TTL_SECONDS };
  }

  /**
   * A small file whose bytes come with the request (MCP clients that cannot make HTTP requests of their own).
   * It takes exactly the presigned path: createUpload (limits, content types, quota, the end user's pending cap,
   * a pending reservation), then the bytes arrive through the same receive step as a PUT to the upload URL
   * (local disk) or are PUT to the bucket's presigned URL and settled (S3). Nothing stays behind on a refusal:
   * a failure after the reservation removes the pending row and any bytes.
   */
  async uploadInline(appId: string, owner: Owner, req: Omit<UploadRequest, 'sizeBytes'>, bytes: Buffer): Promise<InlineStored> {
    if (bytes.length > INLINE_MAX_BYTES) throw storageErrors.inlineTooLarge(bytes.length, INLINE_MAX_BYTES);
    if (bytes.length === 0) throw storageErrors.inlineEmpty();
    const ticket = await this.createUpload(appId, owner, { ...req, sizeBytes: bytes.length });
    const pending = await this.#byId(ticket.objectId);
    if (!pending) throw storageErrors.uploadNotFound();
    try {
      const local = this.local;
      if (local) {
        await this.#receive(local, pending, pending.content_type, String(bytes.length), Readable.from([bytes]));
      } else {
        const res = await fetch(ticket.uploadUrl, { method: 'PUT', headers: { 'content-type': pending.content_type }, body: new Uint8Array(bytes) });
        await res.body?.cancel();
        if (!res.ok) throw new Error(`the object store refused the inline upload's PUT: HTTP ${res.status}`);
        await this.#settle([pending]);
      }
      const row = await this.#byId(ticket.objectId);
      if (row?.status !== 'ready') throw new Error(`inline upload ${ticket.objectId} did not become ready`);
      return { objectId: row.id, objectKey: row.object_key, ...listed(row) };
    } catch (err) {
      await this.#discard(pending, false).catch((e: unknown) => this.#log.warn({ err: e, object_id: pending.id }, 'removing a failed inline upload failed'));
      throw err;
    }
  }

  /**
   * The bytes of a small file, for callers that cannot fetch a download URL; files above `maxBytes` (by default
   * INLINE_MAX_BYTES) are refused (413) with the download URL as the way. Same visibility as download.
   */
  async read(appId: string, owner: Owner, objectId: string, maxBytes = INLINE_MAX_BYTES): Promise<{ object: ListedObject; bytes: Buffer }> {
    let row = await this.#find(appId, owner, objectId);
    if (row.status === 'pending') {
      if (this.backend.kind === 's3') await this.#settle([row]);
      row = await this.#find(appId, owner, objectId);
      if (row.status !== 'ready') throw storageErrors.notUploaded(objectId);
    }
    const size = Number(row.size_bytes);
    if (size > maxBytes) throw storageErrors.inlineReadTooLarge(objectId, size, maxBytes);
    const local = this.local;
    let bytes: Buffer;
    if (local) {
      if ((await local.size(row.app_id, row.id)) === undefined) {
        this.#log.error({ object_id: objectId, app_id: row.app_id }, 'a ready object has no bytes on disk');
        throw storageErrors.objectNotFound(objectId);
      }
      bytes = await readAll(local.read(row.app_id, row.id));
    } else {
      const exp = this.#signer.nowSeconds() + DOWNLOAD_URL_TTL_SECONDS;
      const res = await fetch(await this.backend.downloadUrl(ref(row), exp, DOWNLOAD_URL_TTL_SECONDS));
      if (!res.ok) {
        await res.body?.cancel();
        throw new Error(`the object store answered HTTP ${res.status} for object ${objectId}`);
      }
      bytes = Buffer.from(await res.arrayBuffer());
    }
    return { object: listed(row), bytes };
  }

  /**
   * Deletes the row (and, when its bytes had arrived, subtracts them from the meter) and enqueues the byte
   * removal in the same transaction; the bytes are then removed at once, and the job retries if that fails.
   */
  async delete(appId: string, owner: Owner, objectId: string): Promise<{ deleted: true; id: string }> {
    if (!UUID_RE.test(objectId)) throw storageErrors.objectNotFound(objectId);
    const row = await this.#db.transaction().execute(async (tx) => {
      const { rows } = await sql<ObjectRow>`
        delete from storage_objects where id = ${objectId}::uuid and app_id = ${appId} ${scope(owner)} returning *
      `.execute(tx);
      const deleted = rows[0];
      if (!deleted) throw storageErrors.objectNotFound(objectId);
      if (deleted.status === 'ready') await recordUsage(tx, appId, STORAGE_METER, -Number(deleted.size_bytes));
      await enqueue(tx, storageDeleteObject, { app_id: appId, object_id: objectId, object_key: deleted.object_key });
      return deleted;
    });
    await this.removeBytes(ref(row)).catch((err: unknown) =>
      this.#log.warn({ err, app_id: appId, object_id: objectId }, 'removing deleted object bytes failed; the storage_delete_object job retries'),
    );
    return { deleted: true, id: objectId };
  }

  async limits(appId: string): Promise<StorageLimits> {
    const limits = await this.#effective(appId);
    return {
      app_id: appId,
      max_file_bytes: limits.maxFile,
      max_app_bytes: limits.maxApp,
      allowed_content_types: limits.overrides.allowed_content_types ?? [...this.#config.storage.allowedContentTypes],
      max_user_pending_uploads: limits.userPending.uploads,
      max_user_pending_bytes: limits.userPending.bytes,
      overrides: limits.overrides,
      usage: await this.#usage(this.#db, appId),
    };
  }

  /**
   * Per-app overrides can only tighten the platform limits: a byte limit above the platform's, or an allow-list
   * admitting a type the platform's does not, is refused (400) before anything is written.
   */
  async setLimits(appId: string, patch: LimitsPatch): Promise<StorageLimits> {
    const { storage } = this.#config;
    if (patch.max_file_bytes != null && patch.max_file_bytes > storage.maxFileBytes) {
      throw storageErrors.limitAboveDefault('max_file_bytes', storage.maxFileBytes);
    }
    if (patch.max_app_bytes != null && patch.max_app_bytes > storage.maxAppBytes) {
      throw storageErrors.limitAboveDefault('max_app_bytes', storage.maxAppBytes);
    }
    const has = (k: keyof LimitsOverrides) => patch[k] !== undefined;
    const types = patch.allowed_content_types == null ? null : [...new Set(patch.allowed_content_types.map((t) => t.trim().toLowerCase()))];
    const outside = types?.filter((t) => !allowEntryWithin(t, storage.allowedContentTypes)) ?? [];
    if (outside.length) throw storageErrors.typesOutsidePlatform(outside, storage.allowedContentTypes);
    await sql`
      insert into storage_limits (app_id, max_file_bytes, max_app_bytes, allowed_content_types)
      values (${appId}, ${patch.max_file_bytes ?? null}, ${patch.max_app_bytes ?? null}, ${types}::text[])
      on conflict (app_id) do update set
        max_file_bytes = case when ${has('max_file_bytes')} then excluded.max_file_bytes else storage_limits.max_file_bytes end,
        max_app_bytes = case when ${has('max_app_bytes')} then excluded.max_app_bytes else storage_limits.max_app_bytes end,
        allowed_content_types = case when ${has('allowed_content_types')} then excluded.allowed_content_types else storage_limits.allowed_content_types end,
        updated_at = now()
    `.execute(this.#db);
    return this.limits(appId);
  }

  // ---- local blob routes ----------------------------------------------------------------------------------

  /**
   * PUT of the bytes to a local upload URL. Refuses a bad or expired signature (403), a used URL (409), another
   * Content-Type (415), more bytes than declared (413) or fewer (400). The bytes go to a temporary file; the
   * rename into place happens inside the transaction that flips the row pending -> ready, so concurrent PUTs
   * to one URL have exactly one winner and nothing partial is ever visible.
   */
  async putBlob(objectId: string, query: Record<string, unknown>, headers: IncomingHttpHeaders, body: Readable): Promise<{ objectId: string; size_bytes: number }> {
    const local = this.#requireLocal();
    const grant = parseGrant(objectId, query, 'put');
    const row = await this.#byId(objectId);
    if (!row) throw storageErrors.uploadNotFound();
    const obj = ref(row);
    const verdict = this.#signer.verify({ ...grant, contentType: obj.contentType, sizeBytes: obj.sizeBytes }, grant.sig);
    if (verdict === 'bad_signature') throw storageErrors.invalidSignature();
    if (verdict === 'expired') throw storageErrors.urlExpired();
    return this.#receive(local, row, headers['content-type'], headers['content-length'], body);
  }

  /**
   * The bytes of a pending upload arriving (a PUT to its URL, or inline content): the one place that checks
   * them against the declaration, stores them and flips the row pending -> ready with its metering.
   */
  async #receive(
    local: LocalBackend,
    row: ObjectRow,
    sent: string | undefined,
    declaredLength: string | undefined,
    body: Readable,
  ): Promise<{ objectId: string; size_bytes: number }> {
    const objectId = row.id;
    const obj = ref(row);
    if (row.status !== 'pending') throw storageErrors.alreadyUploaded();
    if (!sent || normalizeMime(sent) !== normalizeMime(obj.contentType)) throw storageErrors.contentTypeMismatch(obj.contentType, sent);
    if (declaredLength !== undefined) {
      const n = Number(declaredLength);
      if (n > obj.sizeBytes) throw storageErrors.uploadTooLarge(obj.sizeBytes);
      if (n < obj.sizeBytes) throw storageErrors.sizeMismatch(obj.sizeBytes, n);
    }

    const received = await local.receive(obj, body).catch((err: unknown) => {
      if (!(err instanceof ReceiveError)) throw err;
      if (err.reason === 'too_large') throw storageErrors.uploadTooLarge(obj.sizeBytes);
      throw storageErrors.sizeMismatch(obj.sizeBytes, err.received);
    });

    let won = false;
    let renamed = false;
    try {
      won = await this.#db.transaction().execute(async (tx) => {
        const { rows } = await sql<{ id: string }>`
          update storage_objects set status = 'ready', expires_at = null
          where id = ${objectId}::uuid and status = 'pending' and expires_at > now()
          returning id
        `.execute(tx);
        if (!rows[0]) return false;
        await received.commit();
        renamed = true;
        await recordUsage(tx, obj.appId, STORAGE_METER, obj.sizeBytes);
        return true;
      });
    } finally {
      if (!won) await received.discard();
      // The row stayed pending (the commit failed after the rename): its place must stay empty.
      if (!won && renamed) await rm(local.objectPath(obj.appId, obj.id), { force: true });
    }
    if (!won) {
      const now = await this.#byId(objectId);
      if (!now) throw storageErrors.uploadNotFound();
      if (now.status === 'ready') throw storageErrors.alreadyUploaded();
      throw storageErrors.urlExpired();
    }
    return { objectId, size_bytes: obj.sizeBytes };
  }

  /** GET (or HEAD) of a local download URL, with single byte ranges (206, or 416 when unsatisfiable). */
  async getBlob(objectId: string, query: Record<string, unknown>, rangeHeader: string | undefined, head: boolean): Promise<BlobResponse> {
    const local = this.#requireLocal();
    const grant = parseGrant(objectId, query, 'get');
    const verdict = this.#signer.verify({ ...grant, contentType: '', sizeBytes: undefined }, grant.sig);
    if (verdict === 'bad_signature') throw storageErrors.invalidSignature();
    if (verdict === 'expired') throw storageErrors.urlExpired();
    const row = await this.#byId(objectId);
    if (!row || row.status !== 'ready') throw storageErrors.objectNotFound(objectId);
    const size = await local.size(row.app_id, row.id);
    if (size === undefined) {
      this.#log.error({ object_id: objectId, app_id: row.app_id }, 'a ready object has no bytes on disk');
      throw storageErrors.objectNotFound(objectId);
    }
    const headers: Record<string, string> = {
      'Content-Type': row.content_type,
      'Content-Disposition': contentDisposition(row.filename),
      'Accept-Ranges': 'bytes',
      ETag: `"${row.id}"`,
      'Last-Modified': row.created_at.toUTCString(),
      'Cache-Control': 'private, max-age=3600',
      // User content on the platform's origin: never sniffed, never a live document.
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy': "default-src 'none'; sandbox",
    };
    const range = parseRange(rangeHeader, size);
    if (range === 'unsatisfiable') throw storageErrors.rangeNotSatisfiable(size);
    if (range) {
      headers['Content-Range'] = `bytes ${range.start}-${range.end}/${size}`;
      headers['Content-Length'] = String(range.end - range.start + 1);
      return { appId: row.app_id, status: 206, headers, body: head ? undefined : local.read(row.app_id, row.id, range) };
    }
    headers['Content-Length'] = String(size);
    return { appId: row.app_id, status: 200, headers, body: head ? undefined : local.read(row.app_id, row.id) };
  }

  // ---- background work ------------------------------------------------------------------------------------

  /** Cron: resolves pending uploads whose time is up (S3: bytes that did arrive become ready; the rest go). */
  async settleExpired(batch = 500): Promise<number> {
    const { rows } = await sql<ObjectRow>`
      select * from storage_objects where status = 'pending' and expires_at <= now() order by expires_at limit ${batch}
    `.execute(this.#db);
    await this.#settle(rows);
    return rows.length;
  }

  /** Removes an object's bytes; used after a delete and by the storage_delete_object job (idempotent). */
  async removeBytes(obj: Pick<ObjectRef, 'appId' | 'id' | 'key'>): Promise<void> {
    await this.backend.remove(obj);
  }

  /**
   * App deletion (apps_purge_files job; the rows went with the app by cascade): every object under the app's
   * prefix goes, and the storage_bytes meter is brought back to zero. Safe to run twice.
   */
  async purgeApp(appId: string): Promise<void> {
    await this.backend.purgeApp(appId);
    await this.#db.transaction().execute(async (tx) => {
      await sql`select pg_advisory_xact_lock(hashtextextended(${'storage:' + appId}, 0))`.execute(tx);
      const balance = await meterBalance(tx, appId, STORAGE_METER);
      if (balance !== 0) await recordUsage(tx, appId, STORAGE_METER, -balance);
    });
    this.#log.info({ app_id: appId }, 'storage purged');
  }

  close(): void {
    this.backend.close();
  }

  // ---- internals ------------------------------------------------------------------------------------------

  #requireLocal(): LocalBackend {
    const local = this.local;
    // The blob routes only exist for the local backend; with S3 the URLs point at the bucket.
    if (!local) throw storageErrors.noBlobRoutes();
    return local;
  }

  async #byId(objectId: string): Promise<ObjectRow | undefined> {
    const { rows } = await sql<ObjectRow>`select * from storage_objects where id = ${objectId}::uuid`.execute(this.#db);
    return rows[0];
  }

  /** The caller's object: 404 when it does not exist, belongs to another app, or (for an end user) to someone else. */
  async #find(appId: string, owner: Owner, objectId: string): Promise<ObjectRow> {
    if (!UUID_RE.test(objectId)) throw storageErrors.objectNotFound(objectId);
    const { rows } = await sql<ObjectRow>`
      select * from storage_objects where id = ${objectId}::uuid and app_id = ${appId} ${scope(owner)}
    `.execute(this.#db);
    if (!rows[0]) throw storageErrors.objectNotFound(objectId);
    return rows[0];
  }

  async #pending(appId: string, owner: Owner, expiredOnly: boolean): Promise<ObjectRow[]> {
    const { rows } = await sql<ObjectRow>`
      select * from storage_objects
      where app_id = ${appId} and status = 'pending' ${scope(owner)} ${expiredOnly ? sql`and expires_at <= now()` : sql``}
      order by created_at desc limit ${PROBE_BATCH}
    `.execute(this.#db);
    return rows;
  }

  /** Refuses (429) an end user's upload beyond their pending-upload cap; call under the app's storage lock. */
  async #checkUserPending(tx: Kysely<ControlDatabase>, appId: string, userId: string, size: number, max: PendingReservations): Promise<void> {
    const { rows } = await sql<{ uploads: number; bytes: string; retry_after: number | null }>`
      select count(*)::int as uploads, coalesce(sum(size_bytes), 0)::text as bytes,
             ceil(extract(epoch from min(expires_at) - now()))::int as retry_after
      from storage_objects
      where app_id = ${appId} and user_id = ${userId}::uuid and status = 'pending' and expires_at > now()
    `.execute(tx);
    const pending = { uploads: rows[0]?.uploads ?? 0, bytes: Number(rows[0]?.bytes ?? 0) };
    if (pending.uploads >= max.uploads || pending.bytes + size > max.bytes) {
      // Refusal implies a pending upload (size alone fits, see createUpload): the first expiry is the earliest relief.
      throw storageErrors.pendingLimitExceeded(size, pending, max, Math.max(1, rows[0]?.retry_after ?? 1));
    }
  }

  async #usage(db: Kysely<ControlDatabase>, appId: string): Promise<{ used_bytes: number; pending_bytes: number }> {
    const { rows } = await sql<{ used: string; pending: string }>`
      select coalesce(sum(size_bytes) filter (where status = 'ready'), 0)::text as used,
             coalesce(sum(size_bytes) filter (where status = 'pending' and expires_at > now()), 0)::text as pending
      from storage_objects where app_id = ${appId}
    `.execute(db);
    return { used_bytes: Number(rows[0]?.used ?? 0), pending_bytes: Number(rows[0]?.pending ?? 0) };
  }

  async #overrides(appId: string): Promise<LimitsOverrides> {
    const { rows } = await sql<{ max_file_bytes: string | null; max_app_bytes: string | null; allowed_content_types: string[] | null }>`
      select max_file_bytes::text, max_app_bytes::text, allowed_content_types from storage_limits where app_id = ${appId}
    `.execute(this.#db);
    const row = rows[0];
    return {
      max_file_bytes: row?.max_file_bytes == null ? null : Number(row.max_file_bytes),
      max_app_bytes: row?.max_app_bytes == null ? null : Number(row.max_app_bytes),
      allowed_content_types: row?.allowed_content_types ?? null,
    };
  }

  /**
   * Limits in force: an override, never above the platform limit (one stored before the operator lowered that
   * limit does not loosen it), or the platform default. The platform allow-list and the app's must both allow a type.
   */
  async #effective(appId: string): Promise<EffectiveLimits> {
    const overrides = await this.#overrides(appId);
    const { storage } = this.#config;
    const allowLists: (readonly string[])[] = [];
    if (storage.allowedContentTypes.length) allowLists.push(storage.allowedContentTypes);
    if (overrides.allowed_content_types) allowLists.push(overrides.allowed_content_types);
    const maxApp = Math.min(overrides.max_app_bytes ?? storage.maxAppBytes, storage.maxAppBytes);
    return {
      overrides,
      maxFile: Math.min(overrides.max_file_bytes ?? storage.maxFileBytes, storage.maxFileBytes),
      maxApp,
      allowLists,
      userPending: { uploads: storage.userPendingUploads, bytes: Math.ceil((maxApp * storage.userPendingPercent) / 100) },
    };
  }

  /**
   * Resolves pending rows. S3: a HEAD showing the declared size and type makes the row ready (and meters it);
   * bytes of another size or type are deleted with their row (a strict S3 refuses such a PUT already, through
   * the signature); nothing there and expired: the row goes. Local: only expired rows reach here; they go with
   * any partial file.
   */
  async #settle(rows: ObjectRow[]): Promise<void> {
    if (!rows.length) return;
    const queue = [...rows];
    const worker = async () => {
      for (let row = queue.shift(); row; row = queue.shift()) {
        try {
          await this.#settleOne(row);
        } catch (err) {
          this.#log.warn({ err, object_id: row.id, app_id: row.app_id }, 'settling a pending upload failed');
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(PROBE_CONCURRENCY, rows.length) }, worker));
  }

  async #settleOne(row: ObjectRow): Promise<void> {
    const obj = ref(row);
    const found = await this.backend.probe(obj);
    if (found) {
      const matches = found.sizeBytes === obj.sizeBytes && found.contentType !== undefined && normalizeMime(found.contentType) === normalizeMime(obj.contentType);
      if (matches) {
        await this.#db.transaction().execute(async (tx) => {
          const { rows: flipped } = await sql`
            update storage_objects set status = 'ready', expires_at = null where id = ${row.id}::uuid and status = 'pending' returning id
          `.execute(tx);
          if (flipped.length) await recordUsage(tx, obj.appId, STORAGE_METER, obj.sizeBytes);
        });
        return;
      }
      this.#log.warn({ object_id: row.id, declared: [obj.sizeBytes, obj.contentType], found }, 'uploaded bytes differ from the declaration; discarded');
      await this.#discard(row, false);
      return;
    }
    if (row.expires_at && row.expires_at.getTime() <= Date.now()) await this.#discard(row, true);
  }

  /** Deletes a pending row (only while still pending) and whatever bytes sit at its place. */
  async #discard(row: ObjectRow, expiredOnly: boolean): Promise<void> {
    const { rows } = await sql`
      delete from storage_objects where id = ${row.id}::uuid and status = 'pending' ${expiredOnly ? sql`and expires_at <= now()` : sql``} returning id
    `.execute(this.#db);
    if (rows.length) await this.backend.remove(ref(row));
  }
}

interface ParsedGrant {
  op: 'put' | 'get';
  objectId: string;
  exp: number;
  sig: string;
}

/** The signed parts of a blob URL; anything malformed cannot carry a valid signature (403). */
function parseGrant(objectId: string, query: Record<string, unknown>, op: 'put' | 'get'): ParsedGrant {
  const { op: qop, exp, sig } = query;
  if (!UUID_RE.test(objectId) || qop !== op || typeof exp !== 'string' || !/^\d{1,12}$/.test(exp) || typeof sig !== 'string') {
    throw storageErrors.invalidSignature();
  }
  return { op, objectId, exp: Number(exp), sig };
}
