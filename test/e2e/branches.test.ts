// Issue 44 end to end, against the server as `npm start` runs it: an agent over MCP branches a protected app holding
// end users' rows (masked in the branch), changes the branch (a column, a condition, a SQL function, a function, the
// site), and proposes the merge; the person approves it (the console's Approvals page does the same through the same
// route: test/e2e/console-branches.test.ts); production then has every change and keeps its rows; a branch whose base
// went stale conflicts and merges nothing; and a merge whose server is killed midway ends fully merged, never between.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseUrl, dropDatabase } from '../helpers/db.ts';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { callTool, connectMcp, request, resultJson, signUpOwner, until, type McpConnection, type SignedInPerson } from './e2e-helpers.ts';

let server: SpawnedServer;
/** The control database a restarted server was given (its close leaves it): dropped at the end. */
let keptControlDb: string | undefined;
let agent: McpConnection;
let owner: SignedInPerson;
let control: pg.Client;
let appId: string;
let serviceKey: string;
const USER = '22222222-2222-4222-8222-222222222222';
// One data directory for both starts of the server: sites live there.
const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-branches-'));
// A killed worker's jobs run again once its heartbeat is 2 s old (src/jobs/liveness.ts).
const ENV = { SVC_WORKER_STALE_AFTER_SECONDS: '2', SVC_DATA_DIR: dataDir };

async function tool(name: string, args: Record<string, unknown>): Promise<any> {
  const result = await callTool(agent.client, name, args);
  if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
  return resultJson(result);
}

/** A tool call that must fail: its error envelope. */
async function refused(name: string, args: Record<string, unknown>): Promise<any> {
  const result = await callTool(agent.client, name, args);
  expect(result.isError, JSON.stringify(result.content)).toBe(true);
  return resultJson(result).error;
}

const asPerson = (method: string, route: string, body?: unknown) =>
  request(server.url, route, { method, headers: owner.headers, ...(body === undefined ? {} : { body }) });

async function readyBranch(args: Record<string, unknown>): Promise<string> {
  const made = await tool('branches_create', { app_id: appId, ...args });
  expect(made).toMatchObject({ parent_app_id: appId, status: 'copying' });
  await until('branch ready', async () => (await tool('branches_list', { app_id: appId })).branches.find((b: any) => b.app_id === made.app_id), (b) => b.status !== 'copying');
  return made.app_id;
}

const mergeOf = (id: string) => until('merge done', async () => (await tool('branches_list', { app_id: appId })).merges.find((m: any) => m.merge_id === id), (m) => m.status === 'merged' || m.status === 'failed');

beforeAll(async () => {
  server = await spawnServer(ENV);
  control = new pg.Client({ connectionString: databaseUrl(server.controlDb) });
  await control.connect();
  agent = await connectMcp(server.url, server.platformKey);
  owner = await signUpOwner(server);
  const app = await tool('apps_create', { name: 'Clinic' });
  appId = app.app_id;
  serviceKey = app.service_key.key;
  await tool('schema_apply', {
    app_id: appId,
    name: 'start',
    schema: {
      tables: {
        patients: {
          access: 'user',
          columns: { id: { type: 'bigint', primary: true, identity: true }, user_id: { type: 'uuid', nullable: false }, email: { type: 'text' }, name: { type: 'text' }, notes: { type: 'text' } },
        },
        visits: { access: 'authenticated', columns: { id: { type: 'bigint', primary: true, identity: true }, user_id: { type: 'uuid' }, reason: { type: 'text' } } },
      },
    },
  });
  const rows = [{ user_id: USER, email: 'ana@example.com', name: 'Ana Lima', notes: 'allergic to nuts' }];
  expect((await request(server.url, `/v1/${appId}/patients`, { method: 'POST', key: serviceKey, body: rows })).status).toBe(201);
  expect((await request(server.url, `/v1/${appId}/visits`, { method: 'POST', key: serviceKey, body: [{ user_id: USER, reason: 'checkup' }] })).status).toBe(201);
  expect(await tool('branches_protect', { app_id: appId, protected: true })).toEqual({ app_id: appId, protected: true });
}, 60_000);

afterAll(async () => {
  await agent?.close().catch(() => {});
  await control?.end();
  await server?.close();
  if (keptControlDb) await dropDatabase(keptControlDb);
  rmSync(dataDir, { recursive: true, force: true });
});

