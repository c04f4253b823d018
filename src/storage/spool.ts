// Bytes arriving through the API (a presigned PUT to the local blob route, a direct upload of storage-js) are written
// to a temporary file first: nothing partial ever sits at an object's place, a refused body leaves nothing behind, and
// a backend stores only complete files (local disk renames one into place; S3 puts it).
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';

/** Why a body was not spooled. */
export class ReceiveError extends Error {
  readonly reason: 'too_large' | 'too_small' | 'aborted' | 'idle';
  readonly received: number;
  constructor(reason: ReceiveError['reason'], received: number) {
    super(`upload ${reason} after ${received} bytes`);
    this.reason = reason;
    this.received = received;
  }
}

/** A complete body in a temporary file (fsynced); `discard` removes it (a no-op once a backend moved it away). */
export interface Spooled {
  path: string;
  size: number;
  discard(): Promise<void>;
}

export interface SpoolLimits {
  /** Exactly this many bytes (a declared Content-Length): fewer is too_small, more too_large. */
  exact?: number | undefined;
  /** At most this many bytes (a multipart file, whose length nobody declared). */
  max: number;
  /** A body that sends nothing for this long is given up (idle), so a stalled client holds nothing for long. */
  idleMs?: number | undefined;
}

const TEMP_RE = /^[a-z0-9]{16}\.[0-9a-f-]{36}\.[0-9a-f]{12}\.part$/;

export class Spool {
  readonly #dir: string;

  /** `dir` must be on the same file system as the local backend's objects (a rename moves a file into place). */
  constructor(dir: string) {
    this.#dir = dir;
  }

  /**
   * Streams the body into a fresh temporary file named after the object, stopping at the first byte beyond the limit
   * (the stream is paused, never destroyed, so the caller can still answer). Nothing is left behind on any failure.
   */
  async receive(appId: string, objectId: string, body: Readable, limits: SpoolLimits): Promise<Spooled> {
    await mkdir(this.#dir, { recursive: true, mode: 0o700 });
    const temp = path.join(this.#dir, `${appId}.${objectId}.${randomBytes(6).toString('hex')}.part`);
    const file = await open(temp, 'wx', 0o600);
    const cap = limits.exact ?? limits.max;
    let received = 0;
    try {
      await new Promise<void>((resolve, reject) => {
        let done = false;
        let idle: NodeJS.Timeout | undefined;
        const arm = () => {
          if (!limits.idleMs) return;
          clearTimeout(idle);
          idle = setTimeout(() => finish(new ReceiveError('idle', received)), limits.idleMs);
        };
        const finish = (err?: Error) => {
          if (done) return;
          done = true;
          clearTimeout(idle);
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
          if (received > cap) return finish(new ReceiveError('too_large', received));
          body.pause();
          file.write(chunk).then(
            () => {
              if (done) return;
              arm();
              body.resume();
            },
            (err: Error) => finish(err),
          );
        };
        const onEnd = () => finish(limits.exact !== undefined && received < limits.exact ? new ReceiveError('too_small', received) : undefined);
        const onAbort = () => finish(new ReceiveError('aborted', received));
        const onClose = () => finish(new ReceiveError('aborted', received));
        body.on('data', onData).on('end', onEnd).on('error', onAbort).on('close', onClose);
        arm();
        body.resume();
      });
      await file.sync();
      await file.close();
    } catch (err) {
      await file.close().catch(() => {});
      await rm(temp, { force: true });
      throw err;
    }
    return { path: temp, size: received, discard: () => rm(temp, { force: true }) };
  }

  /** Removes temporary files older than `maxAgeMs`: what a process that stopped mid-upload left behind. */
  async sweep(maxAgeMs: number): Promise<void> {
    let names: string[];
    try {
      names = await readdir(this.#dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    const before = Date.now() - maxAgeMs;
    for (const name of names.filter((n) => TEMP_RE.test(n))) {
      const file = path.join(this.#dir, name);
      const at = await stat(file).then((s) => s.mtimeMs, () => undefined);
      if (at !== undefined && at < before) await rm(file, { force: true });
    }
  }
}
