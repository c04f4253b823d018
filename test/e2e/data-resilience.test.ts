// The data API under oversized rows, hostile query values, killed database connections and a held pool,
// against the server started as `npm start` does: the process stays up and every failure is a clear 4xx/503/504.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { databaseUrl } from '../helpers/db.ts';
import { request, type RawResponse } from './e2e-helpers.ts';

const MAX_RESPONSE_BYTES = 1024 * 1024;
const ACQUIRE_TIMEOUT_MS = 700;

const SCHEMA = {
  tables: {
    docs: {
      columns: {
        id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' },
        n: { type: 'integer' },
        meta: { type: 'jsonb' },
        body: { type: 'text' },
      },
    },
    refs: {
      columns: {
        id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' },
        doc_id: { type: 'uuid', references: { table: 'docs', column: 'id' } },
      },
    },
  },
};

let server: SpawnedServer;
let appId: string;
let key: string;

const api = (path: string, opts: Parameters<typeof request>[2] = {}) => request(server.url, `/v1/${appId}${path}`, { key, ...opts });
const minimal = { prefer: 'return=minimal' };

function expectError(res: RawResponse, status: number, code: string): void {
  expect({ status: res.status, code: res.json?.error?.code }).toEqual({ status, code });
  expect(typeof res.json.error.message).toBe('string');
  expect(typeof res.json.error.remediation).toBe('string');
}

async function expectAlive(): Promise<void> {
  expect(server.child.exitCode).toBeNull();
  expect((await request(server.url, '/health/ready')).status).toBe(200);
}

beforeAll(async () => {
  server = await spawnServer({
    SVC_DATA_MAX_RESPONSE_BYTES: String(MAX_RESPONSE_BYTES),
    SVC_DB_ACQUIRE_TIMEOUT_MS: String(ACQUIRE_TIMEOUT_MS),
    SVC_APP_POOL_SIZE: '2',
  });
  const created = await request(server.url, '/init', { method: 'POST', key: server.platformKey, body: { name: 'resilience' } });
  appId = created.json.app_id;
  key = created.json.service_key.key;
  const applied = await api('/schema/apply', { method: 'POST', body: { schema: SCHEMA, name: 'init' } });
  expect(applied.status).toBe(200);
}, 60_000);

afterAll(async () => {
  await server?.close();
});

describe('oversized rows', () => {
  const big = (c: string) => c.repeat(400 * 1024);

  it('stores them with return=minimal, refuses a response past the ceiling with 413 and serves narrower reads', async () => {
    for (const c of ['a', 'b', 'c']) {
      const res = await api('/docs', { method: 'POST', headers: minimal, body: { n: 1, body: big(c) } });
      expect(res.status).toBe(201);
      expect(res.text).toBe('');
    }
    const all = await api('/docs?select=body');
    expectError(all, 413, 'RESPONSE_TOO_LARGE');
    expect(all.json.error.details).toEqual({ limit_bytes: MAX_RESPONSE_BYTES });
    expect(all.json.error.remediation).toContain('select=');

    const ids = await api('/docs?select=id');
    expect(ids.status).toBe(200);
    expect(ids.json).toHaveLength(3);
    const one = await api('/docs?select=body&order=body.asc&limit=1');
    expect(one.status).toBe(200);
    expect(one.json).toEqual([{ body: big('a') }]);
    await expectAlive();
  });

  it('a collection write whose returned rows would pass the ceiling is refused and rolled back', async () => {
    const patch = await api('/docs?n=eq.1', { method: 'PATCH', headers: { prefer: 'return=representation' }, body: { body: big('z') } });
    expectError(patch, 413, 'RESPONSE_TOO_LARGE');
    const del = await api('/docs?n=eq.1', { method: 'DELETE', headers: { prefer: 'return=representation' } });
    expectError(del, 413, 'RESPONSE_TOO_LARGE');
    const after = await api('/docs?select=body&order=body.asc&limit=1');
    expect(after.json).toEqual([{ body: big('a') }]);
    expect((await api('/docs?select=id')).json).toHaveLength(3);

    // Without asking for the rows the same writes succeed: nothing is returned or aggregated.
    expect((await api('/docs?n=eq.1', { method: 'PATCH', body: { body: big('y') } })).status).toBe(204);
    expect((await api('/docs?select=body&limit=1')).json).toEqual([{ body: big('y') }]);
    await expectAlive();
  });

  it('a collection write asked to affect exactly one row (Accept object) rolls back when it affects several', async () => {
    const res = await api('/docs?n=eq.1', { method: 'PATCH', headers: { accept: 'application/vnd.pgrst.object+json' }, body: { n: 2 } });
    expectError(res, 406, 'NOT_SINGLE_ROW');
    expect((await api('/docs?select=id&n=eq.1')).json).toHaveLength(3);
  });
});

