// Third-party integrations against a fake Composio on loopback: the curated list and the catalog search, enabling and
// disabling toolkits, an end user connecting through the hosted link (the fake completes the OAuth dance and calls
// back), tool executions and their failures, who may act for whom, the redirect allow-list, per-app vendor user ids,
// the execution log, and a platform without a vendor key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeComposio, followLikeABrowser, SOFT_FAILURE_MESSAGE, type FakeComposio } from '../fakes/composio.ts';
import { createApp } from '../helpers/functions.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { freePort } from '../helpers/server.ts';
import { appSiteUrl, waitFor } from './frontend-helpers.ts';
import { PRUNE_INTEGRATIONS_SQL } from '../../src/integrations/service.ts';

const APP_SITE = 'https://myapp.example';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const CURATED = ['gmail', 'googlecalendar', 'googledrive', 'outlook', 'slack', 'github', 'notion', 'linear', 'jira', 'hubspot'];

let fake: FakeComposio;
let p: TestPlatform;
let appA: string;
let keyA: string;
let appB: string;
let keyB: string;
const users: Record<string, { id: string; token: string }> = {};
let aliceConnection: string;

async function signup(appId: string, name: string): Promise<{ id: string; token: string }> {
  const r = await p.api('POST', `/v1/${appId}/auth/signup`, { key: null, body: { email: `${name}@example.com`, password: 'correct horse battery' } });
  expect(r.status).toBe(201);
  return { id: r.body.user.id, token: r.body.access_token };
}

const at = (appId: string, path: string) => `/v1/${appId}/integrations${path}`;

async function connectAndFollow(appId: string, key: string, body: Record<string, unknown>, consent: 'allow' | 'deny' = 'allow') {
  const r = await p.api('POST', at(appId, '/connect'), { key, body });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const { location } = await followLikeABrowser(r.body.authUrl, APP_SITE, { consent });
  return { connect: r.body as { authUrl: string; connectionRequestId: string }, location };
}

beforeAll(async () => {
  fake = await startFakeComposio();
  const port = await freePort();
  p = await startTestPlatform({
    PORT: String(port),
    SVC_BASE_URL: `http://127.0.0.1:${port}`,
    SVC_INTEGRATIONS_BASE_URL: fake.url,
    SVC_INTEGRATIONS_API_KEY: fake.apiKey,
  });
  ({ appId: appA, key: keyA } = await createApp(p, 'Integrations A'));
  ({ appId: appB, key: keyB } = await createApp(p, 'Integrations B'));
  users.alice = await signup(appA, 'alice');
  users.bob = await signup(appA, 'bob');
});

afterAll(async () => {
  await p?.close();
  await fake?.close();
});

describe('the catalog', () => {
  it('lists the 10 curated toolkits without asking the vendor', async () => {
    const r = await p.api('GET', at(appA, '/available'), { key: keyA });
    expect(r.status).toBe(200);
    expect(r.body.toolkits.map((t: { toolkit: string }) => t.toolkit)).toEqual(CURATED);
    expect(r.body.toolkits[0]).toEqual({ toolkit: 'gmail', displayName: 'Gmail', curated: true, description: 'Read, search, draft and send e-mail.', enabled: false });
    expect(fake.requestsTo('/api/v3/toolkits')).toEqual([]);
  });

  it('searches the vendor catalog with ?search=, marking curated entries', async () => {
    const r = await p.api('GET', at(appA, '/available?search=issue'), { key: keyA });
    expect(r.status).toBe(200);
    expect(r.body.toolkits).toEqual([
      { toolkit: 'linear', displayName: 'Linear', curated: true, description: 'Issue tracking', enabled: false },
      { toolkit: 'jira', displayName: 'Jira', curated: true, description: 'Issue tracking', enabled: false },
    ]);
    const air = await p.api('GET', at(appA, '/available?search=air'), { key: keyA });
    expect(air.body.toolkits).toEqual([{ toolkit: 'airtable', displayName: 'Airtable', curated: false, description: 'Spreadsheet databases', enabled: false }]);
    const [sent] = fake.requestsTo('/api/v3/toolkits');
    expect(sent).toMatchObject({ method: 'GET', query: { search: 'issue', limit: '50' }, apiKey: fake.apiKey });
  });

  it('is for the app\'s keys: an end user gets 403', async () => {
    const r = await p.api('GET', at(appA, '/available'), { key: users.alice!.token });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('FORBIDDEN');
  });
});

