// Templates end to end, with the server started as `npm start` starts it: an agent (the official MCP SDK client) builds
// an app of every kind of part (a schema with row-level security, two functions one of them cron, a site, a RAG
// collection with a document, an enabled toolkit, a plan, seed rows, an end user and their row) and publishes it;
// another account's agent clones it into a second region, whose cluster is a second PostgreSQL the test starts. Over
// REST: the clone is ready, answers, serves, queries, matches the template's schema history, and nothing secret or
// end-user's crossed; the to-do names the missing secret. Then a clone killed mid-way (kill -9) finishes on restart.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-upstream.ts';
import { startFakeComposio, type FakeComposio } from '../fakes/composio.ts';
import { startFakeStripe, type FakeStripe } from '../fakes/stripe.ts';
import { cloneControlDatabase, databaseUrl, dropDatabase, dropDatabasesWithPrefix, uniqueSuffix } from '../helpers/db.ts';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { startSecondCluster, type SecondCluster } from '../helpers/second-cluster.ts';
import { generateKey } from '../../src/core/crypto.ts';
import { callTool, connectMcp, request, resultJson, until, type McpConnection, type RawResponse } from './e2e-helpers.ts';

const STRIPE_KEY = 'sk_test_templates';
let cluster: SecondCluster;
let openai: FakeOpenAI;
let composio: FakeComposio;
let stripe: FakeStripe;
let controlDb: string;
const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-templates-'));
const appDbPrefix = `svc_t${uniqueSuffix()}_`;
const ownerKey = generateKey('svc_pk_');
let env: Record<string, string>;
let server: SpawnedServer;
let restarted: SpawnedServer | undefined;
let alice: McpConnection;
let bob: McpConnection;
let bobKey: string;

/** One MCP tool call that must succeed; its JSON. */
async function tool(who: McpConnection, name: string, args: Record<string, unknown>): Promise<any> {
  const result = await callTool(who.client, name, args);
  if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
  return resultJson(result);
}

const rest = (key: string, method: string, route: string, body?: unknown): Promise<RawResponse> =>
  request((restarted ?? server).url, route, { method, key, ...(body === undefined ? {} : { body }) });

const HELLO = `export default async (req: Request, ctx: any) => {
  const { data } = await ctx.data.from('stages').select('name', { query: 'order=position' });
  return Response.json({ greeting: ctx.env.GREETING ?? null, has_token: ctx.env.API_TOKEN !== undefined, stages: data.map((s: any) => s.name) });
};`;
const NIGHTLY = `export default async () => Response.json({ ok: true });`;

const SCHEMA = {
  tables: {
    stages: {
      columns: { id: { type: 'bigint', primary: true, identity: true }, name: { type: 'text', nullable: false }, position: { type: 'integer', nullable: false } },
      access: 'public',
    },
    tickets: {
      columns: {
        id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' },
        user_id: { type: 'uuid', nullable: false },
        subject: { type: 'text', nullable: false },
        stage_id: { type: 'bigint', references: { table: 'stages', column: 'id' } },
      },
    },
  },
};

beforeAll(async () => {
  [cluster, openai, composio, stripe, controlDb] = await Promise.all([startSecondCluster(), startFakeOpenAI(), startFakeComposio(), startFakeStripe({ secretKey: STRIPE_KEY }), cloneControlDatabase()]);
  env = {
    SVC_DATA_DIR: dataDir,
    SVC_APP_DB_PREFIX: appDbPrefix,
    SVC_PLATFORM_API_KEY: ownerKey,
    SVC_REGIONS: `far=${cluster.url}`,
    SVC_TEMPLATES_PUBLIC: 'true',
    SVC_SIGNUP: 'open',
    SVC_WORKER_STALE_AFTER_SECONDS: '2',
    SVC_AI_BASE_URL: openai.url,
    SVC_AI_API_KEY: 'sk-platform-templates',
    SVC_INTEGRATIONS_BASE_URL: composio.url,
    SVC_INTEGRATIONS_API_KEY: composio.apiKey,
    SVC_STRIPE_SECRET_KEY: STRIPE_KEY,
    SVC_STRIPE_API_URL: stripe.url,
  };
  server = await spawnServer(env, { controlDb });
  alice = await connectMcp(server.url, ownerKey);
  // Bob: another account, through the dashboard's sign-up and a platform key of his own.
  const origin = `http://localhost:${server.port}`;
  const signup = await request(server.url, '/dashboard/signup', { method: 'POST', body: { email: 'bob@example.com', password: 'a long passphrase' }, headers: { origin } });
  expect(signup.status, signup.text).toBe(201);
  const cookie = signup.headers['set-cookie']!.find((c) => c.startsWith('svc_session='))!.split(';')[0]!;
  const key = await request(server.url, '/dashboard/keys', { method: 'POST', body: { name: 'agent' }, headers: { origin, cookie } });
  expect(key.status, key.text).toBe(201);
  bobKey = (key.json as { key: string }).key;
  bob = await connectMcp(server.url, bobKey);
}, 120_000);

