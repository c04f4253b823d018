// Several requests in flight on one process (SVC_FUNCTIONS_CONCURRENCY_PER_PROCESS): they overlap, each log row
// gets its own console output, and when one request's timeout kills the process, the others in flight on it get
// 502 FUNCTION_ABORTED (logged as such) and the pool replaces the process.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { createApp, deployNew, fetchFunction, functionLogs, readText } from '../helpers/functions.ts';

let p: TestPlatform;
let appId: string;
let key: string;
const ids = new Map<string, string>();

async function deploy(name: string, code: string, extra: Record<string, unknown> = {}) {
  ids.set(name, await deployNew(p, appId, key, { name, code, ...extra }));
}

async function call(name: string, path = '') {
  const started = Date.now();
  const res = await fetchFunction(p, appId, `${name}${path}`);
  return { status: res.status, ...(await readText(res)), ms: Date.now() - started };
}

function logs(name: string, limit = 100) {
  return functionLogs<{ path: string; status_code: number; error: string | null; console: Array<{ level: string; message: string }> }>(p, appId, key, name, `?limit=${limit}`);
}

beforeAll(async () => {
  // The default concurrency (16) and one warm process per function.
  p = await startTestPlatform({ SVC_FUNCTIONS_MAX_WARM_PER_FUNCTION: '1' });
  ({ appId, key } = await createApp(p, 'concurrency'));
});

afterAll(async () => {
  await p?.close();
});

