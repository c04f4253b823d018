// Tenant content against a signed-in person, in Chromium: a tenant's function and site try what a page on the
// platform's origin could do with the victim's session (mint an owner key, approve the victim's pending proposal,
// replace the session cookie, register a service worker over the console, read the cookie from the request), on the
// platform's paths (/v1/{app_id}/fn/..., /sites/{app_id}/: sandboxed to an opaque origin) and on the app's own host
// ({subdomain}.localhost:<port>: another origin and another site, which never receives the platform's cookie).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { callFrom, startConsole, type ConsoleHarness } from '../helpers/console.ts';
import { request } from './e2e-helpers.ts';

/**
 * What a page of the tenant tries, reported as JSON in #out (a request's status, or 'failed' when the browser keeps
 * its answer from the page); the platform's origin and the victim's pending action come from the page's query string.
 */
const ATTACK_SCRIPT = `
(async () => {
  const out = {};
  const post = async (path, body) => {
    try {
      const r = await fetch(path, { method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return r.status;
    } catch (e) {
      return 'failed';
    }
  };
  const query = new URLSearchParams(location.search);
  const platform = query.get('platform');
  out.mint = await post(platform + '/dashboard/keys', { name: 'stolen', role: 'owner' });
  out.approve = await post(platform + '/v1/me/substrate/actions/' + query.get('action') + '/approve', {});
  try {
    await navigator.serviceWorker.register('sw.js', { scope: '/' });
    out.sw = 'registered';
  } catch (e) {
    out.sw = 'refused';
  }
  try {
    document.cookie = 'svc_session=attacker; path=/; domain=localhost';
    document.cookie = 'svc_session=attacker; path=/';
  } catch (e) {}
  document.getElementById('out').textContent = JSON.stringify(out);
})();
`;

const page = (extra = '') => `<!doctype html><html><head><title>tenant</title></head><body>${extra}<pre id="out"></pre><script>${ATTACK_SCRIPT}</script></body></html>`;

/** The function: the page (with the Cookie header it received), a service worker script, both asking for scope / and setting the platform's cookie. */
const FUNCTION_CODE = `
const PAGE = ${JSON.stringify(page('<pre id="seen">SEEN</pre>'))};
export default async (req: Request) => {
  const headers = new Headers({ 'service-worker-allowed': '/', 'clear-site-data': '"cookies"' });
  headers.append('set-cookie', 'svc_session=attacker; Path=/; SameSite=Lax');
  headers.append('set-cookie', '__Host-svc_session=attacker; Path=/; Secure');
  headers.append('set-cookie', 'tenant_pref=1; Path=/');
  if (new URL(req.url).pathname.endsWith('/sw.js')) {
    headers.set('content-type', 'text/javascript');
    return new Response("self.addEventListener('fetch', () => {});", { headers });
  }
  headers.set('content-type', 'text/html; charset=utf-8');
  const seen = (req.headers.get('cookie') ?? '').replace(/[<&]/g, '');
  return new Response(PAGE.replace('SEEN', seen), { headers });
};
`;

let h: ConsoleHarness;
let appId: string;
let serviceKey: string;
let appHost: string;
let platform: string;
let sessionToken: string;

async function pendingProposal(): Promise<string> {
  const proposed = await callFrom(h.owner, 'POST', '/v1/me/substrate/actions/propose', { capability: 'record_principle', payload: { title: 'Refunds need two people', applies_to: {}, constraint_spec: { logic: { '==': [1, 1] } } } });
  expect(proposed.status, JSON.stringify(proposed.json)).toBe(200);
  expect(proposed.json.requires_approval).toBe(true);
  return proposed.json.action_id as string;
}

/** Opens `url` in the owner's browser context and reads what the tenant's script reported. */
async function runAttack(url: string, actionId: string): Promise<{ out: Record<string, unknown>; seen: string | null; tab: Page }> {
  const tab = await h.owner.context().newPage();
  await tab.goto(`${url}?action=${actionId}&platform=${encodeURIComponent(platform)}`);
  await tab.locator('#out:not(:empty)').waitFor();
  const out = JSON.parse((await tab.locator('#out').textContent())!) as Record<string, unknown>;
  const seen = (await tab.locator('#seen').count()) ? await tab.locator('#seen').textContent() : null;
  return { out, seen, tab };
}

/** The victim is untouched: no key minted, the proposal still waits, the same session, no service worker over the console. */
async function expectVictimUntouched(actionId: string): Promise<void> {
  const keys = await callFrom(h.owner, 'GET', '/dashboard/keys');
  expect(keys.status).toBe(200);
  expect(keys.json.keys.map((k: { name: string }) => k.name)).not.toContain('stolen');
  const action = await callFrom(h.owner, 'GET', `/v1/me/substrate/actions/${actionId}`);
  expect(action.json.status).toBe('proposed');
  const cookies = await h.owner.context().cookies();
  // Cookies the platform's host receives (an app's host-only ones are its own): the victim's session alone.
  const platformCookies = cookies.filter((c) => c.name.endsWith('svc_session') && c.domain.replace(/^\./, '') === 'localhost');
  expect(platformCookies).toEqual([expect.objectContaining({ domain: 'localhost', value: sessionToken })]);
  expect(h.owner.context().serviceWorkers().filter((w) => new URL(w.url()).host === `localhost:${h.server.port}`)).toEqual([]);
  await h.owner.goto(h.consoleUrl);
  expect(await h.owner.evaluate(() => navigator.serviceWorker.getRegistrations().then((r) => r.map((x) => x.scope)))).toEqual([]);
  // The session still works from the console.
  expect((await callFrom(h.owner, 'GET', '/dashboard/session')).status).toBe(200);
}