afterAll(async () => {
  await alice?.close().catch(() => {});
  await bob?.close().catch(() => {});
  await restarted?.close();
  await server?.close();
  await dropDatabasesWithPrefix(appDbPrefix);
  if (controlDb) await dropDatabase(controlDb);
  await Promise.all([cluster?.stop(), openai?.close(), composio?.close(), stripe?.close()]);
  rmSync(dataDir, { recursive: true, force: true });
});

let template: { app_id: string; service_key: string };
let clone: any;

describe('publishing', () => {
  it("Alice's agent builds an app of every kind of part and publishes it; the manifest names what a cloner must supply", async () => {
    const app = await tool(alice, 'apps_create', { name: 'Desk' });
    template = { app_id: app.app_id, service_key: app.service_key.key };
    const appId = app.app_id;
    await tool(alice, 'schema_apply', { app_id: appId, schema: SCHEMA, name: 'desk' });
    await tool(alice, 'schema_apply', { app_id: appId, schema: { tables: { ...SCHEMA.tables, stages: { ...SCHEMA.tables.stages, columns: { ...SCHEMA.tables.stages.columns, color: { type: 'text' } } } } }, name: 'colors' });
    const stages = await rest(template.service_key, 'POST', `/v1/${appId}/stages`, [
      { name: 'new', position: 1 },
      { name: 'won', position: 2 },
    ]);
    expect(stages.status, stages.text).toBe(201);
    // An end user and their row: neither may reach a clone.
    const user = await request(server.url, `/v1/${appId}/auth/signup`, { method: 'POST', body: { email: 'eve@example.com', password: 'long enough pw' } });
    expect(user.status).toBe(201);
    const ticket = await request(server.url, `/v1/${appId}/tickets`, { method: 'POST', key: (user.json as any).access_token, body: { subject: 'mine' } });
    expect(ticket.status, ticket.text).toBe(201);

    await tool(alice, 'functions_deploy', { app_id: appId, name: 'hello', code: HELLO, envVars: { GREETING: 'hi from the template', API_TOKEN: 'alice-secret-token' } });
    await tool(alice, 'functions_deploy', { app_id: appId, name: 'nightly', code: NIGHTLY, trigger: { type: 'cron', config: { schedule: '0 4 * * *' } } });
    const site = await tool(alice, 'frontend_deploy_files', { app_id: appId, framework: 'static', files: { 'index.html': '<!doctype html><title>Desk</title><h1>Desk</h1>' } });
    await until('site', () => tool(alice, 'frontend_deploy_get', { app_id: appId, id: site.id }), (d) => d.status === 'READY');
    await tool(alice, 'frontend_env_set', { app_id: appId, env: { PUBLIC_BRAND: 'Alice' } });
    await tool(alice, 'rag_collections_create', { app_id: appId, name: 'faq', accessMode: 'shared', chunkSize: 200, chunkOverlap: 20 });
    const doc = await tool(alice, 'rag_ingest', { app_id: appId, name: 'faq', text: 'Tickets move from new to won. Support answers within a day.', filename: 'faq.md' });
    await until('document', () => tool(alice, 'rag_documents_get', { app_id: appId, name: 'faq', document_id: doc.documentId }), (d) => d.status === 'ready');
    await tool(alice, 'integrations_configure', { app_id: appId, toolkit: 'gmail', displayName: 'Gmail' });
    await tool(alice, 'billing_connect_onboard', { app_id: appId });
    await tool(alice, 'billing_plans_create', { app_id: appId, name: 'Pro', priceCents: 900, currency: 'usd', interval: 'month', features: ['more'] });

    const manifest = await tool(alice, 'templates_publish', {
      app_id: appId,
      title: 'Desk',
      description: 'A support desk',
      visibility: 'public',
      options: { env: { GREETING: 'copy' }, seed_tables: ['stages'], rag_documents: ['faq'] },
    });
    expect(manifest.creates).toMatchObject({
      tables: [
        { name: 'stages', access: 'public', seed_rows: 2 },
        { name: 'tickets', access: 'user', seed_rows: null },
      ],
      migrations: 2,
      functions: [
        { name: 'hello', trigger: 'http' },
        { name: 'nightly', trigger: 'cron', schedule: '0 4 * * *' },
      ],
      site: { framework: 'static', files: 1 },
      frontend_env_keys: ['PUBLIC_BRAND'],
      rag_collections: [{ name: 'faq', documents: 1 }],
      integrations: ['gmail'],
      billing: { plans: ['Pro'], products: [] },
    });
    expect(manifest.owner_must_supply.map((t: any) => [t.kind, t.name ?? null, t.tool])).toEqual([
      ['secret', 'API_TOKEN', 'functions_env_update'],
      ['frontend_env', 'PUBLIC_BRAND', 'frontend_env_set'],
      ['connect_onboarding', null, 'billing_connect_onboard'],
      ['integration', 'gmail', 'integrations_connect'],
    ]);
  });
});

