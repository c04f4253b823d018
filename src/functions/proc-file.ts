import { closeSync, openSync, readSync } from 'node:fs';

/**
 * One /proc file of a child process (Linux), opened once and re-read from offset 0: procfs builds the text anew on
 * every read. Reads are synchronous on purpose: a /proc read takes microseconds and never waits on a disk, while an
 * asynchronous readFile costs an open, an fstat, reads and a close through the thread pool on every sample. Opened
 * while the child is unreaped (its pid cannot be reused yet), the descriptor keeps naming that process: once it is
 * gone a read fails instead of reading another process's file.
 */
export class ProcFile {
  readonly #path: string;
  readonly #buf: Buffer;
  /** undefined: not opened yet; null: unreadable for good (not Linux, or the process is gone). */
  #fd: number | null | undefined;

  constructor(path: string, maxBytes: number) {
    this.#path = path;
    this.#buf = Buffer.allocUnsafe(maxBytes);
  }

  /** The file's text (its first maxBytes), or undefined once it cannot be read. */
  read(): string | undefined {
    if (this.#fd === null) return undefined;
    try {
      this.#fd ??= openSync(this.#path, 'r');
      const n = readSync(this.#fd, this.#buf, 0, this.#buf.length, 0);
      return this.#buf.toString('latin1', 0, n);
    } catch {
      this.close();
      return undefined;
    }
  }

  close(): void {
    if (typeof this.#fd === 'number') closeSync(this.#fd);
    this.#fd = null;
  }
}
