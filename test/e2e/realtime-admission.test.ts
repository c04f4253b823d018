// Realtime sockets are admitted like every call of an app (issue 42): one app holds at most
// SVC_REALTIME_MAX_SOCKETS_PER_APP sockets on an api process (429 beyond, another app unaffected), a paused app's
// upgrade is refused 423, and the frames a socket is sent count as the app's bandwidth.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { RawSocket } from '../helpers/phoenix-socket.ts';
import { databaseUrl } from '../helpers/db.ts';
import { request } from './e2e-helpers.ts';

let server: SpawnedServer;
let control: pg.Client;
const apps: Array<{ id: string; publishableKey: string; serviceKey: string }> = [];
const sockets: RawSocket[] = [];

beforeAll(async () => {
  server = await spawnServer({ SVC_REALTIME_MAX_SOCKETS_PER_APP: '2' });
  for (const name of ['Busy', 'Quiet']) {
    const made = await request(server.url, '/init', { method: 'POST', key: server.platformKey, body: { name } });
    expect(made.status).toBe(201);
    apps.push({ id: made.json.app_id, publishableKey: made.json.publishable_key, serviceKey: made.json.service_key.key });
  }
  control = new pg.Client({ connectionString: databaseUrl(server.controlDb) });
  await control.connect();
}, 90_000);

afterAll(async () => {
  for (const s of sockets) s.ws.terminate();
  await control?.end();
  await server?.close();
});

/** A socket of `app`, or the status and error code its upgrade was refused with. */
async function open(app: (typeof apps)[number]): Promise<RawSocket | { status: number; code: string }> {
  try {
    const socket = await RawSocket.open(`ws://127.0.0.1:${server.port}/v1/${app.id}/realtime/v1/websocket?apikey=${app.publishableKey}&vsn=2.0.0`);
    sockets.push(socket);
    return socket;
  } catch (e) {
    const refused = e as { status: number; body: { error: { code: string } } };
    return { status: refused.status, code: refused.body.error.code };
  }
}

describe('realtime admission', () => {
  it("caps one app's sockets on the process without touching another app's, and frees a place when one closes", async () => {
    const [busy, quiet] = [apps[0]!, apps[1]!];
    const first = await open(busy);
    expect(first).toBeInstanceOf(RawSocket);
    expect(await open(busy)).toBeInstanceOf(RawSocket);
    expect(await open(busy)).toEqual({ status: 429, code: 'RATE_LIMITED' });
    expect(await open(quiet)).toBeInstanceOf(RawSocket);

    (first as RawSocket).ws.close(1000);
    await (first as RawSocket).closed;
    // The server counts the socket out once its close reaches it: wait for that, not for a time.
    let next = await open(busy);
    while (!(next instanceof RawSocket)) {
      expect(next).toEqual({ status: 429, code: 'RATE_LIMITED' });
      next = await open(busy);
    }
  });

  it("meters the frames sent as the app's bandwidth", async () => {
    const quiet = apps[1]!;
    const listener = (await open(quiet)) as RawSocket;
    const joined = await listener.ask('1', '1', 'realtime:news', 'phx_join', { config: {} });
    expect(joined).toEqual({ status: 'ok', response: { postgres_changes: [] } });
    const payload = { text: 'x'.repeat(200_000) };
    const sent = await request(server.url, `/v1/${quiet.id}/realtime/v1/api/broadcast`, { method: 'POST', key: quiet.serviceKey, body: { messages: [{ topic: 'news', event: 'big', payload }] } });
    expect(sent.status).toBe(202);
    // Meters are written every 5 s: wait until this app's bandwidth holds the broadcast.
    let bandwidth = 0;
    while (bandwidth < 200_000) {
      const usage = await request(server.url, `/dashboard/usage?appId=${quiet.id}&meterType=bandwidth_bytes`, { key: server.platformKey });
      expect(usage.status).toBe(200);
      bandwidth = usage.json.rows.reduce((sum: number, r: { quantity: number }) => sum + r.quantity, 0);
      if (bandwidth < 200_000) await new Promise((resolve) => setTimeout(resolve, 250));
    }
  });

  it("refuses a paused app's upgrade with 423", async () => {
    const quiet = apps[1]!;
    for (const s of sockets.splice(0)) s.ws.terminate();
    await control.query('update apps set paused_at = now() where id = $1', [quiet.id]);
    // App records are cached for 5 s per process: wait until the pause shows.
    let outcome = await open(quiet);
    while (outcome instanceof RawSocket || outcome.status === 429) {
      if (outcome instanceof RawSocket) outcome.ws.terminate();
      await new Promise((resolve) => setTimeout(resolve, 100));
      outcome = await open(quiet);
    }
    expect(outcome).toEqual({ status: 423, code: 'APP_PAUSED' });
  });
});
