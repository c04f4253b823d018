// Events and their signed delivery to the test's webhook receivers.
import Stripe from 'stripe';
import { newId, now, type FakeObject, type Scope } from './state.ts';

export interface WebhookTarget {
  url: string;
  /** The endpoint's signing secret (whsec_...), as the receiver verifies with. */
  secret: string;
}

export interface WebhookTargets {
  /** Events of the platform account's own objects. */
  platform?: WebhookTarget;
  /** Events of connected accounts' objects (they carry `account`), as a Connect endpoint receives them. */
  connect?: WebhookTarget;
}

export interface FakeEvent {
  id: string;
  object: 'event';
  api_version: string;
  created: number;
  type: string;
  livemode: false;
  pending_webhooks: number;
  request: { id: string | null; idempotency_key: string | null };
  /** Only on events of a connected account's objects. */
  account?: string;
  data: { object: FakeObject; previous_attributes?: Record<string, unknown> };
}

export interface Delivery {
  event: FakeEvent;
  target: 'platform' | 'connect';
  /** Where it was sent; null when no target of that kind was set (then nothing was sent, and that is no failure). */
  url: string | null;
  /** The receiver's HTTP status; null when it was not sent or the connection failed. */
  status: number | null;
  /** The receiver's answer (first 2,000 characters), to see why it refused. */
  body: string | null;
  /** Why the delivery failed (connection error, non-2xx), or why it was not sent. */
  error: string | null;
}

/** A delivery the receiver did not accept (a 2xx); an event with no target configured is not one. */
export const failed = (d: Delivery): boolean => d.url !== null && (d.status === null || d.status < 200 || d.status >= 300);

const DELIVERY_TIMEOUT_MS = 15_000;

export class Webhooks {
  targets: WebhookTargets = {};
  /** Every delivery attempt, in order (a resend adds an entry with the same event). */
  readonly log: Delivery[] = [];
  // One delivery at a time, in the order events happened: receivers see a deterministic sequence, even for events
  // queued by an API call (delivered after its response) while a checkout's events are still going out.
  #queue: Promise<unknown> = Promise.resolve();

  event(scope: Scope, type: string, object: FakeObject, extra: { previous?: Record<string, unknown>; request?: FakeEvent['request'] } = {}): FakeEvent {
    return {
      id: newId('evt'),
      object: 'event',
      api_version: Stripe.API_VERSION,
      created: now(),
      type,
      livemode: false,
      pending_webhooks: 1,
      request: extra.request ?? { id: null, idempotency_key: null },
      ...(scope === null ? {} : { account: scope }),
      // A snapshot: later changes to the object must not rewrite what an event said.
      data: { object: structuredClone(object), ...(extra.previous ? { previous_attributes: structuredClone(extra.previous) } : {}) },
    };
  }

  /** Queues the event's delivery; resolves once the receiver answered (or the attempt failed). */
  send(event: FakeEvent): Promise<Delivery> {
    const delivery = this.#queue.then(() => this.#deliver(event));
    this.#queue = delivery.catch(() => undefined); // a bug in one delivery must not stop the ones after it
    return delivery;
  }

  /** Resolves when every queued delivery has finished. */
  async idle(): Promise<void> {
    let current: Promise<unknown>;
    do {
      current = this.#queue;
      await current;
    } while (current !== this.#queue);
  }

  async #deliver(event: FakeEvent): Promise<Delivery> {
    const target = event.account === undefined ? 'platform' : 'connect';
    const where = this.targets[target];
    const delivery: Delivery = { event, target, url: where?.url ?? null, status: null, body: null, error: null };
    this.log.push(delivery);
    if (!where) {
      delivery.error = `not sent: no ${target} webhook target is set (fake.setWebhooks)`;
      return delivery;
    }
    const payload = JSON.stringify(event, null, 2); // Stripe sends pretty-printed JSON
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: where.secret });
    try {
      const res = await fetch(where.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': signature, 'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)' },
        body: payload,
        signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
      });
      delivery.status = res.status;
      delivery.body = (await res.text()).slice(0, 2000);
      if (!res.ok) delivery.error = `${target} receiver answered ${res.status}: ${delivery.body.slice(0, 300)}`;
    } catch (err) {
      delivery.error = `${target} receiver could not be reached at ${where.url}: ${describe(err)}`;
    }
    return delivery;
  }
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? ` (${err.cause.message})` : '';
  return `${err.message}${cause}`;
}
