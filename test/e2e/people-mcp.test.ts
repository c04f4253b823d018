// People search end to end (issue 15's done-when, people half): the server as `npm start` runs it with the fake
// Proxycurl-style vendor in its primary slot; an agent over MCP (the official SDK client, the owner's platform key)
// creates an app, searches people, enriches a profile twice (the second time from the cache, free), queues a
// work-email lookup that the vendor resolves by calling the server's callback URL back, and polls it resolved.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emailOf, profileUrl, startFakeProxycurl, type FakeProxycurl } from '../fakes/people-proxycurl.ts';
import { databaseUrl } from '../helpers/db.ts';
import { spawnServer, type SpawnedServer } from '../helpers/server.ts';
import { callTool, connectMcp, request, resultJson, type McpConnection } from './e2e-helpers.ts';

let vendor: FakeProxycurl;
let server: SpawnedServer;
let mcp: McpConnection;
let appId: string;
/** The server's control database, read as an operator would. */
let control: pg.Pool;

beforeAll(async () => {
  vendor = await startFakeProxycurl();
  server = await spawnServer({ SVC_PEOPLE_PRIMARY_URL: vendor.url, SVC_PEOPLE_PRIMARY_KEY: 'pc-test-key' });
  control = new pg.Pool({ connectionString: databaseUrl(server.controlDb), max: 1 });
  // The pro plan's $10 of credit: the free plan's $0.10 covers a search and a profile, not an e-mail lookup too.
  await control.query(`update accounts set plan = 'pro'`);
  mcp = await connectMcp(server.url, server.platformKey);
});

afterAll(async () => {
  await mcp?.close().catch(() => {});
  await control?.end();
  await server?.close();
  await vendor?.close();
});

describe('an agent uses people search over MCP', () => {
  it('creates an app and finds people', async () => {
    const created = await callTool(mcp.client, 'apps_create', { name: 'Prospecting' });
    expect(created.isError).toBeFalsy();
    appId = resultJson(created).app_id;
    const search = await callTool(mcp.client, 'people_search_person', { app_id: appId, currentRoleTitle: 'CTO', country: 'US', pageSize: 3 });
    expect(search.isError).toBeFalsy();
    const found = resultJson(search);
    expect(found.provider).toBe('primary');
    expect(found.usage).toEqual({ creditsConsumed: 7, usdCharged: 0.0084 });
    expect(found.data.results.map((r: { socialProfileUrl: string }) => r.socialProfileUrl)).toEqual([1, 3, 5].map(profileUrl));
    expect(found.data.nextPage).toBe(`http://localhost:${server.port}/v1/${appId}/people/search/person?next_token=3`);
    expect(resultJson(search)).toEqual(found);
  });

  it('enriches a profile twice: the second answer comes from the cache and is free', async () => {
    const first = resultJson(await callTool(mcp.client, 'people_profile', { app_id: appId, socialProfileUrl: `${profileUrl(3)}/` }));
    expect(first).toMatchObject({ status: 'ok', usage: { creditsConsumed: 2, usdCharged: 0.04, cached: false }, provider: 'primary' });
    expect(first.data).toMatchObject({ publicIdentifier: 'person-3', fullName: 'Person Number3', occupation: 'CTO at Company 3' });
    const second = resultJson(await callTool(mcp.client, 'people_profile', { app_id: appId, socialProfileUrl: profileUrl(3) }));
    expect(second).toEqual({ ...first, usage: { creditsConsumed: 0, usdCharged: 0, cached: true } });
    expect(vendor.requests.filter((r) => r.path === '/api/v2/linkedin')).toHaveLength(1);
  });

  it('queues a work-email lookup that the vendor resolves through the callback URL', async () => {
    const queued = resultJson(await callTool(mcp.client, 'people_email_queue', { app_id: appId, socialProfileUrl: profileUrl(5) }));
    expect(queued).toMatchObject({ status: 'pending', usage: { creditsConsumed: 3, usdCharged: 0.06 }, provider: 'primary' });
    const pending = resultJson(await callTool(mcp.client, 'people_email_lookup_get', { app_id: appId, lookup_id: queued.lookupId }));
    expect(pending).toEqual({ status: 'pending', email: null, credits_consumed: 3, provider: 'primary' });

    // The vendor calls the URL it was given, as it would over the internet.
    expect(await vendor.deliverEmail(0)).toEqual({ status: 200, body: { received: true, status: 'resolved' } });
    const resolved = resultJson(await callTool(mcp.client, 'people_email_lookup_get', { app_id: appId, lookup_id: queued.lookupId }));
    expect(resolved).toEqual({ status: 'resolved', email: emailOf(5), credits_consumed: 4, provider: 'primary' });
  });

  it('the same lookup over REST carries the headers; the usage rows and charges add up', async () => {
    const lookupId = (await control.query('select id::text from people_email_lookups')).rows[0].id;
    const res = await request(server.url, `/v1/${appId}/people/email-lookup/${lookupId}`, { key: server.platformKey });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: 'resolved', email: emailOf(5), credits_consumed: 4 });
    expect([res.headers['x-people-provider'], res.headers['x-people-credits-consumed'], res.headers['x-people-usd-charged']]).toEqual(['primary', '0', '0.000000']);
    const rows = await control.query('select action, credits_consumed from people_usage_logs order by id');
    expect(rows.rows.map((r) => [r.action, r.credits_consumed])).toEqual([
      ['search_person', 7],
      ['profile', 2],
      ['profile_cache_hit', 0],
      ['profile_email_queue', 3],
      ['profile_email_resolved', 1],
    ]);
    const charged = await control.query(`select coalesce(sum(-amount_nanos), 0)::text as nanos from credit_ledger where source = 'people'`);
    expect(charged.rows[0].nanos).toBe(String(8_400_000 + 40_000_000 + 60_000_000 + 20_000_000));
  });

  it('a refusal is a tool error in the standard envelope', async () => {
    const bad = await callTool(mcp.client, 'people_profile', { app_id: appId, socialProfileUrl: 'not a url' });
    expect(bad.isError).toBe(true);
    expect(resultJson(bad)).toMatchObject({ status: 400, error: { code: 'VALIDATION_FAILED' } });
  });
});
