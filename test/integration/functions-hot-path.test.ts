// Public function traffic runs before the express stack (src/transports/raw/functions.ts functionsHotPath): what that
// stack did for it must still happen. The CORS headers of an actual request equal what the cors middleware sets on
// any other route, a preflight is still the cors middleware's, and the request id is assigned and echoed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

let p: TestPlatform;
let fnPath: string;
let appPath: string;

const CORS_HEADERS = ['access-control-allow-origin', 'access-control-expose-headers', 'vary'];
const corsOf = (headers: Headers) => Object.fromEntries(CORS_HEADERS.map((h) => [h, headers.get(h)]));

beforeAll(async () => {
  p = await startTestPlatform();
  const app = (await p.api('POST', '/init', { body: { name: 'hot path' } })).body;
  const deployed = await p.api('POST', `/v1/${app.app_id}/functions`, { key: app.service_key.key, body: { name: 'hello', code: 'export default () => new Response("hi");' } });
  expect(deployed.status).toBe(201);
  fnPath = `/v1/${app.app_id}/fn/hello`;
  const own = `export default () => new Response("own", { headers: { "Access-Control-Allow-Origin": "https://only.example", "Vary": "Accept", "X-Request-Id": "fn-own", "X-Extra": "yes" } });`;
  const big = `export default () => new Response("x".repeat(100000), { headers: { "X-Extra": "big" } });`;
  for (const [name, code] of [['own-headers', own], ['big', big]]) {
    expect((await p.api('POST', `/v1/${app.app_id}/functions`, { key: app.service_key.key, body: { name, code } })).status).toBe(201);
  }
  appPath = `/v1/${app.app_id}`;
});

afterAll(async () => {
  await p?.close();
});

describe('the functions hot path', () => {
  it.each([['with an Origin', { Origin: 'https://app.example' }], ['without one', {}]] as const)(
    'sets the CORS headers of an actual request as the cors middleware does (%s)',
    async (_case, headers) => {
      const fn = await fetch(`${p.url}${fnPath}`, { headers });
      const other = await fetch(`${p.url}/health`, { headers });
      expect(fn.status).toBe(200);
      expect(await fn.text()).toBe('hi');
      expect(corsOf(fn.headers)).toEqual(corsOf(other.headers));
      expect(fn.headers.get('vary')).toBe('Origin');
    },
  );

  it('leaves a preflight to the cors middleware', async () => {
    const init = { method: 'OPTIONS', headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'POST' } };
    const fn = await fetch(`${p.url}${fnPath}`, init);
    const other = await fetch(`${p.url}/health`, init);
    expect(fn.status).toBe(204);
    expect(fn.headers.get('access-control-allow-methods')).toBe(other.headers.get('access-control-allow-methods'));
    expect(fn.headers.get('access-control-max-age')).toBe('600');
  });

  it("a function's own CORS, Vary and request id replace the platform's, each sent once; its other headers pass", async () => {
    const res = await fetch(`${p.url}${appPath}/fn/own-headers`, { headers: { Origin: 'https://app.example', 'X-Request-Id': 'trace-7' } });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('own');
    expect(res.headers.get('access-control-allow-origin')).toBe('https://only.example');
    expect(res.headers.get('vary')).toBe('Accept');
    expect(res.headers.get('x-request-id')).toBe('fn-own');
    expect(res.headers.get('x-extra')).toBe('yes');
    expect(res.headers.get('access-control-expose-headers')).toBe(corsOf((await fetch(`${p.url}/health`)).headers)['access-control-expose-headers']);
  });

  it('a streamed answer (over 64 KB) and an error answer carry the request id and CORS headers too', async () => {
    const headers = { Origin: 'https://app.example', 'X-Request-Id': 'trace-8' };
    const big = await fetch(`${p.url}${appPath}/fn/big`, { headers });
    expect(big.status).toBe(200);
    expect((await big.text()).length).toBe(100000);
    expect([big.headers.get('x-request-id'), big.headers.get('x-extra'), big.headers.get('access-control-allow-origin')]).toEqual(['trace-8', 'big', 'https://app.example']);
    const missing = await fetch(`${p.url}${appPath}/fn/nothing-here`, { headers });
    expect(missing.status).toBe(404);
    expect((await missing.json()).error.code).toBe('RESOURCE_NOT_FOUND');
    expect([missing.headers.get('x-request-id'), missing.headers.get('access-control-allow-origin'), missing.headers.get('vary')]).toEqual(['trace-8', 'https://app.example', 'Origin']);
  });

  it('assigns a request id, and echoes a well-formed one', async () => {
    const fresh = await fetch(`${p.url}${fnPath}`);
    expect(fresh.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const given = await fetch(`${p.url}${fnPath}`, { headers: { 'X-Request-Id': 'trace-42' } });
    expect(given.headers.get('x-request-id')).toBe('trace-42');
  });
});
