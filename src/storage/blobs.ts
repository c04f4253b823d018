// The local-disk backend as the storage service uses it: the signed blob routes (PUT receives an upload's
// bytes, GET streams a ready object's) and the reads and writes of inline transfers.
import { rm } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import { buffer as readAll } from 'node:stream/consumers';
import { sql } from 'kysely';
import { recordUsage } from '../usage/meters.ts';
import type { StorageContext } from './context.ts';
import { storageErrors } from './errors.ts';
import { LocalBackend, ReceiveError } from './local.ts';
import { contentDisposition, normalizeMime, parseRange, type ByteRange } from './names.ts';
import { ref, STORAGE_METER, UUID_RE, type ObjectRow, type ObjectRows } from './objects.ts';

/** The result of a blob GET: headers plus the body to stream (none for HEAD). */
export interface BlobResponse {
  /** The app the object belongs to (its bandwidth). */
  appId: string;
  status: 200 | 206;
  headers: Record<string, string>;
  body: Readable | undefined;
}

/** What a stored upload reports. */
export interface Received {
  objectId: string;
  size_bytes: number;
}

interface ParsedGrant {
  op: 'put' | 'get';
  objectId: string;
  exp: number;
  sig: string;
}

export type LocalBlobsDeps = Pick<StorageContext, 'db' | 'log' | 'signer' | 'backend'> & { rows: ObjectRows };

export class LocalBlobs {
  /** The local backend when it is the configured one (its blob routes exist only then). */
  readonly local: LocalBackend | undefined;
  readonly #deps: LocalBlobsDeps;

  constructor(deps: LocalBlobsDeps) {
    this.local = deps.backend instanceof LocalBackend ? deps.backend : undefined;
    this.#deps = deps;
  }

  /**
   * PUT of the bytes to a local upload URL. Refuses a bad or expired signature (403), a used URL (409), another
   * Content-Type (415), more bytes than declared (413) or fewer (400). The bytes go to a temporary file; the
   * rename into place happens inside the transaction that flips the row pending -> ready, so concurrent PUTs
   * to one URL have exactly one winner and nothing partial is ever visible.
   */
  async putBlob(objectId: string, query: Record<string, unknown>, headers: IncomingHttpHeaders, body: Readable): Promise<Received> {
    const local = this.#requireLocal();
    const grant = parseGrant(objectId, query, 'put');
    const row = await this.#deps.rows.byId(objectId);
    if (!row) throw storageErrors.uploadNotFound();
    const obj = ref(row);
    const verdict = this.#deps.signer.verify({ ...grant, contentType: obj.contentType, sizeBytes: obj.sizeBytes }, grant.sig);
    if (verdict === 'bad_signature') throw storageErrors.invalidSignature();
    if (verdict === 'expired') throw storageErrors.urlExpired();
    return this.#receive(local, row, headers['content-type'], headers['content-length'], body);
  }

  /** Inline content of a pending upload arriving: the same receive step as a PUT to its URL. */
  async receiveInline(row: ObjectRow, bytes: Buffer): Promise<Received> {
    return this.#receive(this.#requireLocal(), row, row.content_type, String(bytes.length), Readable.from([bytes]));
  }

  /** GET (or HEAD) of a local download URL, with single byte ranges (206, or 416 when unsatisfiable). */
  async getBlob(objectId: string, query: Record<string, unknown>, rangeHeader: string | undefined, head: boolean): Promise<BlobResponse> {
    const local = this.#requireLocal();
    const grant = parseGrant(objectId, query, 'get');
    const verdict = this.#deps.signer.verify({ ...grant, contentType: '', sizeBytes: undefined }, grant.sig);
    if (verdict === 'bad_signature') throw storageErrors.invalidSignature();
    if (verdict === 'expired') throw storageErrors.urlExpired();
    const row = await this.#deps.rows.byId(objectId);
    if (!row || row.status !== 'ready') throw storageErrors.objectNotFound(objectId);
    const size = await this.#sizeOnDisk(local, row);
    const headers = blobHeaders(row);
    const range = parseRange(rangeHeader, size);
    if (range === 'unsatisfiable') throw storageErrors.rangeNotSatisfiable(size);
    if (range) {
      headers['Content-Range'] = `bytes ${range.start}-${range.end}/${size}`;
      headers['Content-Length'] = String(range.end - range.start + 1);
      return { appId: row.app_id, status: 206, headers, body: head ? undefined : await this.#open(local, row, range) };
    }
    headers['Content-Length'] = String(size);
    return { appId: row.app_id, status: 200, headers, body: head ? undefined : await this.#open(local, row) };
  }

  /** All the bytes of a ready object (inline reads). */
  async readAll(row: ObjectRow): Promise<Buffer> {
    const local = this.#requireLocal();
    return readAll(await this.#open(local, row));
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
  ): Promise<Received> {
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
      won = await this.#deps.db.transaction().execute(async (tx) => {
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
      const now = await this.#deps.rows.byId(objectId);
      if (!now) throw storageErrors.uploadNotFound();
      if (now.status === 'ready') throw storageErrors.alreadyUploaded();
      throw storageErrors.urlExpired();
    }
    return { objectId, size_bytes: obj.sizeBytes };
  }

  /** The size of a ready object's file; a missing file is a 404 to the caller and an error in the log. */
  async #sizeOnDisk(local: LocalBackend, row: ObjectRow): Promise<number> {
    return (await local.size(row.app_id, row.id)) ?? this.#missing(row);
  }

  /** A ready object's bytes; a missing file is a 404 to the caller and an error in the log. */
  async #open(local: LocalBackend, row: ObjectRow, range?: ByteRange): Promise<Readable> {
    const body = await local.read(ref(row), range);
    if (!body) return this.#missing(row);
    return body;
  }

  #missing(row: ObjectRow): never {
    this.#deps.log.error({ object_id: row.id, app_id: row.app_id }, 'a ready object has no bytes on disk');
    throw storageErrors.objectNotFound(row.id);
  }

  #requireLocal(): LocalBackend {
    // The blob routes only exist for the local backend; with S3 the URLs point at the bucket.
    if (!this.local) throw storageErrors.noBlobRoutes();
    return this.local;
  }
}

/** The response headers of a ready object's GET, before its length and range. */
function blobHeaders(row: ObjectRow): Record<string, string> {
  return {
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
}

/** The signed parts of a blob URL; anything malformed cannot carry a valid signature (403). */
function parseGrant(objectId: string, query: Record<string, unknown>, op: 'put' | 'get'): ParsedGrant {
  const { op: qop, exp, sig } = query;
  if (!UUID_RE.test(objectId) || qop !== op || typeof exp !== 'string' || !/^\d{1,12}$/.test(exp) || typeof sig !== 'string') {
    throw storageErrors.invalidSignature();
  }
  return { op, objectId, exp: Number(exp), sig };
}
