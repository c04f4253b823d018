// Reading a folder of site files for a deployment (a template's site, a shipped template's site folder), and paths
// a shipped template names, kept inside its folder.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

/** Every file under `dir`, with its path relative to it ('/'-separated); ENOENT when the folder is gone. */
export async function listFiles(dir: string): Promise<Array<{ path: string; bytes: Buffer }>> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return Promise.all(
    entries
      .filter((e) => e.isFile())
      .map(async (e) => {
        const full = path.join(e.parentPath, e.name);
        return { path: path.relative(dir, full).split(path.sep).join('/'), bytes: await readFile(full) };
      }),
  );
}

/** A path named by a shipped template's template.json, refused when it leaves the template's folder. */
export function inside(dir: string, name: string): string {
  const full = path.resolve(dir, name);
  if (!full.startsWith(path.resolve(dir) + path.sep)) throw new Error(`${name}: outside the template's folder`);
  return full;
}
