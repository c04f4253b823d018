/**
 * A fake Stripe on loopback, for the billing (platform subscription) and monetization (Connect) tests.
 *
 * Real HTTP (node:http) so the platform's actual adapter runs: the official `stripe` SDK pointed here with
 * `{ host: '127.0.0.1', port: fake.port, protocol: 'http' }` (or SVC_STRIPE_API_URL = fake.url) sends its real
 * form-encoded requests, and webhooks arrive at the test's receivers signed with the SDK's own signing code, so
 * `stripe.webhooks.constructEvent` verifies them as it would Stripe's. Objects are shaped like API 2026-10-28's
 * (subscription periods on the items, `invoice.parent.subscription_details`) in the fields the platform reads.
 *
 * API (v1, `Authorization: Bearer sk_...` required, else 401): customers (create, retrieve), accounts (create,
 * retrieve), account_links, products (create, update, retrieve), prices (create, update, retrieve), checkout/sessions
 * (create, retrieve), billing_portal/sessions, subscriptions (retrieve, update, DELETE = cancel), and retrieve of
 * invoices, payment_intents and charges. As Stripe: unknown ids 404 `resource_missing` (400 with `param` when named
 * by a parameter), missing or invalid parameters 400 with `param`, and unknown parameters 400 too, so a parameter the
 * fake does not model is never silently ignored. `Idempotency-Key` (the SDK sends one on every POST) replays the
 * first answer, with `Idempotent-Replayed: true`; the same key with other parameters is a 400 idempotency_error.
 *
 * Connect: a request with `Stripe-Account: acct_...` acts as that connected account; what it creates belongs to that
 * account and is invisible (404) to the platform and to every other account. An unknown Stripe-Account answers 403
 * (the SDK's StripePermissionError), as Stripe does. Checkout on a connected account is refused (400) until its
 * onboarding is done; application fees (subscription_data[application_fee_percent],
 * payment_intent_data[application_fee_amount]) are only accepted on a connected account's requests.
 *
 * Browser routes (no auth), standing in for Stripe's hosted pages:
 *   GET /checkout/:id     the customer pays, then 303 to success_url ({CHECKOUT_SESSION_ID} filled in; 200 without
 *                         one); 502 with the reason as text if a webhook delivery failed; 410 once no longer open.
 *                         subscription mode: a customer (if the session had none, from customer_email), an active
 *                         subscription for one interval of the price, its first invoice (paid); sends
 *                           checkout.session.completed (subscription set, payment_status 'paid'),
 *                           customer.subscription.created, invoice.payment_succeeded
 *                         payment mode: a succeeded PaymentIntent (metadata: the session's, then
 *                         payment_intent_data[metadata] over it; the application fee) and its charge; sends
 *                           checkout.session.completed (payment_intent set)
 *   GET /onboarding/:acct the merchant finishes onboarding (charges/payouts enabled, nothing due); sends
 *                         account.updated (to connect), then 303 to the link's return_url (502 if delivery failed)
 *   GET /portal/:id       303 to the portal session's return_url
 *
 * Webhooks: `setWebhooks({ platform, connect })`. Events of the platform's objects go to `platform`; those of a
 * connected account's objects carry `account` and go to `connect`. Deliveries are one at a time, in the order the
 * events happened. API calls send customer.subscription.updated (POST /v1/subscriptions/:id, when something changed)
 * and customer.subscription.deleted (DELETE) after their response, as Stripe does (`idle()` waits for them). An event
 * with no target set is logged with `url: null` and is no failure. Only the events documented here are sent: Stripe
 * sends many more (customer.created, invoice.paid, ...), which receivers must ignore anyway.
 *
 * Invoices carry Stripe's own period semantics: `period_start`/`period_end` are the period *before* the invoice (both
 * equal to `created` on a subscription's first invoice); the paid-for period is `lines.data[i].period`.
 *
 * Test controls: the lifecycle methods of FakeStripe change the state as Stripe would and resolve once the receiver
 * answered; `failNext` makes the next /v1 request fail; every request (API and browser) is in `requests`, every
 * delivery in `events`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { routes, type ApiContext } from './stripe/api.ts';
import { failed, Webhooks, type Delivery, type FakeEvent, type WebhookTargets } from './stripe/events.ts';
import { Flows, type Sent, type SubscriptionPatch } from './stripe/flows.ts';
import { newId, Store, type FakeObject } from './stripe/state.ts';
import { checkParams, parseForm, Reader, StripeApiError, noAccess, type Params } from './stripe/wire.ts';

export type { Delivery, FakeEvent, Sent, SubscriptionPatch, WebhookTargets };
export type { WebhookTarget } from './stripe/events.ts';
export type {
  FakeAccount,
  FakeCharge,
  FakeCheckoutSession,
  FakeCustomer,
  FakeInvoice,
  FakeInvoiceLine,
  FakeObject,
  FakePaymentIntent,
  FakePortalSession,
  FakePrice,
  FakeProduct,
  FakeSubscription,
  FakeSubscriptionItem,
  Scope,
} from './stripe/state.ts';

export interface FakeStripeRequest {
  method: string;
  /** The pathname, e.g. '/v1/checkout/sessions' or '/checkout/cs_test_...'. */
  path: string;
  stripeAccount: string | null;
  idempotencyKey: string | null;
  /** The parsed form body, or the query for GET and DELETE (brackets nested: `line_items[0][price]` is body.line_items[0].price). */
  body: Params;
  /** The status answered; null while the request is being handled. */
  status: number | null;
}

