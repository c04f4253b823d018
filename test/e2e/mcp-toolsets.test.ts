// MCP toolsets end to end: /mcp?toolsets=... and the Mcp-Toolsets header pick the tools a session lists and may call.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { DEFAULT_TOOLSET_AREAS, toolAreas, tools } from '../../tools/index.ts';

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
/** The areas the default toolset leaves out (keys, and areas not for building an app such as ai). */
const lacking = Object.keys(toolAreas).filter((a) => !DEFAULT_TOOLSET_AREAS.includes(a));

describe('/mcp toolsets', () => {
  it('without toolsets a session gets the default toolset, and its instructions name the ones it lacks', async () => {
    const client = await connect('/mcp');
    const { tools: listed } = await client.listTools();
    expect(listed.map((t) => t.name).sort()).toEqual(namesOf(DEFAULT_TOOLSET_AREAS));
    expect(client.getInstructions()).toContain(`the others (${lacking.join(', ')}) need a new session with /mcp?toolsets=`);
  });

  it('?toolsets=all lists every tool, with no outputSchema', async () => {
    const client = await connect('/mcp?toolsets=all');
    const { tools: listed } = await client.listTools();
    expect(listed.map((t) => t.name).sort()).toEqual(tools.filter((t) => t.mcp !== false).map((t) => t.name).sort());
    for (const t of listed) expect(t.outputSchema).toBeUndefined();
    expect(client.getInstructions()).not.toContain('need a new session');
  });

  it('?toolsets=default lists the default areas, and a tool of another toolset is refused naming its toolset', async () => {
    const client = await connect('/mcp?toolsets=default');
    const { tools: listed } = await client.listTools();
    expect(listed.map((t) => t.name).sort()).toEqual(namesOf(DEFAULT_TOOLSET_AREAS));
    expect(client.getInstructions()).toContain(`the others (${lacking.join(', ')}) need a new session with /mcp?toolsets=`);
    const refused = (await client.callTool({ name: 'substrate_keys_list', arguments: {} })) as CallToolResult;
    expect(refused.isError).toBe(true);
    const body = JSON.parse((refused.content[0] as { text: string }).text);
    expect(body).toMatchObject({ status: 400, error: { code: 'TOOL_NOT_IN_TOOLSETS', details: { toolset: 'keys' } } });
    expect(body.error.remediation).toContain('toolsets=default,keys');
  });

  it('the Mcp-Toolsets header and the query combine; results still carry structuredContent', async () => {
    const client = await connect('/mcp?toolsets=platform', { 'Mcp-Toolsets': 'apps' });
    const { tools: listed } = await client.listTools();
    expect(listed.map((t) => t.name).sort()).toEqual(namesOf(['platform', 'apps']));
    const ok = (await client.callTool({ name: 'platform_health', arguments: {} })) as CallToolResult;
    expect(ok.isError).toBeFalsy();
    expect(ok.structuredContent).toEqual(JSON.parse((ok.content[0] as { text: string }).text));
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
    expect(body.error.details.valid).toEqual(['default', 'all', ...Object.keys(toolAreas)]);
  });
});
