// The tasks extension (io.modelcontextprotocol/tasks) on /mcp's 2026-07-28 revision, with raw requests. The first api
// process runs no jobs (SVC_ROLE=api), so the work it starts stays under way until a second process (which runs jobs)
// starts: tasks are observed working, cancelled, then completed, and the second process answers for tasks the first
// created (a task id is a signed reference to the work's row, not state of one process).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { waitFor } from '../integration/frontend-helpers.ts';
import { ISO_DATE, modernRequest, rpcMessage, otherAccountKey } from './e2e-helpers.ts';

const TASKS = 'io.modelcontextprotocol/tasks';
const WITH_TASKS = { extensions: { [TASKS]: {} } };
const DAY_MS = 86_400_000;

let api: SpawnedServer;
let worker: SpawnedServer | undefined;
let appId: string;
let templateId: string;

/** One 2026-07-28 request to `server` (the api process unless named), Mcp-Name as the revision requires; its message. */
async function rpc(method: string, params: Record<string, unknown>, opts: { capabilities?: Record<string, unknown>; server?: SpawnedServer; key?: string } = {}): Promise<any> {
  const name = (params.name ?? params.taskId) as string | undefined;
  const server = opts.server ?? api;
  const res = await modernRequest(server.url, opts.key ?? api.platformKey, method, params, {
    path: '/mcp?toolsets=all',
    capabilities: opts.capabilities ?? {},
    headers: name === undefined ? {} : { 'mcp-name': name },
  });
  return rpcMessage(res);
}

/** A tool call that must succeed without a task: its JSON. */
async function tool(name: string, args: Record<string, unknown>): Promise<any> {
  const { result } = await rpc('tools/call', { name, arguments: args });
  if (result.isError) throw new Error(`${name}: ${result.content[0].text}`);
  return JSON.parse(result.content[0].text);
}

// Both processes share the master key (task ids are signed with a key derived from it) and the data folder (uploads).
const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-tasks-'));
const shared = { SVC_MASTER_KEY: randomBytes(32).toString('hex'), SVC_DATA_DIR: dataDir };

beforeAll(async () => {
  api = await spawnServer({ ...shared, SVC_ROLE: 'api' });
  appId = (await tool('apps_create', { name: 'Tasks' })).app_id;
  await tool('templates_publish', { app_id: appId, title: 'Tasks template', visibility: 'account' });
  templateId = appId;
}, 90_000);

