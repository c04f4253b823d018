// The reading-list app built end to end by an agent that has only the MCP URL and a platform key: every step is an MCP
// tool call (schema, end users, per-user data, inline storage, a function using ctx.data, an inline-files site, logs).
// The only HTTP of the test's own is the final fetch of the deployed site's URL, as a visitor would.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { APP_ID, ISO_DATE, UUID, request, resultJson } from './e2e-helpers.ts';

let server: SpawnedServer;
let client: Client;
let transport: StreamableHTTPClientTransport;

beforeAll(async () => {
  server = await spawnServer();
  client = new Client({ name: 'svc-agent', version: '0.0.0' });
  transport = new StreamableHTTPClientTransport(new URL('/mcp', server.url), {
    requestInit: { headers: { Authorization: `Bearer ${server.platformKey}` } },
  });
  await client.connect(transport);
}, 60_000);

afterAll(async () => {
  await transport?.terminateSession().catch(() => {});
  await client?.close().catch(() => {});
  await server?.close();
});

/** A tool call that must succeed: its JSON, carried once as text content. */
async function ok(name: string, args: Record<string, unknown>): Promise<any> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  return resultJson(result);
}

/** A tool call that must fail: the parsed error body of its isError result. */
async function fails(name: string, args: Record<string, unknown>): Promise<any> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError).toBe(true);
  expect(result.structuredContent).toBeUndefined();
  return JSON.parse((result.content[0] as { text: string }).text);
}

const COUNT_FN = `export default async (req, ctx) => {
  const lists = await ctx.data.from("lists").select("id", { count: true });
  const books = await ctx.data.from("books").select("id", { count: true });
  console.log("counted for", ctx.user ? ctx.user.id : "app", lists.count, books.count);
  return Response.json({ user: ctx.user ? ctx.user.id : null, lists: lists.count, books: books.count, errors: [lists.error, books.error] });
};`;