export interface FakeStripe {
  /** http://127.0.0.1:PORT : SVC_STRIPE_API_URL, and the origin of the checkout/onboarding/portal URLs. */
  url: string;
  port: number;
  requests: FakeStripeRequest[];
  /** Every delivery attempt, in order, with the receiver's status (a resend is a new entry with the same event). */
  events: Delivery[];
  /** Where events go from now on (replaces the previous targets). */
  setWebhooks(targets: WebhookTargets): void;
  /** The next /v1 request answers `status` with `body` (default: a Stripe error of the matching type); the SDK is told not to retry unless `retry`. */
  failNext(status: number, body?: unknown, opts?: { retry?: boolean }): void;
  /** A copy of any object, whatever account it belongs to (undefined if unknown). */
  get<T extends FakeObject = FakeObject>(id: string): T | undefined;
  /** A renewal fails: invoice.payment_failed (new open invoice, or a retry of the open one), then customer.subscription.updated (past_due). */
  failInvoice(subscriptionId: string): Promise<Sent>;
  /** The open invoice (or the next renewal) is paid: invoice.payment_succeeded, then customer.subscription.updated (active). */
  payInvoice(subscriptionId: string): Promise<Sent>;
  /** Sets the fields and sends customer.subscription.updated with previous_attributes. */
  updateSubscription(subscriptionId: string, patch: SubscriptionPatch): Promise<Sent>;
  /** Cancels now: customer.subscription.deleted. */
  deleteSubscription(subscriptionId: string): Promise<Sent>;
  /** A declined card on an open payment-mode session: payment_intent.payment_failed. */
  failPaymentIntent(checkoutSessionId: string): Promise<Sent>;
  /** Refunds `amount` (default: the rest) of the PaymentIntent's charge: charge.refunded. */
  refundCharge(paymentIntentId: string, amount?: number): Promise<Sent>;
  /** Delivers a sent event again: same id and body, fresh signature, current target. */
  resend(eventId: string): Promise<Delivery>;
  /** POSTs `body` as is to a target (for bad-signature tests); no signature unless given in `headers`. */
  sendRaw(target: 'platform' | 'connect', body: string, headers?: Record<string, string>): Promise<{ status: number; body: string }>;
  /** Resolves when every queued webhook delivery has finished. */
  idle(): Promise<void>;
  /** Clears `requests` and `events` (in place); objects stay. */
  reset(): void;
  close(): Promise<void>;
}

interface Injected {
  status: number;
  body: unknown;
  retry: boolean;
}

interface Answer {
  status: number;
  body: unknown;
}

