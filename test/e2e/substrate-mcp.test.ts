// The substrate through MCP, as the "done when" walks it: an agent (platform key over MCP) records memory and
// proposes an approval-required capability; the person approves over REST, or on the platform's approval page in a real
// browser (Chromium), where the agent's client sent them by URL elicitation. The agent never decides: a client that
// would answer a form itself is never asked one, and it cannot mint the person's substrate key over MCP.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, ElicitationCompleteNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { request, resultJson, signUpOwner, substrateKeyOf } from './e2e-helpers.ts';

let server: SpawnedServer;
let browser: Browser;
let humanKey: string;
const clients: Client[] = [];

interface Agent {
  client: Client;
  /** Every elicitation the server sent this client. */
  asked: Array<{ mode?: string; url?: string; elicitationId?: string }>;
  /** elicitationIds the server said were complete. */
  completed: string[];
}

/**
 * An MCP client of the agent. `form`: it declares form elicitation and accepts every question with confirm: true (an
 * agent answering for the person). `url`: it declares URL elicitation, and `onUrl` plays what happens with the URL.
 */
async function agentClient(opts: { form?: boolean; url?: (url: string) => Promise<'accept' | 'decline'> } = {}): Promise<Agent> {
  const elicitation = { ...(opts.form ? { form: {} } : {}), ...(opts.url ? { url: {} } : {}) };
  const client = new Client({ name: 'substrate-agent', version: '0.0.0' }, { capabilities: opts.form || opts.url ? { elicitation } : {} });
  const agent: Agent = { client, asked: [], completed: [] };
  if (opts.form || opts.url) {
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      const params = req.params as { mode?: string; url?: string; elicitationId?: string };
      agent.asked.push(params);
      if (params.mode === 'url' && opts.url) return { action: await opts.url(params.url!) };
      return { action: 'accept', content: { confirm: true } };
    });
    client.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => {
      agent.completed.push(n.params.elicitationId);
    });
  }
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp?toolsets=substrate,memory,keys', server.url), { requestInit: { headers: { Authorization: `Bearer ${server.platformKey}` } } }),
  );
  clients.push(client);
  return agent;
}

async function call(agent: Agent | Client, name: string, args: Record<string, unknown>): Promise<any> {
  const client = agent instanceof Client ? agent : agent.client;
  const res = (await client.callTool({ name, arguments: args })) as CallToolResult;
  return { isError: res.isError === true, json: resultJson(res) };
}

/** The person: opens the approval page in Chromium, signs in with `key`, and clicks `button` (or just reads). */
async function personAtPage(url: string, key: string, button?: 'approve' | 'reject', reason?: string): Promise<{ text: string; error: string }> {
  const page = await browser.newPage();
  try {
    await page.goto(url);
    await page.fill('#key', key);
    await page.click('#bykey button[type=submit]');
    await page.waitForFunction(() => !document.getElementById('action')!.hidden || document.getElementById('error')!.textContent !== '');
    if (button) {
      if (reason) await page.fill('#reject-reason', reason);
      await page.click(`#${button}`);
      await page.waitForFunction(() => document.getElementById('outcome')!.textContent !== '' || document.getElementById('error')!.textContent !== '');
    }
    return { text: await page.innerText('body'), error: await page.innerText('#error') };
  } finally {
    await page.close();
  }
}

