import type { Caller } from '../src/core/caller.ts';

/** The account behind an account-level credential; the tool's auth list guarantees the kind. */
export function accountOf(caller: Caller): string {
  if (caller.kind === 'platform' || caller.kind === 'service' || caller.kind === 'substrate') return caller.accountId;
  throw new Error(`caller of kind ${caller.kind} has no account`);
}
