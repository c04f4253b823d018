// The support desk of issue 26, built by an agent that holds only /mcp and a platform key, with a budget: at most 30
// tool calls and at most 40 KB of tool and guide text in its context. The agent starts from a session's default, `core` (the
// typical flow's tools), adds `rag` in the session, and reads one area's notes (functions, without the tool reference
// it already has). What it builds: private tickets, shared help articles, a RAG collection answering with citations,
// an HTTP function answering a ticket as its end user through ctx.data and ctx.rag, a cron function, a file on a
// ticket, two end users proving isolation, and a site that Chromium opens to sign a user up and list their tickets
// using only what the platform served it. What counts as context: test/e2e/metered-agent.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-upstream.ts';
import { databaseUrl } from '../helpers/db.ts';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { CORE_TOOLSET } from '../../tools/index.ts';
import { APP_ID, UUID, request } from './e2e-helpers.ts';
import { MeteredAgent } from './metered-agent.ts';

const MAX_CALLS = 30;
const MAX_CONTEXT_BYTES = 40 * 1024;

let fake: FakeOpenAI;
let server: SpawnedServer;
let client: Client;
let transport: StreamableHTTPClientTransport;
let browser: Browser;
let appId: string;

let agent: MeteredAgent;
const ok = (name: string, args: Record<string, unknown>) => agent.ok(name, args);

/** Polls (each poll a counted call, with a pause between as an agent would wait) until `done` holds. */
async function pollUntil(name: string, args: Record<string, unknown>, done: (out: any) => boolean, polls = 4): Promise<any> {
  for (let i = 0; i < polls; i++) {
    await new Promise((r) => setTimeout(r, 1_000));
    const out = await ok(name, args);
    if (done(out)) return out;
  }
  throw new Error(`${name} did not finish within ${polls} polls`);
}

const SCHEMA = {
  tables: {
    tickets: {
      columns: {
        id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' },
        user_id: { type: 'uuid', nullable: false },
        subject: { type: 'text', nullable: false },
        body: { type: 'text', nullable: false },
        status: { type: 'text', nullable: false, default: "'open'", enum: ['open', 'answered', 'closed'] },
        answer: { type: 'text' },
        citations: { type: 'jsonb' },
        attachment_id: { type: 'uuid' },
        created_at: { type: 'timestamptz', nullable: false, default: 'now()' },
      },
    },
    articles: {
      columns: {
        id: { type: 'bigint', primary: true, identity: true },
        title: { type: 'text', nullable: false },
        body: { type: 'text', nullable: false },
      },
      access: 'public',
    },
  },
};

const ARTICLES = [
  { title: 'Printer jams', body: 'When the printer jams, open the front tray, remove the stuck paper and press resume.' },
  { title: 'Password reset', body: 'To reset your password, use the forgot password link on the sign in page.' },
  { title: 'Refunds', body: 'Refunds are paid to the original card within five business days of approval.' },
];

// Answers the caller's own ticket from the help articles: the ticket is read and updated as the end user (row-level
// security: another user's ticket is not found), the answer comes from RAG with its sources.
const ANSWER_FN = `export default async (req, ctx) => {
  if (!ctx.user) return Response.json({ error: "sign in first" }, { status: 401 });
  const { ticket_id } = await req.json();
  const found = await ctx.data.from("tickets").select("id,subject,body", { query: "id=eq." + encodeURIComponent(ticket_id) });
  if (found.error || found.data.length === 0) return Response.json({ error: "no such ticket" }, { status: 404 });
  const ticket = found.data[0];
  const rag = await ctx.rag.query("help", { query: ticket.subject + ". " + ticket.body, topK: 2, synthesize: true });
  const citations = rag.chunks.map((c) => c.metadata.title);
  const saved = await ctx.data.from("tickets").update({ answer: rag.answer, citations, status: "answered" }, "id=eq." + ticket.id);
  return Response.json({ answer: rag.answer, citations, saved: saved.error === null });
};`;

