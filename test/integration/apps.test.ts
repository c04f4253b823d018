import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { databaseUrl, databasesWithPrefix } from '../helpers/db.ts';
import { appMigrations } from '../../src/apps/app-migrations.ts';

let p: TestPlatform;
beforeAll(async () => {
  p = await startTestPlatform();
});
afterAll(async () => {
  await p?.close();
});

async function withAppDb<T>(appId: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl(p.appDbPrefix + appId) });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

describe('per-app database', () => {
  it('is created with extensions, roles, current_user_id() and a migration table', async () => {
    const res = await p.api('POST', '/init', { body: { name: 'Bootstrap check' } });
    expect(res.status).toBe(201);
    const appId: string = res.body.app_id;
    await withAppDb(appId, async (c) => {
      const ext = await c.query(`select extname from pg_extension where extname in ('vector', 'pgcrypto') order by extname`);
      expect(ext.rows.map((r) => r.extname)).toEqual(['pgcrypto', 'vector']);
      const roles = await c.query(`select rolname from pg_roles where rolname like 'svc\\_%' and rolname in ('svc_anon','svc_user','svc_service') order by rolname`);
      expect(roles.rows.map((r) => r.rolname)).toEqual(['svc_anon', 'svc_service', 'svc_user']);
      const table = await c.query(`select count(*)::int as n from svc_meta.migrations`);
      expect(table.rows[0].n).toBe(0);
      // The platform's own versions are recorded apart from the user's schema history: every app migration, once.
      const versions = await c.query(`select version from svc_meta.platform_migrations order by version`);
      expect(versions.rows.map((r) => r.version)).toEqual((await appMigrations()).map((m) => m.version));

      await c.query('begin');
      await c.query(`select set_config('request.jwt.claims', $1, true)`, [JSON.stringify({ sub: '6f1c2d8e-2b7e-4a57-9a55-0d5d4c1e8b11', role: 'authenticated' })]);
      await c.query('set local role svc_user');
      const who = await c.query('select current_user_id() as id, current_user as role');
      expect(who.rows[0]).toEqual({ id: '6f1c2d8e-2b7e-4a57-9a55-0d5d4c1e8b11', role: 'svc_user' });
      await c.query('rollback');
      const anon = await c.query('select current_user_id() as id');
      expect(anon.rows[0].id).toBeNull();

      // The data roles cannot read the platform's private schema or create objects in public.
      await c.query('begin');
      await c.query('set local role svc_user');
      await expect(c.query('select * from svc_meta.migrations')).rejects.toMatchObject({ code: '42501' });
      await c.query('rollback');
      await c.query('begin');
      await c.query('set local role svc_service');
      await expect(c.query('select * from svc_meta.platform_migrations')).rejects.toMatchObject({ code: '42501' });
      await c.query('rollback');
      await c.query('begin');
      await c.query('set local role svc_service');
      await expect(c.query('create table public.x (id int)')).rejects.toMatchObject({ code: '42501' });
      await c.query('rollback');
    });
  });

  it('deleting an app drops its database and its keys', async () => {
    const created = await p.api('POST', '/init', { body: { name: 'Doomed' } });
    const appId: string = created.body.app_id;
    const extra = await p.api('POST', `/apps/${appId}/keys`, { body: { name: 'ci' } });
    expect(extra.status).toBe(201);
    expect(await databasesWithPrefix(p.appDbPrefix + appId)).toEqual([p.appDbPrefix + appId]);

    const del = await p.api('DELETE', `/apps/${appId}`);
    expect(del).toMatchObject({ status: 200, body: { deleted: true, app_id: appId } });
    expect(await databasesWithPrefix(p.appDbPrefix + appId)).toEqual([]);
    for (const key of [created.body.service_key.key, extra.body.key]) {
      const r = await p.api('GET', `/apps/${appId}`, { key });
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe('AUTH_INVALID_TOKEN');
    }
    const db = await p.api('GET', `/apps/${appId}`);
    expect(db.status).toBe(404);
    expect(db.body.error.code).toBe('RESOURCE_NOT_FOUND');
  });

  it('a create that fails after its database exists leaves nothing behind', async () => {
    const before = await databasesWithPrefix(p.appDbPrefix);
    const tokens = p.services.endUserTokens;
    const original = tokens.createSigningKey.bind(tokens);
    tokens.createSigningKey = async () => {
      throw new Error('simulated failure after the database was created');
    };
    try {
      await expect(p.services.apps.create(await ownerAccount(), 'Half made')).rejects.toThrow('simulated failure');
    } finally {
      tokens.createSigningKey = original;
    }
    expect(await databasesWithPrefix(p.appDbPrefix)).toEqual(before);
    const list = await p.api('GET', '/apps');
    expect(list.body.apps.map((a: { name: string }) => a.name)).not.toContain('Half made');
    const rows = await p.sql(`select count(*)::int as n from apps where name = 'Half made'`);
    expect(rows[0].n).toBe(0);
  });

  it('a platform key reaches only its own account\'s apps', async () => {
    const mine = await p.api('POST', '/init', { body: { name: 'Mine' } });
    const otherKey = (await p.services.keys.create('platform', await newAccount(), 'other')).key;
    const r = await p.api('GET', `/apps/${mine.body.app_id}`, { key: otherKey });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('FORBIDDEN');
    const del = await p.api('DELETE', `/apps/${mine.body.app_id}`, { key: otherKey });
    expect(del.status).toBe(403);
    expect((await p.api('GET', '/apps', { key: otherKey })).body).toEqual({ apps: [] });
  });
});

async function ownerAccount(): Promise<string> {
  const rows = await p.sql(`select account_id from platform_keys where name = 'SVC_PLATFORM_API_KEY'`);
  return rows[0].account_id;
}

async function newAccount(): Promise<string> {
  const rows = await p.sql(`insert into accounts (name) values ('other') returning id`);
  return rows[0].id;
}