beforeAll(async () => {
  server = await spawnServer();
  browser = await launchChromium();
  humanKey = (await substrateKeyOf(server, await signUpOwner(server), 'human')).key;
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await browser?.close();
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

  const propose = async (agent: Agent) =>
    (await call(agent, 'substrate_propose', { capability: 'retire_principle', payload: { principle_id: 'prn_x', reason: 'r' } })).json.action_id as string;
  const status = async (id: string) => (await request(server.url, `/v1/me/substrate/actions/${id}`, { key: humanKey })).json.status;

  it('an agent never decides: a form-answering client is never asked, cannot mint a substrate key, and is pointed to the page', async () => {
    const agent = await agentClient({ form: true });
    const id = await propose(agent);
    for (const tool of ['substrate_actions_approve', 'substrate_actions_reject']) {
      const refused = await call(agent, tool, { action_id: id });
      expect(refused).toMatchObject({ isError: true, json: { status: 403, error: { code: 'HUMAN_CONFIRMATION_REQUIRED' } } });
      expect(refused.json.error.remediation).toContain(`http://localhost:${server.port}/approve/${id}`);
    }
    expect(agent.asked).toEqual([]);
    expect(await status(id)).toBe('proposed');
    // The person's credential cannot be minted by the agent over MCP.
    const tools = (await agent.client.listTools()).tools.map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(['substrate_keys_list', 'substrate_keys_revoke']));
    expect(tools).not.toContain('substrate_keys_create');
    expect(await call(agent, 'substrate_keys_create', { name: 'mine' })).toMatchObject({ isError: true });
    // The agent's own credential on the REST route is not a person's (substrate routes answer 401 to anything but a substrate key).
    const viaRest = await request(server.url, `/v1/me/substrate/actions/${id}/approve`, { method: 'POST', key: server.platformKey });
    expect(viaRest.status).toBe(401);
    expect(viaRest.json.error.code).toBe('AUTH_INVALID_TOKEN');
    expect(await status(id)).toBe('proposed');
  });

  it('URL elicitation sends the person to the approval page; they approve in the browser and the tool returns the executed action', async () => {
    let page: Promise<{ text: string; error: string }> | undefined;
    const agent = await agentClient({
      url: async (url) => {
        page = personAtPage(url, humanKey, 'approve');
        return 'accept';
      },
    });
    const id = (await call(agent, 'substrate_propose', { capability: 'record_principle', payload: { title: 'Weekends off', applies_to: {}, constraint_spec: { logic: { '==': [1, 1] } } } })).json.action_id;
    const approved = await call(agent, 'substrate_actions_approve', { action_id: id });
    expect(approved).toMatchObject({ isError: false, json: { action_id: id, status: 'executed', decided_via: 'rest', proposer_kind: 'agent' } });
    expect(agent.asked).toEqual([{ mode: 'url', url: `http://localhost:${server.port}/approve/${id}`, elicitationId: expect.any(String), message: expect.stringContaining('record_principle') }]);
    expect((await page!).text).toContain('Approved: the action ran.');
    expect(agent.completed).toEqual([agent.asked[0]!.elicitationId]);
    expect((await call(agent, 'substrate_actions_approve', { action_id: id })).json).toMatchObject({ status: 409, error: { code: 'wrong_status' } });
  });

  it('the person can reject on the page with a reason; declining to open it changes nothing; the agent\'s key does not sign in', async () => {
    const decliner = await agentClient({ url: async () => 'decline' });
    const id = await propose(decliner);
    expect(await call(decliner, 'substrate_actions_reject', { action_id: id })).toMatchObject({ isError: true, json: { status: 403, error: { code: 'HUMAN_DECLINED' } } });
    expect(await status(id)).toBe('proposed');

    const impostor = await personAtPage(`${server.url}/approve/${id}`, server.platformKey);
    expect(impostor.error).toContain('That key was refused');
    expect(await status(id)).toBe('proposed');

    let page: Promise<{ text: string; error: string }> | undefined;
    const agent = await agentClient({
      url: async (url) => {
        page = personAtPage(url, humanKey, 'reject', 'not now');
        return 'accept';
      },
    });
    const rejected = await call(agent, 'substrate_actions_reject', { action_id: id });
    expect(rejected).toMatchObject({ isError: false, json: { status: 'rejected', reject_reason: 'not now', decided_via: 'rest' } });
    expect((await page!).text).toContain('Rejected.');
  });

  it('the approval page carries no credential in its URL and cannot be framed', async () => {
    const res = await fetch(`${server.url}/approve/act_anything`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(res.headers.get('content-security-policy')).toContain(`script-src ${new URL(server.docsUrl()).origin}/approve.js `);
    expect(await res.text()).toContain('<script src="/approve.js"></script>');
  });
});
