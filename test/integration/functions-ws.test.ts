// Websocket-triggered functions on /v1/{app_id}/ws, and the subdomain short paths /ws and /fn/{name}.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { request } from '../e2e/e2e-helpers.ts';

let p: TestPlatform;
let app: { app_id: string; subdomain: string; service_key: { key: string } };
let token: string;
let userId: string;

const CHAT = `export default async (req: Request, ctx: any) => {
  const { event, data } = await req.json();
  return Response.json({ echo: data, user: ctx.user?.id ?? null, trigger: req.headers.get('x-svc-trigger') });
};`;

function wsUrl(path: string): string {
  return p.url.replace(/^http/, 'ws') + path;
}

/** Opens a socket and collects its frames; `next()` resolves with the next frame. */
function open(path: string, headers: Record<string, string> = {}): Promise<{ ws: WebSocket; next: () => Promise<any> }> {
  const ws = new WebSocket(wsUrl(path), { headers });
  const frames: any[] = [];
  const waiting: Array<(f: any) => void> = [];
  ws.on('message', (data) => {
    const frame = JSON.parse(data.toString());
    const w = waiting.shift();
    if (w) w(frame);
    else frames.push(frame);
  });
  const next = () => (frames.length ? Promise.resolve(frames.shift()) : new Promise<any>((resolve) => waiting.push(resolve)));
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, next }));
    ws.once('error', reject);
  });
}

/** The HTTP status a refused upgrade answers with. */
function refused(path: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl(path), { headers });
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.once('open', () => reject(new Error('the upgrade was accepted')));
    ws.once('error', () => {});
  });
}

beforeAll(async () => {
  p = await startTestPlatform({ SVC_BASE_DOMAIN: 'apps.test' });
  app = (await p.api('POST', '/init', { body: { name: 'sockets' } })).body;
  const key = app.service_key.key;
  for (const [name, event, code] of [
    ['chat-a', 'chat', CHAT],
    ['chat-b', 'chat', 'export default async (req) => new Response("plain text reply");'],
    ['slow-fail', 'fail', 'export default () => { throw new Error("ws boom"); };'],
  ] as const) {
    const r = await p.api('POST', `/v1/${app.app_id}/functions`, { key, body: { name, code, trigger: { type: 'websocket', config: { event } } } });
    expect(r.status).toBe(201);
  }
  const signup = await p.api('POST', `/v1/${app.app_id}/auth/signup`, { body: { email: 'ws@example.com', password: 'correct horse battery' }, key: null });
  token = signup.body.access_token;
  userId = signup.body.user.id;
});

afterAll(async () => {
  await p?.close();
});

describe('/v1/{app_id}/ws', () => {
  it('runs every function of the event and sends each reply back', async () => {
    const { ws, next } = await open(`/v1/${app.app_id}/ws`);
    ws.send(JSON.stringify({ event: 'chat', data: { text: 'hi' } }));
    const replies = [await next(), await next()].sort((a, b) => a.function.localeCompare(b.function));
    expect(replies).toEqual([
      { event: 'chat', function: 'chat-a', status: 200, data: { echo: { text: 'hi' }, user: null, trigger: 'websocket' } },
      { event: 'chat', function: 'chat-b', status: 200, data: 'plain text reply' },
    ]);
    ws.close();
  });

  it('gives the function the end user of a ?token= or Authorization token', async () => {
    for (const [path, headers] of [
      [`/v1/${app.app_id}/ws?token=${token}`, {}],
      [`/v1/${app.app_id}/ws`, { authorization: `Bearer ${token}` }],
    ] as const) {
      const { ws, next } = await open(path, headers);
      ws.send(JSON.stringify({ event: 'chat', data: 1 }));
      const replies = [await next(), await next()];
      expect(replies.find((r) => r.function === 'chat-a').data.user).toBe(userId);
      ws.close();
    }
  });

  it('answers an unknown event, bad JSON and a message without event with error frames', async () => {
    const { ws, next } = await open(`/v1/${app.app_id}/ws`);
    ws.send(JSON.stringify({ event: 'nobody-listens', data: {} }));
    expect(await next()).toEqual({ event: 'nobody-listens', error: "No function of this app handles the event 'nobody-listens'." });
    ws.send('{not json');
    expect((await next()).error).toMatch(/JSON/);
    ws.send(JSON.stringify({ data: 1 }));
    expect((await next()).error).toMatch(/event/);
    // The socket stays usable.
    ws.send(JSON.stringify({ event: 'chat' }));
    expect((await next()).event).toBe('chat');
    ws.close();
  });

  it("reports a function's failure as its reply's status", async () => {
    const { ws, next } = await open(`/v1/${app.app_id}/ws`);
    ws.send(JSON.stringify({ event: 'fail', data: null }));
    expect(await next()).toMatchObject({ event: 'fail', function: 'slow-fail', status: 500, data: { error: { code: 'FUNCTION_ERROR' } } });
    ws.close();
  });

  it('refuses a bad token (401), a token of another app (403) and an unknown app (404)', async () => {
    expect(await refused(`/v1/${app.app_id}/ws?token=aaa.bbb.ccc`)).toBe(401);
    const other = (await p.api('POST', '/init', { body: { name: 'other' } })).body;
    const otherUser = await p.api('POST', `/v1/${other.app_id}/auth/signup`, { body: { email: 'o@example.com', password: 'correct horse battery' }, key: null });
    expect(await refused(`/v1/${app.app_id}/ws?token=${otherUser.body.access_token}`)).toBe(403);
    expect(await refused('/v1/zzzzzzzzzzzzzzzz/ws')).toBe(404);
  });

  it('logs websocket invocations with trigger websocket', async () => {
    const logs = await p.api('GET', `/v1/${app.app_id}/functions/chat-a/logs`, { key: app.service_key.key });
    expect(logs.body.logs.length).toBeGreaterThan(0);
    expect(logs.body.logs[0]).toMatchObject({ trigger: 'websocket', method: 'POST', status_code: 200 });
  });
});

describe('subdomain routing', () => {
  it('serves /fn/{name} and /ws on the app host', async () => {
    const key = app.service_key.key;
    const d = await p.api('POST', `/v1/${app.app_id}/functions`, { key, body: { name: 'hello', code: 'export default (req) => new Response("hello " + new URL(req.url).pathname + " " + req.method);' } });
    expect(d.status).toBe(201);
    const host = `${app.subdomain}.apps.test`;
    const r = await request(p.url, '/fn/hello/deep/path?q=1', { method: 'PUT', headers: { host } });
    expect(r.status).toBe(200);
    expect(r.text).toBe('hello /deep/path PUT');
    const unknownHost = await request(p.url, '/fn/hello', { headers: { host: 'nope-zzzzzz.apps.test' } });
    expect(unknownHost.status).toBe(404);

    const list = await request(p.url, '/functions', { key, headers: { host } });
    expect(list.status).toBe(200);
    expect(list.json.functions.map((f: { name: string }) => f.name)).toContain('hello');

    const { ws, next } = await open('/ws', { host });
    ws.send(JSON.stringify({ event: 'chat', data: 'sub' }));
    const replies = [await next(), await next()];
    expect(replies.find((x) => x.function === 'chat-a').data.echo).toBe('sub');
    ws.close();
  });
});
