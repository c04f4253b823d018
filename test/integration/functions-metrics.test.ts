// functions_metrics: a function's invocations per hour or day, from the hourly rollup written with each batch of log
// rows, so it outlives the logs' retention; empty buckets included; the window's limits; a deleted function's rows go.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { createApp, deployNew, fetchFunction } from '../helpers/functions.ts';

let p: TestPlatform;
let appId: string;
let key: string;
let functionId: string;

const HOUR = 3_600_000;
const floorHour = (ms: number) => Math.floor(ms / HOUR) * HOUR;
interface Bucket {
  start: string;
  invocations: number;
  errors: number;
  avg_duration_ms: number;
  max_duration_ms: number;
}
const sum = (buckets: Bucket[]) => buckets.reduce((t, b) => ({ invocations: t.invocations + b.invocations, errors: t.errors + b.errors }), { invocations: 0, errors: 0 });
const metrics = (name: string, query = '') => p.api('GET', `/v1/${appId}/functions/${name}/metrics${query}`, { key });

beforeAll(async () => {
  p = await startTestPlatform();
  ({ appId, key } = await createApp(p, 'fn-metrics'));
  functionId = await deployNew(p, appId, key, {
    name: 'metered',
    code: 'export default (req) => new URL(req.url).searchParams.has("fail") ? new Response("no", { status: 503 }) : new Response("ok");',
  });
  for (const path of ['metered', 'metered', 'metered', 'metered?fail=1']) await (await fetchFunction(p, appId, path)).arrayBuffer();
});

afterAll(async () => {
  await p?.close();
});

describe('functions_metrics', () => {
  it('by default: the last day of hours, the current one holding the invocations, the others empty', async () => {
    const before = Date.now();
    const r = await metrics('metered');
    expect(r.status).toBe(200);
    const { name, bucket, start, end, buckets } = r.body;
    expect([name, bucket]).toEqual(['metered', 'hour']);
    expect(Date.parse(end) - Date.parse(start)).toBe(24 * HOUR);
    expect(Date.parse(end)).toBeGreaterThanOrEqual(before);
    // From the hour holding `start` to the one holding `end`, every hour once.
    expect(buckets.map((b: { start: string }) => Date.parse(b.start))).toEqual(Array.from({ length: buckets.length }, (_, i) => floorHour(Date.parse(start)) + i * HOUR));
    expect(buckets.at(-1).start).toBe(new Date(floorHour(Date.parse(end))).toISOString());
    // The invocations ran moments ago: in the current hour, or the one before when an hour began meanwhile.
    const used = buckets.filter((b: Bucket) => b.invocations > 0);
    expect(sum(used)).toEqual({ invocations: 4, errors: 1 });
    expect(buckets.indexOf(used[0])).toBeGreaterThanOrEqual(buckets.length - 2);
    for (const b of used) expect(b.max_duration_ms).toBeGreaterThanOrEqual(b.avg_duration_ms);
    expect(buckets.filter((b: Bucket) => !used.includes(b)).every((b: Bucket) => b.errors + b.avg_duration_ms + b.max_duration_ms === 0)).toBe(true);
  });

  it('by day over an explicit window; a window in the past is all empty buckets', async () => {
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    const days = await metrics('metered', `?bucket=day&startDate=${day(-1)}&endDate=${day(1)}`);
    expect(days.status).toBe(200);
    expect(days.body.buckets.map((b: Bucket) => b.start)).toEqual([`${day(-1)}T00:00:00.000Z`, `${day(0)}T00:00:00.000Z`]);
    expect(sum(days.body.buckets)).toEqual({ invocations: 4, errors: 1 });
    const past = await metrics('metered', '?startDate=2020-01-01T00:00:00Z&endDate=2020-01-01T03:00:00Z');
    expect(past.status).toBe(200);
    expect(past.body).toEqual({
      name: 'metered',
      bucket: 'hour',
      start: '2020-01-01T00:00:00.000Z',
      end: '2020-01-01T03:00:00.000Z',
      buckets: [0, 1, 2].map((h) => ({ start: `2020-01-01T0${h}:00:00.000Z`, invocations: 0, errors: 0, avg_duration_ms: 0, max_duration_ms: 0 })),
    });
  });

  it('outlives the log rows: the rollup keeps counting after the logs are trimmed', async () => {
    await p.services.functions.flushLogs();
    await p.sql('delete from function_logs where function_id = $1', [functionId]);
    expect(sum((await metrics('metered')).body.buckets)).toEqual({ invocations: 4, errors: 1 });
  });

  it.each([
    ['?bucket=week', "'bucket'"],
    ['?startDate=yesterday', "'startDate'"],
    ['?endDate=2020-13-45', "'endDate'"],
    ['?startDate=2020-01-02&endDate=2020-01-01', "Invalid 'startDate': it must be before endDate."],
    ['?startDate=2020-01-01&endDate=2020-02-02', "Invalid 'startDate': at most 744 hours per call."],
    ['?bucket=day&startDate=2020-01-01&endDate=2021-01-02', "Invalid 'startDate': at most 366 days per call."],
  ])('refuses metrics%s with 400 VALIDATION_FAILED', async (query, message) => {
    const r = await metrics('metered', query);
    expect([r.status, r.body.error.code]).toEqual([400, 'VALIDATION_FAILED']);
    expect(r.body.error.message).toContain(message);
  });

  it('404 for an unknown function; a deleted function takes its rollup rows with it', async () => {
    const missing = await metrics('nope');
    expect([missing.status, missing.body.error.code, missing.body.error.message]).toEqual([404, 'RESOURCE_NOT_FOUND', "Function 'nope' not found."]);
    expect((await p.sql('select count(*)::int as n from function_metrics_hourly where function_id = $1', [functionId]))[0].n).toBeGreaterThan(0);
    expect((await p.api('DELETE', `/v1/${appId}/functions/metered`, { key })).status).toBe(200);
    expect((await p.sql('select count(*)::int as n from function_metrics_hourly where function_id = $1', [functionId]))[0].n).toBe(0);
  });
});