describe('enabling toolkits', () => {
  it('configure creates the vendor auth config with the vendor-managed scopes and returns the config', async () => {
    const r = await p.api('POST', at(appA, '/configure'), { key: keyA, body: { toolkit: 'gmail', displayName: 'Mail', redirectOrigins: [`${APP_SITE}/`] } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      integrations: [{ toolkit: 'gmail', displayName: 'Mail', scopes: null, createdAt: expect.any(String), updatedAt: expect.any(String) }],
      redirectOrigins: [APP_SITE],
      // The app's own host, where its site is.
      appOrigin: new URL(await appSiteUrl(p, appA)).origin,
    });
    expect(fake.authConfigs).toEqual([{ id: expect.stringMatching(/^ac_/), name: 'svc gmail managed', toolkit: 'gmail', scopes: null }]);
    const [created] = fake.requestsTo('/api/v3/auth_configs').filter((q) => q.method === 'POST');
    expect(created!.body).toEqual({ toolkit: { slug: 'gmail' }, auth_config: { type: 'use_composio_managed_auth', name: 'svc gmail managed' } });
  });

  it('another app enabling the same toolkit and scopes reuses the auth config; other scopes get their own', async () => {
    expect((await p.api('POST', at(appB, '/configure'), { key: keyB, body: { toolkit: 'gmail', displayName: 'Gmail', redirectOrigins: [APP_SITE] } })).status).toBe(200);
    expect(fake.authConfigs).toHaveLength(1);
    const slack = await p.api('POST', at(appA, '/configure'), {
      key: keyA,
      body: { toolkit: 'slack', displayName: 'Slack', scopes: ['chat:write', 'channels:read', 'chat:write'] },
    });
    expect(slack.status).toBe(200);
    expect(slack.body.integrations[1]).toMatchObject({ toolkit: 'slack', scopes: ['channels:read', 'chat:write'] });
    expect(fake.authConfigs[1]).toMatchObject({ toolkit: 'slack', scopes: ['channels:read', 'chat:write'], name: expect.stringMatching(/^svc slack [0-9a-f]{12}$/) });
    // The owner's platform key is an admin credential too.
    expect((await p.api('GET', at(appA, '/config'))).body.integrations.map((i: { toolkit: string }) => i.toolkit)).toEqual(['gmail', 'slack']);
  });

  it('an unknown toolkit is 404 and a bad redirect origin 400', async () => {
    const unknown = await p.api('POST', at(appA, '/configure'), { key: keyA, body: { toolkit: 'nope', displayName: 'Nope' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('RESOURCE_NOT_FOUND');
    const origin = await p.api('POST', at(appA, '/configure'), { key: keyA, body: { toolkit: 'gmail', displayName: 'Mail', redirectOrigins: ['https://x.example/path'] } });
    expect(origin.status).toBe(400);
    expect(origin.body.error.details).toEqual([{ path: 'redirectOrigins.0', message: 'scheme://host[:port] only' }]);
  });

  it('disable answers 204, then 400 INTEGRATIONS_TOOLKIT_NOT_ENABLED', async () => {
    expect((await p.api('DELETE', at(appA, '/configure/slack'), { key: keyA })).status).toBe(204);
    const again = await p.api('DELETE', at(appA, '/configure/slack'), { key: keyA });
    expect(again.status).toBe(400);
    expect(again.body).toEqual({
      error: {
        code: 'INTEGRATIONS_TOOLKIT_NOT_ENABLED',
        message: "Toolkit 'slack' is not enabled for this app.",
        remediation: 'Enable it with integrations_configure (POST /v1/{app_id}/integrations/configure); integrations_config lists the enabled ones.',
        documentation_url: p.docsUrl('integrations'),
      },
    });
  });
});

describe('connecting an account', () => {
  it('connect returns the hosted link; following it like a browser ends at the redirectUrl with the connection', async () => {
    const { connect, location } = await connectAndFollow(appA, users.alice!.token, { toolkit: 'gmail', redirectUrl: `${APP_SITE}/settings?tab=apps#top` });
    expect(connect.connectionRequestId).toMatch(UUID);
    expect(connect.authUrl).toMatch(new RegExp(`^${fake.url}/link/`));
    const [link] = fake.requestsTo('/api/v3/connected_accounts/link');
    expect(link!.body.user_id).toBe(`${appA}:${users.alice!.id}`);
    expect(link!.body.callback_url).toMatch(new RegExp(`^${p.services.config.baseUrl}/v1/${appA}/integrations/callback\\?state=[A-Za-z0-9_-]{43}$`));
    expect(location.origin + location.pathname).toBe(`${APP_SITE}/settings`);
    expect(location.hash).toBe('#top');
    const outcome = Object.fromEntries(location.searchParams);
    expect(outcome).toEqual({ tab: 'apps', status: 'success', toolkit: 'gmail', connectionRequestId: connect.connectionRequestId, connectionId: expect.stringMatching(UUID) });
    aliceConnection = outcome.connectionId!;
    const list = await p.api('GET', at(appA, '/connections'), { key: users.alice!.token });
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ connections: [{ id: aliceConnection, toolkit: 'gmail', userId: users.alice!.id, status: 'active', createdAt: expect.any(String) }] });
    expect(JSON.stringify(list.body)).not.toContain('secret-provider-token');
  });

  it('a callback is single-use, needs its state, and is refused for an unknown one', async () => {
    const link = fake.requestsTo('/api/v3/connected_accounts/link').at(-1)!;
    const replay = await fetch(link.body.callback_url, { redirect: 'manual' });
    expect(replay.status).toBe(404);
    expect((await replay.json()).error.code).toBe('RESOURCE_NOT_FOUND');
    const none = await p.api('GET', at(appA, '/callback'), { key: null });
    expect(none.status).toBe(400);
    expect(none.body.error.details).toEqual([{ path: 'state', message: 'required' }]);
  });

  it('a refused consent sends the browser back with status=failed and records nothing', async () => {
    const { location } = await connectAndFollow(appA, users.bob!.token, { toolkit: 'gmail', redirectUrl: `${APP_SITE}/done` }, 'deny');
    expect(Object.fromEntries(location.searchParams)).toEqual({ status: 'failed', toolkit: 'gmail', connectionRequestId: expect.stringMatching(UUID), error: 'access_denied' });
    expect((await p.api('GET', at(appA, '/connections'), { key: users.bob!.token })).body).toEqual({ connections: [] });
  });

  it('refuses a redirectUrl off the app\'s origins (no open redirect), before asking the vendor', async () => {
    const links = fake.requestsTo('/api/v3/connected_accounts/link').length;
    const r = await p.api('POST', at(appA, '/connect'), { key: users.alice!.token, body: { toolkit: 'gmail', redirectUrl: 'https://evil.example/phish' } });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'redirectUrl', message: "not on the app's own origin or its redirectOrigins" }] });
    expect(r.body.error.message).toContain("'https://evil.example'");
    const sneaky = await p.api('POST', at(appA, '/connect'), { key: users.alice!.token, body: { toolkit: 'gmail', redirectUrl: `https://user:pw@myapp.example/` } });
    expect(sneaky.status).toBe(400);
    expect(fake.requestsTo('/api/v3/connected_accounts/link')).toHaveLength(links);
    // The app's own origin is always allowed.
    const own = await p.api('POST', at(appA, '/connect'), { key: users.alice!.token, body: { toolkit: 'gmail', redirectUrl: `${await appSiteUrl(p, appA)}#/settings` } });
    expect(own.status).toBe(200);
  });

  it('refuses at the callback an origin the owner withdrew since the link was made', async () => {
    const r = await p.api('POST', at(appA, '/connect'), { key: users.bob!.token, body: { toolkit: 'gmail', redirectUrl: `${APP_SITE}/back` } });
    expect(r.status).toBe(200);
    expect((await p.api('POST', at(appA, '/configure'), { key: keyA, body: { toolkit: 'gmail', displayName: 'Mail', redirectOrigins: [] } })).status).toBe(200);
    const dance = await fetch(r.body.authUrl, { redirect: 'follow' });
    expect(dance.status).toBe(400);
    expect((await dance.json()).error.details).toEqual([{ path: 'redirectUrl', message: "not on the app's own origin or its redirectOrigins" }]);
    expect((await p.api('POST', at(appA, '/configure'), { key: keyA, body: { toolkit: 'gmail', displayName: 'Mail', redirectOrigins: [APP_SITE] } })).status).toBe(200);
  });

  it('a toolkit the app has not enabled cannot be connected', async () => {
    const r = await p.api('POST', at(appA, '/connect'), { key: users.alice!.token, body: { toolkit: 'slack', redirectUrl: `${APP_SITE}/` } });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('INTEGRATIONS_TOOLKIT_NOT_ENABLED');
  });
});