// Each hour, as the app: answered tickets are closed.
const CLOSE_FN = `export default async (req, ctx) => {
  const { scheduled_at } = await req.json();
  const closed = await ctx.data.from("tickets").update({ status: "closed" }, "status=eq.answered");
  console.log("closing answered tickets for", scheduled_at);
  return Response.json({ closed: closed.data.length, error: closed.error });
};`;

// The site: everything it knows about its API comes from __env.js, which the platform serves beside it.
const SITE = `<!doctype html>
<html><head><meta charset="utf-8"><title>Support desk</title><script src="__env.js"></script></head>
<body>
<h1>Support desk</h1>
<form id="signup"><input id="email" type="email" required><input id="password" type="password" required><button>Sign up</button></form>
<form id="open" hidden><input id="subject" required><textarea id="body" required></textarea><button>Open a ticket</button></form>
<p id="count"></p><ul id="tickets"></ul>
<script>
const env = window.__ENV__;
let token = null;
const $ = (id) => document.getElementById(id);
async function api(url, init = {}) {
  const res = await fetch(url, { ...init, headers: { "Content-Type": "application/json", Authorization: "Bearer " + token } });
  if (!res.ok) throw new Error(res.status + " " + (await res.text()));
  return res.status === 201 || res.status === 204 ? null : res.json();
}
async function refresh() {
  const rows = await api(env.SVC_DATA_URL + "/tickets?select=subject,status&order=created_at");
  $("tickets").replaceChildren(...rows.map((t) => Object.assign(document.createElement("li"), { textContent: t.subject + " (" + t.status + ")" })));
  $("count").textContent = rows.length + " tickets";
}
$("signup").onsubmit = async (e) => {
  e.preventDefault();
  const res = await fetch(env.SVC_AUTH_SIGNUP_URL, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ email: $("email").value, password: $("password").value }) });
  token = (await res.json()).access_token;
  $("signup").hidden = true; $("open").hidden = false;
  await refresh();
};
$("open").onsubmit = async (e) => {
  e.preventDefault();
  await api(env.SVC_DATA_URL + "/tickets", { method: "POST", body: JSON.stringify({ subject: $("subject").value, body: $("body").value }) });
  await refresh();
};
</script>
</body></html>`;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  server = await spawnServer({ SVC_AI_BASE_URL: fake.url, SVC_AI_API_KEY: 'sk-platform-desk' });
  client = new Client({ name: 'support-desk-agent', version: '0.0.0' });
  transport = new StreamableHTTPClientTransport(new URL('/mcp', server.url), {
    requestInit: { headers: { Authorization: `Bearer ${server.platformKey}` } },
  });
  await client.connect(transport);
  agent = new MeteredAgent(client);
  browser = await launchChromium();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await transport?.terminateSession().catch(() => {});
  await client?.close().catch(() => {});
  await server?.close();
  await fake?.close();
});

