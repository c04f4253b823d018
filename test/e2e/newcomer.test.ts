// The newcomer's path of the data issue: create an app, apply a schema with a vector column and a foreign
// key, sign up two end users, and see each user's rows isolated: over plain HTTP, through
// @supabase/postgrest-js itself, and through MCP tools.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgrestClient } from '@supabase/postgrest-js';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { callTool, connectMcp, request, resultJson, type McpConnection } from './e2e-helpers.ts';

let server: SpawnedServer;
let appId: string;
let serviceKey: string;
const tokens: Record<'alice' | 'bob', string> = { alice: '', bob: '' };
let mcp: McpConnection;

const SCHEMA = {
  tables: {
    // Listed before the table it references, to show apply orders foreign keys itself.
    notes: {
      columns: {
        id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' },
        user_id: { type: 'uuid', nullable: false },
        project_id: { type: 'uuid', references: { table: 'projects', column: 'id' } },
        title: { type: 'text', nullable: false },
        embedding: { type: 'vector(3)' },
        tags: { type: 'text[]' },
        created_at: { type: 'timestamptz', default: 'now()' },
      },
      indexes: { notes_user_idx: { columns: ['user_id', 'created_at'] } },
    },
    projects: {
      columns: {
        id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' },
        name: { type: 'text', nullable: false, unique: true },
      },
      access: 'public',
    },
  },
};

const pgrst = (token: string) => new PostgrestClient(`${server.url}/v1/${appId}`, { headers: { Authorization: `Bearer ${token}` } });

beforeAll(async () => {
  server = await spawnServer();
  const init = await request(server.url, '/init', { method: 'POST', key: server.platformKey, body: { name: 'Newcomer notes' } });
  expect(init.status).toBe(201);
  appId = init.json.app_id;
  serviceKey = init.json.service_key.key;
  mcp = await connectMcp(server.url, server.platformKey);
});
afterAll(async () => {
  await mcp?.close();
  await server?.close();
});

