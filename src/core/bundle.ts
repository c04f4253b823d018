// esbuild in memory, for the code the platform builds from source in the repository at install or start: a shipped
// template's functions and site (src/templates/build.ts) and the web console (src/console/build.ts). Nothing is
// written to disk and nothing of it is committed; nothing is fetched at run time.
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions, type OutputFile } from 'esbuild';

/** The project's own packages: a browser bundle's npm imports resolve here wherever its source folder is. */
const NODE_MODULES = fileURLToPath(new URL('../../node_modules/', import.meta.url));
/** Files browser code may import by URL (a CSS url() or an import), copied under a hashed name. */
const ASSET_LOADERS = Object.fromEntries(['.png', '.jpg', '.jpeg', '.gif', '.svg', '.webp', '.ico', '.woff', '.woff2'].map((ext) => [ext, 'file' as const]));

/** Source that does not build; the message names each error's file:line:column. */
export class BundleError extends Error {}

/**
 * A browser bundle: TSX with preact's JSX, npm imports from the project's node_modules, minified, the production
 * build of every library. `entryPoints`, `outdir` and names are the caller's.
 */
export const BROWSER: BuildOptions = {
  platform: 'browser',
  minify: true,
  jsx: 'automatic',
  jsxImportSource: 'preact',
  loader: ASSET_LOADERS,
  nodePaths: [NODE_MODULES],
  define: { 'process.env.NODE_ENV': '"production"' },
};

/** One esbuild run to ES2022 modules, kept in memory; `what` names the source in a BundleError. */
export async function bundle(what: string, options: BuildOptions): Promise<OutputFile[]> {
  try {
    const result = await build({ ...options, bundle: true, format: 'esm', target: 'es2022', write: false, logLevel: 'silent', charset: 'utf8' });
    return result.outputFiles;
  } catch (err) {
    const errors = (err as { errors?: Array<{ text: string; location: { file: string; line: number; column: number } | null }> }).errors;
    if (!errors) throw err;
    const lines = errors.map((e) => (e.location ? `${e.location.file}:${e.location.line}:${e.location.column}: ${e.text}` : e.text));
    throw new BundleError(`${what} did not build: ${lines.join('; ')}`);
  }
}