describe('who acts for whom', () => {
  it('userId with an end-user token is refused with 400', async () => {
    const r = await p.api('POST', at(appA, '/connect'), { key: users.alice!.token, body: { toolkit: 'gmail', redirectUrl: `${APP_SITE}/`, userId: users.bob!.id } });
    expect(r.status).toBe(400);
    expect(r.body.error).toEqual({
      code: 'VALIDATION_FAILED',
      message: "'userId' is only for keys: an end-user token already names the user.",
      remediation: 'Fix the named field and send the request again.',
      documentation_url: p.docsUrl('integrations'),
      details: [{ path: 'userId', message: 'omit it with an end-user token' }],
    });
    const query = await p.api('GET', at(appA, `/connections?userId=${users.bob!.id}`), { key: users.alice!.token });
    expect(query.status).toBe(400);
  });

  it('a key must name the user (userId in the body or query) for connect and execute', async () => {
    for (const [path, body] of [
      ['/connect', { toolkit: 'gmail', redirectUrl: `${APP_SITE}/` }],
      ['/execute', { toolName: 'GMAIL_SEND_EMAIL', params: {} }],
    ] as const) {
      const r = await p.api('POST', at(appA, path), { key: keyA, body });
      expect(r.status).toBe(400);
      expect(r.body.error.details).toEqual([{ path: 'userId', message: 'required with a platform or service key' }]);
    }
  });

  it('a key with userId acts for that user: connect, list, execute', async () => {
    const { location } = await connectAndFollow(appA, keyA, { toolkit: 'gmail', redirectUrl: `${APP_SITE}/`, userId: 'crm-user-42' });
    expect(location.searchParams.get('status')).toBe('success');
    expect(fake.requestsTo('/api/v3/connected_accounts/link').at(-1)!.body.user_id).toBe(`${appA}:crm-user-42`);
    const mine = await p.api('GET', at(appA, '/connections?userId=crm-user-42'), { key: keyA });
    expect(mine.body.connections).toEqual([expect.objectContaining({ toolkit: 'gmail', userId: 'crm-user-42' })]);
    const run = await p.api('POST', at(appA, '/execute'), { key: keyA, body: { toolName: 'GMAIL_FETCH_EMAILS', params: { max_results: 2 }, userId: 'crm-user-42' } });
    expect(run.status).toBe(200);
    expect(run.body.data.user_id).toBe(`${appA}:crm-user-42`);
  });

  it('an end user neither sees nor deletes another user\'s connection; keys see all', async () => {
    expect((await p.api('GET', at(appA, '/connections'), { key: users.bob!.token })).body).toEqual({ connections: [] });
    const steal = await p.api('DELETE', at(appA, `/connections/${aliceConnection}`), { key: users.bob!.token });
    expect(steal.status).toBe(404);
    expect(steal.body.error.code).toBe('RESOURCE_NOT_FOUND');
    const all = await p.api('GET', at(appA, '/connections'), { key: keyA });
    expect(all.body.connections.map((c: { userId: string }) => c.userId).sort()).toEqual([users.alice!.id, 'crm-user-42'].sort());
  });
});

