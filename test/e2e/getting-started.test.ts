// docs/getting-started.md runs as written (issue 45), its shell blocks in one bash against the server as `npm start`
// runs it (test/e2e/guide-runner.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { runGuide } from './guide-runner.ts';

let server: SpawnedServer;

beforeAll(async () => {
  server = await spawnServer();
}, 60_000);

afterAll(async () => {
  await server?.close();
});

describe('docs/getting-started.md', () => {
  it('its commands make an app, a table, a row and a function, and the function answers', async () => {
    const run = await runGuide('getting-started.md', server);
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(JSON.parse(lines[0]!)).toMatchObject({ app_id: expect.stringMatching(/^[a-z0-9]{16}$/), service_key: { key: expect.stringMatching(/^svc_sk_/) } });
    expect(run.stdout).toContain('"title":"first note"');
    // curl prints no newline: the function's answer ends the output.
    expect(run.stdout.trimEnd().endsWith('{"hello":"Ada"}')).toBe(true);
  }, 120_000);
});
