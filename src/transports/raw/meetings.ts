import express, { type Router } from 'express';
import type { Services } from '../../services.ts';
import { toAppError } from '../../core/invoke.ts';
import { sendError } from '../rest.ts';
import type { RawRoutes } from './index.ts';

/** The provider's events are small status changes; this bounds what an unauthenticated sender can make us read. */
const WEBHOOK_BODY_LIMIT = '256kb';

/**
 * POST /webhooks/meetings/recall: the meetings provider's Svix-signed events, verified on the raw bytes (so mounted
 * before JSON parsing). 200 `{ handled, status? }` once applied or when already applied (a redelivery changes
 * nothing); 400 on a bad signature or stale timestamp; 501 without a provider; a failure while applying answers 5xx,
 * so the provider delivers again.
 */
export const meetingsRawRoutes: RawRoutes = {
  early: (router: Router, services: Services) => {
    router.post('/webhooks/meetings/recall', express.raw({ type: () => true, limit: WEBHOOK_BODY_LIMIT }), (req, res) => {
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      services.meetings.receiveWebhook(body, req.headers).then(
        (outcome) => res.status(200).json(outcome),
        (err: unknown) => sendError(res, toAppError(err, req.log, req.path)),
      );
    });
  },
};
