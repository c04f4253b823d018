import { copyFile, mkdir, open, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { ByteRange } from './names.ts';
import type { UrlSigner } from './signing.ts';
import { ReceiveError, Spool } from './spool.ts';
import type { ObjectRef, Probe, StorageBackend } from './types.ts';

export { ReceiveError };

const APP_ID_RE = /^[a-z0-9]{16}$/;
const OBJECT_ID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Bytes written to a temporary file, complete and fsynced; `commit` moves them into place. */
export interface Received {
  commit(): Promise<void>;
  discard(): Promise<void>;
}

/**
 * The embedded default: bytes under `<data dir>/storage/<app_id>/<object_id>`, a path made only of the two
 * server-generated identifiers (both re-validated here), never of the filename or key. Upload and download
 * URLs point at the platform's own blob routes (src/transports/raw/storage.ts), signed with HMAC.
 */
export class LocalBackend implements StorageBackend {
  readonly kind = 'local' as const;
  readonly #root: string;
  readonly #baseUrl: string;
  readonly #signer: UrlSigner;
  readonly #spool: Spool;

  constructor(dataDir: string, baseUrl: string, signer: UrlSigner, spool: Spool) {
    this.#root = path.join(dataDir, 'storage');
    this.#baseUrl = baseUrl;
    this.#signer = signer;
    this.#spool = spool;
  }

  async uploadUrl(obj: ObjectRef, expUnix: number): Promise<string> {
    return this.#signer.url(this.#baseUrl, { op: 'put', objectId: obj.id, contentType: obj.contentType, sizeBytes: obj.sizeBytes, exp: expUnix });
  }

  async downloadUrl(obj: ObjectRef, expUnix: number): Promise<string> {
    return this.#signer.url(this.#baseUrl, { op: 'get', objectId: obj.id, contentType: '', sizeBytes: undefined, exp: expUnix });
  }

  async probe(): Promise<Probe | undefined> {
    return undefined;
  }

  appDir(appId: string): string {
    if (!APP_ID_RE.test(appId)) throw new Error(`not an app id: ${appId}`);
    return path.join(this.#root, appId);
  }

  objectPath(appId: string, objectId: string): string {
    if (!OBJECT_ID_RE.test(objectId)) throw new Error(`not an object id: ${objectId}`);
    return path.join(this.appDir(appId), objectId);
  }

  /** The body of a presigned PUT, exactly the declared size, spooled; `commit` moves it into place. */
  async receive(obj: ObjectRef, body: Readable): Promise<Received> {
    const spooled = await this.#spool.receive(obj.appId, obj.id, body, { exact: obj.sizeBytes, max: obj.sizeBytes });
    return { commit: () => this.write(obj, spooled.path), discard: spooled.discard };
  }

  /** Moves a complete temporary file into the object's place; fsync of the directory makes the rename durable. */
  async write(obj: Pick<ObjectRef, 'appId' | 'id'>, file: string): Promise<void> {
    await mkdir(this.appDir(obj.appId), { recursive: true, mode: 0o700 });
    await rename(file, this.objectPath(obj.appId, obj.id));
    await syncDir(this.appDir(obj.appId));
  }

  async copy(from: ObjectRef, to: ObjectRef): Promise<void> {
    await mkdir(this.appDir(to.appId), { recursive: true, mode: 0o700 });
    await copyFile(this.objectPath(from.appId, from.id), this.objectPath(to.appId, to.id));
  }

  async size(appId: string, objectId: string): Promise<number | undefined> {
    try {
      return (await stat(this.objectPath(appId, objectId))).size;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async read(obj: Pick<ObjectRef, 'appId' | 'id'>, range?: ByteRange): Promise<Readable | undefined> {
    let handle;
    try {
      handle = await open(this.objectPath(obj.appId, obj.id), 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
  }

  async remove(obj: Pick<ObjectRef, 'appId' | 'id'>): Promise<void> {
    await rm(this.objectPath(obj.appId, obj.id), { force: true });
  }

  async purgeApp(appId: string): Promise<void> {
    await rm(this.appDir(appId), { recursive: true, force: true });
  }

  close(): void {}
}

/** fsync of the directory makes the rename itself durable. */
async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