describe('an agent builds the reading-list app over MCP only', () => {
  let appId: string;
  const users: Record<'ann' | 'bob', { id: string; token: string }> = {} as never;
  const lists: Record<'ann' | 'bob', string> = {} as never;

  it('session: the default toolset (core), grown by the areas the build needs beyond it', async () => {
    const core = (await client.listTools()).tools.map((t) => t.name);
    for (const n of ['apps_create', 'schema_apply', 'auth_signup', 'data_insert', 'data_select', 'storage_upload_inline', 'functions_deploy', 'functions_invoke', 'functions_logs', 'frontend_deploy_files', 'frontend_deploy_get']) {
      expect(core).toContain(n);
    }
    expect(core).not.toContain('data_delete_row');
    const grown = await ok('platform_toolsets_enable', { toolsets: ['schema', 'data', 'storage'] });
    expect(grown.added).toEqual(['schema', 'data', 'storage']);
    const names = (await client.listTools()).tools.map((t) => t.name);
    for (const n of ['schema_get', 'data_get', 'data_delete_row', 'storage_read']) expect(names).toContain(n);
    expect(names).not.toContain('substrate_keys_list');
  });

  it('creates the app and applies the schema (per-user lists and books, cascade)', async () => {
    const app = await ok('apps_create', { name: 'Reading list' });
    expect(app.app_id).toMatch(APP_ID);
    appId = app.app_id;
    const schema = {
      tables: {
        lists: {
          columns: {
            id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' },
            user_id: { type: 'uuid', nullable: false },
            name: { type: 'text', nullable: false },
          },
          access: 'user',
        },
        books: {
          columns: {
            id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' },
            user_id: { type: 'uuid', nullable: false },
            list_id: { type: 'uuid', nullable: false, references: { table: 'lists', column: 'id', onDelete: 'cascade' } },
            title: { type: 'text', nullable: false },
          },
          access: 'user',
        },
      },
    };
    const applied = await ok('schema_apply', { app_id: appId, schema, name: 'reading list' });
    expect(applied).toMatchObject({ dry_run: false, applied: true, migration: { name: 'reading list' } });
    const again = await ok('schema_apply', { app_id: appId, schema, name: 'reading list' });
    expect(again).toEqual({ dry_run: false, applied: false, statements: [], migration: null });
    const got = await ok('schema_get', { app_id: appId });
    const col = (type: string, more: Record<string, unknown> = {}) => ({ type, primary: false, nullable: false, unique: false, ...more });
    const id = { type: 'uuid', primary: true, nullable: false, unique: false, default: 'gen_random_uuid()' };
    // access 'user': the service role sees every row, an end user their own (the row-level policies in force).
    const own = 'user_id = current_user_id()';
    const policies = [
      { name: 'svc_service_all', command: 'ALL', permissive: true, roles: ['svc_service'], using: 'true', with_check: 'true' },
      { name: 'svc_user_own', command: 'ALL', permissive: true, roles: ['svc_user'], using: `(${own})`, with_check: `(${own})` },
    ];
    expect(got).toEqual({
      tables: {
        books: {
          columns: {
            id,
            user_id: col('uuid'),
            list_id: col('uuid', { references: { table: 'lists', column: 'id', onDelete: 'cascade' } }),
            title: col('text'),
          },
          indexes: {},
          access: 'user',
          policies,
        },
        lists: { columns: { id, user_id: col('uuid'), name: col('text') }, indexes: {}, access: 'user', policies },
      },
    });
  });

  it('signs up two end users', async () => {
    for (const name of ['ann', 'bob'] as const) {
      const session = await ok('auth_signup', { app_id: appId, email: `${name}@example.com`, password: `${name}-password-1` });
      expect(session).toMatchObject({ token_type: 'bearer', access_token: expect.any(String), refresh_token: expect.any(String) });
      expect(session.user).toMatchObject({ id: expect.stringMatching(UUID), email: `${name}@example.com` });
      users[name] = { id: session.user.id, token: session.access_token };
    }
    expect(users.ann.id).not.toBe(users.bob.id);
  });

  it('each end user writes rows that are theirs, and sees only their own', async () => {
    for (const [name, titles] of [['ann', ['Dune', 'Emma', 'Ulysses']], ['bob', ['Beloved']]] as const) {
      const list = await ok('data_insert', {
        app_id: appId, table: 'lists', query: '', prefer: 'return=representation', body: { name: `${name}'s list` }, user_token: users[name].token,
      });
      expect(list.status).toBe(201);
      expect(list.data).toEqual([{ id: expect.stringMatching(UUID), user_id: users[name].id, name: `${name}'s list` }]);
      lists[name] = list.data[0].id;
      const books = await ok('data_insert', {
        app_id: appId, table: 'books', query: '', prefer: 'return=representation',
        body: titles.map((title) => ({ list_id: lists[name], title })), user_token: users[name].token,
      });
      expect(books.status).toBe(201);
      expect(books.data.map((b: { title: string; user_id: string }) => [b.title, b.user_id])).toEqual(titles.map((t) => [t, users[name].id]));
    }
    for (const [name, titles] of [['ann', ['Dune', 'Emma', 'Ulysses']], ['bob', ['Beloved']]] as const) {
      const seen = await ok('data_select', { app_id: appId, table: 'books', query: 'select=title,user_id,list_id&order=title', user_token: users[name].token });
      expect(seen).toMatchObject({ status: 200 });
      expect(seen.data).toEqual(titles.map((title) => ({ title, user_id: users[name].id, list_id: lists[name] })));
      const ownLists = await ok('data_select', { app_id: appId, table: 'lists', query: 'select=id,name', user_token: users[name].token });
      expect(ownLists.data).toEqual([{ id: lists[name], name: `${name}'s list` }]);
    }
    // Bob cannot see nor delete Ann's list by its id.
    const hidden = await fails('data_get', { app_id: appId, table: 'lists', query: '', id: lists.ann, user_token: users.bob.token });
    expect(hidden).toMatchObject({ status: 404, error: { code: 'RESOURCE_NOT_FOUND' } });
    const notDeleted = await fails('data_delete_row', { app_id: appId, table: 'lists', query: '', id: lists.ann, user_token: users.bob.token });
    expect(notDeleted).toMatchObject({ status: 404, error: { code: 'RESOURCE_NOT_FOUND' } });
    // The platform key (no user_token) sees every row.
    const all = await ok('data_select', { app_id: appId, table: 'books', query: 'select=title&order=title' });
    expect(all.data).toEqual([{ title: 'Beloved' }, { title: 'Dune' }, { title: 'Emma' }, { title: 'Ulysses' }]);
  });

  it("the function counts the caller's own rows through ctx.data", async () => {
    const deployed = await ok('functions_deploy', { app_id: appId, name: 'count', code: COUNT_FN, description: "Counts the caller's lists and books" });
    expect(deployed).toMatchObject({ name: 'count', created: true, trigger: { type: 'http', config: {} } });
    const counts: Record<string, unknown> = {};
    for (const name of ['ann', 'bob'] as const) {
      const run = await ok('functions_invoke', { app_id: appId, name: 'count', user_token: users[name].token });
      expect(run).toMatchObject({ status: 200, body_encoding: 'json', error: null, truncated: false });
      counts[name] = run.body;
    }
    expect(counts).toEqual({
      ann: { user: users.ann.id, lists: 1, books: 3, errors: [null, null] },
      bob: { user: users.bob.id, lists: 1, books: 1, errors: [null, null] },
    });
  }, 30_000);

  it("deleting one's own list cascades to one's own books only", async () => {
    const deleted = await ok('data_delete_row', { app_id: appId, table: 'lists', query: '', id: lists.ann, user_token: users.ann.token });
    expect(deleted.status).toBe(204);
    expect((await ok('data_select', { app_id: appId, table: 'books', query: 'select=title', user_token: users.ann.token })).data).toEqual([]);
    expect((await ok('data_select', { app_id: appId, table: 'lists', query: 'select=id', user_token: users.ann.token })).data).toEqual([]);
    expect((await ok('data_select', { app_id: appId, table: 'books', query: 'select=title', user_token: users.bob.token })).data).toEqual([{ title: 'Beloved' }]);
    const run = await ok('functions_invoke', { app_id: appId, name: 'count', user_token: users.ann.token });
    expect(run.body).toEqual({ user: users.ann.id, lists: 0, books: 0, errors: [null, null] });
  }, 30_000);

  it('a file uploaded inline by one user is read back by that user only', async () => {
    const text = 'Dune, Emma, Ulysses\n';
    const up = await ok('storage_upload_inline', {
      app_id: appId, filename: 'notes.txt', contentType: 'text/plain', content: text, encoding: 'utf8', user_token: users.ann.token,
    });
    expect(up).toEqual({
      id: expect.stringMatching(UUID),
      objectId: up.id,
      objectKey: `${appId}/${users.ann.id}/${up.id}_notes.txt`,
      filename: 'notes.txt',
      content_type: 'text/plain',
      size_bytes: Buffer.byteLength(text),
      created_at: expect.stringMatching(ISO_DATE),
    });
    const read = await ok('storage_read', { app_id: appId, object_id: up.objectId, encoding: 'utf8', user_token: users.ann.token });
    expect(read).toEqual({
      id: up.id, filename: 'notes.txt', content_type: 'text/plain', size_bytes: Buffer.byteLength(text), created_at: up.created_at, encoding: 'utf8', content: text,
    });
    const refused = await fails('storage_read', { app_id: appId, object_id: up.objectId, encoding: 'utf8', user_token: users.bob.token });
    expect(refused).toEqual({
      status: 404,
      error: { code: 'RESOURCE_NOT_FOUND', message: `Object '${up.objectId}' not found.`, remediation: expect.any(String), documentation_url: server.docsUrl('storage') },
    });
    // The app itself (platform key, no user_token) reaches it.
    expect((await ok('storage_read', { app_id: appId, object_id: up.objectId, encoding: 'utf8' })).content).toBe(text);
  });

  it('deploys a site from inline files, polls it to READY and serves it', async () => {
    const html = `<!doctype html><html><head><title>Reading list</title><script src="./app.js"></script></head><body><h1>Reading list ${appId}</h1></body></html>`;
    const js = 'console.log("reading list");\n';
    const started = await ok('frontend_deploy_files', { app_id: appId, framework: 'static', files: { 'index.html': html, 'app.js': js } });
    expect(started).toMatchObject({ id: expect.any(String), app_id: appId, framework: 'static', status: 'BUILDING', error: null, live: false, url: null });
    let deployment = started;
    const deadline = Date.now() + 15_000;
    while (deployment.status !== 'READY' && deployment.status !== 'ERROR' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      deployment = await ok('frontend_deploy_get', { app_id: appId, id: started.id });
    }
    expect(deployment).toMatchObject({
      id: started.id,
      status: 'READY',
      live: true,
      file_count: 2,
      unzipped_bytes: Buffer.byteLength(html) + Buffer.byteLength(js),
      error: null,
      // The app's own host: {subdomain}.localhost on the platform's port.
      url: expect.stringMatching(/^http:\/\/[a-z0-9-]+\.localhost:\d+\/$/),
      ready_at: expect.stringMatching(ISO_DATE),
    });
    const page = await request(deployment.url, '');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toBe(html);
    const script = await request(deployment.url, 'app.js');
    expect(script.status).toBe(200);
    expect(script.text).toBe(js);
  }, 30_000);

  it("reads the function's logs", async () => {
    const { logs } = await ok('functions_logs', { app_id: appId, name: 'count' });
    expect(logs).toHaveLength(3);
    for (const entry of logs) {
      expect(entry).toMatchObject({ trigger: 'test', method: 'GET', path: '/', status_code: 200, level: 'info', error: null });
    }
    // Newest first: Ann after the cascade, then Bob, then Ann.
    expect(logs.map((l: { console: { message: string }[] }) => l.console.map((c) => c.message))).toEqual([
      [`counted for ${users.ann.id} 0 0`],
      [`counted for ${users.bob.id} 1 1`],
      [`counted for ${users.ann.id} 1 3`],
    ]);
  });
});
