// Tenant content against a signed-in person, in Chromium: a tenant's function and site try what a page on the
// platform's origin could do with the victim's session (mint an owner key, approve the victim's pending proposal,
// replace the session cookie, plant the OpenID Connect binding, register a service worker over the console, read the
// cookie from the request). By default (a localhost base URL) apps have hosts of their own, {subdomain}.localhost:<port>,
// another origin and another site, and a browser opening a tenant's page on a platform path is sent there; a platform
// without apps' hosts (here http://platform.test:<port>, no SVC_BASE_DOMAIN) serves those paths sandboxed.
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
    document.cookie = 'svc_session=attacker; path=/; domain=' + new URL(platform).hostname;
    document.cookie = 'svc_session=attacker; path=/';
  } catch (e) {}
  document.getElementById('out').textContent = JSON.stringify(out);
})();
`;

const page = (extra = '') => `<!doctype html><html><head><title>tenant</title></head><body>${extra}<pre id="out"></pre><script>${ATTACK_SCRIPT}</script></body></html>`;

/** The function: the page (with the Cookie header it received) or a service worker script, with every header a tenant should not send. */
const FUNCTION_CODE = `
const PAGE = ${JSON.stringify(page('<pre id="seen">SEEN</pre>'))};
export default async (req: Request) => {
  const headers = new Headers({ 'service-worker-allowed': '/', 'clear-site-data': '"cookies"', nel: '{"report_to":"t","max_age":31536000}', 'x-tenant': 'yes' });
  headers.append('set-cookie', 'svc_session=attacker; Path=/; SameSite=Lax');
  headers.append('set-cookie', '__Host-svc_session=attacker; Path=/; Secure');
  headers.append('set-cookie', 'svc_oidc=planted; Path=/dashboard/oidc');
  headers.append('set-cookie', '=svc_session=nameless; Path=/');
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

const SANDBOX = 'sandbox allow-scripts allow-forms allow-popups allow-popups-to-escape-sandbox allow-modals allow-downloads';

interface Rig {
  h: ConsoleHarness;
  /** The platform's origin as people open it (base_url). */
  platform: string;
  appId: string;
  /** The live site's url (the app's own host when there is one). */
  siteUrl: string;
  sessionToken: string;
}

/** A console with its owner signed in, and an app of theirs with the hostile function and site deployed. */
async function rig(host?: string): Promise<Rig> {
  const h = await startConsole({}, host);
  const platform = new URL(h.consoleUrl).origin;
  const { appId, serviceKey } = await h.createApp('Tenant origins');
  const sessionToken = (await h.owner.context().cookies()).find((c) => c.name === 'svc_session')!.value;
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
    if (d.status === 'READY') return { h, platform, appId, siteUrl: d.url, sessionToken };
    expect(d.status).not.toBe('ERROR');
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function pendingProposal(r: Rig): Promise<string> {
  const proposed = await callFrom(r.h.owner, 'POST', '/v1/me/substrate/actions/propose', { capability: 'record_principle', payload: { title: 'Refunds need two people', applies_to: {}, constraint_spec: { logic: { '==': [1, 1] } } } });
  expect(proposed.status, JSON.stringify(proposed.json)).toBe(200);
  expect(proposed.json.requires_approval).toBe(true);
  return proposed.json.action_id as string;
}

/** Opens `url` in the owner's browser context and reads what the tenant's script reported, and where it ran. */
async function runAttack(r: Rig, url: string, actionId: string): Promise<{ out: Record<string, unknown>; seen: string | null; at: string; tab: Page }> {
  const tab = await r.h.owner.context().newPage();
  await tab.goto(`${url}?action=${actionId}&platform=${encodeURIComponent(r.platform)}`);
  await tab.locator('#out:not(:empty)').waitFor();
  const out = JSON.parse((await tab.locator('#out').textContent())!) as Record<string, unknown>;
  const seen = (await tab.locator('#seen').count()) ? await tab.locator('#seen').textContent() : null;
  return { out, seen, at: new URL(tab.url()).origin, tab };
}

/** The victim is untouched: no key minted, the proposal still waits, the same session, nothing planted, no service worker over the console. */
async function expectVictimUntouched(r: Rig, actionId: string): Promise<void> {
  const { h } = r;
  const keys = await callFrom(h.owner, 'GET', '/dashboard/keys');
  expect(keys.status).toBe(200);
  expect(keys.json.keys.map((k: { name: string }) => k.name)).not.toContain('stolen');
  const action = await callFrom(h.owner, 'GET', `/v1/me/substrate/actions/${actionId}`);
  expect(action.json.status).toBe('proposed');
  // Cookies the platform's host receives (an app's host-only ones are its own): the victim's session alone.
  const platformHost = new URL(r.platform).hostname;
  const onPlatform = (await h.owner.context().cookies()).filter((c) => c.domain.replace(/^\./, '') === platformHost);
  expect(onPlatform.map((c) => [c.name, c.value])).toEqual([['svc_session', r.sessionToken]]);
  expect(h.owner.context().serviceWorkers().filter((w) => new URL(w.url()).origin === r.platform)).toEqual([]);
  await h.owner.goto(h.consoleUrl);
  // (Plain http on a name other than localhost is not a secure context: no service workers there at all.)
  expect(await h.owner.evaluate(async () => (navigator.serviceWorker ? (await navigator.serviceWorker.getRegistrations()).map((w) => w.scope) : []))).toEqual([]);
  expect((await callFrom(h.owner, 'GET', '/dashboard/session')).status).toBe(200);
}

describe('apps on hosts of their own ({subdomain}.localhost, the default for a localhost base URL)', () => {
  let r: Rig;
  let appHost: string;
  beforeAll(async () => {
    r = await rig();
    appHost = r.siteUrl.replace(/\/$/, '');
  }, 120_000);
  afterAll(async () => {
    await r?.h.close();
  });

  it("serves the app's site on its own host, on the platform's port", () => {
    expect(appHost).toMatch(new RegExp(`^http://[a-z0-9-]+\\.localhost:${r.h.server.port}$`));
  });

  it("a browser opening a function or a site on the platform's path is sent to the app's host, where the attack finds no session", async () => {
    // The function's worker (/fn/evil/sw.js) may not widen its scope to / (Service-Worker-Allowed is dropped); the
    // site's (/sw.js) may, on its own host.
    for (const [path, landing, sw] of [
      [`/v1/${r.appId}/fn/evil/`, `${appHost}/fn/evil/`, 'refused'],
      [`/sites/${r.appId}/`, `${appHost}/`, 'registered'],
    ]) {
      const actionId = await pendingProposal(r);
      const { out, seen, at, tab } = await runAttack(r, `${r.platform}${path}`, actionId);
      expect(tab.url()).toBe(`${landing}?action=${actionId}&platform=${encodeURIComponent(r.platform)}`);
      expect(at).toBe(appHost);
      // Cross-site: no cookie goes with the requests and their answers are not the page's to read.
      expect(out).toEqual({ mint: 'failed', approve: 'failed', sw });
      // The function never sees the platform's session (nor the page's own svc_session, which it may not tell apart).
      expect(seen ?? '').not.toContain('svc_session');
      await tab.close();
      await expectVictimUntouched(r, actionId);
    }
  });

  it('tenant responses never carry the platform’s cookies, a wider service-worker scope or Clear-Site-Data; on a platform path only the content’s own headers, sandboxed', async () => {
    const onPath = await request(r.h.server.url, `/v1/${r.appId}/fn/evil/`, { headers: { cookie: `svc_session=${r.sessionToken}; svc_oidc=b; other=1` } });
    expect(onPath.status).toBe(200);
    expect([onPath.headers['set-cookie'], onPath.headers['service-worker-allowed'], onPath.headers['clear-site-data'], onPath.headers.nel]).toEqual([undefined, undefined, undefined, undefined]);
    expect([onPath.headers['content-security-policy'], onPath.headers['x-tenant']]).toEqual([SANDBOX, 'yes']);
    // The function saw the other cookie, never the platform's.
    expect(onPath.text).toContain('<pre id="seen">other=1</pre>');

    const onHost = await request(appHost, '/fn/evil/', { headers: { cookie: `svc_session=${r.sessionToken}; other=1` } });
    expect(onHost.status).toBe(200);
    expect(onHost.headers['set-cookie']).toEqual(['tenant_pref=1; Path=/']);
    expect([onHost.headers['service-worker-allowed'], onHost.headers['clear-site-data'], onHost.headers['content-security-policy']]).toEqual([undefined, undefined, undefined]);
    expect(onHost.headers.nel).toBeDefined();
    expect(onHost.text).toContain('<pre id="seen">other=1</pre>');

    const sitePath = await request(r.h.server.url, `/sites/${r.appId}/`);
    expect([sitePath.status, sitePath.headers['content-security-policy']]).toEqual([200, SANDBOX]);
    expect((await request(appHost, '/')).headers['content-security-policy']).toBeUndefined();
  });

  it("one app's paths do not answer on another app's host", async () => {
    const other = await callFrom(r.h.owner, 'POST', '/init', { name: 'Another tenant' });
    expect(other.status).toBe(201);
    const otherHost = other.json.url as string;
    for (const path of [`/v1/${r.appId}/fn/evil/`, `/sites/${r.appId}/`]) {
      const res = await request(otherHost, path);
      expect([res.status, res.json?.error?.code], path).toEqual([404, 'RESOURCE_NOT_FOUND']);
    }
    expect((await request(appHost, `/v1/${r.appId}/fn/evil/`)).status).toBe(200);
  });

  it("the platform's pages are not served on an app's host: those paths are the app's own", async () => {
    for (const path of ['/console/', '/approve/act_x', '/approve.js', '/oauth/signin.js', '/authorize', '/.well-known/oauth-authorization-server']) {
      const res = await request(appHost, path);
      // The app's static site has no such file.
      expect([res.status, res.json?.error?.message], path).toEqual([404, `File '${path.replace(/\/$/, '')}' not found.`]);
    }
    expect((await request(r.platform, '/console/')).status).toBe(200);
    expect((await request(r.platform, '/approve/act_x')).status).toBe(200);
    // Nor on a name the platform does not know as its own.
    expect((await request(r.h.server.url, '/console/', { headers: { host: `elsewhere.example:${r.h.server.port}` } })).status).toBe(404);
  });
});

describe("a platform without apps' hosts (http://platform.test:<port>, no SVC_BASE_DOMAIN): the paths are sandboxed", () => {
  let r: Rig;
  beforeAll(async () => {
    r = await rig('platform.test');
  }, 120_000);
  afterAll(async () => {
    await r?.h.close();
  });

  it("the site's url is the platform's path", () => {
    expect(r.siteUrl).toBe(`${r.platform}/sites/${r.appId}/`);
  });

  it('a function and a site open with an opaque origin: no cookie in, none out, no service worker', async () => {
    for (const path of [`/v1/${r.appId}/fn/evil/`, `/sites/${r.appId}/`]) {
      const actionId = await pendingProposal(r);
      const { out, seen, at, tab } = await runAttack(r, `${r.platform}${path}`, actionId);
      expect(at).toBe(r.platform);
      // An opaque origin: its requests carry Origin: null and no cookie, their answers are not its to read, and it has
      // no service workers.
      expect(out).toEqual({ mint: 'failed', approve: 'failed', sw: 'refused' });
      if (seen !== null) expect(seen).toBe('');
      await tab.close();
      await expectVictimUntouched(r, actionId);
    }
  });
});
