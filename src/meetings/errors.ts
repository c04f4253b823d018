// The meetings routes' own refusals. Rendered in OpenAI's shape on REST (the spec's Meetings table) and in the
// standard envelope over MCP.
import { AppError, errors } from '../core/errors.ts';
import { MeetingsProviderError } from './provider.ts';

export const meetingsErrors = {
  providerUnavailable: () =>
    new AppError(
      501,
      'PROVIDER_UNAVAILABLE',
      'No meeting bot provider is configured on this platform.',
      'The operator sets SVC_MEETINGS_BASE_URL, SVC_MEETINGS_API_KEY and SVC_MEETINGS_WEBHOOK_SECRET; GET /v1/ai/meetings/_status tells whether bots are available.',
    ),
  botNotFound: (id: string) =>
    new AppError(404, 'BOT_NOT_FOUND', `Meeting bot '${id.slice(0, 100)}' not found in this app.`, 'List the bots with meetings_list (GET /v1/{app_id}/ai/meetings).'),
  insufficientCredits: (details: unknown) =>
    new AppError(
      402,
      'INSUFFICIENT_CREDITS',
      "The account's credit balance is below its credit floor: no bot was sent.",
      'Upgrade the plan (billing_checkout) or wait for the next period of credits, then spawn again; meetings_estimate tells what a session costs.',
      details,
    ),
  badCursor: () => errors.validation("Invalid 'cursor': pass nextCursor of the previous page as it came.", [{ path: 'cursor', message: 'not a cursor of this list' }]),
  webhookSignature: (why: string) =>
    new AppError(
      400,
      'WEBHOOK_SIGNATURE_INVALID',
      `The webhook signature does not verify: ${why}.`,
      'Send the raw body the provider signed, with its svix-id, svix-timestamp and svix-signature (or webhook-*) headers.',
    ),
  webhookNotJson: () => new AppError(400, 'INVALID_JSON', 'The webhook body is not JSON.', 'Send the event as the provider signed it.'),
  noForwardUrl: () =>
    errors.validation("'forward_url' is required: this app has no forwarding configured yet.", [{ path: 'forward_url', message: 'required on the first configuration' }]),
};

/**
 * A provider failure as the caller's error: the provider refusing the request (400 naming our field), the provider
 * busy (429, or Recall's 507 when it has no bot free: 503, retry later), refusing the platform's key or failing (502).
 */
export function providerFailure(err: MeetingsProviderError): AppError {
  const { status } = err;
  if (status === 400 || status === 422) {
    const details = Object.entries(err.fields).map(([path, message]) => ({ path, message }));
    return errors.validation(`The meeting provider refused the bot: ${err.message}`, details.length ? details : [{ path: '', message: err.message }]);
  }
  if (status === 429 || status === 507) {
    return new AppError(503, 'PROVIDER_BUSY', `The meeting provider has no bot available now (${status}).`, 'Retry in a minute with backoff.', { retry_after_seconds: 60 });
  }
  const why = status === null ? err.message : status === 401 || status === 403 ? `refused the platform's key (${status})` : `answered ${status}: ${err.message}`;
  return new AppError(502, 'PROVIDER_ERROR', `The meeting provider failed: ${why}.`, 'Retry with backoff; if it persists, the operator checks SVC_MEETINGS_BASE_URL and SVC_MEETINGS_API_KEY.');
}

/** Runs a provider call, turning its failures into the caller's errors. */
export async function viaProvider<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw err instanceof MeetingsProviderError ? providerFailure(err) : err;
  }
}