/** `secretKey`: the only key accepted (default: any sk_ key). */
export async function startFakeStripe(opts: { secretKey?: string } = {}): Promise<FakeStripe> {
  const store = new Store();
  const webhooks = new Webhooks();
  const flows = new Flows(store, webhooks);
  const requests: FakeStripeRequest[] = [];
  const injected: Injected[] = [];
  const idempotent = new Map<string, { fingerprint: string; answer: Answer }>();

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      // A bug in the fake should fail the test loudly, not hang it.
      if (!res.headersSent) sendJson(res, 500, { error: { type: 'api_error', message: `fake stripe bug: ${err instanceof Error ? err.stack : String(err)}` } });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  const base = `http://127.0.0.1:${port}`;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const url = new URL(req.url ?? '/', base);
    const header = (name: string) => {
      const v = req.headers[name];
      return typeof v === 'string' && v !== '' ? v : null;
    };
    const record: FakeStripeRequest = { method: req.method ?? 'GET', path: url.pathname, stripeAccount: header('stripe-account'), idempotencyKey: header('idempotency-key'), body: {}, status: null };
    requests.push(record);
    res.on('finish', () => (record.status = res.statusCode));
    try {
      record.body = { ...parseForm(url.search.slice(1)), ...parseForm(Buffer.concat(chunks).toString('utf8')) };
    } catch (err) {
      if (err instanceof StripeApiError) return sendJson(res, err.status, { error: err.error });
      throw err;
    }
    if (!url.pathname.startsWith('/v1/')) return browser(res, record, url);

    const fault = injected.shift();
    if (fault) return sendJson(res, fault.status, fault.body, { 'stripe-should-retry': String(fault.retry) });

    const requestId = newId('req');
    const events: FakeEvent[] = [];
    const answer = api(record, header('authorization'), requestId, events);
    sendJson(res, answer.status, answer.body, { 'request-id': requestId, ...(answer.replayed ? { 'idempotent-replayed': 'true' } : {}) });
    // After the response, as Stripe does: a receiver never sees an event before the caller has the API's answer.
    for (const event of events) void webhooks.send(event);
  }

  function api(record: FakeStripeRequest, authorization: string | null, requestId: string, events: FakeEvent[]): Answer & { replayed?: boolean } {
    try {
      const key = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
      if (!key) {
        return unauthorized("You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY').");
      }
      if (!key.startsWith('sk_') || (opts.secretKey !== undefined && key !== opts.secretKey)) {
        return unauthorized(`Invalid API Key provided: ${key.slice(0, 8)}${'*'.repeat(Math.max(0, key.length - 12))}${key.slice(-4)}`);
      }
      const scope = record.stripeAccount;
      if (scope !== null && !store.get(null, scope, 'account')) throw noAccess(scope);

      let route: (typeof routes)[number] | undefined;
      let id = '';
      for (const r of routes) {
        const m = r.method === record.method ? r.pattern.exec(record.path) : null;
        if (m) {
          route = r;
          id = m[1] ?? '';
          break;
        }
      }
      if (!route) {
        return { status: 404, body: { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${record.method}: ${record.path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.` } } };
      }

      let idempotencyKey: string | undefined;
      const fingerprint = `${record.method} ${record.path} ${JSON.stringify(record.body)}`;
      if (record.method === 'POST' && record.idempotencyKey !== null) {
        idempotencyKey = `${scope ?? 'platform'}\n${record.idempotencyKey}`;
        const seen = idempotent.get(idempotencyKey);
        if (seen && seen.fingerprint !== fingerprint) {
          throw new StripeApiError(400, {
            type: 'idempotency_error',
            message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${record.idempotencyKey}' if you meant to execute a different request.`,
          });
        }
        if (seen) return { ...seen.answer, replayed: true };
      }

      let answer: Answer;
      try {
        checkParams(record.body, route.params);
        const ctx: ApiContext = {
          scope,
          params: new Reader(record.body),
          store,
          flows,
          base,
          request: { id: requestId, idempotency_key: record.idempotencyKey },
          emit: (event) => void (event && events.push(event)),
        };
        answer = { status: 200, body: structuredClone(route.handle(ctx, id)) };
      } catch (err) {
        if (!(err instanceof StripeApiError)) throw err;
        answer = { status: err.status, body: { error: err.error } };
      }
      // Stripe keeps the outcome of an idempotent request, errors included, so a retry cannot change it.
      if (idempotencyKey) idempotent.set(idempotencyKey, { fingerprint, answer });
      return answer;
    } catch (err) {
      if (!(err instanceof StripeApiError)) throw err;
      return { status: err.status, body: { error: err.error } };
    }
  }

  async function browser(res: ServerResponse, record: FakeStripeRequest, url: URL): Promise<void> {
    const [, page, id] = /^\/(checkout|onboarding|portal)\/([^/]+)$/.exec(url.pathname) ?? [];
    if (record.method !== 'GET' || !page || !id) return sendText(res, 404, `fake stripe: no page at ${record.method} ${url.pathname}`);

    if (page === 'portal') {
      const portal = store.find(id, 'billing_portal.session');
      if (!portal) return sendText(res, 404, `fake stripe: no billing portal session ${id}`);
      return portal.object.return_url ? redirect(res, portal.object.return_url) : sendText(res, 200, `Billing portal of ${portal.object.customer}`);
    }

    if (page === 'onboarding') {
      if (!store.get(null, id, 'account')) return sendText(res, 404, `fake stripe: no connected account ${id}`);
      const deliveries = await flows.completeOnboarding(id);
      if (deliveries.some(failed)) return sendText(res, 502, deliveryFailures(deliveries));
      const back = url.searchParams.get('return_url');
      return back ? redirect(res, back) : sendText(res, 200, `Onboarding of ${id} complete`);
    }

    const session = store.find(id, 'checkout.session')?.object;
    if (!session) return sendText(res, 404, `fake stripe: no Checkout Session ${id}`);
    if (session.status !== 'open') return sendText(res, 410, `This Checkout Session is ${session.status}: it can no longer be paid.`);
    const { deliveries } = await flows.completeCheckout(id);
    if (deliveries.some(failed)) return sendText(res, 502, deliveryFailures(deliveries));
    return session.success_url ? redirect(res, session.success_url.replaceAll('{CHECKOUT_SESSION_ID}', id)) : sendText(res, 200, 'Payment complete');
  }

  let closing: Promise<void> | undefined;
  return {
    url: base,
    port,
    requests,
    events: webhooks.log,
    setWebhooks: (targets) => void (webhooks.targets = { ...targets }),
    failNext(status, body, { retry = false } = {}) {
      injected.push({ status, body: body ?? { error: defaultError(status) }, retry });
    },
    get: <T extends FakeObject = FakeObject>(id: string) => structuredClone(store.any(id)) as T | undefined,
    failInvoice: (id) => flows.failInvoice(id),
    payInvoice: (id) => flows.payInvoice(id),
    updateSubscription: (id, patch) => flows.updateSubscription(id, patch),
    deleteSubscription: (id) => flows.deleteSubscription(id),
    failPaymentIntent: (id) => flows.failPaymentIntent(id),
    refundCharge: (id, amount) => flows.refundCharge(id, amount),
    resend: (id) => flows.resend(id),
    async sendRaw(target, body, headers = {}) {
      const where = webhooks.targets[target];
      if (!where) throw new Error(`no ${target} webhook target is set`);
      const res = await fetch(where.url, { method: 'POST', headers: { 'content-type': 'application/json; charset=utf-8', ...headers }, body });
      return { status: res.status, body: await res.text() };
    },
    idle: () => webhooks.idle(),
    reset() {
      requests.length = 0;
      webhooks.log.length = 0;
    },
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections(); // keep-alive sockets of the SDK's agent must not hold the close
      });
      return closing;
    },
  };
}

/** Stripe's 401s are invalid_request_errors; the SDK maps them by status to StripeAuthenticationError. */
function unauthorized(message: string): Answer {
  return { status: 401, body: { error: { type: 'invalid_request_error', message } } };
}

function defaultError(status: number): Record<string, string> {
  const message = `Injected failure (fake.failNext(${status}))`;
  if (status === 402) return { type: 'card_error', code: 'card_declined', decline_code: 'generic_decline', message: 'Your card was declined.' };
  if (status === 429) return { type: 'invalid_request_error', code: 'rate_limit', message };
  if (status >= 500) return { type: 'api_error', message };
  return { type: 'invalid_request_error', message };
}

function deliveryFailures(deliveries: Delivery[]): string {
  return `fake stripe: webhook delivery failed:\n${deliveries
    .filter(failed)
    .map((d) => `- ${d.event.type} (${d.event.id}): ${d.error}`)
    .join('\n')}\n`;
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function sendText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(303, { location, 'content-length': 0 });
  res.end();
}