describe('an agent builds the support desk over MCP within 30 calls and 40 KB of context', () => {
  let siteUrl: string;
  const users: Record<'ann' | 'bob', { id: string; token: string; ticket?: string }> = {} as never;

  it('starts small: the default toolset (core), and the instructions say how to grow', async () => {
    expect(agent.readInstructions()).toContain('add them to this session with platform_toolsets_enable');
    expect((await agent.listTools()).sort()).toEqual([...CORE_TOOLSET].sort());
  });

  it("reads the functions area's notes, without the tools it already has", async () => {
    const guide = await ok('platform_guide', { area: 'functions', tools: false });
    agent.countGuide(guide.text);
    expect(guide.text).toContain('ctx.rag.query(collection, { query, synthesize })');
    expect(guide.text).not.toContain('## Tools');
  });

  it('creates the app, its schema and the shared help articles', async () => {
    const app = await ok('apps_create', { name: 'Support desk' });
    expect(app.app_id).toMatch(APP_ID);
    appId = app.app_id;
    const applied = await ok('schema_apply', { app_id: appId, schema: SCHEMA, name: 'support desk' });
    expect(applied).toMatchObject({ dry_run: false, applied: true, migration: { name: 'support desk' } });
    const inserted = await ok('data_insert', { app_id: appId, table: 'articles', body: ARTICLES, prefer: 'return=representation' });
    expect(inserted.status).toBe(201);
    expect(inserted.data.map((a: { title: string }) => a.title)).toEqual(ARTICLES.map((a) => a.title));
  });

  it('adds the rag toolset to the session and indexes the articles in a shared collection', async () => {
    const enabled = await ok('platform_toolsets_enable', { toolsets: ['rag'] });
    expect(enabled).toMatchObject({ added: ['rag'], tools: expect.arrayContaining(['rag_ingest', 'rag_query']) });
    expect(await agent.listTools()).toEqual(expect.arrayContaining(['rag_collections_create', 'rag_ingest', 'rag_documents_list']));
    await ok('rag_collections_create', { app_id: appId, name: 'help', accessMode: 'shared' });
    for (const article of ARTICLES) {
      const ingest = await ok('rag_ingest', { app_id: appId, name: 'help', text: `${article.title}. ${article.body}`, metadata: { title: article.title } });
      expect(ingest).toMatchObject({ documentId: expect.stringMatching(UUID), status: 'pending' });
    }
    const documents = await pollUntil('rag_documents_list', { app_id: appId, name: 'help' }, (out) => out.documents.every((d: { status: string }) => d.status === 'ready'));
    expect(documents.documents).toHaveLength(3);
  }, 30_000);

  it('deploys the answering function, the cron function and the site', async () => {
    const answer = await ok('functions_deploy', { app_id: appId, name: 'answer', code: ANSWER_FN, description: "Answers the caller's ticket from the help articles" });
    expect(answer).toMatchObject({ name: 'answer', created: true, trigger: { type: 'http', config: {} } });
    const close = await ok('functions_deploy', { app_id: appId, name: 'close-answered', code: CLOSE_FN, trigger: { type: 'cron', config: { schedule: '0 * * * *' } } });
    expect(close).toMatchObject({ name: 'close-answered', created: true, trigger: { type: 'cron', config: { schedule: '0 * * * *' } } });
    const deployed = await ok('frontend_deploy_files', { app_id: appId, framework: 'static', files: { 'index.html': SITE } });
    expect(deployed).toMatchObject({ status: 'BUILDING', platform_env: { SVC_APP_ID: appId } });
    const ready = await pollUntil('frontend_deploy_get', { app_id: appId, id: deployed.id }, (d) => d.status !== 'BUILDING');
    expect(ready.status).toBe('READY');
    siteUrl = ready.url;
  }, 60_000);

  it('two end users open tickets, one with a file', async () => {
    for (const name of ['ann', 'bob'] as const) {
      const session = await ok('auth_signup', { app_id: appId, email: `${name}@example.com`, password: `${name}-password-1` });
      users[name] = { id: session.user.id, token: session.access_token };
    }
    const file = await ok('storage_upload_inline', {
      app_id: appId, filename: 'jam.txt', contentType: 'text/plain', content: 'paper stuck in tray 2', encoding: 'utf8', user_token: users.ann.token,
    });
    const tickets = {
      ann: { subject: 'Printer jam', body: 'The printer jams on every page', attachment_id: file.id },
      bob: { subject: 'Refund', body: 'When do I get my refund?' },
    };
    for (const name of ['ann', 'bob'] as const) {
      const row = await ok('data_insert', { app_id: appId, table: 'tickets', body: tickets[name], prefer: 'return=representation', user_token: users[name].token });
      expect(row.data).toEqual([expect.objectContaining({ ...tickets[name], user_id: users[name].id, status: 'open', answer: null })]);
      users[name].ticket = row.data[0].id;
    }
    // The file is Ann's alone: Bob's token cannot read it (the test's own check, over REST).
    const bobReads = await request(server.url, `/storage/${appId}/read/${file.id}`, { key: users.bob.token });
    expect(bobReads.status).toBe(404);
  });

  it('the function answers a ticket as its end user, with citations; another user cannot reach it', async () => {
    const answered = await ok('functions_invoke', { app_id: appId, name: 'answer', body: { ticket_id: users.ann.ticket }, user_token: users.ann.token });
    expect(answered).toMatchObject({ status: 200, error: null });
    expect(answered.body.saved).toBe(true);
    expect(answered.body.citations[0]).toBe('Printer jams');
    expect(answered.body.answer).toMatch(/^echo: Sources: \[1\] Printer jams\./);
    const refused = await ok('functions_invoke', { app_id: appId, name: 'answer', body: { ticket_id: users.ann.ticket }, user_token: users.bob.token });
    expect(refused).toMatchObject({ status: 404, body: { error: 'no such ticket' } });
    const bobSees = await ok('data_select', { app_id: appId, table: 'tickets', query: 'select=subject,status', user_token: users.bob.token });
    expect(bobSees.data).toEqual([{ subject: 'Refund', status: 'open' }]);
  }, 30_000);

  it('the cron function closes answered tickets', async () => {
    const run = await ok('functions_invoke', { app_id: appId, name: 'close-answered', body: { scheduled_at: '2026-11-27T15:00:00Z' } });
    expect(run).toMatchObject({ status: 200, body: { closed: 1, error: null } });
    const all = await ok('data_select', { app_id: appId, table: 'tickets', query: 'select=subject,status,citations&order=subject' });
    expect(all.data).toEqual([
      { subject: 'Printer jam', status: 'closed', citations: expect.arrayContaining(['Printer jams']) },
      { subject: 'Refund', status: 'open', citations: null },
    ]);
  }, 30_000);

  it('the site, in Chromium, signs a new user up and lists only their tickets', async () => {
    const page = await browser.newPage();
    // Every request the page makes goes to the platform: the app's own host that served it, or the platform's API.
    const platform = new Set([new URL(siteUrl).origin, `http://localhost:${server.port}`]);
    const foreign: string[] = [];
    page.on('request', (r) => {
      if (!platform.has(new URL(r.url()).origin)) foreign.push(r.url());
    });
    await page.goto(siteUrl);
    await page.fill('#email', 'cleo@example.com');
    await page.fill('#password', 'cleo-password-1');
    await page.click('#signup button');
    await page.waitForFunction(() => document.getElementById('count')!.textContent === '0 tickets');
    await page.fill('#subject', 'Cannot log in');
    await page.fill('#body', 'The sign in page keeps reloading');
    await page.click('#open button');
    await page.waitForFunction(() => document.getElementById('count')!.textContent === '1 tickets');
    expect(await page.locator('#tickets li').allTextContents()).toEqual(['Cannot log in (open)']);
    expect(foreign).toEqual([]);
    await page.close();
  }, 30_000);

  it(`stayed within ${MAX_CALLS} calls and ${MAX_CONTEXT_BYTES} bytes of tool and guide text`, () => {
    console.log(agent.report('support desk'));
    expect(agent.calls).toBeLessThanOrEqual(MAX_CALLS);
    expect(agent.contextBytes()).toBeLessThanOrEqual(MAX_CONTEXT_BYTES);
  });
});

// The rows as the database holds them, so the test does not trust the agent's view alone.
describe('what the agent built, seen from the database', () => {
  it('row-level security is on for tickets, and the three tickets are there', async () => {
    const db = new pg.Client({ connectionString: databaseUrl(`${server.appDbPrefix}${appId}`) });
    await db.connect();
    try {
      const rls = await db.query(`select relrowsecurity from pg_class where relname = 'tickets'`);
      expect(rls.rows).toEqual([{ relrowsecurity: true }]);
      const tickets = await db.query(`select subject from tickets order by subject`);
      expect(tickets.rows.map((r) => r.subject)).toEqual(['Cannot log in', 'Printer jam', 'Refund']);
    } finally {
      await db.end();
    }
  });
});

