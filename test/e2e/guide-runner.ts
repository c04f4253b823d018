// Runs a manual page's shell blocks as written (issue 45: each guide's commands run in a test): its ```sh blocks, in
// order, in one bash, against a server started as `npm start` runs it. Only the port (the guides' localhost:8080
// is the server's port) and the folder (a temporary one whose .data/platform-api-key is the server's key) differ; the
// blocks that install (npm ci), start the platform or configure a desktop client are not run.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import type { SpawnedServer } from '../helpers/server.ts';

/** What a run printed, and how it ended. */
export interface GuideRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** The page's ```sh blocks, in order, but those that install, start the platform or configure a client. */
export function shellBlocks(markdown: string): string[] {
  const blocks = [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return blocks.filter((b) => !b.includes('npm ci') && !b.includes('claude mcp add'));
}

/**
 * The ```sh blocks of one section of a page, in order, unfiltered: from the heading whose text is `heading` (any level)
 * to the next heading of the same or a higher level. For a page whose blocks are not one script (e.g. a backup and its
 * restore, run at different moments).
 */
export function shellBlocksUnder(markdown: string, heading: string): string[] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => /^#{1,6} /.test(l) && l.replace(/^#+ /, '').trim() === heading);
  if (start < 0) throw new Error(`no heading "${heading}"`);
  const level = /^#+/.exec(lines[start]!)![0].length;
  let end = start + 1;
  let fenced = false;
  for (; end < lines.length; end++) {
    if (lines[end]!.startsWith('```')) fenced = !fenced;
    const next = /^(#+) /.exec(lines[end]!);
    if (!fenced && next && next[1]!.length <= level) break;
  }
  return [...lines.slice(start + 1, end).join('\n').matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** A docs/ page by its path under docs/. */
export const docsPage = (file: string): string => path.resolve(import.meta.dirname, '../../docs', file);

/**
 * Runs the page's blocks in one bash (set -euo pipefail) in a fresh folder holding the server's platform key, with
 * `env` added; asynchronously, so the test's own process (and a server it holds) keeps serving meanwhile.
 */
export async function runGuide(file: string, server: SpawnedServer, env: Record<string, string> = {}, timeoutMs = 120_000): Promise<GuideRun> {
  const folder = mkdtempSync(path.join(tmpdir(), 'svc-guide-'));
  try {
    mkdirSync(path.join(folder, '.data'));
    writeFileSync(path.join(folder, '.data', 'platform-api-key'), server.platformKey, { mode: 0o600 });
    const blocks = shellBlocks(readFileSync(docsPage(file), 'utf8'));
    if (blocks.length === 0) throw new Error(`${file} has no sh blocks to run`);
    const script = ['set -euo pipefail', ...blocks].join('\n').replaceAll('localhost:8080', `localhost:${server.port}`);
    return await runBash(script, folder, env, timeoutMs);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** Runs `script` as `bash -c` in `cwd` with `env` added to this process's environment; asynchronously. */
export function runBash(script: string, cwd: string, env: Record<string, string> = {}, timeoutMs = 120_000): Promise<GuideRun> {
  return new Promise<GuideRun>((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { cwd, env: { ...process.env, ...env }, timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}