describe('several requests in flight per process', () => {
  it('runs 20 parallel 200 ms requests on one process, up to 16 of them at once', async () => {
    await deploy(
      'sleepy',
      'export default async () => { const t0 = performance.timeOrigin + performance.now(); await new Promise((r) => setTimeout(r, 200)); return Response.json({ pid: Deno.pid, t0, t1: performance.timeOrigin + performance.now() }); };',
    );
    await call('sleepy'); // warm
    const results = await Promise.all(Array.from({ length: 20 }, () => call('sleepy')));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    const spans = results.map((r) => r.json as { pid: number; t0: number; t1: number });
    expect(new Set(spans.map((s) => s.pid)).size).toBe(1);
    // Measured inside the process, not by a clock on this busy machine: how many ran at once, at the most.
    const inFlight = Math.max(...spans.map((s) => spans.filter((o) => o.t0 <= s.t0 && s.t0 < o.t1).length));
    expect(inFlight).toBeGreaterThanOrEqual(8);
    expect(inFlight).toBeLessThanOrEqual(16);
    expect(p.services.functions.pool.pids(ids.get('sleepy')!)).toHaveLength(1);
  });

  it("attributes console output to the request that logged it, across awaits and timers", async () => {
    await deploy(
      'chatty',
      `export default async (req) => {
        const n = new URL(req.url).searchParams.get('n');
        console.log('start', n);
        await new Promise((r) => setTimeout(r, 20 + (Number(n) * 37) % 150));
        console.info('middle', n);
        await new Promise((r) => setTimeout(() => { console.warn('timer', n); r(null); }, (Number(n) * 53) % 100));
        await fetch('data:text/plain,x').then((r) => r.text());
        console.log('end', n);
        return new Response(n);
      };`,
    );
    const results = await Promise.all(Array.from({ length: 12 }, (_, n) => call('chatty', `?n=${n}`)));
    expect(results.map((r) => r.text)).toEqual(Array.from({ length: 12 }, (_, n) => String(n)));
    const rows = await logs('chatty');
    expect(rows).toHaveLength(12);
    for (const row of rows) {
      const n = new URL(row.path, 'http://x').searchParams.get('n');
      expect(row.console).toEqual([
        { level: 'log', message: `start ${n}` },
        { level: 'info', message: `middle ${n}` },
        { level: 'warn', message: `timer ${n}` },
        { level: 'log', message: `end ${n}` },
      ]);
    }
  });

  it('answers 502 FUNCTION_ABORTED to the requests sharing a process with one that timed out, logs them, and replaces the process', async () => {
    await deploy(
      'mixed',
      `export default async (req) => {
        const q = new URL(req.url).searchParams;
        if (q.has('fast')) return new Response('fast');
        const slow = q.has('hang');
        console.log(slow ? 'hanging' : 'waiting');
        await new Promise((r) => setTimeout(r, slow ? 60_000 : 1400));
        return new Response('done');
      };`,
      { timeoutMs: 1500 },
    );
    const before = p.services.functions.pool.pids(ids.get('mixed')!);
    expect(before).toHaveLength(1);
    // The siblings, started about 400 ms after the hanging request, would finish in 1400 ms, within their own 1500 ms
    // timeout, but the hanging request's timeout kills the process they share first: they are aborted if they start
    // anywhere from 100 to 1500 ms after it, so a stalled moment on this machine does not change the outcome.
    const spinning = call('mixed', '?hang');
    await new Promise((r) => setTimeout(r, 400));
    const siblings = Array.from({ length: 3 }, () => call('mixed', '?wait'));
    const spinner = await spinning;
    const aborted = await Promise.all(siblings);
    expect(spinner.status).toBe(504);
    expect(spinner.json.error.code).toBe('FUNCTION_TIMEOUT');
    for (const r of aborted) {
      expect(r.status).toBe(502);
      expect(r.json.error.code).toBe('FUNCTION_ABORTED');
      expect(r.json.error.message).toMatch(/another invocation/);
    }
    const rows = await logs('mixed');
    const spun = rows.filter((l) => l.path.includes('hang'));
    const waited = rows.filter((l) => l.path.includes('wait'));
    expect(spun).toHaveLength(1);
    expect(spun[0]).toMatchObject({ status_code: 504, console: [{ level: 'log', message: 'hanging' }] });
    expect(spun[0]!.error).toMatch(/timed out/);
    expect(waited).toHaveLength(3);
    for (const l of waited) {
      expect(l).toMatchObject({ status_code: 502, console: [{ level: 'log', message: 'waiting' }] });
      expect(l.error).toMatch(/another invocation on it exceeded its limits/);
    }
    // A new process serves the next request.
    const next = await call('mixed', '?fast');
    expect(next).toMatchObject({ status: 200, text: 'fast' });
    const after = p.services.functions.pool.pids(ids.get('mixed')!);
    expect(after).toHaveLength(1);
    expect(after.some((pid) => before.includes(pid))).toBe(false);
  });

  it('stops every request in flight on a process that exceeds its memory limit (500 FUNCTION_OUT_OF_MEMORY, logged), then replaces it', async () => {
    await deploy(
      'hog',
      `export default async (req) => {
        if (new URL(req.url).searchParams.has('fast')) return new Response('fast');
        if (new URL(req.url).searchParams.has('wait')) { console.log('waiting'); await new Promise((r) => setTimeout(r, 20_000)); return new Response('late'); }
        const keep = [];
        for (let i = 0; ; i++) { keep.push('x'.repeat(10000) + i); if (i % 2000 === 0) await new Promise((r) => setTimeout(r, 0)); }
      };`,
      { memoryLimitMb: 64 },
    );
    const before = p.services.functions.pool.pids(ids.get('hog')!);
    const siblings = Array.from({ length: 2 }, () => call('hog', '?wait'));
    await new Promise((r) => setTimeout(r, 200));
    const hog = await call('hog', '?eat');
    const others = await Promise.all(siblings);
    for (const r of [hog, ...others]) {
      expect(r.status).toBe(500);
      expect(r.json.error.code).toBe('FUNCTION_OUT_OF_MEMORY');
      expect(r.ms).toBeLessThan(15_000);
    }
    const rows = await logs('hog');
    expect(rows).toHaveLength(3);
    for (const l of rows) expect(l.error).toMatch(/out of memory/);
    expect(rows.filter((l) => l.path.includes('wait')).map((l) => l.console)).toEqual([[{ level: 'log', message: 'waiting' }], [{ level: 'log', message: 'waiting' }]]);
    expect(await call('hog', '?fast')).toMatchObject({ status: 200, text: 'fast' });
    expect(p.services.functions.pool.pids(ids.get('hog')!).some((pid) => before.includes(pid))).toBe(false);
  });
});
