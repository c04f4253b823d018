// The substrate outbox with a worker running: executed actions POSTed to the user's webhook, signed; failures retried
// and dead after the attempt limit, then redelivered; targets scoped to an app; internal addresses refused.
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postOutbound } from '../../src/core/outbound.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

interface Received {
  headers: http.IncomingHttpHeaders;
  raw: string;
}

let p: TestPlatform;
let key: string;
let receiver: http.Server;
let receiverUrl: string;
const received: Received[] = [];
/** What the receiver answers next (status codes, in order; 200 when empty). */
const answers: number[] = [];

const S = '/v1/me/substrate';
const SECRET = 'whsec-test-secret';

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, raw });
      res.writeHead(answers.shift() ?? 200).end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  p = await startTestPlatform({ SVC_OUTBOUND_ALLOW_PRIVATE: 'true', SVC_OUTBOX_MAX_ATTEMPTS: '2' });
  key = await p.substrateKey('human');
});
afterAll(async () => {
  await p?.close();
  await new Promise((r) => receiver?.close(r));
});

describe('outbox', () => {
  it('delivers an executed action, signed with HMAC-SHA256 of the raw body', async () => {
    const set = await p.api('PUT', `${S}/outbox-targets/record_learning`, { key, body: { webhook_url: receiverUrl, signing_secret: SECRET } });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ capability: 'record_learning', webhook_url: receiverUrl, source_app_id: null });
    expect(JSON.stringify((await p.api('GET', `${S}/outbox-targets`, { key })).body)).not.toContain(SECRET);

    const proposed = await p.api('POST', `${S}/actions/propose`, { key, body: { capability: 'record_learning', payload: { title: 'Hooks', description: 'they fire' } } });
    const got = await waitFor('the delivery', async () => received.find((r) => r.raw.includes(proposed.body.action_id)));
    const body = JSON.parse(got.raw);
    expect(body).toEqual({
      delivery_id: expect.stringMatching(/^dlv_/),
      action_id: proposed.body.action_id,
      capability: 'record_learning',
      payload: { title: 'Hooks', description: 'they fire' },
      result: proposed.body.result,
      proposer_kind: 'human',
      source_app_id: null,
      source_rule_id: null,
      created_at: expect.any(String),
    });
    expect(got.headers['x-svc-signature']).toBe(`sha256=${createHmac('sha256', SECRET).update(got.raw).digest('hex')}`);
    expect(got.headers['x-svc-delivery']).toBe(body.delivery_id);
    expect(Number(got.headers['x-svc-timestamp'])).toBeGreaterThan(Date.now() / 1000 - 60);
    const listed = await waitFor('delivered status', async () => {
      const d = (await p.api('GET', `${S}/outbox-deliveries?status=delivered`, { key })).body.deliveries;
      return d.find((x: { id: string }) => x.id === body.delivery_id);
    });
    expect(listed).toMatchObject({ status: 'delivered', attempts: 1, last_status: 200 });
  });

  it('retries a failing receiver, marks the delivery dead after the attempt limit, and redelivers it', async () => {
    answers.push(500, 503);
    const proposed = await p.api('POST', `${S}/actions/propose`, { key, body: { capability: 'record_learning', payload: { title: 'Flaky', description: 'receiver' } } });
    const dead = await waitFor('a dead delivery', async () => {
      const d = (await p.api('GET', `${S}/outbox-deliveries?status=dead`, { key })).body.deliveries;
      return d.find((x: { action_id: string }) => x.action_id === proposed.body.action_id);
    });
    expect(dead).toMatchObject({ attempts: 2, last_status: 503, last_error: expect.stringContaining('answered 503') });
    expect(received.filter((r) => r.raw.includes(proposed.body.action_id))).toHaveLength(2);
    const again = await p.api('POST', `${S}/outbox-deliveries/${dead.id}/redeliver`, { key });
    expect(again.body).toMatchObject({ status: 'pending', attempts: 0 });
    await waitFor('redelivery', async () => {
      const d = (await p.api('GET', `${S}/outbox-deliveries?status=delivered`, { key })).body.deliveries;
      return d.find((x: { id: string }) => x.id === dead.id);
    });
    const twice = await p.api('POST', `${S}/outbox-deliveries/${dead.id}/redeliver`, { key });
    expect(twice.status).toBe(409);
  });

  it('delivers approved actions too, honours a target scoped to an app, and refuses service keys and unknown capabilities', async () => {
    await p.api('PUT', `${S}/outbox-targets/send_email_draft`, { key, body: { webhook_url: receiverUrl, signing_secret: SECRET } });
    const mail = await p.api('POST', `${S}/actions/propose`, { key, body: { capability: 'send_email_draft', payload: { to: 'a@example.com', subject: 'S', body: 'B' } } });
    expect(received.some((r) => r.raw.includes(mail.body.action_id))).toBe(false);
    await p.api('POST', `${S}/actions/${mail.body.action_id}/approve`, { key });
    await waitFor('the approved action delivered', async () => received.find((r) => r.raw.includes(mail.body.action_id)));

    await p.api('PUT', `${S}/outbox-targets/record_decision`, { key, body: { webhook_url: receiverUrl, signing_secret: SECRET, source_app_id: 'someotherapp0000' } });
    const decision = await p.api('POST', `${S}/actions/propose`, { key, body: { capability: 'record_decision', payload: { title: 'Not for that app', kind: 'operational' } } });
    expect((await p.sql(`select count(*)::int as n from substrate_outbox_deliveries where action_id = $1`, [decision.body.action_id]))[0].n).toBe(0);

    const app = (await p.api('POST', '/init', { body: { name: 'outbox' } })).body;
    expect((await p.api('GET', `${S}/outbox-targets`, { key: app.service_key.key })).status).toBe(403);
    const unknown = await p.api('PUT', `${S}/outbox-targets/fly_to_moon`, { key, body: { webhook_url: receiverUrl, signing_secret: SECRET } });
    expect(unknown.status).toBe(400);
    const short = await p.api('PUT', `${S}/outbox-targets/record_learning`, { key, body: { webhook_url: receiverUrl, signing_secret: 'short' } });
    expect(short.status).toBe(400);
    expect(short.body.error.details[0].path).toBe('signing_secret');
    expect((await p.api('DELETE', `${S}/outbox-targets/record_decision`, { key })).status).toBe(204);
    expect((await p.api('DELETE', `${S}/outbox-targets/record_decision`, { key })).status).toBe(404);
  });
});

