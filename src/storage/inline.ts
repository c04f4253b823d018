// Inline transfers: a small file's bytes given in the call (upload) or returned by it (read), for MCP clients
// that cannot make HTTP requests of their own.
import type { LocalBlobs } from './blobs.ts';
import type { StorageContext } from './context.ts';
import { storageErrors } from './errors.ts';
import { objectView, type ListedObject, type ObjectRow, type ObjectRows, type Owner } from './objects.ts';
import type { Settlement } from './settlement.ts';
import type { Tickets, UploadRequest } from './tickets.ts';

/**
 * Largest file stored or read inline (base64 in a tool call): 2 MiB decoded is 2.67 MiB of base64, which fits
 * the 4 MB /mcp body with room for the JSON-RPC envelope. The app's own per-file limit applies too.
 */
export const INLINE_MAX_BYTES = 2 * 1024 * 1024;

/** An inline upload, stored: what to persist (objectId) and the file as storage_list shows it. */
export interface InlineStored extends ListedObject {
  objectId: string;
  objectKey: string;
}

export type InlineDeps = Pick<StorageContext, 'log'> & {
  rows: ObjectRows;
  tickets: Tickets;
  blobs: LocalBlobs;
  settlement: Settlement;
};

export class InlineTransfers {
  readonly #deps: InlineDeps;

  constructor(deps: InlineDeps) {
    this.#deps = deps;
  }

  /**
   * A small file whose bytes come with the request. It takes exactly the presigned path: createUpload (limits,
   * content types, quota, the end user's pending cap, a pending reservation), then the bytes arrive through the
   * same receive step as a PUT to the upload URL (local disk) or are PUT to the bucket's presigned URL and settled
   * (S3). Nothing stays behind on a refusal: a failure after the reservation removes the pending row and any bytes.
   */
  async upload(appId: string, owner: Owner, req: Omit<UploadRequest, 'sizeBytes'>, bytes: Buffer): Promise<InlineStored> {
    const { rows, tickets, blobs, settlement } = this.#deps;
    if (bytes.length > INLINE_MAX_BYTES) throw storageErrors.inlineTooLarge(bytes.length, INLINE_MAX_BYTES);
    if (bytes.length === 0) throw storageErrors.inlineEmpty();
    const ticket = await tickets.createUpload(appId, owner, { ...req, sizeBytes: bytes.length });
    const pending = await rows.byId(ticket.objectId);
    if (!pending) throw storageErrors.uploadNotFound();
    try {
      if (blobs.local) await blobs.receiveInline(pending, bytes);
      else await this.#putToBucket(ticket.uploadUrl, pending, bytes);
      const row = await rows.byId(ticket.objectId);
      if (row?.status !== 'ready') throw new Error(`inline upload ${ticket.objectId} did not become ready`);
      return { objectId: row.id, objectKey: row.object_key, ...objectView(row) };
    } catch (err) {
      await settlement.discard(pending, false).catch((e: unknown) => this.#deps.log.warn({ err: e, object_id: pending.id }, 'removing a failed inline upload failed'));
      throw err;
    }
  }

  /**
   * The bytes of a small file, for callers that cannot fetch a download URL; files above `maxBytes` are refused
   * (413) with the download URL as the way. Same visibility as download.
   */
  async read(appId: string, owner: Owner, objectId: string, maxBytes: number): Promise<{ object: ListedObject; bytes: Buffer }> {
    const { blobs, settlement } = this.#deps;
    const row = await settlement.findReady(appId, owner, objectId);
    const size = Number(row.size_bytes);
    if (size > maxBytes) throw storageErrors.inlineReadTooLarge(objectId, size, maxBytes);
    const bytes = blobs.local ? await blobs.readAll(row) : await this.#getFromBucket(row);
    return { object: objectView(row), bytes };
  }

  /** S3: the bytes go to the presigned PUT URL like a client's, then the row is settled by its probe. */
  async #putToBucket(uploadUrl: string, pending: ObjectRow, bytes: Buffer): Promise<void> {
    const res = await fetch(uploadUrl, { method: 'PUT', headers: { 'content-type': pending.content_type }, body: new Uint8Array(bytes) });
    await res.body?.cancel();
    if (!res.ok) throw new Error(`the object store refused the inline upload's PUT: HTTP ${res.status}`);
    await this.#deps.settlement.settle([pending]);
  }

  async #getFromBucket(row: ObjectRow): Promise<Buffer> {
    const res = await fetch(await this.#deps.tickets.downloadUrl(row));
    if (!res.ok) {
      await res.body?.cancel();
      throw new Error(`the object store answered HTTP ${res.status} for object ${row.id}`);
    }
    return Buffer.from(await res.arrayBuffer());
  }
}