describe('executing tools', () => {
  it('lists the enabled toolkits\' tools with input schemas, marked connected for a named user', async () => {
    const mine = await p.api('GET', at(appA, '/tools'), { key: users.alice!.token });
    expect(mine.status).toBe(200);
    expect(mine.body.tools.map((t: { name: string }) => t.name)).toEqual(['GMAIL_SEND_EMAIL', 'GMAIL_FETCH_EMAILS']);
    expect(mine.body.tools[0]).toEqual({
      name: 'GMAIL_SEND_EMAIL',
      toolkit: 'gmail',
      title: 'Send email',
      description: 'Send an e-mail from the connected Gmail account.',
      inputSchema: {
        type: 'object',
        properties: { recipient_email: { type: 'string' }, subject: { type: 'string' }, body: { type: 'string' } },
        required: ['recipient_email', 'body'],
      },
      connected: true,
    });
    expect((await p.api('GET', at(appA, '/tools'), { key: users.bob!.token })).body.tools[0].connected).toBe(false);
    expect((await p.api('GET', at(appA, '/tools'), { key: keyA })).body.tools[0]).not.toHaveProperty('connected');
    const slack = await p.api('GET', at(appA, '/tools?toolkit=slack'), { key: keyA });
    expect(slack.status).toBe(400);
    expect(slack.body.error.code).toBe('INTEGRATIONS_TOOLKIT_NOT_ENABLED');
  });

  it('runs a tool through the user\'s own connected account: { successful: true, data }', async () => {
    const params = { recipient_email: 'bob@example.com', subject: 'Hi', body: 'Hello from the platform' };
    const r = await p.api('POST', at(appA, '/execute'), { key: users.alice!.token, body: { toolName: 'GMAIL_SEND_EMAIL', params } });
    expect(r.status).toBe(200);
    const sent = fake.requestsTo('/api/v3/tools/execute/GMAIL_SEND_EMAIL').at(-1)!;
    expect(r.body).toEqual({
      successful: true,
      data: { tool: 'GMAIL_SEND_EMAIL', arguments: params, connected_account_id: sent.body.connected_account_id, user_id: `${appA}:${users.alice!.id}` },
    });
    expect(sent.body).toEqual({ user_id: `${appA}:${users.alice!.id}`, connected_account_id: expect.stringMatching(/^ca_/), arguments: params });
  });

  it('a soft failure of the tool is 422 INTEGRATIONS_EXECUTION_FAILED with the vendor\'s message', async () => {
    fake.faults.set('GMAIL_SEND_EMAIL', 'soft');
    const r = await p.api('POST', at(appA, '/execute'), { key: users.alice!.token, body: { toolName: 'GMAIL_SEND_EMAIL', params: { recipient_email: 'x@y', body: 'b' } } });
    expect(r.status).toBe(422);
    expect(r.body).toEqual({
      error: {
        code: 'INTEGRATIONS_EXECUTION_FAILED',
        message: `The tool failed: ${SOFT_FAILURE_MESSAGE}`,
        remediation: "Fix the params as the message says (integrations_tools shows each tool's inputSchema), or reconnect the account.",
        documentation_url: p.docsUrl('integrations'),
      },
    });
  });

  it('a vendor 5xx and a dropped connection are 502 INTEGRATIONS_EXECUTION_FAILED', async () => {
    fake.faults.set('GMAIL_SEND_EMAIL', '5xx');
    const down = await p.api('POST', at(appA, '/execute'), { key: users.alice!.token, body: { toolName: 'GMAIL_SEND_EMAIL', params: {} } });
    expect(down.status).toBe(502);
    expect(down.body.error).toEqual({
      code: 'INTEGRATIONS_EXECUTION_FAILED',
      message: 'The integration vendor answered 500: Internal server error.',
      remediation: 'Retry with backoff.',
      documentation_url: p.docsUrl('integrations'),
    });
    fake.faults.set('GMAIL_SEND_EMAIL', 'drop');
    const dropped = await p.api('POST', at(appA, '/execute'), { key: users.alice!.token, body: { toolName: 'GMAIL_SEND_EMAIL', params: {} } });
    expect(dropped.status).toBe(502);
    expect(dropped.body.error).toEqual({
      code: 'INTEGRATIONS_EXECUTION_FAILED',
      message: 'The integration vendor could not be reached.',
      remediation: 'Retry with backoff.',
      documentation_url: p.docsUrl('integrations'),
    });
    fake.faults.clear();
  });

  it('a tool of a toolkit not enabled is 400 INTEGRATIONS_TOOLKIT_NOT_ENABLED; an unknown tool 404', async () => {
    const slack = await p.api('POST', at(appA, '/execute'), { key: users.alice!.token, body: { toolName: 'SLACK_SEND_MESSAGE', params: { channel: 'c', text: 't' } } });
    expect(slack.status).toBe(400);
    expect(slack.body.error.code).toBe('INTEGRATIONS_TOOLKIT_NOT_ENABLED');
    const unknown = await p.api('POST', at(appA, '/execute'), { key: users.alice!.token, body: { toolName: 'NOPE_NOTHING', params: {} } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('RESOURCE_NOT_FOUND');
  });

  it('a user without a connection gets a 400 that points to connect', async () => {
    const r = await p.api('POST', at(appA, '/execute'), { key: users.bob!.token, body: { toolName: 'GMAIL_SEND_EMAIL', params: {} } });
    expect(r.status).toBe(400);
    expect(r.body.error).toEqual({
      code: 'INTEGRATIONS_NOT_CONNECTED',
      message: 'This end user has not connected their gmail account.',
      remediation:
        "Call integrations_connect (POST /v1/{app_id}/integrations/connect) with { toolkit: 'gmail', redirectUrl } and send the user to the returned authUrl; execute again once they are back.",
      documentation_url: p.docsUrl('integrations'),
    });
  });
});

describe('vendor user ids are namespaced per app', () => {
  it('the same user id in another app is another vendor user, with no access to the first app\'s connection', async () => {
    const sameId = users.alice!.id;
    const before = await p.api('POST', at(appB, '/execute'), { key: keyB, body: { toolName: 'GMAIL_SEND_EMAIL', params: {}, userId: sameId } });
    expect(before.status).toBe(400);
    expect(before.body.error.code).toBe('INTEGRATIONS_NOT_CONNECTED');
    await connectAndFollow(appB, keyB, { toolkit: 'gmail', redirectUrl: `${APP_SITE}/b`, userId: sameId });
    const vendorUsers = fake.requestsTo('/api/v3/connected_accounts/link').map((r) => r.body.user_id);
    expect(vendorUsers).toContain(`${appA}:${sameId}`);
    expect(vendorUsers).toContain(`${appB}:${sameId}`);
    const run = await p.api('POST', at(appB, '/execute'), { key: keyB, body: { toolName: 'GMAIL_FETCH_EMAILS', params: {}, userId: sameId } });
    expect(run.body.data.user_id).toBe(`${appB}:${sameId}`);
    // App B's key reaches nothing of app A, and an end user of A nothing of B.
    expect((await p.api('GET', at(appA, '/connections'), { key: keyB })).status).toBe(403);
    expect((await p.api('POST', at(appB, '/execute'), { key: users.alice!.token, body: { toolName: 'GMAIL_FETCH_EMAILS', params: {} } })).status).toBe(403);
  });
});

describe('the execution log', () => {
  it('records every execution, newest first, for the app\'s keys only', async () => {
    const r = await p.api('GET', at(appA, `/executions?userId=${users.alice!.id}&limit=7`), { key: keyA });
    expect(r.status).toBe(200);
    const rows = r.body.executions as Array<Record<string, unknown>>;
    expect(rows.map((e) => [e.toolName, e.successful, typeof e.error === 'string' ? (e.error as string).split(':')[0] : null])).toEqual([
      ['NOPE_NOTHING', false, 'RESOURCE_NOT_FOUND'],
      ['SLACK_SEND_MESSAGE', false, 'INTEGRATIONS_TOOLKIT_NOT_ENABLED'],
      ['GMAIL_SEND_EMAIL', false, 'INTEGRATIONS_EXECUTION_FAILED'],
      ['GMAIL_SEND_EMAIL', false, 'INTEGRATIONS_EXECUTION_FAILED'],
      ['GMAIL_SEND_EMAIL', false, 'INTEGRATIONS_EXECUTION_FAILED'],
      ['GMAIL_SEND_EMAIL', true, null],
    ]);
    expect(rows[5]).toEqual({ id: expect.stringMatching(/^\d+$/), userId: users.alice!.id, toolName: 'GMAIL_SEND_EMAIL', toolkit: 'gmail', successful: true, durationMs: expect.any(Number), error: null, createdAt: expect.any(String) });
    const page = await p.api('GET', at(appA, `/executions?limit=2&before=${rows[1]!.id}`), { key: keyA });
    expect(page.body.executions.map((e: { id: string }) => e.id)).toEqual([rows[2]!.id, rows[3]!.id]);
    expect((await p.api('GET', at(appA, '/executions'), { key: users.alice!.token })).status).toBe(403);
  });

  it('disconnecting revokes the account at the vendor', async () => {
    const vendorAccount = fake.requestsTo('/api/v3/tools/execute/GMAIL_SEND_EMAIL').at(-1)!.body.connected_account_id as string;
    const r = await p.api('DELETE', at(appA, `/connections/${aliceConnection}`), { key: users.alice!.token });
    expect(r.status).toBe(204);
    expect(fake.accounts.get(vendorAccount)!.deleted).toBe(true);
    expect((await p.api('GET', at(appA, '/connections'), { key: users.alice!.token })).body).toEqual({ connections: [] });
  });
});

describe('deleting an app', () => {
  it('revokes its users\' accounts at the vendor, then forgets them', async () => {
    const { appId, key } = await createApp(p, 'Integrations C');
    expect((await p.api('POST', at(appId, '/configure'), { key, body: { toolkit: 'gmail', displayName: 'Gmail', redirectOrigins: [APP_SITE] } })).status).toBe(200);
    await connectAndFollow(appId, key, { toolkit: 'gmail', redirectUrl: `${APP_SITE}/`, userId: 'leaving' });
    const [row] = await p.sql('select vendor_account_id from integration_connections where app_id = $1', [appId]);
    expect((await p.api('DELETE', `/apps/${appId}`)).status).toBe(200);
    await waitFor(async () => (fake.accounts.get(row.vendor_account_id)!.deleted ? true : undefined));
    await waitFor(async () => ((await p.sql('select 1 from integration_connections where app_id = $1', [appId])).length === 0 ? true : undefined));
  });
});

describe('retention', () => {
  it('the daily prune drops connect requests a day past their expiry and executions older than 90 days', async () => {
    await p.sql(`insert into integration_executions (app_id, user_id, tool, success, duration_ms, created_at) values ($1, 'old', 'X', true, 1, now() - interval '91 days')`, [appA]);
    await p.sql(
      `insert into integration_connection_requests (id, state_hash, app_id, user_id, toolkit, redirect_url, vendor_account_id, expires_at)
       values (gen_random_uuid(), 'old-state', $1, 'old', 'gmail', 'https://x.example/', 'ca_old', now() - interval '2 days')`,
      [appA],
    );
    const kept = async () => (await p.sql(`select (select count(*) from integration_executions where user_id <> 'old') + (select count(*) from integration_connection_requests where user_id <> 'old') as n`))[0].n;
    const before = await kept();
    await p.sql(PRUNE_INTEGRATIONS_SQL);
    expect(await p.sql(`select 1 from integration_executions where user_id = 'old' union all select 1 from integration_connection_requests where user_id = 'old'`)).toEqual([]);
    expect(await kept()).toBe(before);
  });
});

describe('without a vendor key', () => {
  let bare: TestPlatform;
  let appId: string;
  let key: string;

  beforeAll(async () => {
    bare = await startTestPlatform();
    ({ appId, key } = await createApp(bare, 'No Vendor'));
  });
  afterAll(async () => bare?.close());

  it('every integrations route answers 400 INTEGRATIONS_NOT_CONFIGURED in the standard envelope', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    const routes: Array<[string, string, unknown?]> = [
      ['GET', '/available'],
      ['GET', '/available?search=mail'],
      ['GET', '/config'],
      ['POST', '/configure', { toolkit: 'gmail', displayName: 'Gmail' }],
      ['DELETE', '/configure/gmail'],
      ['POST', '/connect', { toolkit: 'gmail', redirectUrl: 'https://x.example/', userId: 'u1' }],
      ['GET', '/callback?state=abc'],
      ['GET', '/connections'],
      ['DELETE', `/connections/${id}`],
      ['GET', '/tools'],
      ['POST', '/execute', { toolName: 'GMAIL_SEND_EMAIL', params: {}, userId: 'u1' }],
      ['GET', '/executions'],
    ];
    for (const [method, path, body] of routes) {
      const r = await bare.api(method, `/v1/${appId}/integrations${path}`, { key: path.startsWith('/callback') ? null : key, body });
      expect(r.status, `${method} ${path}`).toBe(400);
      expect(r.body, `${method} ${path}`).toEqual({
        error: {
          code: 'INTEGRATIONS_NOT_CONFIGURED',
          message: 'Third-party integrations are not configured on this platform.',
          remediation: "The operator sets SVC_INTEGRATIONS_API_KEY (and SVC_INTEGRATIONS_BASE_URL for a vendor other than Composio's cloud).",
          documentation_url: bare.docsUrl('integrations'),
        },
      });
    }
  });
});
