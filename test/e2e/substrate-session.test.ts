// The substrate with a person's browser session (the spec's identity-provider session): each member is their own
// substrate user, the owner decides what platform-key agents propose (on REST and on the approval page, signed in
// with e-mail and password in a real browser), the decision records the person, and a cookie-authenticated browser
// mints a stream ticket whose socket closes when the session ends.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import pg from 'pg';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser.ts';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey, hashKey } from '../../src/core/crypto.ts';
import { databaseUrl } from '../helpers/db.ts';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { connectMcp, request, resultJson, type McpConnection, type RawResponse } from './e2e-helpers.ts';

let server: SpawnedServer;
let dataDir: string;
let origin: string;
let control: pg.Pool;
let browser: Browser;
let agent: McpConnection;
let owner: { cookie: string; personId: string };
const PASSWORD = 'correct horse battery';

function cookieOf(res: RawResponse): string {
  return res.headers['set-cookie']!.find((c) => c.startsWith('svc_session='))!.split(';')[0]!;
}

const asBrowser = (cookie: string) => ({ cookie, origin });

async function signUp(email: string, token: string): Promise<{ cookie: string; personId: string }> {
  const res = await request(server.url, '/dashboard/signup', { method: 'POST', body: { email, password: PASSWORD, invitation_token: token }, headers: { origin } });
  expect(res.status).toBe(201);
  return { cookie: cookieOf(res), personId: (res.json as { person: { id: string } }).person.id };
}

/** What an agent with the platform key proposes over MCP (an agent's principle always waits for a person). */
async function agentProposes(): Promise<string> {
  const res = (await agent.client.callTool({
    name: 'substrate_propose',
    arguments: { capability: 'record_principle', payload: { title: 'No weekend deploys', applies_to: {}, constraint_spec: { logic: { '==': [1, 1] } } } },
  })) as CallToolResult;
  const json = resultJson(res) as { action_id: string; requires_approval: boolean };
  expect(json.requires_approval).toBe(true);
  return json.action_id;
}

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'svc-substrate-session-'));
  server = await spawnServer({ SVC_DATA_DIR: dataDir, SVC_WS_RECHECK_SECONDS: '1' });
  origin = `http://localhost:${server.port}`;
  control = new pg.Pool({ connectionString: databaseUrl(server.controlDb), max: 2 });
  browser = await launchChromium();
  owner = await signUp('owner@example.com', readFileSync(path.join(dataDir, 'owner-invitation'), 'utf8').trim());
  agent = await connectMcp(server.url, server.platformKey);
}, 60_000);

afterAll(async () => {
  await agent?.close();
  await browser?.close();
  await control?.end();
  await server?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the substrate with a session', () => {
  it('the owner decides what platform-key agents propose, over REST with the cookie; the decision names the person', async () => {
    const id = await agentProposes();
    const read = await request(server.url, `/v1/me/substrate/actions/${id}`, { headers: asBrowser(owner.cookie) });
    expect(read.status).toBe(200);
    expect(read.json).toMatchObject({ action_id: id, status: 'proposed', proposer_kind: 'agent', decided_by: null });
    const approved = await request(server.url, `/v1/me/substrate/actions/${id}/approve`, { method: 'POST', headers: asBrowser(owner.cookie) });
    expect(approved.status).toBe(200);
    expect(approved.json).toMatchObject({ action_id: id, status: 'executed', decided_via: 'rest', decided_by: owner.personId });
    // A cross-site form cannot decide with the cookie.
    const other = await agentProposes();
    const forged = await request(server.url, `/v1/me/substrate/actions/${other}/approve`, { method: 'POST', headers: { cookie: owner.cookie, origin: 'https://evil.example' } });
    expect(forged.status).toBe(403);
    expect((forged.json as { error: { code: string } }).error.code).toBe('CROSS_SITE_REQUEST');
  });

  it('a person signed in on the approval page (e-mail and password) approves in the browser', async () => {
    const id = await agentProposes();
    const page = await browser.newPage();
    try {
      await page.goto(`${server.url.replace('127.0.0.1', 'localhost')}/approve/${id}`);
      await page.fill('#email', 'owner@example.com');
      await page.fill('#password', PASSWORD);
      await page.click('#person button[type=submit]');
      await page.waitForFunction(() => !document.getElementById('action')!.hidden);
      expect(await page.innerText('#capability')).toBe('record_principle');
      expect(await page.innerText('#reason')).toBe('capability policy: approval_required');
      await page.click('#approve');
      await page.waitForFunction(() => document.getElementById('outcome')!.textContent !== '' || document.getElementById('error')!.textContent !== '');
      expect(await page.innerText('#outcome')).toContain('Approved');
    } finally {
      await page.close();
    }
    const row = (await control.query(`select status, decided_by from substrate_actions where id = $1`, [id])).rows[0];
    expect(row).toEqual({ status: 'executed', decided_by: owner.personId });
  });

  it('every other member is their own substrate user: they propose as a human and see only their own ledger', async () => {
    const token = generateKey('svc_inv_');
    const account = (await control.query(`select account_id from account_members where person_id = $1`, [owner.personId])).rows[0].account_id;
    await control.query(`insert into invitations (account_id, role, token_hash, expires_at) values ($1, 'viewer', $2, now() + interval '1 day')`, [account, hashKey(token)]);
    const viewer = await signUp('vera@example.com', token);
    const mine = await request(server.url, '/v1/me/substrate/actions/propose', {
      method: 'POST',
      body: { capability: 'record_learning', payload: { title: 'People propose as humans', description: 'from a session' } },
      headers: asBrowser(viewer.cookie),
    });
    expect(mine.status).toBe(200);
    expect(mine.json).toMatchObject({ verdict: { result: 'auto_approved' }, requires_approval: false });
    const theirs = await agentProposes();
    expect((await request(server.url, `/v1/me/substrate/actions/${theirs}`, { headers: asBrowser(viewer.cookie) })).status).toBe(404);
    const list = (await request(server.url, '/v1/me/substrate/actions?status=all', { headers: asBrowser(viewer.cookie) })).json as { actions: { proposer_kind: string }[] };
    expect(list.actions.map((a) => a.proposer_kind)).toEqual(['human']);
  });

  it('a cookie-authenticated browser mints a stream ticket; its socket closes (1008) when the session ends', async () => {
    const signedIn = await request(server.url, '/dashboard/signin', { method: 'POST', body: { email: 'owner@example.com', password: PASSWORD }, headers: { origin } });
    const cookie = cookieOf(signedIn);
    const minted = await request(server.url, '/v1/me/substrate/ws-ticket', { method: 'POST', headers: asBrowser(cookie) });
    expect(minted.status).toBe(201);
    expect(minted.json).toEqual({ ticket: expect.stringMatching(/^wst_/), expires_in: 60 });
    const ws = new WebSocket(`${server.url.replace('http', 'ws')}/v1/me/substrate/stream?ticket=${encodeURIComponent((minted.json as { ticket: string }).ticket)}`);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    expect((await request(server.url, '/dashboard/signout', { method: 'POST', headers: asBrowser(cookie) })).status).toBe(204);
    expect(await closed).toBe(1008);
  });
});