afterAll(async () => {
  await worker?.close();
  await api?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The CreateTaskResult fields every new task has. */
const createdTask = (statusMessage: string) => ({
  resultType: 'task',
  taskId: expect.stringMatching(/^v1\.[\w-]+\.[\w-]+$/),
  status: 'working',
  statusMessage,
  createdAt: expect.stringMatching(ISO_DATE),
  lastUpdatedAt: expect.stringMatching(ISO_DATE),
  ttlMs: DAY_MS,
  pollIntervalMs: 2000,
});

describe('the tasks extension', () => {
  it('is advertised by server/discover', async () => {
    const { result } = await rpc('server/discover', {});
    expect(result.capabilities.extensions).toEqual({ [TASKS]: {} });
    expect(result.capabilities.tasks).toBeUndefined();
  });

  it('is not used for a client that did not declare it: the tool answers as before, and the tasks methods are -32021', async () => {
    const { result } = await rpc('tools/call', { name: 'templates_clone', arguments: { app_id: templateId, name: 'No task' } });
    expect(result.resultType).toBe('complete');
    expect(result.taskId).toBeUndefined();
    expect(JSON.parse(result.content[0].text)).toMatchObject({ status: 'queued', name: 'No task' });
    for (const [method, params] of [
      ['tasks/get', { taskId: 'x' }],
      ['tasks/update', { taskId: 'x', inputResponses: {} }],
      ['tasks/cancel', { taskId: 'x' }],
    ] as const) {
      expect((await rpc(method, params)).error, method).toEqual({
        code: -32021,
        message: `Missing required client capability: declare the ${TASKS} extension in this request's client capabilities.`,
        data: { requiredCapabilities: { extensions: { [TASKS]: {} } } },
      });
    }
  });

  it('answers a clone as a task, readable and then cancelled; unknown, tampered and other accounts\' ids are -32602', async () => {
    const { result } = await rpc('tools/call', { name: 'templates_clone', arguments: { app_id: templateId, name: 'Cancelled' } }, { capabilities: WITH_TASKS });
    expect(result).toMatchObject(createdTask('Clone queued'));
    expect(result).not.toHaveProperty('result');
    expect(result).not.toHaveProperty('requestState');
    const { taskId } = result;
    const got = (await rpc('tasks/get', { taskId }, { capabilities: WITH_TASKS })).result;
    expect(got).toEqual({
      resultType: 'complete',
      taskId,
      status: 'working',
      statusMessage: 'Clone queued',
      createdAt: result.createdAt,
      lastUpdatedAt: expect.stringMatching(ISO_DATE),
      ttlMs: DAY_MS,
      pollIntervalMs: 2000,
      _meta: expect.any(Object),
    });
    const notFound = { code: -32602, message: 'Failed to retrieve task: Task not found' };
    expect((await rpc('tasks/get', { taskId: 'tasks-conformance-nonexistent-12345' }, { capabilities: WITH_TASKS })).error).toEqual(notFound);
    const tampered = `${taskId.slice(0, -4)}AAAA`;
    expect((await rpc('tasks/get', { taskId: tampered }, { capabilities: WITH_TASKS })).error).toEqual(notFound);
    const otherKey = await otherAccountKey(api.controlDb);
    expect((await rpc('tasks/get', { taskId }, { capabilities: WITH_TASKS, key: otherKey })).error).toEqual(notFound);
    expect((await rpc('tasks/cancel', { taskId }, { capabilities: WITH_TASKS, key: otherKey })).error).toEqual(notFound);
    // No task of ours waits for input: an update is acknowledged and changes nothing.
    expect((await rpc('tasks/update', { taskId, inputResponses: { unknown: { action: 'accept' } } }, { capabilities: WITH_TASKS })).result).toMatchObject({ resultType: 'complete' });

    const cancelled = (await rpc('tasks/cancel', { taskId }, { capabilities: WITH_TASKS })).result;
    expect(Object.keys(cancelled).sort()).toEqual(['_meta', 'resultType']);
    expect(cancelled.resultType).toBe('complete');
    // The unfinished clone was deleted with what it made, which is how a clone stops.
    expect((await rpc('tasks/get', { taskId }, { capabilities: WITH_TASKS })).result).toMatchObject({
      taskId,
      status: 'cancelled',
      statusMessage: `Clone no longer exists: Clone '${JSON.parse(Buffer.from(taskId.split('.')[1], 'base64url').toString()).p.r.clone_id}' not found.`,
    });
    expect((await rpc('tasks/cancel', { taskId }, { capabilities: WITH_TASKS })).result.resultType).toBe('complete');
  });

  it('has no tasks/result or tasks/list (-32601), and checks Mcp-Name against the task id (-32020)', async () => {
    expect((await rpc('tasks/result', { taskId: 'x' }, { capabilities: WITH_TASKS })).error).toMatchObject({ code: -32601 });
    expect((await rpc('tasks/list', {}, { capabilities: WITH_TASKS })).error).toMatchObject({ code: -32601 });
    const res = await modernRequest(api.url, api.platformKey, 'tasks/get', { taskId: 'one' }, { capabilities: WITH_TASKS, headers: { 'mcp-name': 'other' } });
    expect(res.status).toBe(400);
    expect(rpcMessage(res).error).toMatchObject({ code: -32020 });
  });

  it('completes a clone, a deployment and cancels a deployment, answered by another process than the one that created them', async () => {
    const clone = (await rpc('tools/call', { name: 'templates_clone', arguments: { app_id: templateId, name: 'Finished' } }, { capabilities: WITH_TASKS })).result;
    expect(clone).toMatchObject(createdTask('Clone queued'));
    const files = { 'index.html': '<!doctype html><title>Tasks</title><p>hello</p>' };
    const deploy = (await rpc('tools/call', { name: 'frontend_deploy_files', arguments: { app_id: appId, framework: 'static', files } }, { capabilities: WITH_TASKS })).result;
    expect(deploy).toMatchObject(createdTask('Deployment BUILDING'));
    const stopped = (await rpc('tools/call', { name: 'frontend_deploy_files', arguments: { app_id: appId, framework: 'static', files } }, { capabilities: WITH_TASKS })).result;
    expect((await rpc('tasks/cancel', { taskId: stopped.taskId }, { capabilities: WITH_TASKS })).result.resultType).toBe('complete');
    expect((await rpc('tasks/get', { taskId: stopped.taskId }, { capabilities: WITH_TASKS })).result).toMatchObject({
      status: 'cancelled',
      statusMessage: 'Deployment CANCELED',
    });

    // Jobs run from here on, in a process that also answers for the tasks the first one created.
    worker = await spawnServer({ ...shared, SVC_PLATFORM_API_KEY: api.platformKey, SVC_APP_DB_PREFIX: api.appDbPrefix }, { controlDb: api.controlDb });
    const poll = async (taskId: string) => (await rpc('tasks/get', { taskId }, { capabilities: WITH_TASKS, server: worker })).result;
    const finished = (taskId: string) =>
      waitFor(
        async () => {
          const task = await poll(taskId);
          return task.status === 'working' ? undefined : task;
        },
        60_000,
        'the task to finish',
      );
    const deployed = await finished(deploy.taskId);
    expect(deployed).toMatchObject({ taskId: deploy.taskId, status: 'completed', statusMessage: 'Deployment READY', createdAt: deploy.createdAt, ttlMs: DAY_MS });
    expect(deployed).not.toHaveProperty('pollIntervalMs');
    expect(deployed.result.isError).toBeUndefined();
    expect(JSON.parse(deployed.result.content[0].text)).toMatchObject({ app_id: appId, status: 'READY', live: true, error: null });
    expect(deployed.lastUpdatedAt).toBe(new Date(JSON.parse(deployed.result.content[0].text).updated_at).toISOString());

    const cloned = await finished(clone.taskId);
    expect(cloned).toMatchObject({ taskId: clone.taskId, status: 'completed', statusMessage: 'Clone ready' });
    const view = JSON.parse(cloned.result.content[0].text);
    expect(view).toMatchObject({ name: 'Finished', status: 'ready', failed_step: null, error: null, template: { app_id: templateId } });
    expect(cloned.lastUpdatedAt).toBe(new Date(view.finished_at).toISOString());
    // Cancelling finished work is acknowledged and changes nothing.
    expect((await rpc('tasks/cancel', { taskId: clone.taskId }, { capabilities: WITH_TASKS, server: worker })).result.resultType).toBe('complete');
    expect((await poll(clone.taskId)).status).toBe('completed');
  }, 120_000);

  it('answers work that cannot become a task (refused) as the tool does', async () => {
    const { result } = await rpc('tools/call', { name: 'templates_clone', arguments: { app_id: 'nosuchtemplate00', name: 'Refused' } }, { capabilities: WITH_TASKS });
    expect(result.isError).toBe(true);
    expect(result.resultType).toBe('complete');
    expect(JSON.parse(result.content[0].text)).toMatchObject({ status: 404 });
  });
});