describe('a protected app', () => {
  it("refuses the agent's direct schema_apply with the branch workflow; the person with the role applies it", async () => {
    const change = { app_id: appId, name: 'visit notes', schema: { tables: { visits: { columns: { summary: { type: 'text' } } } } } };
    const error = await refused('schema_apply', change);
    expect(error).toMatchObject({ code: 'APP_PROTECTED', details: { app_id: appId } });
    expect(error.remediation).toBe(
      `Make the change on a branch: branches_create { app_id: "${appId}" }, change the branch app, then branches_merge, which a person approves in the console (Approvals). A person signed in to the console with the developer role may change it directly.`,
    );
    const applied = await asPerson('POST', `/v1/${appId}/schema/apply`, { schema: change.schema, name: change.name });
    expect(applied.status, applied.text).toBe(200);
    expect(applied.json.statements).toEqual(['ALTER TABLE "visits" ADD COLUMN "summary" text']);
  });
});

describe('the branch workflow', () => {
  let branch: string;
  let stale: string;

  beforeAll(async () => {
    branch = await readyBranch({ name: 'Clinic redesign', data: 'sample', tables: ['patients', 'visits'], mask: { patients: ['email', 'name', 'notes'] } });
    stale = await readyBranch({ name: 'Clinic old idea' });
  }, 120_000);

  it("copies end users' rows with their personal columns masked", async () => {
    const key = (await request(server.url, `/apps/${branch}/keys`, { method: 'POST', key: server.platformKey, body: {} })).json.key;
    const patients = (await request(server.url, `/v1/${branch}/patients?select=user_id,email,name,notes`, { key })).json;
    expect(patients).toEqual([
      { user_id: USER, email: expect.stringMatching(/^masked-[0-9a-f]{12}@example\.invalid$/), name: expect.stringMatching(/^masked-[0-9a-f]{12}$/), notes: expect.stringMatching(/^masked-[0-9a-f]{12}$/) },
    ]);
    expect(JSON.stringify(patients)).not.toMatch(/ana|Lima|nuts/i);
    expect((await request(server.url, `/v1/${branch}/visits?select=reason`, { key })).json).toEqual([{ reason: 'checkup' }]);
  });

  it('the agent changes the branch, diffs it and proposes the merge; the person approves; production has it all and its rows', async () => {
    await tool('schema_apply', {
      app_id: branch,
      name: 'priority visits',
      schema: {
        tables: { visits: { columns: { priority: { type: 'integer', nullable: false, default: 0 } }, conditions: { insert: 'priority between 0 and 5' } } },
        functions: { busy_days: { returns: 'bigint', volatility: 'stable', access: 'authenticated', body: 'select count(*) from visits where priority > 3' } },
      },
    });
    await tool('functions_deploy', { app_id: branch, name: 'triage', code: 'export default () => Response.json({ triage: "v2" })' });
    const site = await tool('frontend_deploy_files', { app_id: branch, framework: 'static', files: { 'index.html': '<h1>Clinic v2</h1>' } });
    await until('branch site', () => tool('frontend_deploy_get', { app_id: branch, id: site.id }), (d) => d.status === 'READY' || d.status === 'ERROR');

    const diff = await tool('branches_diff', { app_id: branch });
    expect(diff.conflicts).toEqual([]);
    expect(diff.changes.map((c: any) => c.summary)).toEqual([
      'function triage: added',
      'site: added',
      'SQL function busy_days: added',
      'table visits, column priority: added',
      'table visits, conditions: added',
    ]);

    const proposed = await tool('branches_merge', { app_id: branch });
    expect(proposed).toMatchObject({ status: 'proposed', app_id: appId, branch_app_id: branch, destructive: [] });
    expect(proposed.statements).toContain('ALTER TABLE "visits" ADD COLUMN "priority" integer DEFAULT 0 NOT NULL');
    // Nothing reached production yet.
    expect((await request(server.url, `/v1/${appId}/functions/triage`, { key: serviceKey })).status).toBe(404);

    const inbox = await asPerson('GET', '/v1/me/substrate/actions?status=proposed');
    const action = inbox.json.actions.find((a: any) => a.action_id === proposed.action_id);
    expect(action).toMatchObject({ capability: 'merge_branch', proposer_kind: 'agent', payload: { changes: proposed.changes, statements: proposed.statements } });
    expect((await asPerson('POST', `/v1/me/substrate/actions/${proposed.action_id}/approve`)).json).toMatchObject({ status: 'executed', decided_by: owner.personId });
    expect(await mergeOf(proposed.merge_id)).toMatchObject({ status: 'merged', error: null });

    const schema = await tool('schema_get', { app_id: appId });
    expect(schema.tables.visits.columns.priority).toEqual({ type: 'integer', primary: false, nullable: false, unique: false, default: '0' });
    expect(schema.tables.visits.conditions).toEqual({ insert: 'priority between 0 and 5' });
    expect(Object.keys(schema.functions)).toEqual(['busy_days']);
    expect((await request(server.url, `/v1/${appId}/fn/triage`)).json).toEqual({ triage: 'v2' });
    const live = (await tool('frontend_deploy_list', { app_id: appId })).deployments.find((d: any) => d.live);
    const siteUrl = new URL(live.url);
    expect((await request(server.url, siteUrl.pathname, { headers: { host: siteUrl.host } })).text).toBe('<h1>Clinic v2</h1>');
    // Production's rows are its own, untouched.
    expect((await request(server.url, `/v1/${appId}/patients?select=email,name,notes`, { key: serviceKey })).json).toEqual([
      { email: 'ana@example.com', name: 'Ana Lima', notes: 'allergic to nuts' },
    ]);
    expect((await request(server.url, `/v1/${appId}/visits?select=reason,priority`, { key: serviceKey })).json).toEqual([{ reason: 'checkup', priority: 0 }]);
  });

  it('a second merge whose base is stale shows the conflict and merges nothing', async () => {
    await tool('schema_apply', { app_id: stale, name: 'priority as text', schema: { tables: { visits: { columns: { priority: { type: 'text' } } } } } });
    const error = await refused('branches_merge', { app_id: stale });
    expect(error.code).toBe('MERGE_CONFLICT');
    expect(error.details.conflicts.map((c: any) => [c.unit, c.branch?.type, c.production?.type])).toEqual([['table:visits/column:priority', 'text', 'integer']]);
    expect((await tool('branches_list', { app_id: appId })).merges).toHaveLength(1);
  });
});

