// MCP utilities over /mcp with the official MCP SDK client: logging, completions, progress.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoggingMessageNotificationSchema, type LoggingMessageNotification, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { MCP_HEADERS, callTool, connectMcp, request, resultJson, type McpConnection } from './e2e-helpers.ts';

let server: SpawnedServer;
let mcp: McpConnection;
let appA: string;
let appB: string;
const messages: Array<LoggingMessageNotification['params']> = [];

beforeAll(async () => {
  server = await spawnServer();
  mcp = await connectMcp(server.url, server.platformKey);
  mcp.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    messages.push(n.params);
  });
  appA = resultJson(await callTool(mcp.client, 'apps_create', { name: 'Utilities A' })).app_id;
  appB = resultJson(await callTool(mcp.client, 'apps_create', { name: 'Utilities B' })).app_id;
  const applied = await callTool(mcp.client, 'schema_apply', {
    app_id: appA,
    schema: { tables: { notes: { columns: { id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' } } }, news: { columns: { id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' } } } } },
  });
  expect(applied.isError).toBeFalsy();
}, 60_000);

afterAll(async () => {
  await mcp?.close().catch(() => {});
  await server?.close();
});

/** The log messages that one tool call sends. */
async function messagesOf(name: string, args: Record<string, unknown> = {}): Promise<Array<LoggingMessageNotification['params']>> {
  messages.length = 0;
  await callTool(mcp.client, name, args);
  return [...messages];
}

describe('logging', () => {
  it('declares logging and completions', () => {
    expect(mcp.client.getServerCapabilities()).toMatchObject({ logging: {}, completions: {} });
  });

  it('sends refusals only by default, a tool call at info after setLevel info, debug after setLevel debug, nothing below the level', async () => {
    const finished = { event: 'tool_call_finished', tool: 'apps_list', status: 'succeeded', duration_ms: expect.any(Number) };
    expect(await messagesOf('apps_list')).toEqual([]);
    const refused = await messagesOf('apps_get', { app_id: 'nope' });
    expect(refused).toEqual([{ level: 'warning', logger: 'svc-platform', data: expect.objectContaining({ event: 'tool_call_finished', tool: 'apps_get', status: 'refused' }) }]);
    await mcp.client.setLoggingLevel('info');
    expect(await messagesOf('apps_list')).toEqual([{ level: 'info', logger: 'svc-platform', data: finished }]);
    await mcp.client.setLoggingLevel('debug');
    expect(await messagesOf('apps_list')).toEqual([
      { level: 'debug', logger: 'svc-platform', data: { event: 'tool_call_started', tool: 'apps_list' } },
      { level: 'info', logger: 'svc-platform', data: finished },
    ]);
    await mcp.client.setLoggingLevel('warning');
    expect(await messagesOf('apps_list')).toEqual([]);
  });

  it('sends a refusal at warning with its code only, never the input', async () => {
    await mcp.client.setLoggingLevel('warning');
    const sent = await messagesOf('apps_get', { app_id: 'secret-looking-input' });
    expect(sent).toEqual([
      {
        level: 'warning',
        logger: 'svc-platform',
        data: { event: 'tool_call_finished', tool: 'apps_get', status: 'refused', code: 'VALIDATION_FAILED', duration_ms: expect.any(Number) },
      },
    ]);
    expect(JSON.stringify(sent)).not.toContain('secret-looking-input');
    await mcp.client.setLoggingLevel('error');
    expect(await messagesOf('apps_get', { app_id: 'secret-looking-input' })).toEqual([]);
  });
});

