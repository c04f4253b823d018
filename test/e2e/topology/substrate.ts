// The substrate in the topology: a person's proposals (auto-executed record_learning) through either api process,
// retried with their idempotency key when no answer came, each delivered by the worker to a loopback receiver through
// the outbox; and change-stream sockets held on each api process, reconnected with a new ticket when theirs dies.
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import WebSocket from 'ws';
import type { Topology } from '../../helpers/topology.ts';
import { waitFor } from '../../integration/frontend-helpers.ts';
import { call, loop, sleep, Tally, WORKER_CONCURRENCY } from './client.ts';
import { signUpOwner, substrateKeyOf } from '../e2e-helpers.ts';

const S = '/v1/me/substrate';
const SECRET = 'topology-outbox-secret';

interface Received {
  deliveryId: string;
  actionId: string;
  signed: boolean;
}

/** The webhook receiver: answers 200 to each delivery and keeps what arrived, signature checked. */
export class OutboxReceiver {
  readonly received: Received[] = [];
  readonly #server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw) as { delivery_id: string; action_id: string };
      const signed = req.headers['x-svc-signature'] === `sha256=${createHmac('sha256', SECRET).update(raw).digest('hex')}`;
      this.received.push({ deliveryId: String(req.headers['x-svc-delivery']), actionId: body.action_id, signed: signed && req.headers['x-svc-delivery'] === body.delivery_id });
      res.writeHead(200).end('ok');
    });
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/hook`;
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

export class Proposals {
  readonly tally = new Tally();
  /** Proposals sent again with the same idempotency key after no answer or a refusal. */
  retries = 0;
  /** idempotency key → action id, for every acknowledged proposal. */
  readonly #actions = new Map<string, string>();
  #key = '';
  readonly #run = Math.random().toString(36).slice(2, 8);

  /** A person's substrate key and an outbox target for record_learning at the receiver. */
  async setUp(t: Topology, receiverUrl: string): Promise<string> {
    // SVC_BASE_URL is the balancer's URL: a person signs up there and mints their key, signed in.
    const person = await signUpOwner({ ...t, docsUrl: () => t.url });
    this.#key = (await substrateKeyOf(t, person, 'topology person')).key;
    const target = await call(t.url, 'PUT', `${S}/outbox-targets/record_learning`, { key: this.#key, body: { webhook_url: receiverUrl, signing_secret: SECRET } });
    expect(target.status).toBe(200);
    return this.#key;
  }

  async run(t: Topology, running: () => boolean): Promise<void> {
    await loop(running, 1, async (i) => {
      const idempotencyKey = `topology-${this.#run}-${i}`;
      const body = { capability: 'record_learning', payload: { title: `Learning ${i}`, description: 'written under faults' }, idempotency_key: idempotencyKey };
      // A client that got no answer cannot know whether its proposal happened: it sends it again with the same key.
      for (let attempt = 0; attempt < 20; attempt++) {
        if (attempt > 0) (this.retries++, await sleep(300));
        const res = await this.tally.run(() => call(t.url, 'POST', `${S}/actions/propose`, { key: this.#key, body }));
        if (res) {
          this.#actions.set(idempotencyKey, res.json.action_id);
          return;
        }
      }
    });
  }

  /** A proposal outside the workload: its learning's id, for the change stream's check. */
  async proposeOne(t: Topology, title: string): Promise<string> {
    const res = await call(t.url, 'POST', `${S}/actions/propose`, { key: this.#key, body: { capability: 'record_learning', payload: { title, description: 'after the faults' } } });
    expect(res.status).toBe(200);
    return res.json.result.learning_id;
  }

  /**
   * One action per idempotency key, one outbox delivery per action, every delivery delivered and signed; a delivery
   * received more than once only when the worker died between the receiver's answer and the row's update.
   */
  async verify(t: Topology, receiver: OutboxReceiver): Promise<{ actions: number; deliveries: number; repeated: number }> {
    const { rows: actions } = await t.control.query<{ id: string; idempotency_key: string }>(
      `select id, idempotency_key from substrate_actions where idempotency_key like $1`,
      [`topology-${this.#run}-%`],
    );
    const byKey = new Map(actions.map((a) => [a.idempotency_key, a.id]));
    expect(byKey.size).toBe(actions.length);
    for (const [key, id] of this.#actions) expect(byKey.get(key), `action of ${key}`).toBe(id);
    const deliveries = await waitFor(async () => {
      const { rows } = await t.control.query<{ id: string; action_id: string; status: string }>(
        `select id, action_id::text, status from substrate_outbox_deliveries where action_id::text = any($1::text[])`,
        [actions.map((a) => a.id)],
      );
      return rows.length === actions.length && rows.every((r) => r.status === 'delivered') ? rows : undefined;
    }, 90_000, 'every delivery delivered');
    expect(new Set(deliveries.map((d) => d.action_id)).size).toBe(actions.length);
    const ours = new Set(deliveries.map((d) => d.id));
    const arrived = receiver.received.filter((r) => ours.has(r.deliveryId));
    expect(arrived.every((r) => r.signed)).toBe(true);
    const unique = new Set(arrived.map((r) => r.deliveryId));
    expect(unique.size).toBe(deliveries.length);
    const repeated = arrived.length - unique.size;
    expect(repeated).toBeLessThanOrEqual(WORKER_CONCURRENCY);
    return { actions: actions.length, deliveries: deliveries.length, repeated };
  }
}

/**
 * A change-stream socket at `base` (one api process's own address, or the balancer's); when it dies it reconnects
 * there with a new ticket (tickets work once). Frames written while it was away are not replayed.
 */
export class StreamSocket {
  connects = 0;
  readonly frames: Array<{ tbl?: string; id?: string }> = [];
  #ws: WebSocket | undefined;
  #closed = false;
  readonly #base: string;

  constructor(base: string) {
    this.#base = base;
  }

  async open(t: Topology, key: string): Promise<void> {
    while (!this.#closed) {
      try {
        await this.#connect(t, key);
        return;
      } catch {
        await sleep(250);
      }
    }
  }

  async #connect(t: Topology, key: string): Promise<void> {
    const ticket = await call(t.url, 'POST', `${S}/ws-ticket`, { key });
    if (ticket.status !== 201) throw new Error(`ticket: ${ticket.status}`);
    const ws = new WebSocket(`${this.#base.replace(/^http/, 'ws')}${S}/stream?ticket=${encodeURIComponent(ticket.json.ticket)}`);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('unexpected-response', (_req, res) => reject(new Error(`status ${res.statusCode}`)));
      ws.once('error', reject);
    });
    this.connects++;
    this.#ws = ws;
    ws.on('message', (data) => this.frames.push(JSON.parse(data.toString())));
    ws.on('error', () => undefined);
    ws.once('close', () => {
      if (!this.#closed) void this.open(t, key);
    });
  }

  /** Waits for the frame of a learning (written through any process). */
  async sees(learningId: string): Promise<void> {
    await waitFor(async () => (this.frames.some((f) => f.tbl === 'learnings' && f.id === learningId) ? true : undefined), 20_000, `the frame of learning ${learningId} at ${this.#base}`);
  }

  close(): void {
    this.#closed = true;
    this.#ws?.close();
  }
}
