// Issue 13's "done when", end to end against the server as `npm start` runs it (API and worker): a rule created over
// MCP fires on its schedule (the per-minute tick, driven to the next minute), its proposal executes, the outbox
// target receives a delivery whose signature the receiver verifies, and a client holding only a ticket sees the
// change frames live.
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { request, resultJson, signUpOwner, substrateKeyOf, tickRulesAfter } from './e2e-helpers.ts';

const SECRET = 'receiver-secret-1';
let server: SpawnedServer;
let receiver: http.Server;
let receiverUrl: string;
const verified: { body: any; valid: boolean }[] = [];
let agent: Client;

async function until<T>(what: string, probe: () => T | undefined, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function call(name: string, args: Record<string, unknown>): Promise<any> {
  const res = (await agent.callTool({ name, arguments: args })) as CallToolResult;
  expect(res.isError, JSON.stringify(res.content)).toBeFalsy();
  return resultJson(res);
}

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const expected = `sha256=${createHmac('sha256', SECRET).update(raw).digest('hex')}`;
      verified.push({ body: JSON.parse(raw), valid: req.headers['x-svc-signature'] === expected });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/inbox`;
  server = await spawnServer({ SVC_OUTBOUND_ALLOW_PRIVATE: 'true' });
  agent = new Client({ name: 'rules-agent', version: '0.0.0' });
  await agent.connect(
    new StreamableHTTPClientTransport(new URL('/mcp?toolsets=substrate,rules,outbox', server.url), { requestInit: { headers: { Authorization: `Bearer ${server.platformKey}` } } }),
  );
});
afterAll(async () => {
  await agent?.close().catch(() => {});
  await server?.close();
  await new Promise((r) => receiver?.close(r));
});

describe('attention rule -> proposal -> outbox -> stream', () => {
  it('fires on schedule, executes, delivers a verifiable webhook, and streams every change', async () => {
    const humanKey = (await substrateKeyOf(server, await signUpOwner(server), 'human')).key;
    const ticket = (await request(server.url, '/v1/me/substrate/ws-ticket', { method: 'POST', key: humanKey })).json.ticket;
    const ws = new WebSocket(`${server.url.replace('http', 'ws')}/v1/me/substrate/stream?ticket=${ticket}`);
    const frames: { tbl?: string; op?: string; id?: string }[] = [];
    ws.on('message', (d) => frames.push(JSON.parse(d.toString())));
    await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
    try {
      await call('substrate_outbox_target_set', { capability: 'record_learning', webhook_url: receiverUrl, signing_secret: SECRET });
      const commitment = await call('substrate_propose', { capability: 'record_commitment', payload: { description: 'Call Alice about the contract', status: 'confirmed' } });
      const rule = await call('substrate_rule_create', {
        name: 'Follow up confirmed commitments',
        trigger_cron: '* * * * *',
        condition_mode: 'row_query',
        condition: { from: 'commitments', where: { '==': [{ var: 'status' }, 'confirmed'] } },
        action_capability: 'record_learning',
        action_payload_template: { title: 'Follow up', description: '{{description}}' },
      });
      const preview = await call('substrate_rule_preview', {
        trigger_cron: '* * * * *',
        condition_mode: 'row_query',
        condition: { from: 'commitments', where: { '==': [{ var: 'status' }, 'confirmed'] } },
        action_capability: 'record_learning',
        action_payload_template: { title: 'Follow up', description: '{{description}}' },
      });
      expect(preview).toMatchObject({ bindings_count: 1, sample_proposals: [{ rendered_payload: { title: 'Follow up', description: 'Call Alice about the contract' } }] });

      await tickRulesAfter(server.controlDb, rule.created_at);

      const delivered = await until('a signed delivery', () => verified.find((v) => v.body.capability === 'record_learning'));
      expect(delivered.valid).toBe(true);
      expect(delivered.body).toMatchObject({ payload: { title: 'Follow up', description: 'Call Alice about the contract' }, proposer_kind: 'agent', source_rule_id: rule.rule_id });
      const action = await call('substrate_actions_get', { action_id: delivered.body.action_id });
      expect(action).toMatchObject({ status: 'executed', source_rule_id: rule.rule_id });

      await until('the change frames', () =>
        ['attention_rules', 'attention_rule_firings', 'commitments', 'learnings', 'action_ledger'].every((tbl) => frames.some((f) => f.tbl === tbl)) ? true : undefined,
      );
      expect(frames.some((f) => f.tbl === 'commitments' && f.id === commitment.result.commitment_id)).toBe(true);
      expect(frames.some((f) => f.tbl === 'action_ledger' && f.id === delivered.body.action_id)).toBe(true);
      const firings = await call('substrate_rule_firings', { rule_id: rule.rule_id });
      expect(firings.firings).toHaveLength(1);
      expect(firings.firings[0]).toMatchObject({ bindings_count: 1, proposals: [{ action_id: delivered.body.action_id }] });
    } finally {
      ws.close();
    }
  });
});
