// The official MCP conformance suite (@modelcontextprotocol/conformance) against /mcp, for every server scenario
// that does not name a fixture of the suite's own reference server (test_tool_with_progress, test_prompt_with_arguments,
// test://static-text and the like, which no real server has): initialize, ping, logging, tools/list, a tool error,
// resources, prompts, several SSE streams at once, DNS rebinding.
// The suite's client sends no credential, so a loopback proxy adds the platform key to each request, as a configured
// MCP client would. Completion and progress are exercised on the platform's own tools in mcp-utilities.test.ts.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';

const CLI = path.resolve(import.meta.dirname, '../../node_modules/@modelcontextprotocol/conformance/dist/index.js');

const SCENARIOS = [
  'server-initialize',
  'ping',
  'logging-set-level',
  'tools-list',
  'tools-call-error',
  'resources-list',
  'prompts-list',
  'server-sse-multiple-streams',
  'dns-rebinding-protection',
];

let server: SpawnedServer;
let proxy: Server;
let proxyUrl: string;
let outDir: string;

/** Forwards every request to the platform with the platform key added, streaming both ways (SSE included). */
function keyAddingProxy(target: URL, key: string): Server {
  return createServer((req, res) => {
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, authorization: `Bearer ${key}` } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
}

beforeAll(async () => {
  server = await spawnServer();
  proxy = keyAddingProxy(new URL(server.url), server.platformKey);
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;
  outDir = mkdtempSync(path.join(tmpdir(), 'svc-conformance-'));
}, 60_000);

afterAll(async () => {
  await new Promise((resolve) => proxy?.close(resolve));
  await server?.close();
  if (outDir) rmSync(outDir, { recursive: true, force: true });
});

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

/** Runs one scenario with the suite's CLI and returns the checks it recorded. */
async function runScenario(scenario: string): Promise<Check[]> {
  const dir = path.join(outDir, scenario);
  // The CLI exits non-zero on a failed check; the checks it wrote are what the test reads.
  await promisify(execFile)(process.execPath, [CLI, 'server', '--url', proxyUrl, '--scenario', scenario, '-o', dir], { timeout: 60_000 }).catch(() => undefined);
  const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((f) => f.isFile() && f.name.endsWith('.json'));
  return files.flatMap((f) => {
    const parsed = JSON.parse(readFileSync(path.join(f.parentPath, f.name), 'utf8'));
    return (Array.isArray(parsed) ? parsed : (parsed.checks ?? [])) as Check[];
  });
}

describe('the official MCP conformance suite', () => {
  it.each(SCENARIOS)('%s passes', async (scenario) => {
    const checks = await runScenario(scenario);
    expect(checks.length).toBeGreaterThan(0);
    expect(checks.filter((c) => c.status !== 'SUCCESS' && c.status !== 'INFO')).toEqual([]);
  }, 90_000);
});
