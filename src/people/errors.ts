// People search's refusals. On the people routes they are rendered in the spec's flat shape (src/core/error-shapes.ts,
// peopleError) with the x-people-* headers (src/people/headers.ts); over MCP in the standard envelope.
import { AppError } from '../core/errors.ts';
import type { PeopleSlot } from '../config.ts';
import type { ProviderFailure } from './provider.ts';

/** An error of a request already routed to a slot: the reply's x-people-provider names that slot. */
export class PeopleError extends AppError {
  readonly slot: PeopleSlot;

  constructor(slot: PeopleSlot, status: number, code: string, message: string, remediation: string, details?: unknown) {
    super(status, code, message, remediation, details);
    this.slot = slot;
  }
}

export const peopleErrors = {
  disabled: (slot: PeopleSlot) =>
    new PeopleError(slot, 503, 'PEOPLE_DISABLED', 'People search is turned off on this platform.', 'The operator turns it on with SVC_PEOPLE_ENABLED=true.'),
  emailLookupDisabled: (slot: PeopleSlot) =>
    new PeopleError(
      slot,
      503,
      'EMAIL_LOOKUP_DISABLED',
      'Work-email lookups are turned off on this platform.',
      'The operator turns them on with SVC_PEOPLE_EMAIL_LOOKUP_ENABLED=true; lookups already queued can still be polled.',
    ),
  unavailable: (slot: PeopleSlot) =>
    new PeopleError(slot, 503, 'PEOPLE_UNAVAILABLE', 'No people provider is registered on this platform.', 'The operator sets SVC_PEOPLE_PRIMARY_URL and SVC_PEOPLE_PRIMARY_KEY.'),
  notRegistered: (slot: PeopleSlot) =>
    new PeopleError(
      slot,
      503,
      'PROVIDER_NOT_REGISTERED',
      `No people provider is registered in the ${slot} slot this request is routed to.`,
      `The operator sets SVC_PEOPLE_${slot.toUpperCase()}_URL and _KEY, or routes the action elsewhere with SVC_PEOPLE_ROUTING.`,
      { slot },
    ),
  actionUnsupported: (slot: PeopleSlot, action: string) =>
    new PeopleError(
      slot,
      503,
      'PROVIDER_ACTION_UNSUPPORTED',
      `The people provider in the ${slot} slot cannot do ${action}.`,
      'The operator routes this action to a slot whose provider can (SVC_PEOPLE_ROUTING).',
      { slot },
    ),
  insufficientCredits: (slot: PeopleSlot, gateUsd: number) =>
    new PeopleError(
      slot,
      402,
      'INSUFFICIENT_CREDITS',
      `The account's available credit is below the people balance gate ($${gateUsd}) or below this call's maximum price; nothing was sent to the provider.`,
      'Upgrade the plan (billing_checkout) and retry; a smaller pageSize lowers a search\'s maximum price.',
    ),
  upstream: (slot: PeopleSlot, failure: ProviderFailure) =>
    new PeopleError(slot, 502, 'PEOPLE_UPSTREAM_ERROR', failure.message, 'Retry with backoff; nothing was charged.'),
  lookupNotFound: (slot: PeopleSlot, id: string) =>
    new PeopleError(slot, 404, 'LOOKUP_NOT_FOUND', `E-mail lookup '${id}' not found in this app.`, 'Use the lookupId that people_email_queue (POST profile/email) returned.'),
  emptySearch: (slot: PeopleSlot) =>
    new PeopleError(slot, 400, 'VALIDATION_FAILED', 'Give a query or at least one filter.', 'Send `query` (natural language) or one of the structured filters.', [
      { path: 'query', message: 'a query or at least one filter is required' },
    ]),
  callbackUnknown: (id: string) =>
    new AppError(404, 'RESOURCE_NOT_FOUND', `E-mail lookup '${id.slice(0, 100)}' not found.`, 'Only the callback URL given with a queued lookup is answered.'),
  callbackRefused: () =>
    new AppError(401, 'AUTH_INVALID_TOKEN', "The callback's token does not match this lookup.", 'Only the callback URL given with a queued lookup is answered.'),
  invalidUrl: (slot: PeopleSlot, why: string) =>
    new PeopleError(slot, 400, 'VALIDATION_FAILED', `'socialProfileUrl' ${why}.`, 'Send the absolute http(s) URL of a public profile page.', [
      { path: 'socialProfileUrl', message: why },
    ]),
};