describe('newcomer: schema, end users, isolated rows', () => {
  it('applies a schema with a vector column and a foreign key over plain HTTP', async () => {
    const dry = await request(server.url, `/v1/${appId}/schema/apply`, { method: 'POST', key: serviceKey, body: { schema: SCHEMA, dry_run: true, name: 'init' } });
    expect(dry.status).toBe(200);
    expect(dry.json.applied).toBe(false);
    const statements: string[] = dry.json.statements;
    const projects = statements.findIndex((s) => /create table "projects"/i.test(s));
    const notes = statements.findIndex((s) => /create table "notes"/i.test(s));
    expect(projects).toBeGreaterThanOrEqual(0);
    expect(notes).toBeGreaterThan(projects);

    const applied = await request(server.url, `/v1/${appId}/schema/apply`, { method: 'POST', key: serviceKey, body: { schema: SCHEMA, name: 'init' } });
    expect(applied.status).toBe(200);
    expect(applied.json).toMatchObject({ applied: true, migration: { name: 'init' } });
    const again = await request(server.url, `/v1/${appId}/schema/apply`, { method: 'POST', key: serviceKey, body: { schema: SCHEMA, name: 'init again' } });
    expect(again.json).toMatchObject({ applied: false, statements: [] });
  });

  it('signs up two end users', async () => {
    for (const who of ['alice', 'bob'] as const) {
      const res = await request(server.url, `/v1/${appId}/auth/signup`, { method: 'POST', body: { email: `${who}@example.com`, password: 'correct horse battery' } });
      expect(res.status).toBe(201);
      expect(res.json).toMatchObject({ token_type: 'bearer', user: { email: `${who}@example.com` } });
      tokens[who] = res.json.access_token;
    }
  });

  it('each user sees only their rows through postgrest-js', async () => {
    const service = pgrst(serviceKey);
    const { data: project, error: projectError } = await service.from('projects').insert({ name: 'Apollo' }).select().single();
    expect(projectError).toBeNull();

    const alice = pgrst(tokens.alice);
    const bob = pgrst(tokens.bob);
    const inserted = await alice
      .from('notes')
      .insert([
        { title: 'alice 1', project_id: project.id, embedding: [1, 0, 0], tags: ['x'] },
        { title: 'alice 2', project_id: project.id, embedding: [0, 1, 0], tags: [] },
      ])
      .select('title, embedding, tags');
    expect(inserted.error).toBeNull();
    expect(inserted.status).toBe(201);
    expect(inserted.data).toEqual([
      { title: 'alice 1', embedding: [1, 0, 0], tags: ['x'] },
      { title: 'alice 2', embedding: [0, 1, 0], tags: [] },
    ]);
    expect((await bob.from('notes').insert({ title: 'bob 1' })).status).toBe(201);

    const aliceRows = await alice.from('notes').select('title, project:projects(name)', { count: 'exact' }).order('title', { ascending: true });
    expect(aliceRows.error).toBeNull();
    expect(aliceRows.count).toBe(2);
    expect(aliceRows.data).toEqual([
      { title: 'alice 1', project: { name: 'Apollo' } },
      { title: 'alice 2', project: { name: 'Apollo' } },
    ]);
    const bobRows = await bob.from('notes').select('title');
    expect(bobRows.data).toEqual([{ title: 'bob 1' }]);

    // Bob cannot touch Alice's rows: the filter matches nothing he can see.
    const hijack = await bob.from('notes').update({ title: 'mine now' }).eq('title', 'alice 1').select();
    expect(hijack).toMatchObject({ error: null, data: [] });
    const one = await alice.from('notes').select('title').eq('title', 'alice 1').single();
    expect(one.data).toEqual({ title: 'alice 1' });
    const none = await alice.from('notes').select('title').eq('title', 'bob 1').maybeSingle();
    expect(none).toMatchObject({ error: null, data: null });

    const publicRead = await new PostgrestClient(`${server.url}/v1/${appId}`).from('projects').select('name');
    expect(publicRead.data).toEqual([{ name: 'Apollo' }]);
    const anonNotes = await new PostgrestClient(`${server.url}/v1/${appId}`).from('notes').select('title');
    expect(anonNotes.data).toEqual([]);

    const removed = await alice.from('notes').delete().eq('title', 'alice 2').select('title');
    expect(removed.data).toEqual([{ title: 'alice 2' }]);
    const missing = await alice.from('nope').select();
    expect(missing.status).toBe(404);
    expect(missing.error).toMatchObject({ code: 'PGRST205', message: "Could not find the table 'public.nope' in the schema cache", details: null, error: { code: 'RESOURCE_NOT_FOUND', message: "Table 'nope' not found." } });
  });

  it('errors read as PostgREST sends them: code, message, details and hint at the top level, our envelope beside', async () => {
    const service = pgrst(serviceKey);
    const duplicate = await service.from('projects').insert({ name: 'Apollo' });
    expect(duplicate.status).toBe(409);
    // Postgres leaves the key out of the detail on tables with row-level security (as PostgREST relays it: null).
    expect(duplicate.error).toMatchObject({ code: '23505', details: null, error: { code: 'CONFLICT' } });
    expect(duplicate.error!.message).toEqual(expect.any(String));
    expect(duplicate.error!.hint).toEqual(expect.any(String));
    const badUuid = await service.from('projects').select().eq('id', 'not-a-uuid');
    expect(badUuid.status).toBe(400);
    expect(badUuid.error).toMatchObject({ code: '22P02', error: { code: 'VALIDATION_FAILED' } });
    const several = await service.from('notes').select('title').single();
    expect(several.status).toBe(406);
    expect(several.error).toMatchObject({ code: 'PGRST116', error: { code: 'NOT_SINGLE_ROW' } });
    // A write asked for one object that affects two rows is refused and rolled back.
    const twoAsOne = await service.from('projects').insert([{ name: 'Gemini' }, { name: 'Mercury' }]).select().single();
    expect(twoAsOne.status).toBe(406);
    expect(twoAsOne.error).toMatchObject({ code: 'PGRST116' });
    expect((await service.from('projects').select('name').in('name', ['Gemini', 'Mercury'])).data).toEqual([]);
    const unknownColumn = await service.from('projects').select('nope');
    expect(unknownColumn.error).toMatchObject({ code: '42703' });
    // throwOnError() throws an error whose message is the server's.
    await expect(service.from('projects').insert({ name: 'Apollo' }).throwOnError()).rejects.toMatchObject({ code: '23505', message: duplicate.error!.message });
  });

  it('plain HTTP shows the same isolation', async () => {
    const alice = await request(server.url, `/v1/${appId}/notes?select=title&order=title`, { key: tokens.alice });
    expect(alice.json).toEqual([{ title: 'alice 1' }]);
    const bob = await request(server.url, `/v1/${appId}/notes?select=title`, { key: tokens.bob });
    expect(bob.json).toEqual([{ title: 'bob 1' }]);
    const all = await request(server.url, `/v1/${appId}/notes?select=title&order=title`, { key: serviceKey });
    expect(all.json).toEqual([{ title: 'alice 1' }, { title: 'bob 1' }]);
  });

  it('an agent does the same through MCP tools', async () => {
    const schema = await callTool(mcp.client, 'schema_get', { app_id: appId });
    expect(schema.isError).toBeFalsy();
    expect(Object.keys(resultJson(schema).tables).sort()).toEqual(['notes', 'projects']);

    const signup = await callTool(mcp.client, 'auth_signup', { app_id: appId, email: 'carol@example.com', password: 'another good one' });
    expect(signup.isError).toBeFalsy();
    const carolId = resultJson(signup).user.id;

    const insert = await callTool(mcp.client, 'data_insert', {
      app_id: appId,
      table: 'notes',
      body: { title: 'for carol', user_id: carolId, embedding: [0, 0, 1] },
      prefer: 'return=representation',
    });
    expect(insert.isError).toBeFalsy();
    expect(resultJson(insert)).toMatchObject({ status: 201, data: [{ title: 'for carol', user_id: carolId, embedding: [0, 0, 1] }] });

    const select = await callTool(mcp.client, 'data_select', { app_id: appId, table: 'notes', query: `select=title&user_id=eq.${carolId}` });
    expect(resultJson(select)).toMatchObject({ status: 200, data: [{ title: 'for carol' }] });

    const carol = await request(server.url, `/v1/${appId}/notes?select=title`, { key: resultJson(signup).access_token });
    expect(carol.json).toEqual([{ title: 'for carol' }]);

    // Acting as an end user over MCP shows exactly what row-level security lets that user see.
    const asBob = await callTool(mcp.client, 'data_select', { app_id: appId, table: 'notes', query: 'select=title', user_token: tokens.bob });
    expect(resultJson(asBob)).toMatchObject({ status: 200, data: [{ title: 'bob 1' }] });
    const asAlice = await callTool(mcp.client, 'data_select', { app_id: appId, table: 'notes', query: 'select=title', user_token: tokens.alice });
    expect(resultJson(asAlice)).toMatchObject({ status: 200, data: [{ title: 'alice 1' }] });
    const forged = await callTool(mcp.client, 'data_select', { app_id: appId, table: 'notes', user_token: 'a.b.c' });
    expect(forged.isError).toBe(true);

    const bad = await callTool(mcp.client, 'data_select', { app_id: appId, table: 'notes', query: 'title=zz.1' });
    expect(bad.isError).toBe(true);
  });
});