describe('hostile values', () => {
  it.each([
    ['eq filter', '/docs?body=eq.a%00b'],
    ['like filter', '/docs?body=like.*%00*'],
    ['in filter', '/docs?body=in.(a,%00)'],
    ['fts filter', '/docs?body=fts.a%00'],
    ['or group', '/docs?or=(body.eq.a%00,n.eq.1)'],
    ['by-id path', '/docs/a%00b'],
  ])('a NUL byte in a %s is a 400', async (_name, path) => {
    const res = await api(path);
    expect(res.status).toBe(400);
    expect(res.json.error.code).toMatch(/^(INVALID_QUERY|VALIDATION_FAILED)$/);
  });

  it('a number out of range for JSON (1e400) is refused instead of stored as NULL', async () => {
    const res = await api('/docs', { method: 'POST', body: '{"n": 1e400}' });
    expectError(res, 400, 'VALIDATION_FAILED');
    expect((await api('/docs?select=id&n=is.null')).json).toEqual([]);
  });

  it('JSON nested 5,000 levels deep is a 400, over REST', async () => {
    const deep = '['.repeat(5000) + ']'.repeat(5000);
    const res = await api('/docs', { method: 'POST', body: `{"meta": ${deep}}` });
    expectError(res, 400, 'VALIDATION_FAILED');
    await expectAlive();
  });

  it('caps embeds and select width per request', async () => {
    const embeds = Array.from({ length: 21 }, (_, i) => `r${i}:refs(id)`).join(',');
    expectError(await api(`/docs?select=id,${embeds}`), 400, 'QUERY_TOO_COMPLEX');
    const wide = Array.from({ length: 201 }, (_, i) => `c${i}:id`).join(',');
    expectError(await api(`/docs?select=${wide}`), 400, 'QUERY_TOO_COMPLEX');
    expect((await api(`/docs?select=id,${Array.from({ length: 20 }, (_, i) => `r${i}:refs(id)`).join(',')}&limit=1`)).status).toBe(200);
  });
});

describe('database faults', () => {
  let admin: pg.Client;
  beforeAll(async () => {
    admin = new pg.Client({ connectionString: databaseUrl('postgres') });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
  });

  const terminateAll = () =>
    admin.query(
      `select pg_terminate_backend(pid) from pg_stat_activity
        where pid <> pg_backend_pid() and (datname = $1 or datname = $2)`,
      [server.controlDb, server.appDbPrefix + appId],
    );

  it('survives its connections being terminated under traffic: in-flight requests fail with 503 and a retry hint, then it recovers', async () => {
    const statuses: number[] = [];
    const unavailable: RawResponse[] = [];
    let running = true;
    const client = async () => {
      while (running) {
        const res = await (statuses.length % 2 ? api('/docs?select=id,n&limit=5') : request(server.url, '/apps', { key: server.platformKey }));
        statuses.push(res.status);
        if (res.status === 503) unavailable.push(res);
      }
    };
    const clients = Array.from({ length: 10 }, client);
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 300));
      await terminateAll();
      expect(server.child.exitCode).toBeNull();
      // Answers throughout, 200 or (briefly, while reconnecting) 503.
      expect([200, 503]).toContain((await request(server.url, '/health/ready')).status);
    }
    await new Promise((r) => setTimeout(r, 300));
    running = false;
    await Promise.all(clients);

    expect(statuses.length).toBeGreaterThan(20);
    expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
    for (const res of unavailable) {
      expect(res.json.error.code).toBe('SERVICE_UNAVAILABLE');
      expect(res.headers['retry-after']).toBe('1');
    }
    await expectAlive();
    expect((await api('/docs?select=id')).status).toBe(200);
  });

  it('a held app pool answers 503 after the acquisition wait limit; the statement timeout ends the held requests with 504', async () => {
    const locker = new pg.Client({ connectionString: databaseUrl(server.appDbPrefix + appId) });
    await locker.connect();
    try {
      await locker.query('begin; lock table public.docs in access exclusive mode');
      const started = Date.now();
      // Two requests take both connections of the app's pool and wait on the lock...
      const held = [api('/docs?select=id'), api('/docs?select=id')];
      await new Promise((r) => setTimeout(r, 200));
      // ...so the third waits for a connection only as long as the acquisition limit allows.
      const waiting = await api('/docs?select=id');
      expectError(waiting, 503, 'SERVICE_UNAVAILABLE');
      expect(waiting.headers['retry-after']).toBe('1');
      expect(Date.now() - started).toBeLessThan(3000);
      for (const res of await Promise.all(held)) expectError(res, 504, 'STATEMENT_TIMEOUT');
      expect(Date.now() - started).toBeLessThan(8000);
    } finally {
      await locker.query('rollback');
      await locker.end();
    }
    expect((await api('/docs?select=id')).status).toBe(200);
  }, 20_000);
});

describe('input objects', () => {
  it('a body key "__proto__" cannot stand in for a required field', async () => {
    const res = await request(server.url, '/init', { method: 'POST', key: server.platformKey, body: '{"__proto__": {"name": "sneaky"}}' });
    expectError(res, 400, 'VALIDATION_FAILED');
  });
});
