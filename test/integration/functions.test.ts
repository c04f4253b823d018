import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { createApp, deployFunction, fetchFunction, readText } from '../helpers/functions.ts';
import { withEventLoopDelay } from '../helpers/event-loop.ts';
import { rawRequest } from './frontend-helpers.ts';
import { LOG_ANSWER_MAX_BYTES } from '../../src/functions/logs.ts';
import { LIST_MAX_BYTES } from '../../src/functions/service.ts';

let p: TestPlatform;
let appId: string;
let serviceKey: string;

const ECHO = `
export default async (req: Request, ctx: any) => {
  const url = new URL(req.url);
  const body = req.method === 'GET' || req.method === 'HEAD' ? '' : await req.text();
  console.log('echo', req.method, url.pathname);
  return Response.json(
    {
      method: req.method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      body,
      headers: Object.fromEntries(req.headers),
      env: ctx.env,
      appId: ctx.appId,
      user: ctx.user,
      token: ctx.token,
    },
    { status: req.method === 'POST' ? 201 : 200, headers: { 'x-echo': 'yes', 'set-cookie': 'a=1' } },
  );
};`;

async function deploy(body: Record<string, unknown>, key: string | null = serviceKey) {
  return deployFunction(p, appId, key, body);
}

async function call(method: string, path: string, opts: { body?: string | Uint8Array<ArrayBuffer>; headers?: Record<string, string> } = {}) {
  const res = await fetchFunction(p, appId, path, { method, headers: opts.headers, body: opts.body });
  return { status: res.status, headers: res.headers, ...(await readText(res)) };
}

beforeAll(async () => {
  p = await startTestPlatform();
  ({ appId, key: serviceKey } = await createApp(p, 'fn'));
});

afterAll(async () => {
  await p?.close();
});