describe('a merge killed midway', () => {
  it('resumes after a restart and ends fully merged, each change made once', async () => {
    const branch = await readyBranch({ name: 'Clinic many functions' });
    const names = Array.from({ length: 8 }, (_, i) => `worker_${i}`);
    await tool('schema_apply', { app_id: branch, name: 'rooms', schema: { tables: { rooms: { access: 'service', columns: { id: { type: 'bigint', primary: true }, label: { type: 'text' } } } } } });
    for (const name of names) await tool('functions_deploy', { app_id: branch, name, code: `export default () => new Response('${name}')` });
    // The person merges directly (no proposal): the job starts at once.
    const merge = await asPerson('POST', `/v1/${branch}/branch/merge`);
    expect(merge.status).toBe(202);
    expect(['queued', 'running']).toContain(merge.json.status);
    // Killed once the schema step is done and before the functions step has finished: between the two.
    await until('schema step done', async () => (await control.query(`select status, plan->'progress' as progress from branch_merges where id = $1`, [merge.json.merge_id])).rows[0], (r) => r.progress?.schema === true || (r.status !== 'running' && r.status !== 'queued'));
    server.child.kill('SIGKILL');
    await server.stop();
    await agent.close().catch(() => {});

    keptControlDb = server.controlDb;
    server = await spawnServer({ ...ENV, SVC_PLATFORM_API_KEY: server.platformKey, SVC_APP_DB_PREFIX: server.appDbPrefix }, { controlDb: server.controlDb });
    agent = await connectMcp(server.url, server.platformKey);
    expect(await mergeOf(merge.json.merge_id)).toMatchObject({ status: 'merged', error: null });
    const functions = (await tool('functions_list', { app_id: appId })).functions.map((f: any) => f.name);
    expect(names.every((n) => functions.includes(n))).toBe(true);
    expect(Object.keys((await tool('schema_get', { app_id: appId })).tables).sort()).toEqual(['patients', 'rooms', 'visits']);
    const migrations = (await tool('schema_migrations', { app_id: appId })).migrations.filter((m: any) => m.name === `merge ${merge.json.merge_id}`);
    expect(migrations).toHaveLength(1);
  }, 180_000);
});