describe('cloning into another account and region', () => {
  it("Bob's agent finds the template and clones it into region far; the clone becomes ready", async () => {
    const { templates } = await tool(bob, 'templates_list', {});
    expect(templates.map((t: any) => t.title)).toContain('Desk');
    const regions = await tool(bob, 'apps_regions', {});
    expect(regions.regions).toEqual([
      { name: 'local', default: true },
      { name: 'far', default: false },
    ]);
    const started = await tool(bob, 'templates_clone', { app_id: template.app_id, name: 'My desk', region: 'far' });
    expect(started).toMatchObject({ name: 'My desk', region: 'far', status: 'queued', template: { app_id: template.app_id } });
    clone = await until('clone', () => tool(bob, 'templates_clone_get', { clone_id: started.clone_id }), (c) => c.status === 'ready' || c.status === 'failed');
    expect(clone).toMatchObject({ status: 'ready', failed_step: null, error: null });
    expect(clone.todo.map((t: any) => [t.kind, t.function ?? null, t.name ?? null])).toEqual([
      ['secret', 'hello', 'API_TOKEN'],
      ['frontend_env', null, 'PUBLIC_BRAND'],
      ['connect_onboarding', null, null],
      ['integration', null, 'gmail'],
    ]);
  });

  it('its database is on the second cluster, and its schema and migration history match the template', async () => {
    const app = await rest(bobKey, 'GET', `/apps/${clone.app_id}`);
    expect(app.status).toBe(200);
    expect(app.json).toMatchObject({ name: 'My desk', region: 'far' });
    const far = new pg.Client({ connectionString: `${cluster.url}/postgres` });
    await far.connect();
    try {
      expect((await far.query('select 1 from pg_database where datname = $1', [appDbPrefix + clone.app_id])).rowCount).toBe(1);
    } finally {
      await far.end();
    }
    const local = new pg.Client({ connectionString: databaseUrl('postgres') });
    await local.connect();
    try {
      expect((await local.query('select 1 from pg_database where datname = $1', [appDbPrefix + clone.app_id])).rowCount).toBe(0);
    } finally {
      await local.end();
    }
    const mine = (await rest(bobKey, 'GET', `/v1/${clone.app_id}/migrations`)).json as any;
    const theirs = (await rest(ownerKey, 'GET', `/v1/${template.app_id}/migrations`)).json as any;
    expect(mine.migrations.map((m: any) => [m.name, m.checksum, m.statements])).toEqual(theirs.migrations.map((m: any) => [m.name, m.checksum, m.statements]));
    expect(mine.migrations.map((m: any) => m.source)).toEqual(
      theirs.migrations.map((m: any) => ({ template_app_id: template.app_id, template_version: clone.template.version, migration_id: m.id })),
    );
    const schemaOf = async (key: string, id: string) => (await rest(key, 'GET', `/v1/${id}/schema`)).json;
    expect(await schemaOf(bobKey, clone.app_id)).toEqual(await schemaOf(ownerKey, template.app_id));
  });

  it('its functions answer with the copied variable and without the secret; its site serves; its RAG query answers', async () => {
    const hello = await request(server.url, `/v1/${clone.app_id}/fn/hello`);
    expect(hello.status, hello.text).toBe(200);
    expect(hello.json).toEqual({ greeting: 'hi from the template', has_token: false, stages: ['new', 'won'] });
    const fns = (await rest(bobKey, 'GET', `/v1/${clone.app_id}/functions`)).json as any;
    expect(fns.functions.map((f: any) => [f.name, f.trigger.type, f.env_var_names])).toEqual([
      ['hello', 'http', ['GREETING']],
      ['nightly', 'cron', []],
    ]);
    const site = await fetch(`${server.url}/sites/${clone.app_id}/`);
    expect(site.status).toBe(200);
    expect(await site.text()).toContain('<h1>Desk</h1>');
    const docs = await until(
      'clone documents',
      async () => (await rest(bobKey, 'GET', `/v1/${clone.app_id}/rag/collections/faq/documents`)).json as any[],
      (d) => d.length === 1 && d[0].status !== 'pending' && d[0].status !== 'processing',
      20_000,
    );
    expect(docs[0]).toMatchObject({ filename: 'faq.md', status: 'ready' });
    const query = await rest(bobKey, 'POST', `/v1/${clone.app_id}/rag/collections/faq/query`, { query: 'How fast does support answer?', topK: 1 });
    expect(query.status, query.text).toBe(200);
    expect((query.json as any).chunks[0].text).toContain('Support answers within a day');
  });

  it('no key, secret, end user or end-user row crossed', async () => {
    const tickets = await rest(bobKey, 'GET', `/v1/${clone.app_id}/tickets`);
    expect(tickets.status).toBe(200);
    expect(tickets.json).toEqual([]);
    const control = new pg.Client({ connectionString: databaseUrl(controlDb) });
    await control.connect();
    const far = new pg.Client({ connectionString: `${cluster.url}/${appDbPrefix}${clone.app_id}` });
    await far.connect();
    try {
      expect((await far.query('select count(*)::int as n from svc_auth.users')).rows[0].n).toBe(0);
      expect((await far.query('select name from public.stages order by position')).rows.map((r) => r.name)).toEqual(['new', 'won']);
      expect((await control.query('select count(*)::int as n from service_keys where app_id = $1', [clone.app_id])).rows[0].n).toBe(0);
      expect((await control.query('select byok_key_sealed from ai_configs where app_id = $1', [clone.app_id])).rows.every((r) => r.byok_key_sealed === null)).toBe(true);
      const env = await rest(bobKey, 'GET', `/v1/${clone.app_id}/frontend/env`);
      expect(env.json).toMatchObject({ keys: ['PUBLIC_BRAND'] });
      // Nothing of Alice's secret is anywhere in the clone's records (the source keeps it sealed).
      const dump = JSON.stringify((await control.query('select * from template_clones where id = $1', [clone.clone_id])).rows);
      expect(dump).not.toContain('alice-secret-token');
      expect(dump).not.toContain('hi from the template');
    } finally {
      await far.end();
      await control.end();
    }
  });

  it("billing waits for Bob's Connect account; once onboarding started, a retry creates the plan", async () => {
    expect((await rest(bobKey, 'GET', `/v1/${clone.app_id}/billing/plans`)).json).toMatchObject({ plans: [] });
    await tool(bob, 'billing_connect_onboard', { app_id: clone.app_id });
    const retried = await tool(bob, 'templates_clone_retry', { clone_id: clone.clone_id });
    expect(retried.status).toBe('billing');
    const done = await until('billing retry', () => tool(bob, 'templates_clone_get', { clone_id: clone.clone_id }), (c) => c.status === 'ready');
    expect(done.todo.map((t: any) => t.kind)).toEqual(['secret', 'frontend_env', 'integration']);
    const plans = (await rest(bobKey, 'GET', `/v1/${clone.app_id}/billing/plans`)).json as any;
    expect(plans.plans.map((p: any) => [p.name, p.priceCents])).toEqual([['Pro', 900]]);
  });
});