describe('outbound addresses', () => {
  it('refuses internal addresses when saving a target (without SVC_OUTBOUND_ALLOW_PRIVATE) and when connecting', async () => {
    const strict = await startTestPlatform({ SVC_ROLE: 'api' });
    try {
      const k = await strict.substrateKey('h');
      for (const url of [
        'http://127.0.0.1:9/x',
        'http://localhost:9/x',
        'http://[::1]:9/x',
        'http://[::ffff:127.0.0.1]:9/x',
        'http://[64:ff9b::a01:203]/x',
        'http://2130706433/x',
        'http://169.254.169.254/latest',
        'http://10.1.2.3/x',
      ]) {
        const res = await strict.api('PUT', `${S}/outbox-targets/record_learning`, { key: k, body: { webhook_url: url, signing_secret: SECRET } });
        expect(res.status, url).toBe(400);
        expect(res.body.error.code, url).toBe('OUTBOUND_ADDRESS_REFUSED');
      }
      const ftp = await strict.api('PUT', `${S}/outbox-targets/record_learning`, { key: k, body: { webhook_url: 'ftp://example.com/x', signing_secret: SECRET } });
      expect(ftp.status).toBe(400);
    } finally {
      await strict.close();
    }
    // A receiver that keeps the answer going never holds an attempt past its deadline.
    const drip = http.createServer((_req, res) => {
      res.writeHead(200);
      const timer = setInterval(() => res.write('.'), 50);
      res.on('close', () => clearInterval(timer));
    });
    await new Promise<void>((r) => drip.listen(0, '127.0.0.1', r));
    try {
      const started = Date.now();
      const answer = await postOutbound(new URL(`http://127.0.0.1:${(drip.address() as AddressInfo).port}/`), '{}', {}, { allowPrivate: true, timeoutMs: 500 }).then(
        (r) => r,
        (err: Error) => err,
      );
      expect(Date.now() - started).toBeLessThan(2_000);
      // Either the first 500 bytes arrived (status known) or the deadline cut it: never an endless read.
      if (!(answer instanceof Error)) expect(answer.status).toBe(200);
    } finally {
      drip.closeAllConnections();
      await new Promise((r) => drip.close(r));
    }
    // At delivery time the resolved address is checked on connect: a name that resolves inside is refused there too.
    await expect(postOutbound(new URL(receiverUrl.replace('127.0.0.1', 'localhost')), '{}', {}, { allowPrivate: false, timeoutMs: 2000 })).rejects.toThrow(/internal address/);
  });
});

