// The public function route forwards exactly one validated Authorization header: several are refused (400), and
// platform keys, substrate keys and other apps' keys never reach function code. Requests go through node:http with
// raw header lists, because fetch merges duplicate headers into one.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

let p: TestPlatform;
type App = { app_id: string; service_key: { key: string } };
let appA: App;
let appB: App;

/** Echoes every header line the function received (Request headers join repeated names with ", "). */
const ECHO = 'export default (req: Request) => Response.json({ authorization: req.headers.get("authorization"), all: [...req.headers] });';

/** One request with exactly these header lines, in this order (a raw header list gets no Host from node: add it). */
function raw(path: string, headers: Array<[string, string]>): Promise<{ status: number; body: any; text: string }> {
  return new Promise((resolve, reject) => {
    const lines = [['Host', new URL(p.url).host], ...headers].flat();
    const req = request(`${p.url}${path}`, { method: 'GET', headers: lines }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        let body: any;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        resolve({ status: res.statusCode!, body, text });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const echo = (headers: Array<[string, string]>) => raw(`/v1/${appA.app_id}/fn/echo`, headers);

beforeAll(async () => {
  p = await startTestPlatform();
  appA = (await p.api('POST', '/init', { body: { name: 'auth a' } })).body;
  appB = (await p.api('POST', '/init', { body: { name: 'auth b' } })).body;
  const r = await p.api('POST', `/v1/${appA.app_id}/functions`, { key: appA.service_key.key, body: { name: 'echo', code: ECHO } });
  expect(r.status).toBe(201);
});

afterAll(async () => {
  await p?.close();
});

function expectAmbiguous(r: { status: number; body: any; text: string }, message: RegExp) {
  expect(r.status).toBe(400);
  expect(Object.keys(r.body)).toEqual(['error']);
  expect(r.body.error).toMatchObject({ code: 'AUTH_AMBIGUOUS' });
  expect(r.body.error.message).toMatch(message);
  expect(r.body.error.remediation).toMatch(/one Authorization header/);
  expect(r.text).not.toContain(p.platformKey);
}

describe('Authorization on the public function route', () => {
  it('refuses Basic followed by Bearer <platform key> with 400 AUTH_AMBIGUOUS (nothing reaches the function)', async () => {
    expectAmbiguous(await echo([['Authorization', 'Basic eDp5'], ['Authorization', `Bearer ${p.platformKey}`]]), /2 Authorization headers/);
  });

  it("refuses Basic followed by another app's service key, and any repeated header, even identical ones", async () => {
    expectAmbiguous(await echo([['Authorization', 'Basic eDp5'], ['Authorization', `Bearer ${appB.service_key.key}`]]), /2 Authorization headers/);
    expectAmbiguous(await echo([['authorization', `Bearer ${appA.service_key.key}`], ['Authorization', `Bearer ${appA.service_key.key}`]]), /2 Authorization headers/);
    expectAmbiguous(await echo([['Authorization', `Bearer ${p.platformKey}`], ['Authorization', 'Basic eDp5'], ['Authorization', 'Basic eDp5']]), /3 Authorization headers/);
  });

  it('refuses a platform credential inside another scheme or a list (what a proxy that merges the headers sends)', async () => {
    expectAmbiguous(await echo([['Authorization', `Basic eDp5, Bearer ${p.platformKey}`]]), /platform credential/);
    expectAmbiguous(await echo([['Authorization', `Token ${appB.service_key.key}`]]), /platform credential/);
  });

  it('strips a lone platform key: the function sees no Authorization header', async () => {
    const r = await echo([['Authorization', `Bearer ${p.platformKey}`]]);
    expect(r.status).toBe(200);
    expect(r.body.authorization).toBeNull();
    expect(r.text).not.toContain(p.platformKey);
  });

  it("refuses another app's service key with 403 and forwards the app's own key once", async () => {
    const other = await echo([['Authorization', `Bearer ${appB.service_key.key}`]]);
    expect(other.status).toBe(403);
    expect(other.body.error.code).toBe('FORBIDDEN');
    const own = await echo([['Authorization', `Bearer ${appA.service_key.key}`]]);
    expect(own.status).toBe(200);
    expect(own.body.authorization).toBe(`Bearer ${appA.service_key.key}`);
    expect(own.body.all.filter(([k]: [string, string]) => k === 'authorization')).toHaveLength(1);
  });

  it("forwards a single header of the function's own scheme untouched", async () => {
    const r = await echo([['Authorization', 'Basic eDp5']]);
    expect(r.status).toBe(200);
    expect(r.body.authorization).toBe('Basic eDp5');
  });
});
