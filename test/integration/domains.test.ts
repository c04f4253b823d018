// Custom domains (pro and enterprise): an app adds a domain, proves control with a DNS TXT record that a real DNS
// server on loopback serves (SVC_DNS_SERVERS), and the domain then serves the app's live site and short paths, with
// no subdomain routing (SVC_BASE_DOMAIN unset).
import dgram from 'node:dgram';
import type { AddressInfo } from 'node:net';
import dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { rawRequest, waitFor } from './frontend-helpers.ts';

/** A DNS server answering TXT queries for the names in `records` (NXDOMAIN for the others), over UDP on loopback. */
class FakeDns {
  readonly records = new Map<string, string[]>();
  readonly #socket = dgram.createSocket('udp4');

  async start(): Promise<string> {
    this.#socket.on('message', (msg, from) => {
      const query = dnsPacket.decode(msg);
      const question = query.questions?.[0];
      if (!question) return;
      const values = question.type === 'TXT' ? this.records.get(question.name.toLowerCase()) : undefined;
      const reply = dnsPacket.encode({
        id: query.id,
        type: 'response',
        // NXDOMAIN (rcode 3) for names without records.
        flags: dnsPacket.AUTHORITATIVE_ANSWER | dnsPacket.RECURSION_DESIRED | (values ? 0 : 3),
        questions: [question],
        answers: (values ?? []).map((value) => ({ type: 'TXT' as const, name: question.name, class: 'IN' as const, ttl: 0, data: value })),
      });
      this.#socket.send(reply, from.port, from.address);
    });
    await new Promise<void>((resolve) => this.#socket.bind(0, '127.0.0.1', resolve));
    return `127.0.0.1:${(this.#socket.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.#socket.close(() => resolve()));
  }
}

const BASE_URL = 'http://api.platform.test';
const DOMAIN = 'www.example.com';

let p: TestPlatform;
let dns: FakeDns;
let appId: string;
let otherAppId: string;

beforeAll(async () => {
  dns = new FakeDns();
  const server = await dns.start();
  p = await startTestPlatform({ SVC_DNS_SERVERS: server, SVC_BASE_URL: BASE_URL });
  appId = (await p.api('POST', '/init', { body: { name: 'Custom Site' } })).body.app_id;
  otherAppId = (await p.api('POST', '/init', { body: { name: 'Other Site' } })).body.app_id;
});
afterAll(async () => {
  await p?.close();
  await dns?.stop().catch(() => {});
});

const setPlan = (plan: string) => p.sql(`update accounts set plan = $1`, [plan]);
const add = (app: string, domain: string) => p.api('POST', `/v1/${app}/domains`, { body: { domain } });
const verify = (app: string, domain: string) => p.api('POST', `/v1/${app}/domains/${encodeURIComponent(domain)}/verify`);
const onHost = (host: string, path: string, opts: { method?: string; headers?: Record<string, string>; body?: string } = {}) =>
  rawRequest(p.url, path, {
    method: opts.method ?? 'GET',
    headers: { host, ...opts.headers },
    ...(opts.body === undefined ? {} : { body: Buffer.from(opts.body) }),
  });

/** The error envelope as a whole, its documentation_url (the domains section of the guide) checked apart. */
function envelopeOf(body: { error: Record<string, unknown> }) {
  const { documentation_url: link, ...error } = body.error;
  expect(link).toBe(`${BASE_URL}/llms.txt?area=domains`);
  return { error };
}

describe('custom domains', () => {
  it('the free plan is refused with PLAN_UPGRADE_REQUIRED, at add and at verify', async () => {
    const res = await add(appId, DOMAIN);
    expect(res.status).toBe(403);
    expect(envelopeOf(res.body)).toEqual({
      error: {
        code: 'PLAN_UPGRADE_REQUIRED',
        message: 'Custom domains are a feature of the pro and enterprise plans; this account is on free.',
        remediation: 'An owner of the account upgrades with billing_checkout { "planId": "pro" } (POST /dashboard/billing/checkout); then add the domain again.',
        details: { feature: 'custom_domains', plan: 'free', required_plan: 'pro' },
      },
    });
    expect((await verify(appId, DOMAIN)).body.error.code).toBe('PLAN_UPGRADE_REQUIRED');
    expect((await p.sql(`select count(*)::int as n from app_domains`))[0].n).toBe(0);
  });

  it('a pro account adds a domain: 201 with the TXT record to publish; adding it again is 409 pointing to domains_verify', async () => {
    await setPlan('pro');
    const res = await add(appId, 'WWW.Example.com');
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      domain: DOMAIN,
      app_id: appId,
      status: 'pending',
      verification: { type: 'TXT', name: `_svc-challenge.${DOMAIN}`, value: expect.stringMatching(/^svc-verification=[0-9a-f]{32}$/) },
      url: `https://${DOMAIN}/`,
      verified_at: null,
      created_at: expect.any(String),
    });
    const again = await add(appId, DOMAIN);
    expect(again.status).toBe(409);
    expect(envelopeOf(again.body)).toEqual({
      error: {
        code: 'CONFLICT',
        message: `The domain '${DOMAIN}' is already added to this app.`,
        remediation: 'Publish its TXT record (domains_list shows it) and call domains_verify { app_id, domain }; to start over, domains_remove it first.',
      },
    });
    const list = await p.api('GET', `/v1/${appId}/domains`);
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ domains: [res.body] });
  });

  it('verify before the TXT record exists: 409 DOMAIN_NOT_VERIFIED with the record and what DNS has', async () => {
    const [{ token }] = await p.sql(`select token from app_domains where app_id = $1 and domain = $2`, [appId, DOMAIN]);
    const record = { type: 'TXT', name: `_svc-challenge.${DOMAIN}`, value: `svc-verification=${token}` };
    const none = await verify(appId, DOMAIN);
    expect(none.status).toBe(409);
    expect(envelopeOf(none.body)).toEqual({
      error: {
        code: 'DOMAIN_NOT_VERIFIED',
        message: `DNS has no TXT record _svc-challenge.${DOMAIN} holding svc-verification=${token}.`,
        remediation: 'Add the TXT record (details.record) at the DNS provider of the domain; DNS changes can take minutes to appear; then call domains_verify again.',
        details: { record, found: [] },
      },
    });
    // A wrong value is reported as found (at most 5 values, each cut to 100 characters).
    dns.records.set(`_svc-challenge.${DOMAIN}`, ['svc-verification=stale', 'x'.repeat(150), ...['a', 'b', 'c', 'd'].map((v) => `v=${v}`)]);
    const wrong = await verify(appId, DOMAIN);
    expect(wrong.status).toBe(409);
    expect(wrong.body.error.details).toEqual({ record, found: ['svc-verification=stale', `${'x'.repeat(100)}…`, 'v=a', 'v=b', 'v=c'] });
    // Not verified: the host serves nothing of the app.
    expect((await onHost(DOMAIN, '/')).status).toBe(404);
  });

  it('with the TXT record published, verify succeeds and the domain serves the live site and the short paths', async () => {
    const [{ token }] = await p.sql(`select token from app_domains where app_id = $1 and domain = $2`, [appId, DOMAIN]);
    dns.records.set(`_svc-challenge.${DOMAIN}`, ['unrelated', `svc-verification=${token}`]);
    const res = await verify(appId, DOMAIN);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ domain: DOMAIN, status: 'verified', verified_at: expect.any(String) });
    // Verifying again changes nothing (and asks DNS nothing).
    dns.records.delete(`_svc-challenge.${DOMAIN}`);
    expect((await verify(appId, DOMAIN)).body).toEqual(res.body);

    const deployed = await p.api('POST', `/v1/${appId}/frontend/deployments/files`, {
      body: { framework: 'static', files: { 'index.html': '<p>custom domain site</p>' } },
    });
    expect(deployed.status).toBe(202);
    await waitFor(async () => {
      const d = (await p.api('GET', `/v1/${appId}/frontend/deployments/${deployed.body.id}`)).body;
      if (d.status === 'ERROR') throw new Error(d.error);
      return d.status === 'READY' ? d : undefined;
    });

    for (const host of [DOMAIN, 'WWW.EXAMPLE.COM:8080', `${DOMAIN}.`]) {
      const page = await onHost(host, '/');
      expect(page.status, host).toBe(200);
      expect(page.text).toBe('<p>custom domain site</p>');
    }

    // The app's short paths: end-user sign-up and the data API, as on its subdomain.
    const signup = await onHost(DOMAIN, '/auth/signup', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'ada@example.com', password: 'correct horse battery' }),
    });
    expect(signup.status).toBe(201);
    expect(JSON.parse(signup.text)).toMatchObject({ access_token: expect.any(String), user: { email: 'ada@example.com' } });
    const schema = {
      tables: { notes: { columns: { id: { type: 'uuid', primary: true, default: 'gen_random_uuid()' }, title: { type: 'text' } } } },
    };
    expect((await p.api('POST', `/v1/${appId}/schema/apply`, { body: { schema } })).status).toBe(200);
    expect((await p.api('POST', `/v1/${appId}/notes`, { body: { title: 'hello' } })).status).toBe(201);
    const rows = await onHost(DOMAIN, '/data/notes?select=title', { headers: { authorization: `Bearer ${p.platformKey}` } });
    expect(rows.status).toBe(200);
    expect(JSON.parse(rows.text)).toEqual([{ title: 'hello' }]);
    // Public functions too (a raw route of their own, before the generated ones).
    const code = 'export default async (req: Request) => Response.json({ path: new URL(req.url).pathname });';
    expect((await p.api('POST', `/v1/${appId}/functions`, { body: { name: 'hello', code } })).status).toBe(201);
    const fn = await onHost(DOMAIN, '/fn/hello/there');
    expect(fn.status).toBe(200);
    expect(JSON.parse(fn.text)).toEqual({ path: expect.stringContaining('/there') });
  });

  it('another app cannot add or verify a domain that one app verified (409); several may hold one pending', async () => {
    const taken = await add(otherAppId, DOMAIN);
    expect(taken.status).toBe(409);
    expect(envelopeOf(taken.body)).toEqual({
      error: {
        code: 'CONFLICT',
        message: `The domain '${DOMAIN}' is verified by another app.`,
        remediation: 'A domain serves one app: remove it from the other app first (domains_remove there), or use another domain.',
      },
    });
    // Both apps claim shop.example.com; the first to verify holds it, the other's verify is then refused.
    const shop = 'shop.example.com';
    const mine = await add(appId, shop);
    const theirs = await add(otherAppId, shop);
    expect([mine.status, theirs.status]).toEqual([201, 201]);
    expect(mine.body.verification.value).not.toBe(theirs.body.verification.value);
    dns.records.set(`_svc-challenge.${shop}`, [mine.body.verification.value, theirs.body.verification.value]);
    expect((await verify(appId, shop)).body.status).toBe('verified');
    const refused = await verify(otherAppId, shop);
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toBe(`The domain '${shop}' is verified by another app.`);
    expect((await p.api('DELETE', `/v1/${appId}/domains/${shop}`)).status).toBe(200);
  });

  it('a bad domain is 400 VALIDATION_FAILED naming the field', async () => {
    const long = `${Array.from({ length: 4 }, () => 'a'.repeat(63)).join('.')}.com`;
    const cases: [string, string][] = [
      ['192.168.1.10', 'an IP address cannot be a custom domain; use a host name such as www.example.com'],
      ['[::1]', 'an IP address cannot be a custom domain; use a host name such as www.example.com'],
      ['api.platform.test', "the platform's own host cannot be a custom domain"],
      [long, 'a domain is 1-253 characters'],
      ['bad_label.example.com', "'bad_label' is not a DNS label: 1-63 of a-z, 0-9 and '-', not starting or ending with '-'"],
      ['-edge.example.com', "'-edge' is not a DNS label: 1-63 of a-z, 0-9 and '-', not starting or ending with '-'"],
      ['example', 'a domain has two or more labels, such as example.com or www.example.com'],
      ['a.123', 'the last label of a domain is not all digits (that is an IP address)'],
    ];
    for (const [domain, problem] of cases) {
      const res = await add(appId, domain);
      expect(res.status, domain).toBe(400);
      expect(envelopeOf(res.body), domain).toEqual({
        error: {
          code: 'VALIDATION_FAILED',
          message: `Invalid 'domain': ${problem}.`,
          remediation: 'Fix the named field and send the request again.',
          details: [{ path: 'domain', message: problem }],
        },
      });
    }
  });

  it('the Host lookup: IP addresses and the platform host cost no query; an unknown host is cached', async () => {
    const { domains } = p.services;
    expect(domains.appForHost('127.0.0.1:8080')).toBeNull();
    expect(domains.appForHost('[::1]:8080')).toBeNull();
    expect(domains.appForHost('api.platform.test')).toBeNull();
    expect(domains.appForHost(undefined)).toBeNull();
    const first = domains.appForHost('unknown.example.org');
    expect(first).toBeInstanceOf(Promise);
    expect(await first).toBeNull();
    expect(domains.appForHost('unknown.example.org')).toBeNull();
    expect(await domains.appForHost(DOMAIN)).toBe(appId);
  });

  it('no answer from DNS is 503 SERVICE_UNAVAILABLE with Retry-After', async () => {
    const pending = await add(appId, 'later.example.com');
    expect(pending.status).toBe(201);
    await dns.stop();
    const res = await verify(appId, 'later.example.com');
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('30');
    expect(envelopeOf(res.body)).toEqual({
      error: {
        code: 'SERVICE_UNAVAILABLE',
        message: expect.stringMatching(/^The DNS lookup of _svc-challenge\.later\.example\.com got no answer \(E[A-Z]+\)\.$/),
        remediation: "Retry in 30 s; if it persists, the operator should check the platform's DNS servers (SVC_DNS_SERVERS).",
        details: { retry_after_seconds: 30 },
      },
    });
  });

  it('remove: the host no longer serves the app; an unknown domain is 404', async () => {
    const res = await p.api('DELETE', `/v1/${appId}/domains/${DOMAIN}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ deleted: true, domain: DOMAIN });
    const page = await onHost(DOMAIN, '/');
    expect(page.status).toBe(404);
    expect(JSON.parse(page.text).error.code).toBe('ROUTE_NOT_FOUND');
    expect((await onHost(DOMAIN, '/data/notes', { headers: { authorization: `Bearer ${p.platformKey}` } })).status).toBe(404);
    expect((await onHost(DOMAIN, '/fn/hello')).status).toBe(404);
    const again = await p.api('DELETE', `/v1/${appId}/domains/${DOMAIN}`);
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('RESOURCE_NOT_FOUND');
    expect((await p.api('GET', `/v1/${appId}/domains`)).body.domains.map((d: { domain: string }) => d.domain)).toEqual(['later.example.com']);
  });

  it('back on free, verify is refused too; removing still works', async () => {
    await setPlan('free');
    const res = await verify(appId, 'later.example.com');
    expect(res.status).toBe(403);
    expect(res.body.error.details).toEqual({ feature: 'custom_domains', plan: 'free', required_plan: 'pro' });
    expect((await p.api('DELETE', `/v1/${appId}/domains/later.example.com`)).status).toBe(200);
  });
});
