import { randomBytes } from 'node:crypto';
import { createReadStream, type ReadStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { UrlSigner } from './signing.ts';
import type { ObjectRef, Probe, StorageBackend } from './types.ts';

const APP_ID_RE = /^[a-z0-9]{16}$/;
const OBJECT_ID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Why a PUT body was not stored. */
export class ReceiveError extends Error {
  readonly reason: 'too_large' | 'too_small' | 'aborted';
  readonly received: number;
  constructor(reason: 'too_large' | 'too_small' | 'aborted', received: number) {
    super(`upload ${reason} after ${received} bytes`);
    this.reason = reason;
    this.received = received;
  }
}

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

  constructor(dataDir: string, baseUrl: string, signer: UrlSigner) {
    this.#root = path.join(dataDir, 'storage');
    this.#baseUrl = baseUrl;
    this.#signer = signer;
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

  /**
   * Streams the body into a fresh temporary file beside the final one, refusing more than the declared size
   * (reading stops at the first byte beyond it; the request stream is paused, never destroyed, so the caller
   * can still answer) and fewer. Nothing is left behind on any failure.
   */
  async receive(obj: ObjectRef, body: Readable): Promise<Received> {
    const dir = this.appDir(obj.appId);
    const final = this.objectPath(obj.appId, obj.id);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const temp = path.join(dir, `.${obj.id}.${randomBytes(6).toString('hex')}.part`);
    const file = await open(temp, 'wx', 0o600);
    let received = 0;
    try {
      await new Promise<void>((resolve, reject) => {
        let done = false;
        const finish = (err?: Error) => {
          if (done) return;
          done = true;
          body.off('data', onData).off('end', onEnd).off('error', onAbort).off('close', onClose);
          if (err) {
            body.pause();
            reject(err);
          } else {
            resolve();
          }
        };
        const onData = (chunk: Buffer) => {
          received += chunk.length;
          if (received > obj.sizeBytes) return finish(new ReceiveError('too_large', received));
          body.pause();
          file.write(chunk).then(
            () => {
              if (!done) body.resume();
            },
            (err: Error) => finish(err),
          );
        };
        const onEnd = () => finish(received < obj.sizeBytes ? new ReceiveError('too_small', received) : undefined);
        const onAbort = () => finish(new ReceiveError('aborted', received));
        const onClose = () => finish(new ReceiveError('aborted', received));
        body.on('data', onData).on('end', onEnd).on('error', onAbort).on('close', onClose);
        body.resume();
      });
      await file.sync();
      await file.close();
    } catch (err) {
      await file.close().catch(() => {});
      await rm(temp, { force: true });
      throw err;
    }
    return {
      commit: async () => {
        await rename(temp, final);
        await syncDir(dir);
      },
      discard: () => rm(temp, { force: true }),
    };
  }

  async size(appId: string, objectId: string): Promise<number | undefined> {
    try {
      return (await stat(this.objectPath(appId, objectId))).size;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  read(appId: string, objectId: string, range?: { start: number; end: number }): ReadStream {
    return createReadStream(this.objectPath(appId, objectId), range ? { start: range.start, end: range.end } : {});
  }

  async remove(obj: Pick<ObjectRef, 'appId' | 'id'>): Promise<void> {
    const dir = this.appDir(obj.appId);
    await rm(this.objectPath(obj.appId, obj.id), { force: true });
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    const partial = `.${obj.id}.`;
    await Promise.all(names.filter((n) => n.startsWith(partial) && n.endsWith('.part')).map((n) => rm(path.join(dir, n), { force: true })));
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
