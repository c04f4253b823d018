import express, { type Request, type Response, type Router } from 'express';
import type { Services } from '../../services.ts';
import { toAppError } from '../../core/invoke.ts';
import { sendError } from '../rest.ts';
import type { RawRoutes } from './index.ts';

/** A callback carries one lookup's outcome. */
const CALLBACK_BODY_LIMIT = '64kb';

/**
 * POST /webhooks/people/email/{lookup_id}?token=<secret>: the people provider's callback with a work-email lookup's
 * outcome (the URL given when the lookup was queued). A raw route rather than a descriptor: its caller is the vendor,
 * not an agent or an app, so it has no place among the tools (MCP, llms.txt); and its body is the vendor's, read by
 * the adapter of the slot that queued the lookup, not a schema of ours. Public: the per-lookup secret in the URL is
 * the credential (request logs leave query strings out). 200 `{ received: true, status }` once applied, and again on
 * a redelivery (which changes nothing); 401 for a wrong token, 404 for an unknown lookup.
 */
export const peopleRawRoutes: RawRoutes = {
  early: (router: Router, services: Services) => {
    const json = express.json({ limit: CALLBACK_BODY_LIMIT, type: () => true });
    router.post('/webhooks/people/email/:lookup_id', json, (req, res) => void receive(req, res, services));
  },
};

async function receive(req: Request, res: Response, services: Services): Promise<void> {
  try {
    const token = typeof req.query.token === 'string' ? req.query.token : '';
    res.status(200).json(await services.people.receiveEmailCallback(String(req.params.lookup_id), token, req.body));
  } catch (err) {
    sendError(res, toAppError(err, req.log, 'people_email_callback'));
  }
}
