// The official MCP conformance suite (@modelcontextprotocol/conformance 0.2.0-alpha.12) against /mcp of a server
// started as `npm start` starts it, for each revision the platform serves: every scenario the revision requires
// (`--requirements`), with the suite's own baseline of expected failures, mcp-conformance-baseline.yaml. That file
// lists, check by check and with the reason, only what needs the suite's reference-server fixtures (tools such as
// test_tool_with_progress, prompts such as test_simple_prompt, resources such as test://static-text), which no real
// server has. The suite fails the run on any other failure and on a listed check that now passes.
// The suite's client sends no credential, so a loopback proxy adds the platform key to each request, as a configured
// MCP client would.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';

const CLI = path.resolve(import.meta.dirname, '../../node_modules/@modelcontextprotocol/conformance/dist/index.js');
const BASELINE = path.resolve(import.meta.dirname, 'mcp-conformance-baseline.yaml');

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

/** Runs the scenarios a revision requires against the baseline; the suite's exit code and what it printed. */
async function runRevision(revision: string): Promise<{ code: number; output: string }> {
  const args = [CLI, 'server', '--url', proxyUrl, '--requirements', revision, '--expected-failures', BASELINE, '-o', path.join(outDir, revision)];
  return new Promise((resolve) => {
    execFile(process.execPath, args, { timeout: 240_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, output: `${stdout}\n${stderr}` });
    });
  });
}

/** The suite's verdict lines: the summary and the baseline check. */
const verdict = (output: string) => output.split('\n').filter((l) => /✗|Total:|Unexpected|Stale|stale|Baseline/.test(l)).join('\n');

describe('the official MCP conformance suite', () => {
  it.each(['2026-07-28', '2025-11-25'])('passes every scenario %s requires, but for the fixtures of its reference server', async (revision) => {
    const { code, output } = await runRevision(revision);
    expect(output).toContain('Baseline check passed: all failures are expected.');
    expect({ code, verdict: code === 0 ? '' : verdict(output) }).toEqual({ code: 0, verdict: '' });
  }, 300_000);
});