beforeAll(async () => {
  h = await startConsole();
  platform = `http://localhost:${h.server.port}`;
  ({ appId, serviceKey } = await h.createApp('Tenant origins'));
  const cookies = await h.owner.context().cookies();
  sessionToken = cookies.find((c) => c.name === 'svc_session')!.value;
  const deployed = await request(h.server.url, `/v1/${appId}/functions`, { method: 'POST', key: serviceKey, body: { name: 'evil', code: FUNCTION_CODE } });
  expect(deployed.status, deployed.text).toBe(201);
  const site = await request(h.server.url, `/v1/${appId}/frontend/deployments/files`, {
    method: 'POST',
    key: serviceKey,
    body: { framework: 'static', files: { 'index.html': page(), 'sw.js': "self.addEventListener('fetch', () => {});" } },
  });
  expect(site.status, site.text).toBe(202);
  for (;;) {
    const d = (await request(h.server.url, `/v1/${appId}/frontend/deployments/${site.json.id}`, { key: serviceKey })).json;
    if (d.status === 'READY') {
      appHost = d.url.replace(/\/$/, '');
      break;
    }
    expect(d.status).not.toBe('ERROR');
    await new Promise((r) => setTimeout(r, 100));
  }
}, 120_000);

afterAll(async () => {
  await h?.close();
});

describe('tenant content cannot use a signed-in person’s session', () => {
  it("serves the app's site on its own host, {subdomain}.localhost on the platform's port", () => {
    expect(appHost).toMatch(new RegExp(`^http://[a-z0-9-]+\\.localhost:${h.server.port}$`));
  });

  it('a function on the platform’s path: sandboxed, no cookie in, none out, no service worker', async () => {
    const actionId = await pendingProposal();
    const { out, seen, tab } = await runAttack(`${platform}/v1/${appId}/fn/evil/`, actionId);
    // An opaque origin: its requests carry Origin: null and no cookie, their answers are not its to read, and it has
    // no service workers.
    expect(out).toEqual({ mint: 'failed', approve: 'failed', sw: 'refused' });
    expect(seen).toBe('');
    await tab.close();
    await expectVictimUntouched(actionId);
    // The tenant's own cookie is its own business.
    expect((await h.owner.context().cookies()).some((c) => c.name === 'tenant_pref')).toBe(true);
  });

  it('a site on the platform’s path: sandboxed the same way', async () => {
    const actionId = await pendingProposal();
    const { out, tab } = await runAttack(`${platform}/sites/${appId}/`, actionId);
    expect(out).toEqual({ mint: 'failed', approve: 'failed', sw: 'refused' });
    await tab.close();
    await expectVictimUntouched(actionId);
  });

  it("the site and the function on the app's own host: another site, which the platform's cookie never reaches", async () => {
    const actionId = await pendingProposal();
    const site = await runAttack(`${appHost}/`, actionId);
    // Cross-site: no cookie goes with the requests; the service worker is the app's own, scoped to its host.
    expect(site.out).toEqual({ mint: 'failed', approve: 'failed', sw: 'registered' });
    await site.tab.close();
    const fn = await runAttack(`${appHost}/fn/evil/`, actionId);
    expect(fn.out).toMatchObject({ mint: 'failed', approve: 'failed' });
    expect(fn.seen).not.toContain(sessionToken);
    await fn.tab.close();
    await expectVictimUntouched(actionId);
  });

  it('tenant responses never carry the platform’s cookie, a wider service-worker scope or Clear-Site-Data; paths are sandboxed', async () => {
    for (const [base, path, sandboxed] of [
      [h.server.url, `/v1/${appId}/fn/evil/`, true],
      [appHost, '/fn/evil/', false],
    ] as const) {
      const res = await request(base, path, { headers: { cookie: `svc_session=${sessionToken}; other=1` } });
      expect(res.status).toBe(200);
      expect(res.headers['set-cookie']).toEqual(['tenant_pref=1; Path=/']);
      expect(res.headers['service-worker-allowed']).toBeUndefined();
      expect(res.headers['clear-site-data']).toBeUndefined();
      expect(res.headers['content-security-policy']).toBe(sandboxed ? 'sandbox allow-scripts allow-forms allow-popups allow-popups-to-escape-sandbox allow-modals allow-downloads' : undefined);
      // The function saw the other cookie, never the session.
      expect(res.text).toContain('<pre id="seen">other=1</pre>');
    }
    const sitePath = await request(h.server.url, `/sites/${appId}/`);
    expect(sitePath.headers['content-security-policy']).toContain('sandbox allow-scripts');
    expect((await request(appHost, '/')).headers['content-security-policy']).toBeUndefined();
  });

  it("the platform's pages are not served on an app's host: those paths are the app's own", async () => {
    for (const path of ['/console/', '/approve/act_x', '/approve.js', '/oauth/signin.js', '/authorize', '/.well-known/oauth-authorization-server']) {
      const res = await request(appHost, path);
      // The app's static site has no such file.
      expect([res.status, res.json?.error?.message], path).toEqual([404, `File '${path.replace(/\/$/, '')}' not found.`]);
    }
    expect((await request(platform, '/console/')).status).toBe(200);
    expect((await request(platform, '/approve/act_x')).status).toBe(200);
  });
});
