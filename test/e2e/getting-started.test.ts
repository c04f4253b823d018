// docs/getting-started.md runs as written (issue 45): its shell blocks, in order, in one bash, against the server as
// `npm start` runs it. Only the address (the guide's localhost:8080 is this server's port) and the folder (a temporary
// one whose .data/platform-api-key is this server's key) differ; the blocks that install (npm ci) or configure a
// desktop client are not run.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';

const GUIDE = path.resolve(import.meta.dirname, '../../docs/getting-started.md');
let server: SpawnedServer;
const folder = mkdtempSync(path.join(tmpdir(), 'svc-getting-started-'));

beforeAll(async () => {
  server = await spawnServer();
  mkdirSync(path.join(folder, '.data'));
  writeFileSync(path.join(folder, '.data', 'platform-api-key'), server.platformKey, { mode: 0o600 });
}, 60_000);

afterAll(async () => {
  await server?.close();
  rmSync(folder, { recursive: true, force: true });
});

/** The guide's ```sh blocks, in order, but those that install or configure a client. */
function shellBlocks(markdown: string): string[] {
  const blocks = [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return blocks.filter((b) => !b.includes('npm ci') && !b.includes('claude mcp add'));
}

describe('docs/getting-started.md', () => {
  it('its commands make an app, a table, a row and a function, and the function answers', () => {
    const blocks = shellBlocks(readFileSync(GUIDE, 'utf8'));
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    const script = ['set -euo pipefail', ...blocks].join('\n').replaceAll('localhost:8080', `127.0.0.1:${server.port}`);
    const run = spawnSync('bash', ['-c', script], { cwd: folder, encoding: 'utf8', timeout: 60_000 });
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(JSON.parse(lines[0]!)).toMatchObject({ app_id: expect.stringMatching(/^[a-z0-9]{16}$/), service_key: { key: expect.stringMatching(/^svc_sk_/) } });
    expect(run.stdout).toContain('"title":"first note"');
    // curl prints no newline: the function's answer ends the output.
    expect(run.stdout.trimEnd().endsWith('{"hello":"Ada"}')).toBe(true);
  });
});
