// The substrate through MCP, as the "done when" walks it: an agent (platform key over MCP) records memory and
// proposes an approval-required capability; the human approves over REST, or at the agent's client through MCP
// elicitation; a client without elicitation is refused and pointed to REST; a revert restores the previous state.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { request, resultJson } from './e2e-helpers.ts';

let server: SpawnedServer;
let humanKey: string;
const clients: Client[] = [];

/** An MCP client of the agent; `answer` set: it declares elicitation and answers every question so. */
async function agentClient(answer?: { action: 'accept' | 'decline'; confirm?: boolean }): Promise<Client> {
  const client = new Client({ name: 'substrate-agent', version: '0.0.0' }, { capabilities: answer ? { elicitation: {} } : {} });
  if (answer) {
    client.setRequestHandler(ElicitRequestSchema, async () =>
      answer.action === 'accept' ? { action: 'accept', content: { confirm: answer.confirm ?? true } } : { action: 'decline' },
    );
  }
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp?toolsets=substrate,memory', server.url), { requestInit: { headers: { Authorization: `Bearer ${server.platformKey}` } } }),
  );
  clients.push(client);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const res = (await client.callTool({ name, arguments: args })) as CallToolResult;
  return { isError: res.isError === true, json: resultJson(res) };
}

beforeAll(async () => {
  server = await spawnServer();
  humanKey = (await request(server.url, '/substrate-keys', { method: 'POST', key: server.platformKey, body: { name: 'human' } })).json.key;
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await server?.close();
});

describe('substrate over MCP', () => {
  it('the agent records and proposes; the human approves over REST; a revert restores', async () => {
    const agent = await agentClient();
    const decision = await call(agent, 'substrate_propose', { capability: 'record_decision', payload: { title: 'Ship on Fridays', kind: 'operational' } });
    expect(decision.json).toMatchObject({ verdict: { result: 'auto_approved' }, requires_approval: false, result: { decision_id: expect.stringMatching(/^dec_/) } });
    const commitment = await call(agent, 'substrate_propose', { capability: 'record_commitment', payload: { description: 'Send the report', status: 'confirmed', due_at: '2026-12-01T09:00:00Z' } });
    expect(commitment.json.verdict.result).toBe('auto_approved');
    const person = await call(agent, 'substrate_propose', { capability: 'upsert_entity', payload: { type: 'person', display_name: 'Dana Scully', primary_email: 'dana@example.com' } });
    expect(person.json.result).toMatchObject({ entity_id: expect.stringMatching(/^ent_/), was_insert: true });
    const found = await call(agent, 'substrate_entities_list', { q: 'scully' });
    expect(found.json.entities.map((e: { id: string }) => e.id)).toEqual([person.json.result.entity_id]);
    const memory = await call(agent, 'substrate_memory_search', { q: 'Fridays ship' });
    expect(memory.json.results).toEqual([expect.objectContaining({ id: decision.json.result.decision_id, kind: 'decision', title: 'Ship on Fridays', rank: expect.any(Number) })]);

    const principle = await call(agent, 'substrate_propose', { capability: 'record_principle', payload: { title: 'No weekend deploys', applies_to: {}, constraint_spec: { logic: { '==': [1, 1] } } } });
    expect(principle.json).toMatchObject({ verdict: { result: 'requires_approval' }, requires_approval: true });
    const approved = await request(server.url, `/v1/me/substrate/actions/${principle.json.action_id}/approve`, { method: 'POST', key: humanKey });
    expect(approved.status).toBe(200);
    expect(approved.json).toMatchObject({ status: 'executed', proposer_kind: 'agent' });

    const reverted = await call(agent, 'substrate_propose', { capability: 'revert_action', payload: { action_id: decision.json.action_id } });
    expect(reverted.json.result).toEqual({ reverted: decision.json.action_id });
    const after = await call(agent, 'substrate_actions_get', { action_id: decision.json.action_id });
    expect(after.json.reverted_by).toBe(reverted.json.action_id);
    expect((await call(agent, 'substrate_memory_search', { q: 'Fridays ship' })).json.results).toEqual([]);
  });

  it('approve over MCP asks the human through elicitation: accepted executes, declined changes nothing, no elicitation is refused', async () => {
    const propose = async (client: Client) =>
      (await call(client, 'substrate_propose', { capability: 'retire_principle', payload: { principle_id: 'prn_x', reason: 'r' } })).json.action_id as string;
    const noElicit = await agentClient();
    const id1 = await propose(noElicit);
    const refused = await call(noElicit, 'substrate_actions_approve', { action_id: id1 });
    expect(refused).toMatchObject({ isError: true, json: { status: 403, error: { code: 'HUMAN_CONFIRMATION_REQUIRED' } } });
    expect(refused.json.error.remediation).toContain(`/v1/me/substrate/actions/${id1}/approve`);

    const declines = await agentClient({ action: 'decline' });
    const declined = await call(declines, 'substrate_actions_reject', { action_id: id1, reason: 'no' });
    expect(declined).toMatchObject({ isError: true, json: { status: 403, error: { code: 'HUMAN_DECLINED' } } });
    expect((await call(declines, 'substrate_actions_get', { action_id: id1 })).json.status).toBe('proposed');

    const accepts = await agentClient({ action: 'accept', confirm: true });
    const rejected = await call(accepts, 'substrate_actions_reject', { action_id: id1, reason: 'not needed' });
    expect(rejected).toMatchObject({ isError: false, json: { status: 'rejected', reject_reason: 'not needed', decided_via: 'mcp_elicitation' } });
    // Asked only about what can still be decided.
    expect((await call(accepts, 'substrate_actions_approve', { action_id: id1 })).json).toMatchObject({ status: 409, error: { code: 'wrong_status' } });
  });
});
