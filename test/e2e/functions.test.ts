// An agent over MCP deploys a TypeScript function against a server started like `npm start`, invokes it publicly
// with any method, reads its logs and metrics, updates its variables, sees a cron function fire (the tick is
// driven deterministically through the job queue), and talks to a websocket function.
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { databaseUrl } from '../helpers/db.ts';
import pg from 'pg';
import { ISO_DATE, callTool, connectMcp, request, resultJson, type McpConnection } from './e2e-helpers.ts';

let server: SpawnedServer;
let mcp: McpConnection;
let appId: string;

const COUNTER = `
type Item = { id: string; note: string };
const items = new Map<string, Item>();

export default async (req: Request, ctx: { env: Record<string, string>; user: { id: string } | null }): Promise<Response> => {
  const url = new URL(req.url);
  const id = url.pathname.split('/')[1] ?? '';
  console.log(req.method, url.pathname);
  switch (req.method) {
    case 'GET':
      return Response.json({ greeting: ctx.env.GREETING, items: [...items.values()], q: url.searchParams.get('q') });
    case 'POST': {
      const body = (await req.json()) as { note: string };
      const item: Item = { id: String(items.size + 1), note: body.note };
      items.set(item.id, item);
      return Response.json(item, { status: 201 });
    }
    case 'PUT': {
      const body = (await req.json()) as { note: string };
      items.set(id, { id, note: body.note });
      return Response.json(items.get(id));
    }
    case 'DELETE':
      items.delete(id);
      return new Response(null, { status: 204 });
    default:
      return new Response('method not allowed', { status: 405 });
  }
};`;

async function tool(name: string, args: Record<string, unknown>) {
  const result = await callTool(mcp.client, name, args);
  return { result, json: resultJson(result) };
}

