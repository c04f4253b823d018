// The bounds of /rpc beyond what postgrest-js's cases reach (issue 43): a value or a set of values larger than the
// response ceiling is refused before it reaches the process; a function that writes runs once, even when a count is
// asked for; a NUL in a GET argument is a 400; and a declared function never takes the name of the platform's own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

let p: TestPlatform;
let app: { app_id: string; service_key: { key: string } };
const MAX_BYTES = 64 * 1024;

const SCHEMA = {
  tables: { counters: { columns: { id: { type: 'integer', primary: true }, n: { type: 'integer', nullable: false } }, access: 'service' } },
  functions: {
    big_text: { args: { size: 'integer' }, returns: 'text', access: 'service', body: "select repeat('x', big_text.size)" },
    many: { args: { upto: 'integer' }, returns: 'setof integer', access: 'service', body: 'select generate_series(1, many.upto)' },
    lines: { args: { count: 'integer' }, returns: 'setof text', access: 'service', body: "select repeat('y', 1000) from generate_series(1, lines.count)" },
    bump: { returns: 'setof counters', access: 'service', body: 'update counters set n = n + 1 returning *' },
  },
};

const rpc = (fn: string, body: unknown, headers: Record<string, string> = {}) =>
  p.api('POST', `/v1/${app.app_id}/rpc/${fn}`, { body, key: app.service_key.key, headers });

beforeAll(async () => {
  p = await startTestPlatform({ SVC_DATA_MAX_RESPONSE_BYTES: String(MAX_BYTES) });
  const init = await p.api('POST', '/init', { body: { name: 'RPC limits' } });
  if (init.status !== 201) throw new Error(JSON.stringify(init.body));
  app = init.body;
  const applied = await p.api('POST', `/v1/${app.app_id}/schema/apply`, { body: { schema: SCHEMA }, key: app.service_key.key });
  if (applied.status !== 200) throw new Error(JSON.stringify(applied.body));
  await p.api('POST', `/v1/${app.app_id}/counters`, { body: { id: 1, n: 0 }, key: app.service_key.key });
});
afterAll(async () => {
  await p?.close();
});

describe('/rpc limits', () => {
  it('a value or a set larger than the response ceiling is 413; a set is capped at 1,000 values as reads are', async () => {
    expect((await rpc('big_text', { size: 10 })).body).toBe('xxxxxxxxxx');
    const big = await rpc('big_text', { size: MAX_BYTES + 1 });
    expect([big.status, big.body.code]).toEqual([413, 'RESPONSE_TOO_LARGE']);
    expect((await rpc('many', { upto: 3 })).body).toEqual([1, 2, 3]);
    expect((await rpc('many', { upto: 100_000 })).body).toHaveLength(1000);
    expect((await rpc('lines', { count: 10 })).body).toHaveLength(10);
    const lines = await rpc('lines', { count: 100 });
    expect([lines.status, lines.body.code]).toEqual([413, 'RESPONSE_TOO_LARGE']);
  });

  it('a function that writes runs once when a count is asked for', async () => {
    const bumped = await rpc('bump', {}, { prefer: 'count=exact' });
    expect([bumped.status, bumped.body]).toEqual([200, [{ id: 1, n: 1 }]]);
    expect((await p.api('GET', `/v1/${app.app_id}/counters?select=n`, { key: app.service_key.key })).body).toEqual([{ n: 1 }]);
  });

  it('a NUL in a GET argument is a 400', async () => {
    const nul = await p.api('GET', `/v1/${app.app_id}/rpc/big_text?size=%00`, { key: app.service_key.key });
    expect([nul.status, nul.body.code]).toEqual([400, 'VALIDATION_FAILED']);
  });
});
