// The descriptors' REST routes on the platform's host run before the express stack (src/transports/rest-hot-path.ts):
// each answer must be the one the stack gives. A request whose target is in absolute form (`GET http://host/apps`, as a
// client talking to a proxy sends it) is left to the express app, which serves it the same; so each case is sent both
// ways and the answers compared: status, body and every header but the date and the request id.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

let p: TestPlatform;
let appId: string;
let serviceKey: string;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request over a fresh connection; `absolute` sends the target in absolute form. */
function send(method: string, path: string, headers: Record<string, string>, body: string | undefined, absolute: boolean): Promise<Answer> {
  const { hostname, port } = new URL(p.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port, method, path: absolute ? `${p.url}${path}` : path, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => {
        const { date: _date, 'x-request-id': _id, ...rest } = res.headers;
        resolve({ status: res.statusCode!, headers: rest, body: text });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The hot path's answer and the express app's, which must be equal. */
async function both(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  const hot = await send(method, path, headers, body, false);
  const stack = await send(method, path, headers, body, true);
  expect(hot).toEqual(stack);
  return hot;
}

beforeAll(async () => {
  p = await startTestPlatform({ SVC_BODY_LIMIT: '1kb' });
  const made = (await p.api('POST', '/init', { body: { name: 'hot path' } })).body;
  appId = made.app_id;
  serviceKey = made.service_key.key;
  const applied = await p.api('POST', `/v1/${appId}/schema/apply`, {
    key: serviceKey,
    body: { schema: { tables: { items: { columns: { id: { type: 'bigint', primary: true, identity: true }, title: { type: 'text' } } } } } },
  });
  expect(applied.status).toBe(200);
});

afterAll(async () => {
  await p?.close();
});

describe('the REST hot path answers as the express stack does', () => {
  const platform = () => ({ authorization: `Bearer ${p.platformKey}` });
  const service = () => ({ authorization: `Bearer ${serviceKey}` });
  const json = { 'content-type': 'application/json' };

  it('GET /apps, with and without an Origin; HEAD', async () => {
    const listed = await both('GET', '/apps', platform());
    expect(listed.status).toBe(200);
    expect(JSON.parse(listed.body).apps.map((a: { app_id: string }) => a.app_id)).toEqual([appId]);
    const cors = await both('GET', '/apps', { ...platform(), origin: 'https://app.example' });
    expect(cors.headers['access-control-allow-origin']).toBe('https://app.example');
    expect((await both('HEAD', '/apps', platform())).body).toBe('');
  });

  it('a refused credential: 401 with its challenge', async () => {
    const refused = await both('GET', '/apps', { authorization: 'Bearer svc_pk_nope' });
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toBe('Bearer');
    expect((await both('GET', '/apps')).status).toBe(401);
  });

  it("the data API's routes: a write, a filtered read, a read by id, a PostgREST error", async () => {
    // Sent twice (once each way), the insert makes two rows; its answer has no ids to differ by.
    const inserted = await both('POST', `/v1/${appId}/items`, { ...service(), ...json, prefer: 'return=minimal' }, '{"title":"one"}');
    expect(inserted.status).toBe(201);
    expect((await both('GET', `/v1/${appId}/items?select=title&title=eq.one`, service())).body).toBe('[{"title":"one"},{"title":"one"}]');
    expect((await both('GET', `/v1/${appId}/items/1?select=title`, service())).body).toBe('{"title":"one"}');
    expect((await both('GET', `/v1/${appId}/items?select=nope`, service())).status).toBe(400);
    expect((await both('DELETE', `/v1/${appId}/items?title=eq.none`, service())).status).toBe(204);
  });

  it('bodies the JSON parser refuses: not JSON, too large, and a scalar passed on to validation', async () => {
    expect((await both('POST', `/v1/${appId}/items`, { ...service(), ...json }, '{"title":')).status).toBe(400);
    expect((await both('POST', `/v1/${appId}/items`, { ...service(), ...json }, JSON.stringify({ title: 'x'.repeat(2000) }))).status).toBe(413);
    expect((await both('POST', '/v1/me/substrate/actions/propose', { ...platform(), ...json }, '42')).status).toBe(400);
  });

  it("a largeBody route reads past the global limit (the AI gateway's chat, in OpenAI's error shape)", async () => {
    const big = JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'x'.repeat(4000) }] });
    const answered = await both('POST', `/v1/${appId}/chat/completions`, { ...service(), ...json }, big);
    expect(answered.status).not.toBe(413);
    expect(JSON.parse(answered.body).error.type).toEqual(expect.any(String));
    expect((await both('POST', `/v1/${appId}/chat/completions`, { ...service(), ...json }, '{"model":')).status).toBe(400);
  });

  it('a malformed %-escape in a path parameter, and an unknown route', async () => {
    expect((await both('GET', `/v1/${appId}/%E0%A4%A`, service())).status).toBe(400);
    expect((await both('GET', '/v1/nothing/here/at/all/x', service())).status).toBe(404);
  });

  it('leaves to the stack the raw routes under /v1/ that a generated route of the same shape would match', async () => {
    // storage-js's bucket list, not the data API's /v1/{app_id}/{table}/{id} pattern.
    const buckets = await send('GET', `/v1/${appId}/storage/v1/bucket`, service(), undefined, false);
    expect(buckets.status).toBe(200);
    expect(JSON.parse(buckets.body)).toEqual([expect.objectContaining({ id: 'files', name: 'files' })]);
  });
});
