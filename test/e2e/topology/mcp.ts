// An agent in the topology: one MCP session (the official SDK client) opened through the round-robin balancer, so its
// requests alternate between the api processes and outlive the one that is killed; it writes notes as an end user
// with data_insert and user_token.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Topology } from '../../helpers/topology.ts';
import type { RawResponse } from '../e2e-helpers.ts';
import { loop, NoAnswer, Tally } from './client.ts';
import type { DataWrites, TopologyApp } from './data.ts';

/** A data_insert answers in milliseconds; one whose answer stream died with its process gets no more. */
const CALL_TIMEOUT_MS = 10_000;

export class McpAgent {
  readonly tally = new Tally();
  #client: Client | undefined;
  #transport: StreamableHTTPClientTransport | undefined;
  #sessionId = '';

  async connect(t: Topology): Promise<void> {
    this.#client = new Client({ name: 'topology-agent', version: '1.0.0' });
    this.#transport = new StreamableHTTPClientTransport(new URL('/mcp?toolsets=data', t.url), {
      requestInit: { headers: { Authorization: `Bearer ${t.platformKey}` } },
    });
    await this.#client.connect(this.#transport);
    this.#sessionId = this.#transport.sessionId!;
  }

  /** The session id never changes: the one session served by both processes throughout. */
  get sessionId(): string {
    return this.#sessionId;
  }

  async run(running: () => boolean, app: TopologyApp, notes: DataWrites): Promise<void> {
    const user = app.users[0]!;
    await loop(running, 1, async (i) => {
      const title = `${user.id}:mcp:${i}`;
      const args = { app_id: app.appId, table: 'notes', body: { title }, user_token: user.token };
      const outcome = await this.tally.attempt(() => this.#call('data_insert', args));
      notes.record(user.id, title, outcome.answer !== undefined, outcome.unknown);
    });
  }

  /** A tool call as a response: a tool error carries its status in its envelope; a failed transport is no answer. */
  async #call(name: string, args: Record<string, unknown>): Promise<RawResponse> {
    let result: CallToolResult;
    try {
      result = (await this.#client!.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS })) as CallToolResult;
    } catch (err) {
      // The balancer's 502, a broken connection, or an answer stream cut by a killed process (the SDK client does not
      // resume a tool call's stream: the call times out); anything else (a 404 for the session, say) fails the test.
      const code = (err as { code?: unknown }).code;
      if (code === 502 || code === ErrorCode.RequestTimeout || /fetch failed|other side closed|ECONN|terminated/i.test(String(err))) {
        throw new NoAnswer(`MCP: ${String(err)}`);
      }
      throw err;
    }
    const text = (result.content[0] as { text: string }).text;
    const json = JSON.parse(text) as { status?: number };
    return { status: result.isError ? (json.status ?? 400) : 200, headers: {}, text, json };
  }

  /** One more call after the faults, in the same session: it still answers. */
  async stillServes(app: TopologyApp): Promise<boolean> {
    const res = await this.#call('data_select', { app_id: app.appId, table: 'notes', query: 'select=title&limit=1' });
    return res.status === 200 && this.#transport!.sessionId === this.#sessionId;
  }

  async close(): Promise<void> {
    await this.#transport?.terminateSession().catch(() => undefined);
    await this.#client?.close();
  }
}
