// The process pool under tight limits: per-function and global caps, least-recently-used eviction, idle
// eviction, queueing of concurrent requests, and a warm process per deploy.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { createApp, deployNew, fetchFunction } from '../helpers/functions.ts';

let p: TestPlatform;
let appId: string;
let key: string;
const ids = new Map<string, string>();

const SLOW = 'export default async (req) => { await new Promise((r) => setTimeout(r, 200)); return new Response(String(Deno.pid ?? "")); };';

async function deploy(name: string, code = SLOW) {
  ids.set(name, await deployNew(p, appId, key, { name, code }));
}

async function call(name: string) {
  const res = await fetchFunction(p, appId, name);
  return { status: res.status, text: await res.text() };
}

beforeAll(async () => {
  p = await startTestPlatform({
    SVC_FUNCTIONS_MAX_PROCESSES: '2',
    // One app here: it may use the whole pool (the per-app share is functions-fairness.test.ts's subject).
    SVC_FUNCTIONS_MAX_PROCESSES_PER_APP: '2',
    SVC_FUNCTIONS_MAX_WARM_PER_FUNCTION: '1',
    SVC_FUNCTIONS_CONCURRENCY_PER_PROCESS: '2',
    SVC_FUNCTIONS_IDLE_MS: '1500',
  });
  ({ appId, key } = await createApp(p, 'pool'));
});

afterAll(async () => {
  await p?.close();
});

describe('the process pool', () => {
  it('keeps the deploy-validated process as the first warm instance', async () => {
    await deploy('first');
    const pids = p.services.functions.pool.pids(ids.get('first')!);
    expect(pids).toHaveLength(1);
    await call('first');
    expect(p.services.functions.pool.pids(ids.get('first')!)).toEqual(pids);
  });

  it('runs SVC_FUNCTIONS_CONCURRENCY_PER_PROCESS requests per process at once and queues the rest', async () => {
    const started = Date.now();
    const results = await Promise.all(Array.from({ length: 4 }, () => call('first')));
    expect(results.every((r) => r.status === 200)).toBe(true);
    // Four 200 ms requests, two at a time on one process: two rounds, not one and not four.
    const ms = Date.now() - started;
    expect(ms).toBeGreaterThanOrEqual(380);
    expect(ms).toBeLessThan(780);
    expect(p.services.functions.pool.pids(ids.get('first')!)).toHaveLength(1);
  });

  it('never runs more processes than the global cap; the least recently used idle one makes room', async () => {
    await deploy('second');
    await deploy('third');
    expect(p.services.functions.pool.size).toBeLessThanOrEqual(2);
    await call('second');
    await call('third');
    await call('first');
    expect(p.services.functions.pool.size).toBeLessThanOrEqual(2);
    // 'second' was used least recently: it was evicted, 'third' and 'first' are warm.
    expect(p.services.functions.pool.pids(ids.get('second')!)).toEqual([]);
    expect(p.services.functions.pool.pids(ids.get('first')!)).toHaveLength(1);
    expect(p.services.functions.pool.pids(ids.get('third')!)).toHaveLength(1);
    // Concurrent calls to three functions still all succeed within the cap.
    const results = await Promise.all(['first', 'second', 'third', 'first', 'second'].map(call));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(p.services.functions.pool.size).toBeLessThanOrEqual(2);
  });

  it('ends idle processes after SVC_FUNCTIONS_IDLE_MS', async () => {
    await call('first');
    expect(p.services.functions.pool.pids(ids.get('first')!)).toHaveLength(1);
    const deadline = Date.now() + 6000;
    while (p.services.functions.pool.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(p.services.functions.pool.size).toBe(0);
    // A cold start serves the next request.
    expect((await call('first')).status).toBe(200);
  });

  it('retires the processes of a replaced version', async () => {
    await call('first');
    const old = p.services.functions.pool.pids(ids.get('first')!);
    const r = await p.api('PATCH', `/v1/${appId}/functions/first/env`, { key, body: { A: '1' } });
    expect(r.status).toBe(200);
    expect((await call('first')).status).toBe(200);
    const now = p.services.functions.pool.pids(ids.get('first')!);
    expect(now.some((pid) => old.includes(pid))).toBe(false);
  });

  it("prunes Deno's emitted JavaScript of old code; a cold start emits it again", async () => {
    const gen = path.join(p.services.config.dataDir, 'deno', 'gen', 'data');
    expect(readdirSync(gen).length).toBeGreaterThan(0);
    expect(await p.services.functions.pruneEmitCache(60_000)).toBe(0);
    expect(await p.services.functions.pruneEmitCache(0)).toBeGreaterThan(0);
    expect(readdirSync(gen)).toEqual([]);
    await p.api('PATCH', `/v1/${appId}/functions/second/env`, { key, body: { B: '1' } });
    expect((await call('second')).status).toBe(200);
    expect(readdirSync(gen).length).toBeGreaterThan(0);
  });
});