describe('functions_deploy', () => {
  it('deploys a function (201) and redeploys it as an update (200, new version)', async () => {
    const created = await deploy({ name: 'echo', code: ECHO, description: 'echoes', envVars: { GREETING: 'hello', API_TOKEN: 's3cret-value' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'echo',
      app_id: appId,
      description: 'echoes',
      trigger: { type: 'http', config: {} },
      timeoutMs: 30000,
      memoryLimitMb: 128,
      env_var_names: ['API_TOKEN', 'GREETING'],
      url: `${p.services.config.baseUrl}/v1/${appId}/fn/echo`,
      next_run_at: null,
      created: true,
    });
    expect(JSON.stringify(created.body)).not.toContain('s3cret-value');

    const updated = await deploy({ name: 'echo', code: ECHO, timeoutMs: 5000 });
    expect(updated.status).toBe(200);
    expect(updated.body.created).toBe(false);
    expect(updated.body.id).toBe(created.body.id);
    expect(updated.body.version).not.toBe(created.body.version);
    // Omitted fields keep their values on an update.
    expect(updated.body).toMatchObject({ description: 'echoes', env_var_names: ['API_TOKEN', 'GREETING'], timeoutMs: 5000, memoryLimitMb: 128 });
  });

  it('stores the variables sealed, never in clear', async () => {
    const [row] = await p.sql(`select env_sealed, env_names from functions where name = 'echo'`);
    expect(row.env_sealed).toMatch(/^v1\./);
    expect(row.env_sealed).not.toContain('s3cret-value');
    expect(row.env_names).toEqual(['API_TOKEN', 'GREETING']);
  });

  it.each([
    ['name with a slash', { name: 'a/b' }, 'name'],
    ['empty name', { name: '' }, 'name'],
    ['name of 101 characters', { name: 'x'.repeat(101) }, 'name'],
    ['timeoutMs below 100', { timeoutMs: 50 }, 'timeoutMs'],
    ['timeoutMs above 300000', { timeoutMs: 300001 }, 'timeoutMs'],
    ['memoryLimitMb below 64', { memoryLimitMb: 32 }, 'memoryLimitMb'],
    ['memoryLimitMb above 1024', { memoryLimitMb: 2048 }, 'memoryLimitMb'],
    ['a variable name starting with a digit', { envVars: { '1X': 'v' } }, 'envVars'],
    ['a reserved variable', { envVars: { SVC_APP_ID: 'v' } }, 'envVars'],
    ['a cron schedule of 4 fields', { trigger: { type: 'cron', config: { schedule: '* * * *' } } }, 'trigger.config.schedule'],
    ['a cron schedule that never fires', { trigger: { type: 'cron', config: { schedule: '0 0 30 2 *' } } }, 'trigger.config.schedule'],
    ['an unknown trigger type', { trigger: { type: 'queue', config: {} } }, 'trigger'],
    ['a websocket trigger without event', { trigger: { type: 'websocket', config: {} } }, 'trigger.config.event'],
    ['empty code', { code: '' }, 'code'],
  ])('refuses %s with 400 VALIDATION_FAILED naming the field', async (_what, patch, field) => {
    const r = await deploy({ name: 'valid', code: ECHO, ...patch });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('VALIDATION_FAILED');
    expect(r.body.error.message).toContain(`'${field}`);
  });

  it('refuses code over 1 MB', async () => {
    const code = `export default () => new Response('x'); // ${'x'.repeat(1024 * 1024)}`;
    const r = await deploy({ name: 'huge', code });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('VALIDATION_FAILED');
    expect(r.body.error.message).toContain("'code'");
  });

  it.each([
    ['a syntax error', 'export default (req) => { return new Response("x"', /Expected|expected/],
    ['no default export', 'export const handler = () => new Response("x");', /default-export a handler function/],
    ['a default export that is not a function', 'export default 42;', /default export of type number/],
    ['a throw at load time', 'throw new Error("broken at load");\nexport default () => new Response("x");', /broken at load/],
  ])('refuses %s with 400 FUNCTION_INVALID and the message', async (_what, code, message) => {
    const r = await deploy({ name: 'invalid', code });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('FUNCTION_INVALID');
    expect(r.body.error.message).toMatch(message);
    expect(r.body.error.message).not.toContain('data:application');
  });

  it('keeps the previous version serving after a refused deploy', async () => {
    expect((await deploy({ name: 'stable', code: 'export default () => new Response("v1");' })).status).toBe(201);
    expect((await call('GET', 'stable')).text).toBe('v1');
    const bad = await deploy({ name: 'stable', code: 'export default () => new Response("v2"' });
    expect(bad.body.error.code).toBe('FUNCTION_INVALID');
    expect((await call('GET', 'stable')).text).toBe('v1');
    expect((await deploy({ name: 'stable', code: 'export default () => new Response("v2");' })).status).toBe(200);
    expect((await call('GET', 'stable')).text).toBe('v2');
  });

  it('accepts plain JavaScript as well as TypeScript', async () => {
    const r = await deploy({ name: 'plainjs', code: 'export default async function (req) { return new Response(JSON.stringify({ ok: true }), { headers: { "content-type": "application/json" } }); }' });
    expect(r.status).toBe(201);
    expect((await call('GET', 'plainjs')).json).toEqual({ ok: true });
  });

  it('needs a credential of this app', async () => {
    expect((await deploy({ name: 'x', code: ECHO }, null)).status).toBe(401);
    const other = (await p.api('POST', '/init', { body: { name: 'other' } })).body;
    const r = await deploy({ name: 'x', code: ECHO }, other.service_key.key);
    expect(r.status).toBe(403);
  });
});

describe('public route /v1/{app_id}/fn/{name}', () => {
  it('passes method, path, query, headers and the raw body through, for any method', async () => {
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
      const body = method === 'GET' ? undefined : `raw ${method} body`;
      const r = await call(method, 'echo/items/42?x=1&y=two', { body, headers: { 'x-custom': 'c1', 'content-type': 'text/plain' } });
      expect(r.status).toBe(method === 'POST' ? 201 : 200);
      expect(r.headers.get('x-echo')).toBe('yes');
      // A cookie would be the platform host's, shared by every tenant: set only on the app's own host (below).
      expect(r.headers.get('set-cookie')).toBeNull();
      expect(r.json).toMatchObject({ method, path: '/items/42', query: { x: '1', y: 'two' }, body: body ?? '' });
      expect(r.json.headers['x-custom']).toBe('c1');
      expect(r.json.headers['x-forwarded-prefix']).toBe(`/v1/${appId}/fn/echo`);
      expect(r.json.headers.connection).toBeUndefined();
    }
    const root = await call('GET', 'echo');
    expect(root.json.path).toBe('/');
    const [{ subdomain }] = await p.sql('select subdomain from apps where id = $1', [appId]);
    const onHost = await rawRequest(p.url, '/fn/echo', { headers: { host: `${subdomain}.${p.services.config.baseDomain}` } });
    expect([onHost.status, onHost.headers['set-cookie'], onHost.headers['x-echo']]).toEqual([200, ['a=1'], 'yes']);
  });

  it('gives ctx.env the variables plus SVC_APP_ID and SVC_API_URL', async () => {
    const r = await call('GET', 'echo');
    expect(r.json.env).toEqual({ GREETING: 'hello', API_TOKEN: 's3cret-value', SVC_APP_ID: appId, SVC_API_URL: `${p.services.config.baseUrl}/v1/${appId}` });
    expect(r.json.appId).toBe(appId);
    expect(r.json.user).toBeNull();
  });

  it('passes binary bodies byte for byte', async () => {
    await deploy({ name: 'bytes', code: 'export default async (req) => new Response(new Uint8Array(await req.arrayBuffer()).reverse(), { headers: { "content-type": "application/octet-stream" } });' });
    const input = new Uint8Array([0, 1, 2, 255, 254, 10, 13, 0]);
    const res = await fetch(`${p.url}/v1/${appId}/fn/bytes`, { method: 'POST', body: input, headers: { 'content-type': 'application/octet-stream' } });
    expect(Buffer.from(await res.arrayBuffer())).toEqual(Buffer.from([...input].reverse()));
  });

  it('streams the response chunk by chunk', async () => {
    const code = `export default () => {
      let i = 0;
      const body = new ReadableStream({ async pull(c) { if (i === 3) return c.close(); await new Promise(r => setTimeout(r, 150)); c.enqueue(new TextEncoder().encode('tick' + i++ + '\\n')); } });
      return new Response(body, { headers: { 'content-type': 'text/plain' } });
    };`;
    expect((await deploy({ name: 'stream', code })).status).toBe(201);
    const res = await fetch(`${p.url}/v1/${appId}/fn/stream`);
    const reader = res.body!.getReader();
    const arrivals: number[] = [];
    let text = '';
    const t0 = Date.now();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      arrivals.push(Date.now() - t0);
      text += Buffer.from(value).toString();
    }
    expect(text).toBe('tick0\ntick1\ntick2\n');
    // The first chunk arrives before the last one was produced.
    expect(arrivals.length).toBeGreaterThan(1);
    expect(arrivals[0]!).toBeLessThan(arrivals.at(-1)! - 100);
  });

  it('forwards an end-user token: the function sees ctx.user and the Authorization header', async () => {
    const signup = await p.api('POST', `/v1/${appId}/auth/signup`, { body: { email: 'fn-user@example.com', password: 'correct horse battery' }, key: null });
    expect(signup.status).toBe(201);
    const token = signup.body.access_token;
    const r = await call('GET', 'echo', { headers: { authorization: `Bearer ${token}` } });
    expect(r.status).toBe(200);
    expect(r.json.user).toMatchObject({ id: signup.body.user.id, claims: { sub: signup.body.user.id } });
    expect(r.json.token).toBe(token);
    expect(r.json.headers.authorization).toBe(`Bearer ${token}`);
  });

  it('refuses a token of another app (403) and an invalid one (401)', async () => {
    const other = (await p.api('POST', '/init', { body: { name: 'other-app' } })).body;
    const signup = await p.api('POST', `/v1/${other.app_id}/auth/signup`, { body: { email: 'x@example.com', password: 'correct horse battery' }, key: null });
    const r = await call('GET', 'echo', { headers: { authorization: `Bearer ${signup.body.access_token}` } });
    expect(r.status).toBe(403);
    expect(r.json.error.code).toBe('FORBIDDEN');
    const bad = await call('GET', 'echo', { headers: { authorization: 'Bearer aaa.bbb.ccc' } });
    expect(bad.status).toBe(401);
    const otherKey = await call('GET', 'echo', { headers: { authorization: `Bearer ${other.service_key.key}` } });
    expect(otherKey.status).toBe(403);
  });

  it('never hands a platform key to function code, but forwards its own service key and other schemes', async () => {
    const withPlatformKey = await call('GET', 'echo', { headers: { authorization: `Bearer ${p.platformKey}` } });
    expect(withPlatformKey.status).toBe(200);
    expect(withPlatformKey.json.headers.authorization).toBeUndefined();
    const withServiceKey = await call('GET', 'echo', { headers: { authorization: `Bearer ${serviceKey}` } });
    expect(withServiceKey.json.headers.authorization).toBe(`Bearer ${serviceKey}`);
    expect(withServiceKey.json.user).toBeNull();
    const basic = await call('GET', 'echo', { headers: { authorization: 'Basic dTpw' } });
    expect(basic.json.headers.authorization).toBe('Basic dTpw');
  });

  it('answers 404 RESOURCE_NOT_FOUND for an unknown function or app', async () => {
    const r = await call('GET', 'nope');
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe('RESOURCE_NOT_FOUND');
    const noApp = await fetch(`${p.url}/v1/zzzzzzzzzzzzzzzz/fn/echo`);
    expect(noApp.status).toBe(404);
  });

  it('refuses bodies over the limit with 413', async () => {
    const r = await call('POST', 'echo', { body: new Uint8Array(6 * 1024 * 1024 + 1).fill(97) });
    expect(r.status).toBe(413);
    expect(r.json.error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('answers 500 FUNCTION_ERROR when the handler throws, with the message in the log only', async () => {
    await deploy({ name: 'thrower', code: 'export default () => { console.log("about to fail"); throw new Error("kaboom secret detail"); };' });
    const r = await call('GET', 'thrower');
    expect(r.status).toBe(500);
    expect(r.json.error.code).toBe('FUNCTION_ERROR');
    expect(r.text).not.toContain('kaboom');
    const logs = await p.api('GET', `/v1/${appId}/functions/thrower/logs`, { key: serviceKey });
    expect(logs.body.logs[0]).toMatchObject({ status_code: 500, level: 'error', error: 'Error: kaboom secret detail' });
    expect(logs.body.logs[0].console.map((c: { message: string }) => c.message).join('\n')).toContain('about to fail');
  });

  it('keeps console output and paths byte for byte in the invocation log, quotes, braces and all', async () => {
    const tricky = 'a "quoted" {braced, listed} \\back\\slash, NULL, null, ünïcødé ✓\nsecond line';
    await deploy({ name: 'tricky', code: `export default () => { console.log(${JSON.stringify(tricky)}); return new Response("ok"); };` });
    expect((await call('GET', 'tricky/a%22b?x={1,2}')).status).toBe(200);
    await p.services.functions.flushLogs();
    const logs = await p.api('GET', `/v1/${appId}/functions/tricky/logs`, { key: serviceKey });
    expect(logs.body.logs[0]).toMatchObject({ path: '/a%22b?x={1,2}', status_code: 200, error: null, console: [{ level: 'log', message: tricky }] });
  });

  it('answers 500 FUNCTION_ERROR when the handler returns something that is not a Response', async () => {
    await deploy({ name: 'noresponse', code: 'export default () => ({ hello: 1 });' });
    const r = await call('GET', 'noresponse');
    expect(r.status).toBe(500);
    expect(r.json.error.code).toBe('FUNCTION_ERROR');
  });
});

describe('functions_list, functions_get, logs and metrics', () => {
  it('lists functions without their code', async () => {
    const r = await p.api('GET', `/v1/${appId}/functions`, { key: serviceKey });
    expect(r.status).toBe(200);
    const names = r.body.functions.map((f: { name: string }) => f.name);
    expect(names).toEqual([...names].sort());
    expect(names).toContain('echo');
    expect(r.body.functions[0].code).toBeUndefined();
    expect(r.body.next_before).toBeNull();
  });

  it('pages the list by bytes as well as count: functions with long descriptions and 100 long variable names', async () => {
    const wide = await createApp(p, 'wide');
    const envVars = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`V${String(i).padStart(3, '0')}_${'N'.repeat(190)}`, 'x']));
    const first = await deployFunction(p, wide.appId, wide.key, { name: 'wide-000', code: 'export default () => new Response("w");', description: 'd'.repeat(2000), envVars });
    expect(first.status, JSON.stringify(first.body).slice(0, 300)).toBe(201);
    // More of the same, as rows: the list reads rows, and 60 deploys would only make the test slow.
    await p.sql(
      `insert into functions (id, app_id, name, code, description, env_sealed, env_names, timeout_ms, memory_limit_mb, trigger_type, trigger_config, version)
       select gen_random_uuid(), app_id, 'wide-' || lpad(i::text, 3, '0'), code, description, env_sealed, env_names, timeout_ms, memory_limit_mb, trigger_type, trigger_config, version
       from functions, generate_series(1, 60) i where id = $1`,
      [first.body.id],
    );
    const names: string[] = [];
    let before: string | null = null;
    let pages = 0;
    do {
      const res = await fetch(`${p.url}/v1/${wide.appId}/functions${before ? `?before=${before}` : ''}`, { headers: { authorization: `Bearer ${wide.key}` } });
      const text = await res.text();
      expect(res.status, text.slice(0, 300)).toBe(200);
      // One view is ~22 KB: a page stops within one of the bound.
      expect(Buffer.byteLength(text)).toBeLessThan(LIST_MAX_BYTES + 32 * 1024);
      const body = JSON.parse(text) as { functions: Array<{ name: string; env_var_names: string[] }>; next_before: string | null };
      for (const f of body.functions) expect(f.env_var_names).toHaveLength(100);
      names.push(...body.functions.map((f) => f.name));
      before = body.next_before;
      if (before !== null) expect(before).toBe(names.at(-1));
      pages++;
    } while (before !== null);
    expect(pages).toBeGreaterThan(1);
    expect(names).toEqual(Array.from({ length: 61 }, (_, i) => `wide-${String(i).padStart(3, '0')}`));
  });

  it('computes metrics from the invocations', async () => {
    await deploy({ name: 'metered', code: 'export default (req) => new URL(req.url).searchParams.has("fail") ? new Response("no", { status: 503 }) : new Response("ok");' });
    for (let i = 0; i < 3; i++) expect((await call('GET', 'metered')).status).toBe(200);
    expect((await call('GET', 'metered?fail=1')).status).toBe(503);
    const r = await p.api('GET', `/v1/${appId}/functions/metered`, { key: serviceKey });
    expect(r.status).toBe(200);
    expect(r.body.code).toContain('searchParams');
    expect(r.body.metrics).toMatchObject({ total_invocations: 4, error_count: 1, error_rate: 25 });
    expect(r.body.metrics.avg_duration_ms).toBeGreaterThanOrEqual(0);
    expect(Date.parse(r.body.metrics.last_invocation)).toBeGreaterThan(Date.now() - 60_000);

    const fresh = await deploy({ name: 'unused', code: 'export default () => new Response("x");' });
    expect(fresh.status).toBe(201);
    const unused = await p.api('GET', `/v1/${appId}/functions/unused`, { key: serviceKey });
    expect(unused.body.metrics).toEqual({ total_invocations: 0, error_count: 0, error_rate: 0, avg_duration_ms: 0, last_invocation: null });
  });

  it('reads logs newest first with limit, level and since', async () => {
    const all = await p.api('GET', `/v1/${appId}/functions/metered/logs`, { key: serviceKey });
    expect(all.status).toBe(200);
    expect(all.body.logs).toHaveLength(4);
    expect(all.body.logs[0]).toMatchObject({ trigger: 'http', method: 'GET', path: '/?fail=1', status_code: 503, level: 'error', error: null });
    expect(all.body.logs[0].memory_mb).toBeGreaterThan(0);
    expect(typeof all.body.logs[0].duration_ms).toBe('number');
    const ids = all.body.logs.map((l: { id: string }) => Number(l.id));
    expect(ids).toEqual([...ids].sort((a, b) => b - a));

    const limited = await p.api('GET', `/v1/${appId}/functions/metered/logs?limit=2`, { key: serviceKey });
    expect(limited.body.logs).toHaveLength(2);
    const errorsOnly = await p.api('GET', `/v1/${appId}/functions/metered/logs?level=error`, { key: serviceKey });
    expect(errorsOnly.body.logs.map((l: { status_code: number }) => l.status_code)).toEqual([503]);
    const infoOnly = await p.api('GET', `/v1/${appId}/functions/metered/logs?level=info`, { key: serviceKey });
    expect(infoOnly.body.logs).toHaveLength(3);
    const future = await p.api('GET', `/v1/${appId}/functions/metered/logs?since=${new Date(Date.now() + 60_000).toISOString()}`, { key: serviceKey });
    expect(future.body.logs).toEqual([]);
    const past = await p.api('GET', `/v1/${appId}/functions/metered/logs?since=2020-01-01`, { key: serviceKey });
    expect(past.body.logs).toHaveLength(4);
    const beforeAll = await p.api('GET', `/v1/${appId}/functions/metered/logs?until=2020-01-01`, { key: serviceKey });
    expect(beforeAll.body.logs).toEqual([]);
    const untilLater = await p.api('GET', `/v1/${appId}/functions/metered/logs?until=${new Date(Date.now() + 60_000).toISOString()}`, { key: serviceKey });
    expect(untilLater.body.logs).toHaveLength(4);
    // Pages of 2: the second starts after the first's last id, and together they are the whole list.
    const second = await p.api('GET', `/v1/${appId}/functions/metered/logs?limit=2&before=${limited.body.logs[1].id}`, { key: serviceKey });
    expect([...limited.body.logs, ...second.body.logs].map((l: { id: string }) => l.id)).toEqual(all.body.logs.map((l: { id: string }) => l.id));
    expect(limited.body.next_before).toBe(limited.body.logs[1].id);
    expect(all.body.next_before).toBeNull();
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['level=debug', 'level'],
    ['since=yesterday', 'since'],
    ['until=tomorrow', 'until'],
    ['before=12a', 'before'],
  ])('refuses logs?%s with 400 naming the field', async (query, field) => {
    const r = await p.api('GET', `/v1/${appId}/functions/metered/logs?${query}`, { key: serviceKey });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('VALIDATION_FAILED');
    expect(r.body.error.message).toContain(`'${field}'`);
  });

  it('bounds a page of logs by bytes as well as rows, and pages through huge entries with next_before', async () => {
    // Each invocation logs 64 KB of control characters, which JSON writes as six bytes each: ~390 KB per entry.
    await deploy({ name: 'loud', code: "export default () => { for (let i = 0; i < 4; i++) console.log('\\u0001'.repeat(16000)); return new Response('ok'); };" });
    const invocations = 250;
    for (let i = 0; i < invocations; i += 10) {
      const batch = await Promise.all(Array.from({ length: Math.min(10, invocations - i) }, () => call('GET', 'loud')));
      for (const r of batch) expect(r.status).toBe(200);
    }
    const fetchText = async (query: string) => {
      const res = await fetch(`${p.url}/v1/${appId}/functions/loud/logs?${query}`, { headers: { authorization: `Bearer ${serviceKey}` } });
      const text = await res.text();
      expect(res.status, text.slice(0, 500)).toBe(200);
      return text;
    };
    const page = (text: string) => ({ bytes: Buffer.byteLength(text), body: JSON.parse(text) as { logs: Array<{ id: string; console: Array<{ message: string }> }>; next_before: string | null } });
    const read = async (query: string) => page(await fetchText(query));
    const ids: string[] = [];
    let before: string | null = null;
    let pages = 0;
    do {
      // The platform's work for the page (this thread's too: it runs in-process); the test's own parse of ~1.4 MB of
      // escapes comes after, outside the watch.
      const { result: text, maxDelayMs } = await withEventLoopDelay(() => fetchText(`limit=1000${before ? `&before=${before}` : ''}`));
      expect(maxDelayMs).toBeLessThan(200);
      const result = page(text);
      // One entry may pass the budget (the first is always whole): ~390 KB over it at most.
      expect(result.bytes).toBeLessThan(LOG_ANSWER_MAX_BYTES + 512 * 1024);
      expect(result.body.logs.length).toBeGreaterThan(0);
      for (const entry of result.body.logs) expect(entry.console.map((c) => c.message.length)).toEqual([16000, 16000, 16000, 16000]);
      ids.push(...result.body.logs.map((l) => l.id));
      before = result.body.next_before;
      if (before !== null) expect(before).toBe(ids.at(-1));
      pages++;
    } while (before !== null);
    expect(pages).toBeGreaterThan(20);
    const rows = await p.sql(`select l.id::text from function_logs l join functions f on f.id = l.function_id where f.app_id = $1 and f.name = 'loud' order by l.id desc`, [appId]);
    expect(ids).toEqual(rows.map((r: { id: string }) => r.id));
    expect(ids).toHaveLength(invocations);
    // The row limit still applies within the byte budget, and a page that ends the list says so.
    const two = await read('limit=2');
    expect(two.body.logs.map((l) => l.id)).toEqual(ids.slice(0, 2));
    expect(two.body.next_before).toBe(ids[1]);
    const last = await read(`limit=2&before=${ids.at(-2)}`);
    expect(last.body).toMatchObject({ logs: [{ id: ids.at(-1) }], next_before: null });
  }, 120_000);

  it('counts invocations toward the lambda_invocations meter', async () => {
    await p.services.functions.flushLogs();
    const rows = await p.sql(`select sum(quantity)::int as n from usage_daily where app_id = $1 and meter = 'lambda_invocations'`, [appId]);
    expect(rows[0].n).toBeGreaterThanOrEqual(4);
  });

  it('keeps at most the retention count of log rows per function', async () => {
    await deploy({ name: 'chatty', code: 'export default () => new Response("x");' });
    for (let i = 0; i < 5; i++) await call('GET', 'chatty');
    await p.services.functions.flushLogs();
    const { trimLogs } = await import('../../src/functions/logs.ts');
    const { Kysely, PostgresDialect } = await import('kysely');
    const pg = (await import('pg')).default;
    const { databaseUrl } = await import('../helpers/db.ts');
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: databaseUrl(p.controlDb), max: 1 }) }) });
    try {
      await trimLogs(db, 2);
    } finally {
      await db.destroy();
    }
    const logs = await p.api('GET', `/v1/${appId}/functions/chatty/logs`, { key: serviceKey });
    expect(logs.body.logs).toHaveLength(2);
    // Metrics are all-time counters: trimming logs does not change them.
    expect((await p.api('GET', `/v1/${appId}/functions/chatty`, { key: serviceKey })).body.metrics.total_invocations).toBe(5);
  });
});

