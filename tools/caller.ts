import type { Caller } from '../src/core/caller.ts';
import { substrateErrors } from '../src/substrate/service.ts';

/** The account behind an account-level credential; the tool's auth list guarantees the kind. */
export function accountOf(caller: Caller): string {
  if (caller.kind === 'platform' || caller.kind === 'service' || caller.kind === 'substrate') return caller.accountId;
  throw new Error(`caller of kind ${caller.kind} has no account`);
}

/**
 * The person signed in to the platform (a browser session) behind a call that only a person may make: what gives a
 * person's say to someone (their substrate key, an app's end users deciding for them). A platform key, an OAuth token
 * or a service key is what an agent holds: were it enough, the agent could grant itself the say and approve its own
 * proposals. 403 HUMAN_CONFIRMATION_REQUIRED otherwise.
 */
export function personSignedIn(caller: Caller, act: string, route: string): string {
  if (caller.kind === 'platform' && caller.via === 'session' && caller.personId !== null) return caller.personId;
  throw substrateErrors.humanRequired(
    `Only a person signed in to the platform can ${act}; a key or an OAuth token cannot.`,
    `Sign in (POST /dashboard/signin, or the console) and call ${route} from that browser session.`,
  );
}
