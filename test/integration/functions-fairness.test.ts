// Per-app fair share of the function process pool: a flood of one app's slow requests delays only that app.
// The pool holds 4 processes; one app may hold 3 of them (SVC_FUNCTIONS_MAX_PROCESSES_PER_APP) and queue 6 requests
// (SVC_FUNCTIONS_MAX_WAITING_PER_APP); one request at a time per process, so every request needs a process slot.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { createApp, deployNew, fetchFunction, readText, type App } from '../helpers/functions.ts';

let p: TestPlatform;
let flooder: App;
let neighbour: App;
let latecomer: App;
const SLOW_MS = 1500;
const SLOW = `export default async () => { await new Promise((r) => setTimeout(r, ${SLOW_MS})); return new Response('slow'); };`;
const QUICK = "export default () => new Response('quick');";

function deploy(app: App, name: string, code: string): Promise<string> {
  return deployNew(p, app.app_id, app.service_key.key, { name, code });
}

async function call(app: App, name: string) {
  const started = Date.now();
  const res = await fetchFunction(p, app.app_id, name);
  return { status: res.status, ...(await readText(res)), retryAfter: res.headers.get('retry-after'), ms: Date.now() - started };
}

async function functionId(app: App, name: string): Promise<string> {
  return (await p.sql('select id from functions where app_id = $1 and name = $2', [app.app_id, name]))[0].id;
}

beforeAll(async () => {
  p = await startTestPlatform({
    SVC_FUNCTIONS_MAX_PROCESSES: '4',
    SVC_FUNCTIONS_MAX_PROCESSES_PER_APP: '3',
    SVC_FUNCTIONS_MAX_WAITING_PER_APP: '6',
    SVC_FUNCTIONS_MAX_WARM_PER_FUNCTION: '4',
    SVC_FUNCTIONS_CONCURRENCY_PER_PROCESS: '1',
    SVC_FUNCTIONS_QUEUE_TIMEOUT_MS: '10000',
  });
  const init = async (name: string): Promise<App> => (await createApp(p, name)).app;
  flooder = await init('flooder');
  neighbour = await init('neighbour');
  latecomer = await init('latecomer');
});

afterAll(async () => {
  await p?.close();
});

describe('per-app fair share of function processes', () => {
  it("a flood of one app beyond its share leaves processes for other apps, and its overflow gets 503 FUNCTION_BUSY at once", async () => {
    await deploy(neighbour, 'slow', SLOW);
    await deploy(latecomer, 'quick', QUICK);
    const floodFn = await deploy(flooder, 'slow', SLOW);
    // The other apps' deploy-warmed processes are idle: nobody under its share needs them yet.
    const peak = { processes: 0 };
    const watch = setInterval(() => (peak.processes = Math.max(peak.processes, p.services.functions.pool.pids(floodFn).length)), 20);

    const flood = Array.from({ length: 20 }, () => call(flooder, 'slow'));
    await new Promise((r) => setTimeout(r, 300));
    // The neighbour arrives while the flooder holds its 3 processes and queues 6 more requests; the pool has one slot
    // left (the neighbour's own). The latecomer then finds the pool full of busy processes: it is under its fair
    // share (4 / 3 apps = 1), so the flooder's least loaded process drains (takes no new request and ends after its
    // current one) and the latecomer gets that slot within one slow request.
    const [b, c] = await Promise.all([call(neighbour, 'slow'), new Promise((r) => setTimeout(r, 100)).then(() => call(latecomer, 'quick'))]);
    const a = await Promise.all(flood);
    clearInterval(watch);

    expect(b).toMatchObject({ status: 200, text: 'slow' });
    expect(b.ms).toBeLessThan(SLOW_MS + 2000);
    expect(c).toMatchObject({ status: 200, text: 'quick' });
    expect(c.ms).toBeLessThan(SLOW_MS + 2000);

    const served = a.filter((r) => r.status === 200);
    const refused = a.filter((r) => r.status !== 200);
    // At most 3 running + 6 waiting before the first one finishes (all 20 arrive well within a slow request), at least
    // 1 on the warm process + 6 waiting; the rest were refused on arrival.
    expect(served.length).toBeGreaterThanOrEqual(7);
    expect(served.length).toBeLessThanOrEqual(9);
    for (const r of served) expect(r.text).toBe('slow');
    for (const r of refused) {
      expect(r.status).toBe(503);
      expect(r.json.error.code).toBe('FUNCTION_BUSY');
      expect(r.json.error.message).toMatch(/6 requests waiting/);
      expect(r.json.error.details).toEqual({ retry_after_seconds: 1 });
      expect(r.retryAfter).toBe('1');
      expect(r.ms).toBeLessThan(1000);
    }
    expect(peak.processes).toBeLessThanOrEqual(3);
    expect(p.services.functions.pool.size).toBeLessThanOrEqual(4);
  });

  it('the flooder gets its share back once the others are done', async () => {
    const results = await Promise.all(Array.from({ length: 6 }, () => call(flooder, 'slow')));
    expect(results.map((r) => r.status)).toEqual(Array(6).fill(200));
    // Two rounds on three processes (the idle processes of the other apps make room), not six.
    for (const r of results) expect(r.ms).toBeLessThan(3 * SLOW_MS + 1500);
  });

  it('an app at its share makes room among its own idle processes for its other functions', async () => {
    const ids = [];
    for (const name of ['one', 'two', 'three', 'four']) ids.push(await deploy(flooder, name, QUICK));
    for (const name of ['one', 'two', 'three', 'four', 'one']) {
      const r = await call(flooder, name);
      expect(r).toMatchObject({ status: 200, text: 'quick' });
      expect(r.ms).toBeLessThan(2000);
      const held = [...ids, await functionId(flooder, 'slow')].flatMap((id) => p.services.functions.pool.pids(id));
      expect(held.length).toBeLessThanOrEqual(3);
    }
  });
});