describe('functions_invoke (test-invoke)', () => {
  it('returns status, headers, body, console output and duration', async () => {
    const r = await p.api('POST', `/v1/${appId}/functions/echo/invoke`, {
      key: serviceKey,
      body: { method: 'PUT', path: '/things/1?a=b', query: { c: 'd' }, headers: { 'X-Test': 't' }, body: { hello: 'world' } },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 200, body_encoding: 'json', truncated: false, error: null });
    expect(r.body.headers['x-echo']).toBe('yes');
    expect(r.body.body).toMatchObject({ method: 'PUT', path: '/things/1', query: { a: 'b', c: 'd' }, body: '{"hello":"world"}' });
    expect(r.body.body.headers).toMatchObject({ 'x-test': 't', 'content-type': 'application/json' });
    expect(r.body.console).toEqual([{ level: 'log', message: 'echo PUT /things/1' }]);
    const logs = await p.api('GET', `/v1/${appId}/functions/echo/logs?limit=1`, { key: serviceKey });
    expect(logs.body.logs[0]).toMatchObject({ trigger: 'test', method: 'PUT' });
  });

  it('defaults to GET without a body and POST with one', async () => {
    const get = await p.api('POST', `/v1/${appId}/functions/echo/invoke`, { key: serviceKey, body: {} });
    expect(get.body.body.method).toBe('GET');
    const post = await p.api('POST', `/v1/${appId}/functions/echo/invoke`, { key: serviceKey, body: { body: 'text' } });
    expect(post.body).toMatchObject({ status: 201, body: { method: 'POST', body: 'text' } });
  });

  it('reports a thrown error as a result with the message', async () => {
    const r = await p.api('POST', `/v1/${appId}/functions/thrower/invoke`, { key: serviceKey, body: {} });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 500, error: 'Error: kaboom secret detail', body: { error: { code: 'FUNCTION_ERROR' } } });
  });

  it('acts as an end user with user_token', async () => {
    const signup = await p.api('POST', `/v1/${appId}/auth/signup`, { body: { email: 'invoke-user@example.com', password: 'correct horse battery' }, key: null });
    const r = await p.api('POST', `/v1/${appId}/functions/echo/invoke`, { key: serviceKey, body: { user_token: signup.body.access_token } });
    expect(r.body.body.user.id).toBe(signup.body.user.id);
  });

  it('answers 404 for an unknown function', async () => {
    const r = await p.api('POST', `/v1/${appId}/functions/nope/invoke`, { key: serviceKey, body: {} });
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('RESOURCE_NOT_FOUND');
  });
});