describe('a clone killed mid-way', () => {
  it('resumes on the next start and finishes, each function made once', async () => {
    const app = await tool(alice, 'apps_create', { name: 'Many' });
    const names = Array.from({ length: 10 }, (_, i) => `f${i}`);
    for (const name of names) await tool(alice, 'functions_deploy', { app_id: app.app_id, name, code: `export default () => new Response('${name}')` });
    await tool(alice, 'templates_publish', { app_id: app.app_id, title: 'Many', visibility: 'public' });
    const started = await tool(bob, 'templates_clone', { app_id: app.app_id, name: 'Many too', region: 'far' });
    await until('functions step', () => tool(bob, 'templates_clone_get', { clone_id: started.clone_id }), (c) => c.status === 'functions' || c.status === 'ready', 30_000);
    server.child.kill('SIGKILL');
    await server.stop();
    await alice.close().catch(() => {});
    await bob.close().catch(() => {});

    restarted = await spawnServer(env, { controlDb });
    const done = await until('resumed clone', async () => (await rest(bobKey, 'GET', `/v1/clones/${started.clone_id}`)).json as any, (c) => c.status === 'ready' || c.status === 'failed', 60_000);
    expect(done).toMatchObject({ status: 'ready', error: null });
    const fns = (await rest(bobKey, 'GET', `/v1/${done.app_id}/functions`)).json as any;
    expect(fns.functions.map((f: any) => f.name).sort()).toEqual(names);
    const answer = await request(restarted.url, `/v1/${done.app_id}/fn/f7`);
    expect(answer.text).toBe('f7');
  });
});
