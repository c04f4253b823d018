// MCP toolsets end to end: /mcp?toolsets=... and the Mcp-Toolsets header pick the tools a session lists and may call,
// platform_toolsets_enable adds more within the session, and results carry their JSON once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { CORE_TOOLSET, toolAreas, tools } from '../../tools/index.ts';
import { callTool } from './e2e-helpers.ts';

const INIT_BODY = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
};

let server: SpawnedServer;
const clients: Client[] = [];

beforeAll(async () => {
  server = await spawnServer();
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await server?.close();
});

async function connect(path: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'svc-toolsets', version: '0.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(path, server.url), {
    requestInit: { headers: { Authorization: `Bearer ${server.platformKey}`, ...headers } },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

const namesOf = (areas: readonly string[]) => areas.flatMap((a) => toolAreas[a]!.filter((t) => t.mcp !== false).map((t) => t.name)).sort();
/** The tools of the default toolset (`core`), with these areas' tools. */
const defaultWith = (areas: readonly string[]) => [...new Set([...CORE_TOOLSET, ...namesOf(areas)])].sort();
/** The default toolset is `core`, no area: a default session lacks every area. */
const lacking = Object.keys(toolAreas);
/** What the initialize instructions of a session with the platform toolset say about the toolsets it lacks. */
const growHint = (others: readonly string[]) =>
  `for the others (${others.join(', ')}) add them to this session with platform_toolsets_enable { toolsets: [...] } (tools/list then includes them), or connect to /mcp?toolsets=<comma-separated names> to start every session with them.`;

/** The JSON of a result, asserting it is carried once: one text item, no structuredContent. */
function once(result: CallToolResult): any {
  expect(Object.keys(result).sort()).toEqual(result.isError ? ['content', 'isError'] : ['content']);
  expect(result.content).toEqual([{ type: 'text', text: expect.any(String) }]);
  return JSON.parse((result.content[0] as { text: string }).text);
}

/**
 * An error result's body without the envelope's documentation_url, which must be the guide of the tool's area.
 * (documentation_url on MCP errors is being added alongside this work: where it is absent there is nothing to check.)
 */
function refusal(result: CallToolResult, area: string): any {
  const { error: { documentation_url: documentationUrl, ...error }, ...body } = once(result);
  if (documentationUrl !== undefined) expect(documentationUrl).toBe(`http://localhost:${server.port}/llms.txt?area=${area}`);
  return { ...body, error };
}

describe('/mcp toolsets', () => {
  it('without toolsets a session gets the default toolset (core), and its instructions name the ones it lacks', async () => {
    const client = await connect('/mcp');
    const { tools: listed } = await client.listTools();
    expect(listed.map((t) => t.name).sort()).toEqual(defaultWith([]));
    expect(client.getInstructions()).toContain(`This session has the toolsets core; ${growHint(lacking)}`);
  });

  it('?toolsets=all lists every tool, with no outputSchema', async () => {
    const client = await connect('/mcp?toolsets=all');
    const { tools: listed } = await client.listTools();
    expect(listed.map((t) => t.name).sort()).toEqual(tools.filter((t) => t.mcp !== false).map((t) => t.name).sort());
    for (const t of listed) expect(t.outputSchema).toBeUndefined();
    expect(client.getInstructions()).not.toContain('This session has the toolsets');
  });

  it('?toolsets=default lists the core tools, and a tool of another toolset is refused naming its toolset', async () => {
    const client = await connect('/mcp?toolsets=default');
    const { tools: listed } = await client.listTools();
    expect(listed.map((t) => t.name).sort()).toEqual(defaultWith([]));
    expect(client.getInstructions()).toContain(growHint(lacking));
    const refused = await callTool(client, 'substrate_keys_list');
    expect(refused.isError).toBe(true);
    expect(refusal(refused, 'keys')).toEqual({
      status: 400,
      error: {
        code: 'TOOL_NOT_IN_TOOLSETS',
        message: `Tool 'substrate_keys_list' is in the toolset 'keys', which this session did not load (loaded: core).`,
        remediation: 'Call platform_toolsets_enable { toolsets: ["keys"] }, then tools/list for its tools.',
        details: { toolset: 'keys' },
      },
    });
  });

  it('the Mcp-Toolsets header and the query combine; a result carries its JSON once, as text', async () => {
    const client = await connect('/mcp?toolsets=platform', { 'Mcp-Toolsets': 'apps' });
    const { tools: listed } = await client.listTools();
    expect(listed.map((t) => t.name).sort()).toEqual(namesOf(['platform', 'apps']));
    const ok = await callTool(client, 'platform_health');
    expect(ok).toEqual({ content: [{ type: 'text', text: expect.any(String) }] });
    expect(once(ok)).toEqual({ status: 'ok', uptime_seconds: expect.any(Number) });
  });

  it('a name alone is that toolset alone (?toolsets=rag), which cannot grow; default,rag adds rag to the default set', async () => {
    const ragOnly = await connect('/mcp?toolsets=rag');
    expect((await ragOnly.listTools()).tools.map((t) => t.name).sort()).toEqual(namesOf(['rag']));
    expect(ragOnly.getInstructions()).toContain(
      `This session has the toolsets rag; for the others (${Object.keys(toolAreas).filter((a) => a !== 'rag').join(', ')}) ` +
        'open a new session with /mcp?toolsets=<comma-separated names> (with platform, platform_toolsets_enable adds more later).',
    );
    const refused = once(await callTool(ragOnly, 'platform_toolsets_enable', { toolsets: ['ai'] }));
    expect(refused.error.remediation).toBe(
      'Open a new MCP session with /mcp?toolsets=default,platform (or the Mcp-Toolsets header); this one has no platform_toolsets_enable (toolset platform).',
    );
    const both = await connect('/mcp?toolsets=default,rag');
    expect((await both.listTools()).tools.map((t) => t.name).sort()).toEqual(defaultWith(['rag']));
  });

  it('platform_toolsets_enable grows a default session by rag: tools/list_changed, then rag tools are listed and callable', async () => {
    const client = await connect('/mcp');
    let changes = 0;
    const changed = new Promise<void>((resolve) =>
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        changes += 1;
        resolve();
      }),
    );
    const app = once(await callTool(client, 'apps_create', { name: 'Toolsets' }));
    expect(once(await callTool(client, 'rag_collections_list', { app_id: app.app_id })).error.code).toBe('TOOL_NOT_IN_TOOLSETS');

    const enabled = await callTool(client, 'platform_toolsets_enable', { toolsets: ['RAG'] });
    expect(once(enabled)).toEqual({
      toolsets: ['core', 'rag'],
      added: ['rag'],
      tools: toolAreas.rag!.map((t) => t.name),
    });
    await changed;
    expect(changes).toBe(1);
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(defaultWith(['rag']));
    expect(await callTool(client, 'rag_collections_list', { app_id: app.app_id })).toEqual({ content: [{ type: 'text', text: '{"collections":[]}' }] });

    // Enabling what the session has adds nothing and announces nothing.
    expect(once(await callTool(client, 'platform_toolsets_enable', { toolsets: ['default', 'rag'] }))).toEqual({
      toolsets: ['core', 'rag'],
      added: [],
      tools: [],
    });
    await client.listTools();
    expect(changes).toBe(1);
  });

  it('platform_toolsets_enable refuses an unknown toolset with the 400 envelope naming the valid ones, adding nothing', async () => {
    const client = await connect('/mcp');
    const refused = await callTool(client, 'platform_toolsets_enable', { toolsets: ['rag', 'nope'] });
    expect(refused.isError).toBe(true);
    const valid = ['core', 'default', 'all', ...Object.keys(toolAreas)];
    expect(refusal(refused, 'platform')).toEqual({
      status: 400,
      error: {
        code: 'VALIDATION_FAILED',
        message: "Unknown toolset: 'nope'.",
        remediation: `Call platform_toolsets_enable with names from: ${valid.join(', ')}.`,
        details: { valid },
      },
    });
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(defaultWith([]));
  });

  it('an unknown toolset is 400 VALIDATION_FAILED in the standard envelope, naming the valid ones', async () => {
    const res = await fetch(new URL('/mcp?toolsets=data,nope', server.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${server.platformKey}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
      body: JSON.stringify(INIT_BODY),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string; remediation: string; details: { valid: string[] } } };
    expect(body.error.code).toBe('VALIDATION_FAILED');
    expect(body.error.message).toContain("'nope'");
    expect(body.error.details.valid).toEqual(['core', 'default', 'all', ...Object.keys(toolAreas)]);
  });
});