describe("a person's substrate key", () => {
  it("an admin's key reaches the admin's own substrate: not the owner's decisions nor their pending actions; it dies with the membership", async () => {
    const decision = await request(server.url, '/v1/me/substrate/actions/propose', {
      method: 'POST',
      body: { capability: 'record_decision', payload: { title: 'Sell the company quietly', kind: 'strategic' } },
      headers: asBrowser(owner.cookie),
    });
    expect(decision.json).toMatchObject({ requires_approval: false, result: { decision_id: expect.any(String) } });
    const pending = await agentProposes();

    const token = generateKey('svc_inv_');
    const account = (await control.query(`select account_id from account_members where person_id = $1`, [owner.personId])).rows[0].account_id;
    await control.query(`insert into invitations (account_id, role, token_hash, expires_at) values ($1, 'admin', $2, now() + interval '1 day')`, [account, hashKey(token)]);
    const admin = await signUp('ada@example.com', token);
    const minted = await request(server.url, '/substrate-keys', { method: 'POST', body: { name: 'ada' }, headers: asBrowser(admin.cookie) });
    expect(minted.status).toBe(201);
    const key = (minted.json as { key: string }).key;

    const memory = await request(server.url, `/v1/me/substrate/memory?q=${encodeURIComponent('sell company')}`, { key });
    expect(memory.status).toBe(200);
    expect(memory.json).toEqual({ results: [] });
    const notFound = (res: RawResponse) => [res.status, (res.json as { error: { code: string } }).error.code];
    expect(notFound(await request(server.url, `/v1/me/substrate/actions/${pending}`, { key }))).toEqual([404, 'RESOURCE_NOT_FOUND']);
    expect(notFound(await request(server.url, `/v1/me/substrate/actions/${pending}/approve`, { method: 'POST', key }))).toEqual([404, 'RESOURCE_NOT_FOUND']);
    expect((await request(server.url, `/v1/me/substrate/actions/${pending}`, { headers: asBrowser(owner.cookie) })).json).toMatchObject({ status: 'proposed' });
    // What the key proposes is the admin's, as a person, and shows in no one else's ledger.
    const own = await request(server.url, '/v1/me/substrate/actions/propose', { method: 'POST', key, body: { capability: 'record_learning', payload: { title: 'Mine', description: 'alone' } } });
    expect(own.json).toMatchObject({ verdict: { result: 'auto_approved' } });
    const ownId = (own.json as { action_id: string }).action_id;
    expect((await request(server.url, `/v1/me/substrate/actions/${ownId}`, { headers: asBrowser(admin.cookie) })).json).toMatchObject({ proposer_kind: 'human', status: 'executed' });
    expect((await request(server.url, `/v1/me/substrate/actions/${ownId}`, { headers: asBrowser(owner.cookie) })).status).toBe(404);

    expect((await request(server.url, `/dashboard/members/${admin.personId}`, { method: 'DELETE', headers: asBrowser(owner.cookie) })).status).toBe(200);
    const gone = await request(server.url, '/v1/me/substrate/actions', { key });
    expect([gone.status, (gone.json as { error: { code: string } }).error.code]).toEqual([401, 'AUTH_INVALID_TOKEN']);
  });
});
