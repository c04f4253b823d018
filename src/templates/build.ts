// Building a shipped template from its source at install: each function bundled with the files it imports (a
// template's shared lib) into one module, and a site's TypeScript entry bundled with its npm imports beside the
// site's static files (src/core/bundle.ts: in memory, nothing committed, nothing fetched at run time).
import path from 'node:path';
import type { BuildOptions, OutputFile } from 'esbuild';
import { BROWSER, bundle, BundleError } from '../core/bundle.ts';
import { inside, listFiles } from './files.ts';

/** The folder of a site that holds its sources: built, never served. */
const SOURCES = 'src';
/** Specifiers Deno resolves itself when the function runs, left as they are. */
const DENO_SPECIFIERS = ['npm:*', 'jsr:*', 'node:*', 'https://*', 'http://*'];

export interface SiteFile {
  path: string;
  bytes: Buffer;
}

export interface SiteBuild {
  /** Entry files relative to the site folder, e.g. src/main.tsx. */
  entry: string | string[];
  /** Folder of the site (relative) where each entry lands as <entry name>.js (and .css when it imports CSS). */
  out: string;
}

/** A template that cannot be built: the install of that template fails with this message. */
export class TemplateBuildError extends Error {}

/**
 * Each function file bundled into one ES module keeping its default export, by function name. One esbuild run for
 * all of them: a template's functions share their lib, and one failing file fails the template.
 */
export async function bundleFunctions(dir: string, files: Readonly<Record<string, string>>): Promise<Record<string, string>> {
  if (!Object.keys(files).length) return {};
  const out = await run(`functions of ${dir}`, {
    absWorkingDir: dir,
    entryPoints: Object.entries(files).map(([name, file]) => ({ in: file, out: name })),
    outdir: path.join(dir, '.bundle'),
    platform: 'neutral',
    external: DENO_SPECIFIERS,
  });
  const code: Record<string, string> = {};
  for (const name of Object.keys(files)) code[name] = byPath(out, path.join(dir, '.bundle', `${name}.js`)).text;
  return code;
}

/**
 * The site's files as deployed: every file of `dir` outside src/, plus the bundled entries under `build.out`
 * (TSX with preact's JSX, npm imports from the project's node_modules, minified). A built file may not replace a
 * static one.
 */
export async function buildSite(dir: string, spec: SiteBuild): Promise<SiteFile[]> {
  const outdir = inside(dir, spec.out);
  const entries = [spec.entry].flat().map((e) => inside(dir, e));
  const statics = (await listFiles(dir)).filter((f) => f.path !== SOURCES && !f.path.startsWith(`${SOURCES}/`));
  const built = await run(`site of ${dir}`, {
    absWorkingDir: dir,
    entryPoints: entries,
    outdir,
    entryNames: '[name]',
    assetNames: '[name]-[hash]',
    ...BROWSER,
  });
  const files = built.map((f) => ({ path: path.relative(dir, f.path).split(path.sep).join('/'), bytes: Buffer.from(f.contents) }));
  const taken = new Set(statics.map((f) => f.path));
  const clash = files.find((f) => taken.has(f.path));
  if (clash) throw new TemplateBuildError(`site of ${dir}: the built ${clash.path} would replace a file of the site; choose another build.out`);
  return [...statics, ...files];
}

/** A template's build failure is the template's: its install fails with the message. */
async function run(what: string, options: BuildOptions): Promise<OutputFile[]> {
  return bundle(what, options).catch((err: unknown) => {
    throw err instanceof BundleError ? new TemplateBuildError(err.message) : err;
  });
}

function byPath(files: readonly OutputFile[], full: string): OutputFile {
  const file = files.find((f) => f.path === full);
  if (!file) throw new Error(`esbuild wrote no ${full}`);
  return file;
}
