// The console as served: built once when an api process starts, its files looked up by path. A request that comes
// before the build ends waits for it; a build that failed is logged once and leaves the console unavailable.
import type { Logger } from 'pino';
import { buildConsole, SCRIPT, type ConsoleFile, type ConsoleFiles } from './build.ts';

/**
 * The approval page's rules (never framed, no-store, nosniff, no referrer), with the console's own policy: script and
 * stylesheet from the console's folder only (`own`, its CSP sources: not 'self', which tenants' paths share), no
 * inline code or style, and calls to this origin only.
 */
export function consolePolicy(own: string): string {
  return `default-src 'none'; script-src ${own}; style-src ${own}; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;
}

/** A file of the console, or why there is none. */
export type Lookup = { file: ConsoleFile } | { missing: 'file' | 'console' };

export class ConsoleSite {
  readonly #files: Promise<ConsoleFiles | null>;

  constructor(log: Logger, build: () => Promise<ConsoleFiles> = buildConsole) {
    const started = Date.now();
    this.#files = build().then(
      (files) => (log.info({ ms: Date.now() - started, script_bytes: files.get(SCRIPT)?.bytes.length }, 'console built'), files),
      (err: unknown) => (log.error({ err }, 'console not built: /console answers 503'), null),
    );
  }

  /** The file at `path` under /console/ ('/' is the page). */
  async lookup(path: string): Promise<Lookup> {
    const files = await this.#files;
    if (!files) return { missing: 'console' };
    const file = files.get(path === '/' ? 'index.html' : path.slice(1));
    return file ? { file } : { missing: 'file' };
  }
}