describe('completions', () => {
  const schemaTemplate = { type: 'ref/resource' as const, uri: 'svc://apps/{app_id}/schema' };

  it("completes a template's app_id with the caller's apps, by prefix", async () => {
    const all = await mcp.client.complete({ ref: schemaTemplate, argument: { name: 'app_id', value: '' } });
    expect(all.completion).toEqual({ values: [appA, appB], total: 2, hasMore: false });
    const one = await mcp.client.complete({ ref: schemaTemplate, argument: { name: 'app_id', value: appA.slice(0, 10) } });
    expect(one.completion).toEqual({ values: [appA], total: 1, hasMore: false });
  });

  it("completes a prompt's table within the app given in context, and free text to nothing", async () => {
    const ref = { type: 'ref/prompt' as const, name: 'add_user_table' };
    const tables = await mcp.client.complete({ ref, argument: { name: 'table', value: 'no' }, context: { arguments: { app_id: appA } } });
    expect(tables.completion).toEqual({ values: ['notes'], total: 1, hasMore: false });
    const noApp = await mcp.client.complete({ ref, argument: { name: 'table', value: '' } });
    expect(noApp.completion).toEqual({ values: [], total: 0, hasMore: false });
    const idea = await mcp.client.complete({ ref: { type: 'ref/prompt', name: 'create_backend' }, argument: { name: 'idea', value: 'a' } });
    expect(idea.completion).toEqual({ values: [], total: 0, hasMore: false });
  });

  it('refuses an unknown prompt as invalid params', async () => {
    await expect(mcp.client.complete({ ref: { type: 'ref/prompt', name: 'nope' }, argument: { name: 'x', value: '' } })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Unknown prompt nope; call prompts/list.'),
    });
  });
});

describe('progress', () => {
  it('sends progress at the start and the end of a call that carries a progressToken', async () => {
    const seen: Progress[] = [];
    const result = await mcp.client.callTool({ name: 'apps_list', arguments: {} }, undefined, { onprogress: (p) => seen.push(p) });
    expect(result.isError).toBeFalsy();
    expect(seen).toEqual([
      { progress: 0, message: 'apps_list started' },
      { progress: 1, total: 1, message: 'apps_list succeeded' },
    ]);
  });

  it('sends none without a progressToken', async () => {
    const seen: unknown[] = [];
    mcp.client.fallbackNotificationHandler = async (n) => void seen.push(n);
    await callTool(mcp.client, 'apps_list');
    mcp.client.fallbackNotificationHandler = undefined;
    expect(seen.filter((n) => (n as { method: string }).method === 'notifications/progress')).toEqual([]);
  });
});

describe('SSE resumability (2025-11-25)', () => {
  /** A raw request of the session, with its SSE answer read to the end. */
  const raw = (method: string, body: unknown, headers: Record<string, string> = {}) =>
    request(server.url, '/mcp', {
      method,
      key: server.platformKey,
      headers: { ...MCP_HEADERS, 'mcp-session-id': mcp.transport.sessionId!, 'mcp-protocol-version': '2025-11-25', ...headers },
      ...(body === undefined ? {} : { body }),
    });

  /** The events of an SSE body: their id, retry and data. */
  const events = (text: string) =>
    text
      .split('\n\n')
      .filter((block) => block.trim() !== '')
      .map((block) => Object.fromEntries(block.split('\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()])));

  it('starts every SSE answer with a priming event: an id, a retry interval and no data', async () => {
    const res = await raw('POST', { jsonrpc: '2.0', id: 71, method: 'tools/call', params: { name: 'apps_list', arguments: {} } });
    expect(res.headers['content-type']).toContain('text/event-stream');
    const [priming, answer] = events(res.text);
    expect(priming).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}_[0-9a-z]+$/), retry: '1000', data: '' });
    expect(answer).toMatchObject({ event: 'message', id: expect.any(String) });
    expect(JSON.parse(answer!.data!)).toMatchObject({ id: 71, result: { content: [{ type: 'text' }] } });
  });

  it('replays what followed an event id to a client that reconnects with Last-Event-ID', async () => {
    const res = await raw('POST', { jsonrpc: '2.0', id: 72, method: 'tools/call', params: { name: 'apps_list', arguments: {} } });
    const [priming, answer] = events(res.text);
    // The replay stream stays open for what comes next: read it until the answer that followed the priming event.
    const abort = new AbortController();
    const replay = await fetch(new URL('/mcp', server.url), {
      headers: { authorization: `Bearer ${server.platformKey}`, accept: 'text/event-stream', 'mcp-session-id': mcp.transport.sessionId!, 'mcp-protocol-version': '2025-11-25', 'last-event-id': priming!.id! },
      signal: abort.signal,
    });
    expect(replay.status).toBe(200);
    const reader = replay.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!events(text).some((e) => e.id === answer!.id)) text += (await reader.read()).value ?? '';
    abort.abort();
    expect(events(text).find((e) => e.id === answer!.id)).toMatchObject({ data: answer!.data });
  });
});
