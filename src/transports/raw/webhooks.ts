import express, { type Request, type Response, type Router } from 'express';
import type { Services } from '../../services.ts';
import { toAppError } from '../../core/invoke.ts';
import { verifyPaymentEvent } from '../../adapters/stripe.ts';
import { paymentErrors, type PaymentEvent } from '../../billing/payments-port.ts';
import type { PaymentEventOutcome } from '../../billing/events.ts';
import { sendError } from '../rest.ts';
import type { RawRoutes } from './index.ts';

/** Stripe's events are small; its own limit for a payload is far below this. */
const WEBHOOK_BODY_LIMIT = '1mb';

/**
 * Stripe's inbound events, verified on the raw bytes Stripe signed (so mounted before JSON parsing):
 * - POST /webhooks/stripe: the platform's own subscription events (SVC_STRIPE_WEBHOOK_SECRET);
 * - POST /webhooks/payments/connect: events of apps' connected accounts (PAYMENTS_CONNECT_WEBHOOK_SECRET).
 * 200 `{ received: true, handled }` once applied (or already applied: redeliveries change nothing); 400 on a bad
 * signature; a failure while applying answers 5xx, so Stripe redelivers.
 */
export const webhookRoutes: RawRoutes = {
  early: (router: Router, services: Services) => {
    const raw = express.raw({ type: () => true, limit: WEBHOOK_BODY_LIMIT });
    const { stripe } = services.config.billing;
    router.post('/webhooks/stripe', raw, (req, res) => {
      void receive(req, res, stripe.webhookSecret, 'SVC_STRIPE_WEBHOOK_SECRET', (event) => services.billing.handleEvent(event));
    });
    router.post('/webhooks/payments/connect', raw, (req, res) => {
      void receive(req, res, stripe.connectWebhookSecret, 'PAYMENTS_CONNECT_WEBHOOK_SECRET', (event) => services.monetization.handleEvent(event));
    });
  },
};

async function receive(
  req: Request,
  res: Response,
  secret: string | undefined,
  variable: string,
  apply: (event: PaymentEvent) => Promise<PaymentEventOutcome>,
): Promise<void> {
  try {
    if (!secret) throw paymentErrors.secretMissing(variable);
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const event = verifyPaymentEvent(body, req.headers['stripe-signature'] as string | undefined, secret);
    req.log.info({ event_id: event.id, event_type: event.type, account: event.account }, 'payment event');
    res.status(200).json(await apply(event));
  } catch (err) {
    sendError(res, toAppError(err, req.log, req.path));
  }
}