describe('functions_env_update', () => {
  it('merges variables, removes null ones, and returns names only', async () => {
    const r = await p.api('PATCH', `/v1/${appId}/functions/echo/env`, { key: serviceKey, body: { GREETING: 'bonjour', API_TOKEN: null, NEW_ONE: 'n' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ name: 'echo', env_var_names: ['GREETING', 'NEW_ONE'] });
    expect(JSON.stringify(r.body)).not.toContain('bonjour');
    const echo = await call('GET', 'echo');
    expect(echo.json.env).toEqual({ GREETING: 'bonjour', NEW_ONE: 'n', SVC_APP_ID: appId, SVC_API_URL: `${p.services.config.baseUrl}/v1/${appId}` });
  });

  it('refuses bad names and unknown functions', async () => {
    const bad = await p.api('PATCH', `/v1/${appId}/functions/echo/env`, { key: serviceKey, body: { 'BAD-NAME': 'x' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('VALIDATION_FAILED');
    const reserved = await p.api('PATCH', `/v1/${appId}/functions/echo/env`, { key: serviceKey, body: { SVC_API_URL: 'x' } });
    expect(reserved.status).toBe(400);
    const missing = await p.api('PATCH', `/v1/${appId}/functions/nope/env`, { key: serviceKey, body: { A: 'x' } });
    expect(missing.status).toBe(404);
  });
});

describe('cron trigger', () => {
  it('dispatches each due slot once as a POST { scheduled_at }, even when the tick repeats', async () => {
    const code = `export default async (req) => { const b = await req.json(); console.log('cron at', b.scheduled_at, req.headers.get('x-svc-trigger')); return new Response('ran'); };`;
    const d = await deploy({ name: 'every-minute', code, trigger: { type: 'cron', config: { schedule: '* * * * *' } } });
    expect(d.status).toBe(201);
    expect(d.body.url).toBeNull();
    expect(Date.parse(d.body.next_run_at)).toBeGreaterThan(Date.now());

    // Not on the public route.
    const pub = await call('POST', 'every-minute');
    expect(pub.status).toBe(404);

    const now = new Date(Math.floor(Date.now() / 60_000) * 60_000 + 2 * 60_000 + 5_000);
    const first = await p.services.functions.cronTick(now);
    expect(first.enqueued).toBeGreaterThanOrEqual(2);
    const again = await p.services.functions.cronTick(now);
    expect(again.enqueued).toBe(0);

    const logs = await waitForLogs('every-minute', first.enqueued);
    expect(logs).toHaveLength(first.enqueued);
    for (const l of logs) expect(l).toMatchObject({ trigger: 'cron', method: 'POST', status_code: 200 });
    const slots = logs.map((l: { console: Array<{ message: string }> }) => l.console[0]!.message).sort();
    expect(new Set(slots).size).toBe(slots.length);
    expect(slots.at(-1)).toBe(`cron at ${new Date(Math.floor(now.getTime() / 60_000) * 60_000).toISOString()} cron`);
  });
});

describe('functions_delete', () => {
  it('deletes the function, stops its processes, and then 404s', async () => {
    await deploy({ name: 'doomed', code: 'export default () => new Response("alive");' });
    expect((await call('GET', 'doomed')).text).toBe('alive');
    const id = (await p.api('GET', `/v1/${appId}/functions/doomed`, { key: serviceKey })).body.id;
    const pids = p.services.functions.pool.pids(id);
    expect(pids.length).toBeGreaterThan(0);
    const r = await p.api('DELETE', `/v1/${appId}/functions/doomed`, { key: serviceKey });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ deleted: true, name: 'doomed' });
    expect((await call('GET', 'doomed')).status).toBe(404);
    expect((await p.api('GET', `/v1/${appId}/functions/doomed`, { key: serviceKey })).status).toBe(404);
    expect((await p.api('DELETE', `/v1/${appId}/functions/doomed`, { key: serviceKey })).status).toBe(404);
    await waitFor(() => pids.every((pid) => !processExists(pid)));
  });

  it('deleting the app ends its functions and their processes', async () => {
    const other = (await p.api('POST', '/init', { body: { name: 'short-lived' } })).body;
    const d = await p.api('POST', `/v1/${other.app_id}/functions`, { body: { name: 'f', code: 'export default () => new Response("f");' } });
    expect(d.status).toBe(201);
    expect((await fetch(`${p.url}/v1/${other.app_id}/fn/f`)).status).toBe(200);
    const pids = p.services.functions.pool.pids(d.body.id);
    expect(pids.length).toBeGreaterThan(0);
    expect((await p.api('DELETE', `/apps/${other.app_id}`)).status).toBe(200);
    expect(await p.sql('select id from functions where app_id = $1', [other.app_id])).toEqual([]);
    await waitFor(() => pids.every((pid) => !processExists(pid)));
  });
});

async function waitForLogs(name: string, n: number): Promise<any[]> {
  let logs: any[] = [];
  await waitFor(async () => {
    logs = (await p.api('GET', `/v1/${appId}/functions/${name}/logs`, { key: serviceKey })).body.logs;
    return logs.length >= n;
  });
  return logs;
}

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