function childPids(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

beforeAll(async () => {
  server = await spawnServer();
  mcp = await connectMcp(server.url, server.platformKey);
  appId = (await tool('apps_create', { name: 'Functions E2E' })).json.app_id;
});

afterAll(async () => {
  await mcp?.close().catch(() => {});
  await server?.close();
});

describe('functions over MCP and the public route', () => {
  it('deploys a TypeScript function over MCP', async () => {
    const { result, json } = await tool('functions_deploy', { app_id: appId, name: 'notes', code: COUNTER, envVars: { GREETING: 'hello' }, description: 'notes API' });
    expect(result.isError).toBeFalsy();
    expect(json).toMatchObject({ name: 'notes', created: true, env_var_names: ['GREETING'], trigger: { type: 'http', config: {} } });
    expect(json.url).toBe(`http://localhost:${server.port}/v1/${appId}/fn/notes`);
    const listed = await tool('functions_list', { app_id: appId });
    expect(listed.json.functions.map((f: { name: string }) => f.name)).toEqual(['notes']);
    // REST and MCP serve the same descriptor: the same body.
    const rest = await request(server.url, `/v1/${appId}/functions`, { key: server.platformKey });
    expect(rest.status).toBe(200);
    expect(resultJson(listed.result)).toEqual(rest.json);
  });

  it('refuses broken code over MCP with FUNCTION_INVALID and the compiler message', async () => {
    const { result, json } = await tool('functions_deploy', { app_id: appId, name: 'broken', code: 'export default (req: Request) => {' });
    expect(result.isError).toBe(true);
    expect(json.error.code).toBe('FUNCTION_INVALID');
    expect(json.error.message).toMatch(/expected/i);
  });

  it('is invocable publicly with GET, POST, PUT and DELETE', async () => {
    const base = `/v1/${appId}/fn/notes`;
    const created = await request(server.url, base, { method: 'POST', body: { note: 'first' } });
    expect(created.status).toBe(201);
    expect(created.json).toEqual({ id: '1', note: 'first' });
    const updated = await request(server.url, `${base}/1`, { method: 'PUT', body: { note: 'edited' } });
    expect(updated.status).toBe(200);
    expect(updated.json).toEqual({ id: '1', note: 'edited' });
    const read = await request(server.url, `${base}?q=search`);
    expect(read.status).toBe(200);
    expect(read.json).toEqual({ greeting: 'hello', items: [{ id: '1', note: 'edited' }], q: 'search' });
    const deleted = await request(server.url, `${base}/1`, { method: 'DELETE' });
    expect(deleted.status).toBe(204);
    expect((await request(server.url, base)).json.items).toEqual([]);
    expect((await request(server.url, base, { method: 'PATCH' })).status).toBe(405);
  });

  it('reads the logs and metrics over MCP', async () => {
    const logs = (await tool('functions_logs', { app_id: appId, name: 'notes', limit: 10 })).json.logs;
    expect(logs).toHaveLength(6);
    expect(logs.map((l: { method: string }) => l.method)).toEqual(['PATCH', 'GET', 'DELETE', 'GET', 'PUT', 'POST']);
    expect(logs[0]).toMatchObject({ trigger: 'http', status_code: 405, level: 'info', error: null, console: [{ level: 'log', message: 'PATCH /' }] });
    expect(logs[0].created_at).toMatch(ISO_DATE);
    expect(logs[0].memory_mb).toBeGreaterThan(0);
    const errorsOnly = (await tool('functions_logs', { app_id: appId, name: 'notes', level: 'error' })).json.logs;
    expect(errorsOnly).toEqual([]);

    const detail = (await tool('functions_get', { app_id: appId, name: 'notes' })).json;
    expect(detail.code).toBe(COUNTER);
    expect(detail.metrics).toMatchObject({ total_invocations: 6, error_count: 0, error_rate: 0 });
    expect(detail.metrics.avg_duration_ms).toBeGreaterThan(0);
    expect(detail.metrics.last_invocation).toMatch(ISO_DATE);
  });

  it('test-invokes over MCP', async () => {
    const { json } = await tool('functions_invoke', { app_id: appId, name: 'notes', method: 'POST', path: '/', body: { note: 'via mcp' } });
    expect(json).toMatchObject({ status: 201, body_encoding: 'json', body: { note: 'via mcp' }, error: null });
    expect(json.console).toEqual([{ level: 'log', message: 'POST /' }]);
  });

  it('updates variables over MCP; the next invocation sees them', async () => {
    const { json } = await tool('functions_env_update', { app_id: appId, name: 'notes', env: { GREETING: 'bonjour', EXTRA: 'x' } });
    expect(json).toMatchObject({ name: 'notes', env_var_names: ['EXTRA', 'GREETING'] });
    expect(JSON.stringify(json)).not.toContain('bonjour');
    const read = await request(server.url, `/v1/${appId}/fn/notes`);
    expect(read.json.greeting).toBe('bonjour');
    const removed = (await tool('functions_env_update', { app_id: appId, name: 'notes', env: { EXTRA: null } })).json;
    expect(removed.env_var_names).toEqual(['GREETING']);
  });

  it('sees a cron function fire on schedule', async () => {
    const code = `export default async (req: Request) => {
      const { scheduled_at } = await req.json();
      console.log('tick', scheduled_at);
      return new Response('ok');
    };`;
    const { json } = await tool('functions_deploy', { app_id: appId, name: 'minutely', code, trigger: { type: 'cron', config: { schedule: '* * * * *' } } });
    expect(json).toMatchObject({ created: true, trigger: { type: 'cron', config: { schedule: '* * * * *' } }, url: null });
    expect(json.next_run_at).toMatch(ISO_DATE);

    // Drive the dispatcher deterministically: enqueue its tick with a `now` two minutes ahead (what the
    // every-minute cron item does with the real time); the server's worker runs it and the slots it enqueues.
    const now = new Date(Date.now() + 2 * 60_000).toISOString();
    const control = new pg.Client({ connectionString: databaseUrl(server.controlDb) });
    await control.connect();
    try {
      await control.query(`select graphile_worker.add_job('functions_cron_tick', json_build_object('now', $1::text))`, [now]);
    } finally {
      await control.end();
    }
    let logs: Array<{ trigger: string; console: Array<{ message: string }> }> = [];
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      logs = (await tool('functions_logs', { app_id: appId, name: 'minutely' })).json.logs;
      if (logs.length >= 2) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(logs.length).toBeGreaterThanOrEqual(2);
    for (const l of logs) {
      expect(l.trigger).toBe('cron');
      expect(l.console[0]!.message).toMatch(/^tick \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:00\.000Z$/);
    }
    const detail = (await tool('functions_get', { app_id: appId, name: 'minutely' })).json;
    expect(detail.metrics.total_invocations).toBe(logs.length);
  });

  it('round-trips a websocket message through a websocket function', async () => {
    const code = `export default async (req: Request, ctx: { user: { id: string } | null }) => {
      const { event, data } = await req.json();
      return Response.json({ reply: String(data.text).toUpperCase(), event, anonymous: ctx.user === null });
    };`;
    const { json } = await tool('functions_deploy', { app_id: appId, name: 'shout', code, trigger: { type: 'websocket', config: { event: 'shout' } } });
    expect(json.created).toBe(true);
    const ws = new WebSocket(`ws://127.0.0.1:${server.port}/v1/${appId}/ws`);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const reply = new Promise<any>((resolve) => ws.once('message', (data) => resolve(JSON.parse(data.toString()))));
    ws.send(JSON.stringify({ event: 'shout', data: { text: 'hello socket' } }));
    expect(await reply).toEqual({ event: 'shout', function: 'shout', status: 200, data: { reply: 'HELLO SOCKET', event: 'shout', anonymous: true } });
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    ws.close();
    expect(await closed).toBeGreaterThan(0);
  });

  it('deletes a function over MCP', async () => {
    const { json } = await tool('functions_delete', { app_id: appId, name: 'minutely' });
    expect(json).toEqual({ deleted: true, name: 'minutely' });
    const gone = await tool('functions_get', { app_id: appId, name: 'minutely' });
    expect(gone.result.isError).toBe(true);
    expect(gone.json.error.code).toBe('RESOURCE_NOT_FOUND');
  });

  it('kills every function process when the server stops', async () => {
    const pid = server.child.pid!;
    const denoChildren = () => childPids(pid).filter((c) => {
      try {
        return readFileSync(`/proc/${c}/cmdline`, 'utf8').includes('runner.ts');
      } catch {
        return false;
      }
    });
    expect(denoChildren().length).toBeGreaterThan(0);
    const before = denoChildren();
    await mcp.close().catch(() => {});
    expect(await server.stop()).toBe(0);
    for (const c of before) {
      let alive = true;
      try {
        process.kill(c, 0);
      } catch {
        alive = false;
      }
      expect(alive).toBe(false);
    }
  });
});