describe('retention', () => {
  it('the daily prune drops ended deliveries past 90 days and rule firings that found nothing past 7, and keeps the rest', async () => {
    const { PRUNE_SUBSTRATE_SQL } = await import('../../src/substrate/retention.ts');
    const [{ id: userId }] = await p.sql(`select id from substrate_users limit 1`);
    const delivery = (id: string, status: string, age: string) =>
      p.sql(
        `insert into substrate_outbox_deliveries (id, user_id, action_id, capability, webhook_url, body, status, updated_at)
         values ($1, $2, 'act', 'record_learning', 'https://example.test/', '{}', $3, now() - $4::interval)`,
        [id, userId, status, age],
      );
    await delivery('old-delivered', 'delivered', '91 days');
    await delivery('old-dead', 'dead', '100 days');
    await delivery('old-pending', 'pending', '200 days');
    await delivery('recent-dead', 'dead', '89 days');
    await p.sql(
      `insert into substrate_attention_rules (id, user_id, name, trigger_cron, condition_mode, condition, action_capability, action_payload_template, enabled, max_fires_per_day)
       values ('rule-prune', $1, 'r', '* * * * *', 'snapshot_predicate', 'true', 'record_learning', '{}', false, 1)`,
      [userId],
    );
    const firing = (id: string, bindings: number, age: string, skip: string | null = null) =>
      p.sql(
        `insert into substrate_attention_rule_firings (id, rule_id, user_id, slot, bindings_count, bindings, proposals, skipped, skip_reason, created_at)
         values ($1, 'rule-prune', $2, now() - $3::interval, $4, '[]', $5::jsonb, '[]', $6, now() - $3::interval)`,
        [id, userId, age, bindings, bindings ? '[{"action_id":"a"}]' : '[]', skip],
      );
    await firing('empty-old', 0, '8 days');
    await firing('empty-recent', 0, '6 days');
    await firing('fired-old', 1, '300 days');
    await firing('skipped-old', 0, '30 days', 'daily_limit');
    await p.sql(PRUNE_SUBSTRATE_SQL);
    const firings = await p.sql(`select id from substrate_attention_rule_firings where rule_id = 'rule-prune' order by id`);
    expect(firings.map((r) => r.id)).toEqual(['empty-recent', 'fired-old', 'skipped-old']);
    const left = await p.sql(`select id from substrate_outbox_deliveries where id = any($1) order by id`, [['old-delivered', 'old-dead', 'old-pending', 'recent-dead']]);
    expect(left.map((r) => r.id)).toEqual(['old-pending', 'recent-dead']);
  });
});
