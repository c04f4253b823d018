// The web console built from its source in the repository (console/) when an api process starts: its script bundled
// by esbuild in memory (src/core/bundle.ts), split so that each page's code loads when the page is first opened
// (main.js plus chunks it imports, and one chunk per lazily loaded page), its page and stylesheet read as they are. No build output is committed
// and nothing is fetched at run time, so the two-command set-up stays two commands and the console works offline.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BROWSER, bundle } from '../core/bundle.ts';

/** The console's source folder at the repository's root. */
export const CONSOLE_DIR = fileURLToPath(new URL('../../console/', import.meta.url));
/** The files served as they are; the script is built from src/main.tsx into main.js. */
const STATIC_FILES = ['index.html', 'styles.css'];
const ENTRY = 'src/main.tsx';
export const SCRIPT = 'main.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
};

export interface ConsoleFile {
  bytes: Buffer;
  type: string;
}

/** The console's files by their path under /console/ (index.html, main.js, chunk-<hash>.js, styles.css). */
export type ConsoleFiles = ReadonlyMap<string, ConsoleFile>;

const fileOf = (name: string, bytes: Buffer): ConsoleFile => ({ bytes, type: TYPES[path.extname(name)] ?? 'application/octet-stream' });

/** Builds the console of `dir`; a BundleError names the source line that does not build. */
export async function buildConsole(dir = CONSOLE_DIR): Promise<ConsoleFiles> {
  const [built, ...statics] = await Promise.all([
    bundle('the console', { ...BROWSER, absWorkingDir: dir, entryPoints: { main: path.join(dir, ENTRY) }, outdir: dir, splitting: true, chunkNames: 'chunk-[hash]' }),
    ...STATIC_FILES.map((name) => readFile(path.join(dir, name))),
  ]);
  const files = new Map<string, ConsoleFile>(STATIC_FILES.map((name, i) => [name, fileOf(name, statics[i]!)]));
  for (const out of built) {
    const name = path.relative(dir, out.path).split(path.sep).join('/');
    files.set(name, fileOf(name, Buffer.from(out.contents)));
  }
  if (!files.has(SCRIPT)) throw new Error(`the console's build wrote no ${SCRIPT}`);
  return files;
}
