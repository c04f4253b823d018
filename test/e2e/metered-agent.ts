// An agent's MCP client that counts what it spends, for the tests that build an app within a budget (the support desk,
// the tutoring marketplace): its tool calls, and the bytes of tool and guide text in its context.
//
// What counts as context: the initialize instructions, every distinct tool definition any tools/list answered (a
// refreshed list replaces the one before it in a client's context, so a tool is counted once), and every guide text
// the agent read. Results of ordinary calls are not "tool and guide text" and are not counted.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { resultJson } from './e2e-helpers.ts';

export class MeteredAgent {
  calls = 0;
  instructions = 0;
  guide = 0;
  readonly tools = new Map<string, number>();

  readonly client: Client;

  constructor(client: Client) {
    this.client = client;
  }

  /** The initialize instructions, now in the agent's context. */
  readInstructions(): string {
    const text = this.client.getInstructions() ?? '';
    this.instructions = Buffer.byteLength(text);
    return text;
  }

  /** tools/list: each tool's definition as the client holds it. */
  async listTools(): Promise<string[]> {
    const { tools } = await this.client.listTools();
    for (const t of tools) this.tools.set(t.name, Buffer.byteLength(JSON.stringify(t)));
    return tools.map((t) => t.name);
  }

  /** An area's notes (its guide without the tool reference), read as the resource svc://guide/<area>/notes. */
  async readNotes(area: string): Promise<string> {
    const { contents } = await this.client.readResource({ uri: `svc://guide/${area}/notes` });
    const text = (contents[0] as { text: string }).text;
    this.guide += Buffer.byteLength(text);
    return text;
  }

  /** Guide text an agent got some other way (platform_guide's result). */
  countGuide(text: string): void {
    this.guide += Buffer.byteLength(text);
  }

  async call(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    this.calls += 1;
    return (await this.client.callTool({ name, arguments: args })) as CallToolResult;
  }

  /** A call that must succeed: its JSON. */
  async ok(name: string, args: Record<string, unknown>): Promise<any> {
    const result = await this.call(name, args);
    if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
    return resultJson(result);
  }

  /** Bytes of tool and guide text in the agent's context. */
  contextBytes(): number {
    return this.instructions + this.toolBytes() + this.guide;
  }

  /** The figures, as the tests print them. */
  report(what: string): string {
    return `${what}: ${this.calls} calls; context ${this.contextBytes()} B = instructions ${this.instructions} + ${this.tools.size} tools ${this.toolBytes()} + guide ${this.guide}`;
  }

  private toolBytes(): number {
    return [...this.tools.values()].reduce((a, b) => a + b, 0);
  }
}
