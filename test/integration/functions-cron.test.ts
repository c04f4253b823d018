// The cron dispatcher without a running worker (SVC_ROLE=api), so the enqueued jobs can be inspected, then run
// by calling the task itself.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobHelpers } from 'graphile-worker';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { functionsCronTick, functionsRunCron } from '../../src/functions/jobs.ts';
import { toTask } from '../../workers/index.ts';

let p: TestPlatform;
let appId: string;
let key: string;
let fnId: string;

const CODE = `export default async (req: Request) => {
  const { scheduled_at } = await req.json();
  console.log('fired for', scheduled_at);
  return Response.json({ scheduled_at });
};`;

const helpers = { job: { attempts: 1, max_attempts: 1 }, logger: { debug() {}, info() {}, warn() {}, error() {} } } as unknown as JobHelpers;

async function jobs(): Promise<Array<{ key: string; payload: any; max_attempts: number }>> {
  return p.sql(
    `select j.key, j.payload, j.max_attempts from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
     where t.identifier = 'functions_run_cron' order by j.key`,
  );
}

beforeAll(async () => {
  p = await startTestPlatform({ SVC_ROLE: 'api' });
  const app = (await p.api('POST', '/init', { body: { name: 'cron' } })).body;
  appId = app.app_id;
  key = app.service_key.key;
  const d = await p.api('POST', `/v1/${appId}/functions`, { key, body: { name: 'every-10', code: CODE, trigger: { type: 'cron', config: { schedule: '*/10 * * * *' } } } });
  expect(d.status).toBe(201);
  fnId = d.body.id;
  // Pretend the function was deployed at 09:55 UTC on a fixed day.
  await p.sql('update functions set cron_cursor = $1 where id = $2', ['2031-05-05T09:55:00Z', fnId]);
});

afterAll(async () => {
  await p?.close();
});

describe('functions_cron_tick', () => {
  it('enqueues one job per due slot with a slot-derived job key, once, even with concurrent ticks', async () => {
    const now = new Date('2031-05-05T10:31:20Z');
    const ticks = await Promise.all([p.services.functions.cronTick(now), p.services.functions.cronTick(now)]);
    expect(ticks[0]!.enqueued + ticks[1]!.enqueued).toBe(4);
    const rows = await jobs();
    expect(rows.map((r) => r.key)).toEqual([
      `fncron:${fnId}:2031-05-05T10:00:00.000Z`,
      `fncron:${fnId}:2031-05-05T10:10:00.000Z`,
      `fncron:${fnId}:2031-05-05T10:20:00.000Z`,
      `fncron:${fnId}:2031-05-05T10:30:00.000Z`,
    ]);
    expect(rows[0]!.payload).toEqual({ function_id: fnId, scheduled_at: '2031-05-05T10:00:00.000Z' });
    // A restart ticking the same minute again, or an older tick, adds nothing.
    expect((await p.services.functions.cronTick(now)).enqueued).toBe(0);
    expect((await p.services.functions.cronTick(new Date('2031-05-05T10:00:30Z'))).enqueued).toBe(0);
    expect(await jobs()).toHaveLength(4);
  });

  it('an app whose clone is being made, or a shipped template, runs no slot (they pass by)', async () => {
    await p.sql(`update apps set status = 'cloning' where id = $1`, [appId]);
    expect((await p.services.functions.cronTick(new Date('2031-05-05T10:35:00Z'))).enqueued).toBe(0);
    await p.sql(`update apps set status = 'ready' where id = $1`, [appId]);
    await p.sql(`insert into templates (app_id, account_id, slug, title, visibility) select id, account_id, 'cron-template', 'T', 'public' from apps where id = $1`, [appId]);
    expect((await p.services.functions.cronTick(new Date('2031-05-05T10:36:00Z'))).enqueued).toBe(0);
    await p.sql('delete from templates where app_id = $1', [appId]);
    await p.sql('update functions set cron_cursor = $1 where id = $2', ['2031-05-05T10:31:20Z', fnId]);
    expect(await jobs()).toHaveLength(4);
  });

  it('the graphile cron item passes its own timestamp as now', async () => {
    await toTask(functionsCronTick, p.services as never)({ _cron: { ts: '2031-05-05T10:40:00.000Z', backfilled: false } }, helpers);
    expect((await jobs()).map((r) => r.key).at(-1)).toBe(`fncron:${fnId}:2031-05-05T10:40:00.000Z`);
  });

  it('catches up at most the last hour after a long outage', async () => {
    const tick = await p.services.functions.cronTick(new Date('2031-05-06T00:05:00Z'));
    // 23:10 .. 00:00 within the last hour: 6 slots.
    expect(tick.enqueued).toBe(6);
  });

  it('runs a slot as POST { scheduled_at } and logs it as trigger cron', async () => {
    await toTask(functionsRunCron, p.services as never)({ function_id: fnId, scheduled_at: '2031-05-05T10:00:00.000Z' }, helpers);
    const logs = await p.api('GET', `/v1/${appId}/functions/every-10/logs`, { key });
    expect(logs.body.logs).toHaveLength(1);
    expect(logs.body.logs[0]).toMatchObject({ trigger: 'cron', method: 'POST', path: '/', status_code: 200 });
    expect(logs.body.logs[0].console).toEqual([{ level: 'log', message: 'fired for 2031-05-05T10:00:00.000Z' }]);
  });

  it('skips a slot whose function is gone or no longer cron', async () => {
    await p.api('POST', `/v1/${appId}/functions`, { key, body: { name: 'every-10', code: CODE, trigger: { type: 'http' } } });
    await toTask(functionsRunCron, p.services as never)({ function_id: fnId, scheduled_at: '2031-05-05T10:10:00.000Z' }, helpers);
    await toTask(functionsRunCron, p.services as never)({ function_id: '00000000-0000-4000-8000-000000000000', scheduled_at: '2031-05-05T10:10:00.000Z' }, helpers);
    const logs = await p.api('GET', `/v1/${appId}/functions/every-10/logs`, { key });
    expect(logs.body.logs).toHaveLength(1);
  });

  it('starts a new or changed schedule from the deploy, not from the past', async () => {
    const d = await p.api('POST', `/v1/${appId}/functions`, { key, body: { name: 'fresh', code: CODE, trigger: { type: 'cron', config: { schedule: '* * * * *' } } } });
    expect(d.status).toBe(201);
    const [row] = await p.sql('select cron_cursor from functions where id = $1', [d.body.id]);
    expect(Date.now() - new Date(row.cron_cursor).getTime()).toBeLessThan(60_000);
    expect((await p.services.functions.cronTick(new Date(Date.now() - 5 * 60_000))).enqueued).toBe(0);
  });
});
